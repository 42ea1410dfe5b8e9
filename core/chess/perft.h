// Host-side perft drivers: divide and multi-threaded root splitting.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "chess/movegen.h"

namespace pgmate::chess {

// Nodes below each root move, in generation order.
std::vector<std::pair<Move, std::uint64_t>> perft_divide(const Board& b, int depth, int threads = 1);

// Perft that calls poll() between subtrees of at most kPollDepth plies (a few million
// nodes, some milliseconds), so a host can cancel a long run: poll may throw.
constexpr int kPollDepth = 4;
template <class Poll>
std::uint64_t perft_polling(const Board& b, int depth, Poll&& poll) {
  if (depth <= kPollDepth) {
    poll();
    return perft(b, depth);
  }
  MoveList list;
  legal_moves(b, list);
  std::uint64_t nodes = 0;
  for (Move m : list) {
    Board next = b;
    next.play<false>(m);
    nodes += perft_polling(next, depth - 1, poll);
  }
  return nodes;
}

// Total nodes; threads > 1 splits the root moves among worker threads.
std::uint64_t perft_parallel(const Board& b, int depth, int threads);

}  // namespace pgmate::chess
