#include "mcts/eval_cache.h"

#include <algorithm>

#include "common/random.h"

namespace pgmate::mcts {

std::uint64_t EvalCache::key_of(const EvalRequest& request) {
  // Exactly what the network input (nn::encode, core/nn/encoding_impl.h) is made of:
  // - up to kHistoryPositions boards, newest first, each by its Polyglot key (pieces, side
  //   to move, castling rights, the en-passant file under the same rule as plane 54); the
  //   encoder ignores any further boards, and so does the key, which also takes the count;
  // - the current position's fullmove number as plane 49 sees it, min(fullmove, 200)
  //   (fullmove / 200 clipped to 1), and its halfmove clock as plane 55 sees it,
  //   min(halfmove, 100) (halfmove / 100 clipped to 1): the Polyglot key has neither;
  // - the repetition count as plane 56 sees it: 0, 1, or 2 for 2 or more.
  const size_t count = std::min<size_t>(request.history.size(), kHistoryPositions);
  std::uint64_t key = mix64(std::uint64_t(count));
  key = mix64(key ^ std::uint64_t(std::clamp(request.repetitions, 0, 2)));
  if (count > 0) {
    const chess::Board& now = request.history.front();
    key = mix64(key ^ (std::uint64_t(std::min<unsigned>(now.fullmove, 200)) << 16 |
                       std::uint64_t(std::min<unsigned>(now.halfmove, 100))));
  }
  for (size_t i = 0; i < count; ++i) key = mix64(key ^ request.history[i].key);
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
