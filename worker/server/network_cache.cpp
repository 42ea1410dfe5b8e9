#include "worker/server/network_cache.h"

#include <stdexcept>


namespace pgmate::worker {

NetworkCache::NetworkCache(EvalBackend& backend, std::size_t budget_bytes) : backend_(backend), budget_(budget_bytes) {
  if (budget_ == 0) throw std::invalid_argument("the network memory budget must be positive");
}

std::shared_ptr<const LoadedNetwork> NetworkCache::find(const Key& key) {
  std::lock_guard lock(mutex_);
  auto it = held_.find(key);
  if (it == held_.end()) {
    ++stats_.misses;
    return nullptr;
  }
  ++stats_.hits;
  lru_.splice(lru_.begin(), lru_, it->second.lru);
  return it->second.network;
}

std::shared_ptr<const LoadedNetwork> NetworkCache::load(const Key& key, const std::string& config_json,
                                                        const std::string& weights) {
  std::promise<std::shared_ptr<const LoadedNetwork>> promise;
  {
    std::unique_lock lock(mutex_);
    if (auto it = held_.find(key); it != held_.end()) {
      lru_.splice(lru_.begin(), lru_, it->second.lru);
      ++stats_.shared_loads;
      return it->second.network;
    }
    if (auto it = loading_.find(key); it != loading_.end()) {
      Pending pending = it->second;
      ++stats_.shared_loads;
      lock.unlock();
      return pending.get();  // the other load's network, or its exception
    }
    loading_.emplace(key, promise.get_future().share());
  }

  // Parse outside the lock: other networks keep being found and loaded meanwhile.
  std::shared_ptr<const LoadedNetwork> network;
  try {
    network = backend_.load(config_json, weights);
    if (!network) throw std::runtime_error("the evaluation backend returned no network");
    if (network->memory_bytes() > budget_)
      throw std::invalid_argument("network " + std::to_string(key.id) + " needs " + std::to_string(network->memory_bytes() >> 20) +
                                  " MiB, more than the worker's whole network memory budget of " +
                                  std::to_string(budget_ >> 20) + " MiB (pgmate-worker --network-memory)");
  } catch (...) {
    std::lock_guard lock(mutex_);
    loading_.erase(key);
    promise.set_exception(std::current_exception());
    throw;
  }

  std::lock_guard lock(mutex_);
  loading_.erase(key);
  lru_.push_front(key);
  held_[key] = Entry{network, lru_.begin()};
  ++stats_.loads;
  stats_.bytes += network->memory_bytes();
  evict_over_budget(key);
  promise.set_value(network);
  return network;
}

void NetworkCache::evict_over_budget(const Key& keep) {
  while (stats_.bytes > budget_ && !lru_.empty()) {
    const Key victim = lru_.back();
    if (victim == keep) break;  // the newest always stays (it fits on its own)
    auto it = held_.find(victim);
    stats_.bytes -= it->second.network->memory_bytes();
    lru_.pop_back();
    held_.erase(it);
    ++stats_.evictions;
  }
}

std::string NetworkCache::json(std::uint32_t database) const {
  std::lock_guard lock(mutex_);
  std::string out = "[";
  for (const Key& key : lru_) {
    if (database != 0 && key.database != database) continue;
    const LoadedNetwork& n = *held_.at(key).network;
    if (out.size() > 1) out += ',';
    out += "{\"database\":" + std::to_string(key.database) + ",\"id\":" + std::to_string(key.id) +
           ",\"sha256\":\"" + key.sha256_hex() + "\",\"config\":" + n.config_json() +
           ",\"parameters\":" + std::to_string(n.parameters()) + ",\"bytes\":" + std::to_string(n.memory_bytes()) +
           "}";
  }
  return out + "]";
}

NetworkCacheStats NetworkCache::stats() const {
  std::lock_guard lock(mutex_);
  NetworkCacheStats s = stats_;
  s.held = held_.size();
  return s;
}

}  // namespace pgmate::worker
