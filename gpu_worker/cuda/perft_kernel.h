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

// counts[i] = perft(boards[i], depth). Throws std::runtime_error on a CUDA error.
std::vector<std::uint64_t> perft_batch(const std::vector<chess::Board>& boards, int depth);

}  // namespace pgmate::gpu
