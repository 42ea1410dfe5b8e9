// Host-side perft drivers: divide and multi-threaded root splitting.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "chess/movegen.h"

namespace pgmate::chess {

// Nodes below each root move, in generation order.
std::vector<std::pair<Move, std::uint64_t>> perft_divide(const Board& b, int depth, int threads = 1);

// Total nodes; threads > 1 splits the root moves among worker threads.
std::uint64_t perft_parallel(const Board& b, int depth, int threads);

}  // namespace pgmate::chess
