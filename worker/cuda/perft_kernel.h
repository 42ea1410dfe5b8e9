// Chess perft on the GPU. Plain C++ interface, so callers need no CUDA headers.
// All work runs on one low-priority stream of its own (see perft_device.cuh); errors are
// thrown as DeviceFault (the CUDA context is lost) or std::runtime_error (gpu_errors.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "chess/board.h"
#include "worker/cuda/gpu_errors.h"

namespace pgmate::gpu {

// True when a CUDA device can be used; otherwise `why` says what is missing.
bool cuda_device_available(std::string* why);

// Deepest perft_batch: each thread keeps a board and a move list per ply in a fixed frame.
constexpr int kMaxPerThreadDepth = 8;

// counts[i] = perft(boards[i], depth), one thread per board, depth-first without recursion.
// depth must be at most kMaxPerThreadDepth (std::invalid_argument otherwise). `cancelled`,
// when given, is polled while the kernel runs; a true answer stops the threads and throws
// PerftCancelled.
std::vector<std::uint64_t> perft_batch(const std::vector<chess::Board>& boards, int depth,
                                       const std::function<bool()>& cancelled = {});

struct BfsOptions {
  // Polled while kernels run and between launches; true throws PerftCancelled.
  std::function<bool()> cancelled;
  // Device memory for the levels; 0: half the free memory, at most kDefaultBfsMemory
  // (or PGMATE_GPU_PERFT_MEMORY_MB). Smaller budgets only mean more, smaller launches.
  std::size_t memory_bytes = 0;
  // Register cap of the fused two-ply leaf kernel, as blocks of 256 threads per SM: 2 (123
  // registers, no spills), 3 (80 registers) or 4 (64 registers, more spills); see
  // perft_kernel.cu. 0: PGMATE_GPU_LEAF_BLOCKS, else 2.
  int leaf_blocks_per_sm = 0;
  // Slider attacks from magic tables in device memory instead of table-free arithmetic
  // (or PGMATE_GPU_MAGICS=1). Same counts; speed to be measured.
  bool magic_attacks = false;
};
constexpr std::size_t kDefaultBfsMemory = std::size_t(16) << 30;

// Perft of one position, breadth-first and device-resident: per level a count kernel, a
// CUB prefix sum and an expand kernel writing 64-byte children; the last two plies in one
// fused kernel. A level that does not fit the memory budget is split over its parents (the
// splits bound each launch and are where cancellation is seen). Throws std::overflow_error
// when the count exceeds 2^64 - 1.
std::uint64_t perft_bfs(const chess::Board& root, int depth, const BfsOptions& options = {});

// Legal moves of many boards at once: result[i] lists boards[i]'s moves in generation order.
std::vector<std::vector<chess::Move>> legal_moves_batch(const std::vector<chess::Board>& boards);

}  // namespace pgmate::gpu
