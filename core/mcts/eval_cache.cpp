#include "mcts/eval_cache.h"

#include "mcts/random.h"

namespace pgmate::mcts {

std::uint64_t EvalCache::key_of(const EvalRequest& request) {
  // The network sees the position, three earlier ones and the repetition count.
  std::uint64_t key = mix64(std::uint64_t(request.repetitions));
  for (const chess::Board& b : request.history) key = mix64(key ^ b.key);
  return key;
}

const EvalResult* EvalCache::find(std::uint64_t key, size_t move_count) {
  ++lookups_;
  const auto it = entries_.find(key);
  if (it == entries_.end() || it->second.priors.size() != move_count) return nullptr;
  ++hits_;
  return &it->second;
}

void EvalCache::insert(std::uint64_t key, const EvalResult& result) {
  if (capacity_ == 0) return;
  if (!entries_.insert_or_assign(key, result).second) return;
  order_.push_back(key);
  while (entries_.size() > capacity_) {
    entries_.erase(order_.front());
    order_.pop_front();
  }
}

}  // namespace pgmate::mcts
