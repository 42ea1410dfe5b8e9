// Pure MCTS: uniform priors, and a value from one random playout per position. The
// playout stops at mate or a draw, or after `max_plies`, where the material balance
// decides (tanh of the difference in pawns / 8), so the search still sees captures long
// before it can see mates. Needs no network: the baseline of arenas and a test double.
#pragma once

#include <cstdint>

#include "mcts/evaluator.h"
#include "common/random.h"

namespace pgmate::mcts {

class RolloutEvaluator final : public Evaluator {
 public:
  explicit RolloutEvaluator(std::uint64_t seed = 0, int max_plies = 40) : rng_(seed), max_plies_(max_plies) {}
  void evaluate(std::span<const EvalRequest> requests, std::span<EvalResult> results) override;
  std::string name() const override { return "pure-mcts"; }
  bool deterministic() const override { return false; }

  // The value of one random playout from b, from b's side to move, in [-1, 1].
  float playout(const chess::Board& b);

 private:
  Rng rng_;
  int max_plies_;
};

// Material balance in pawns (P 1, N 3, B 3, R 5, Q 9) from the side to move.
int material_balance(const chess::Board& b);

}  // namespace pgmate::mcts
