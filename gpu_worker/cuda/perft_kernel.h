// Batched perft on the GPU: one thread per board, running core/'s host+device movegen.
// Plain C++ interface, so callers need no CUDA headers.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "chess/board.h"

namespace pgmate::gpu {

// True when a CUDA device can be used; otherwise `why` says what is missing.
bool cuda_device_available(std::string* why);

// counts[i] = perft(boards[i], depth), one thread per board (depth-first in each thread).
// Throws std::runtime_error on a CUDA error.
std::vector<std::uint64_t> perft_batch(const std::vector<chess::Board>& boards, int depth);

// Perft of one position breadth-first: each level's boards are expanded in parallel (a
// counting pass, a prefix sum, a generating pass), the last ply is counted in bulk. When a
// level would not fit in `max_level_boards`, the remaining plies run per thread.
std::uint64_t perft_bfs(const chess::Board& root, int depth, std::size_t max_level_boards = std::size_t(1) << 24);

// Legal moves of many boards at once: result[i] lists boards[i]'s moves in generation order.
std::vector<std::vector<chess::Move>> legal_moves_batch(const std::vector<chess::Board>& boards);

}  // namespace pgmate::gpu
