// Host-side checkers perft drivers: divide and multi-threaded root splitting.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "checkers/movegen.h"

namespace pgmate::checkers {

// Nodes below each root move, the moves in notation order (by start square, then end
// square, then path, all as PDN numbers).
std::vector<std::pair<Move, std::uint64_t>> perft_divide(const Board& b, int depth,
                                                         CaptureRule rule = CaptureRule::kAny, int threads = 1);

// Total nodes; threads > 1 splits the root moves among worker threads.
std::uint64_t perft_parallel(const Board& b, int depth, CaptureRule rule = CaptureRule::kAny, int threads = 1);

// Perft that calls poll() between subtrees of at most kPollDepth plies, so a host can
// cancel a long run: poll may throw.
constexpr int kPollDepth = 8;
template <class Poll>
std::uint64_t perft_polling(const Board& b, int depth, CaptureRule rule, Poll&& poll) {
  if (depth <= kPollDepth) {
    poll();
    return perft(b, depth, rule);
  }
  MoveList list;
  legal_moves(b, list, rule);
  std::uint64_t nodes = 0;
  for (const Move& m : list) {
    Board next = b;
    next.play(m);
    nodes += perft_polling(next, depth - 1, rule, poll);
  }
  return nodes;
}

// The legal moves in notation order (see perft_divide).
std::vector<Move> sorted_legal_moves(const Board& b, CaptureRule rule = CaptureRule::kAny);

}  // namespace pgmate::checkers
