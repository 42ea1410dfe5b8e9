// Random playouts from the start: the game-like positions the checkers tests run on.
#pragma once

#include <random>
#include <vector>

#include "checkers/movegen.h"

namespace pgmate::checkers::testing {

// Every position of `games` random games (at most max_plies plies each), the start
// included, the moves chosen uniformly among the legal moves under `rule`.
inline std::vector<Board> playout_positions(unsigned seed, int games, int max_plies = 200,
                                            CaptureRule rule = CaptureRule::kAny) {
  std::mt19937 rng(seed);
  std::vector<Board> out;
  for (int g = 0; g < games; ++g) {
    Board b = Board::start();
    out.push_back(b);
    for (int ply = 0; ply < max_plies; ++ply) {
      MoveList list;
      legal_moves(b, list, rule);
      if (list.size == 0) break;
      b.play(list.moves[std::uniform_int_distribution<int>(0, list.size - 1)(rng)]);
      out.push_back(b);
    }
  }
  return out;
}

}  // namespace pgmate::checkers::testing
