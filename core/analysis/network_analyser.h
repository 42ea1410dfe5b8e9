// Positions evaluated by a network through pgmate's search (S simulations each; 1: the
// network's own value and its policy's top move), many searches at once with the leaves of
// all of them evaluated in one batch per round, as self-play does. Each position is searched
// alone, without the moves that led to it (evaluations are keyed by the position).
//
// What a search gives is a win/draw/loss estimate (its value W - L and draw probability,
// side to move), stored as the engine's WDL; its score is the value as centipawns through
// lichess's win% curve (cp = ln((1 + v) / (1 - v)) / 0.00368208, at most +-1000 short of a
// proven result), a proven win or loss a mate score.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/evaluation.h"
#include "arena/player_spec.h"
#include "mcts/evaluator.h"
#include "mcts/search.h"

namespace pgmate::analysis {

struct NetworkAnalyserConfig {
  mcts::SearchParams search;          // root noise is turned off
  int parallel = 64;                  // searches at once
  int leaves_per_search = 8;          // leaves a search hands out a round
  std::uint64_t seed = 1;
};

// The limits a network player spec ("net:ID:S[:KEY=VALUE,...]") analyses with, part of an
// evaluation's identity: "simulations=S" and the search settings that differ from the
// defaults ("simulations=64,c_puct=2").
std::string network_limits_text(const arena::PlayerSpec& spec);

// The engine a network's evaluations are stored under: its row and the first 16 hex digits
// of its weights' SHA-256, "pgmate network 3 (1a2b3c4d5e6f7081)" (the one place it is made:
// the procedure and `pgmate analyse` must agree byte for byte, or each reanalyses the other's).
std::string network_engine_name(std::int64_t network, std::string_view weights_sha256_hex);

// The search's value (W - L, side to move) as a score: centipawns through lichess's win%
// curve, clamped to +-1000.
Score score_of_value(float value);

class NetworkAnalyser {
 public:
  NetworkAnalyser(mcts::Evaluator& evaluator, NetworkAnalyserConfig config);

  std::int64_t evaluations() const { return evaluations_; }

  using Done = std::function<void(std::size_t index, PositionEval&& eval)>;
  // Evaluates positions[i] for every i (done in the order they finish); tick runs after
  // every batch (saving, progress, interrupts).
  void run(const std::vector<chess::Board>& positions, const Done& done, const std::function<void()>& tick);

 private:
  mcts::Evaluator& evaluator_;
  NetworkAnalyserConfig config_;
  std::int64_t evaluations_ = 0;
};

}  // namespace pgmate::analysis
