// Evaluations already computed, keyed by the position's Zobrist key mixed with the keys
// of the earlier positions the network sees. Bounded: the oldest entries go first.
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <unordered_map>

#include "mcts/evaluator.h"

namespace pgmate::mcts {

class EvalCache {
 public:
  explicit EvalCache(size_t capacity = 100000) : capacity_(capacity) {}

  static std::uint64_t key_of(const EvalRequest& request);

  // The cached result, if any, for a request with this key and this many moves.
  const EvalResult* find(std::uint64_t key, size_t move_count);
  void insert(std::uint64_t key, const EvalResult& result);

  size_t size() const { return entries_.size(); }
  std::uint64_t hits() const { return hits_; }
  std::uint64_t lookups() const { return lookups_; }

 private:
  size_t capacity_;
  std::unordered_map<std::uint64_t, EvalResult> entries_;
  std::deque<std::uint64_t> order_;
  std::uint64_t hits_ = 0, lookups_ = 0;
};

}  // namespace pgmate::mcts
