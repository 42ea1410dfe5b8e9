// Checkers perft on the GPU: one thread per board, running core/checkers' host+device
// move generator (the same code as the CPU perft), on the perft stream of perft_device.cuh.
// Plain C++ interface, so callers need no CUDA headers. Errors: gpu_errors.h.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "checkers/board.h"
#include "worker/cuda/gpu_errors.h"

namespace pgmate::gpu {

// Deepest checkers_perft_batch (the device stack is sized once for this many plies).
constexpr int kMaxCheckersThreadDepth = 10;

// counts[i] = checkers::perft(boards[i], depth, rule), one thread per board (depth-first
// in each thread). depth must be at most kMaxCheckersThreadDepth. `cancelled`, when given,
// is polled while the kernel runs; true throws PerftCancelled.
std::vector<std::uint64_t> checkers_perft_batch(const std::vector<checkers::Board>& boards, int depth,
                                                checkers::CaptureRule rule = checkers::CaptureRule::kAny,
                                                const std::function<bool()>& cancelled = {});

// Perft of one position: the first plies are expanded on the host (duplicates kept, since
// perft counts paths), in slices of at most a few million boards, until each board's
// subtree is estimated small enough that a launch of at least 256k threads stays around
// 4e9 nodes, and while the frontier is narrower than 256k boards and the threads would keep
// more than 5 plies; the boards then run one thread each, in launches sized by estimated nodes.
// `cancelled` is polled between slices and launches and while a kernel runs (the kernel
// then stops at once); a true answer throws PerftCancelled. std::overflow_error when the
// count exceeds 2^64 - 1.
std::uint64_t checkers_perft_split(const checkers::Board& root, int depth,
                                   checkers::CaptureRule rule = checkers::CaptureRule::kAny,
                                   const std::function<bool()>& cancelled = {});

}  // namespace pgmate::gpu
