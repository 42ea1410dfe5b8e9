// The networks the worker holds: several at once, keyed by NetworkKey (database, id,
// SHA-256 of the weights), within a memory budget, least recently used out first.
//
// A match between two networks, or sessions using different networks, then run without
// reloading weights per call. Concurrent loads of one key parse the weights once (the
// others wait for that load and share its result or its error). Networks handed out by
// find() stay alive while a batch uses them, even once evicted.
#pragma once

#include <cstddef>
#include <cstdint>
#include <future>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "link/protocol.h"
#include "worker/backend/eval_backend.h"

namespace pgmate::worker {

struct NetworkCacheStats {
  std::uint64_t loads = 0;      // weights parsed and made ready
  std::uint64_t shared_loads = 0;  // load requests answered by another request's load
  std::uint64_t hits = 0;       // find() that found the network
  std::uint64_t misses = 0;     // find() that did not
  std::uint64_t evictions = 0;
  std::size_t held = 0;         // networks held now
  std::size_t bytes = 0;        // their memory
};

class NetworkCache {
 public:
  // `budget_bytes`: the memory the held networks may take together (at least one network
  // is always held, if it fits the budget on its own).
  NetworkCache(EvalBackend& backend, std::size_t budget_bytes);

  // The network, if held (and marks it most recently used); null otherwise.
  std::shared_ptr<const LoadedNetwork> find(const protocol::NetworkKey& key);

  // Holds the network (loading it unless held or being loaded) and returns it. Throws what
  // the backend throws for bad weights, and std::invalid_argument for a network larger
  // than the whole budget. Evicts least recently used networks to stay within the budget.
  std::shared_ptr<const LoadedNetwork> load(const protocol::NetworkKey& key, const std::string& config_json,
                                            const std::string& weights);

  // JSON array of the held networks, most recently used first: database, id, sha256,
  // config, parameters, bytes. `database` 0 lists every database's, else only that one's.
  std::string json(std::uint32_t database) const;

  NetworkCacheStats stats() const;
  std::size_t budget_bytes() const { return budget_; }

 private:
  using Key = protocol::NetworkKey;
  struct Entry {
    std::shared_ptr<const LoadedNetwork> network;
    std::list<Key>::iterator lru;  // position in lru_ (front: most recent)
  };
  using Pending = std::shared_future<std::shared_ptr<const LoadedNetwork>>;

  void evict_over_budget(const Key& keep);  // with mutex_ held

  EvalBackend& backend_;
  const std::size_t budget_;
  mutable std::mutex mutex_;
  std::unordered_map<Key, Entry, protocol::NetworkKeyHash> held_;
  std::unordered_map<Key, Pending, protocol::NetworkKeyHash> loading_;
  std::list<Key> lru_;
  NetworkCacheStats stats_;
};

}  // namespace pgmate::worker
