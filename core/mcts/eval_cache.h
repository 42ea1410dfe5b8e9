// Evaluations already computed, keyed by everything the network input is made of: the
// position's Zobrist key, its clocks as the encoder reads them, the repetition count and
// the keys of the earlier positions the network sees (see key_of). Bounded: the oldest
// entries go first.
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

  // Equal keys mean equal network inputs (nn::encode of the request's history and
  // repetitions), short of 64-bit accidents. (Equal inputs may still get different keys:
  // the earlier boards are keyed by more than the pieces the encoder draws of them.)
  static std::uint64_t key_of(const EvalRequest& request);
  // Boards of a request that the network sees (nn::kHistoryPositions).
  static constexpr size_t kHistoryPositions = 4;

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
