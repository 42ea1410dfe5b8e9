// Checkers perft on the GPU: one thread per board, running core/checkers' host+device
// move generator (the same code as the CPU perft). Plain C++ interface, so callers need no
// CUDA headers.
#pragma once

#include <cstdint>
#include <functional>
#include <stdexcept>
#include <vector>

#include "checkers/board.h"

namespace pgmate::gpu {

// Thrown by checkers_perft_split when its `cancelled` hook answers true.
class PerftCancelled : public std::runtime_error {
 public:
  PerftCancelled() : std::runtime_error("perft cancelled") {}
};

// counts[i] = checkers::perft(boards[i], depth, rule), one thread per board (depth-first
// in each thread). Throws std::runtime_error on a CUDA error.
std::vector<std::uint64_t> checkers_perft_batch(const std::vector<checkers::Board>& boards, int depth,
                                                checkers::CaptureRule rule = checkers::CaptureRule::kAny);

// Perft of one position: the first plies are expanded on the host (duplicates kept, since
// perft counts paths) until the frontier holds at least a few thousand boards (more when
// the remaining depth is large, so each kernel call stays short), or the depth runs out;
// the remaining plies run one thread per frontier board, in chunks. `cancelled`, when
// given, is asked between chunks; a true answer throws PerftCancelled.
std::uint64_t checkers_perft_split(const checkers::Board& root, int depth,
                                   checkers::CaptureRule rule = checkers::CaptureRule::kAny,
                                   const std::function<bool()>& cancelled = {});

}  // namespace pgmate::gpu
