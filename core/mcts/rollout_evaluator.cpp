#include "mcts/rollout_evaluator.h"

#include <cmath>

#include "chess/game.h"
#include "chess/movegen.h"

namespace pgmate::mcts {

EvalResult uniform_evaluation(const EvalRequest& request) {
  EvalResult r;
  r.priors.assign(request.moves.size(), request.moves.empty() ? 0.0f : 1.0f / float(request.moves.size()));
  return r;
}

int material_balance(const chess::Board& b) {
  static constexpr int kValue[6] = {1, 3, 3, 5, 9, 0};  // pawn, knight, bishop, rook, queen, king
  int balance = 0;
  for (int t = 0; t < 6; ++t) {
    const auto type = chess::PieceType(t);
    balance += kValue[t] * (chess::popcount(b.pieces(b.side, type)) - chess::popcount(b.pieces(~b.side, type)));
  }
  return balance;
}

float RolloutEvaluator::playout(const chess::Board& start) {
  chess::Board b = start;
  chess::MoveList moves;
  for (int ply = 0;; ++ply) {
    moves.size = 0;
    chess::legal_moves(b, moves);
    float value;  // from b's side to move
    if (moves.size == 0) {
      value = b.in_check() ? -1.0f : 0.0f;
    } else if (b.halfmove >= 100 || chess::insufficient_material(b)) {
      value = 0.0f;
    } else if (ply >= max_plies_) {
      value = std::tanh(float(material_balance(b)) / 8.0f);
    } else {
      b.play<false>(moves.moves[rng_.below(std::uint32_t(moves.size))]);
      continue;
    }
    return (ply % 2 == 0) ? value : -value;
  }
}

void RolloutEvaluator::evaluate(std::span<const EvalRequest> requests, std::span<EvalResult> results) {
  for (size_t i = 0; i < requests.size(); ++i) {
    EvalResult& r = results[i];
    r = uniform_evaluation(requests[i]);
    const float v = playout(requests[i].history.front());
    r.win = v > 0 ? v : 0;
    r.loss = v < 0 ? -v : 0;
    r.draw = 1 - r.win - r.loss;
  }
}

}  // namespace pgmate::mcts
