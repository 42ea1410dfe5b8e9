#include "cuda/perft_kernel.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <memory>
#include <stdexcept>

#include "chess/movegen.h"

namespace pgmate::gpu {

namespace {

void check(cudaError_t err, const char* what) {
  if (err != cudaSuccess) throw std::runtime_error(std::string("CUDA ") + what + ": " + cudaGetErrorString(err));
}

__global__ void perft_kernel(const chess::Board* boards, int n, int depth, unsigned long long* counts) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) counts[i] = chess::perft(boards[i], depth);
}

__global__ void count_kernel(const chess::Board* boards, size_t n, unsigned int* counts) {
  size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) counts[i] = unsigned(chess::count_legal_moves(boards[i]));
}

__global__ void bulk_count_kernel(const chess::Board* boards, size_t n, unsigned long long* total) {
  size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) atomicAdd(total, (unsigned long long)chess::count_legal_moves(boards[i]));
}

__global__ void expand_kernel(const chess::Board* boards, size_t n, const unsigned long long* offsets,
                              chess::Board* children) {
  size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  chess::MoveList list;
  chess::legal_moves(boards[i], list);
  chess::Board* out = children + offsets[i];
  for (int k = 0; k < list.size; ++k) {
    out[k] = boards[i];
    out[k].play<false>(list.moves[k]);
  }
}

__global__ void legal_moves_kernel(const chess::Board* boards, int n, unsigned short* moves, int* counts) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  chess::MoveList list;
  chess::legal_moves(boards[i], list);
  counts[i] = list.size;
  for (int k = 0; k < list.size; ++k) moves[size_t(i) * chess::kMaxMoves + k] = list.moves[k].bits();
}

template <class T>
struct DeviceBuffer {
  T* ptr = nullptr;
  explicit DeviceBuffer(size_t n) { check(cudaMalloc(&ptr, std::max<size_t>(n, 1) * sizeof(T)), "malloc"); }
  ~DeviceBuffer() { cudaFree(ptr); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
};

unsigned blocks_for(size_t n, unsigned threads) { return unsigned((n + threads - 1) / threads); }

}  // namespace

bool cuda_device_available(std::string* why) {
  int count = 0;
  cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    if (why) *why = std::string("no usable CUDA device: ") + cudaGetErrorString(err);
    return false;
  }
  if (count == 0) {
    if (why) *why = "no CUDA device found";
    return false;
  }
  return true;
}

std::vector<std::uint64_t> perft_batch(const std::vector<chess::Board>& boards, int depth) {
  const int n = int(boards.size());
  std::vector<std::uint64_t> counts(n);
  if (n == 0) return counts;
  // Each recursion level keeps a MoveList (~520 bytes) on the thread's stack.
  check(cudaDeviceSetLimit(cudaLimitStackSize, 1024 + 640 * (depth + 1)), "set stack size");
  chess::Board* d_boards = nullptr;
  unsigned long long* d_counts = nullptr;
  check(cudaMalloc(&d_boards, n * sizeof(chess::Board)), "malloc boards");
  check(cudaMalloc(&d_counts, n * sizeof(unsigned long long)), "malloc counts");
  try {
    check(cudaMemcpy(d_boards, boards.data(), n * sizeof(chess::Board), cudaMemcpyHostToDevice), "copy boards");
    const int threads = 64;
    perft_kernel<<<(n + threads - 1) / threads, threads>>>(d_boards, n, depth, d_counts);
    check(cudaGetLastError(), "launch perft kernel");
    check(cudaDeviceSynchronize(), "run perft kernel");
    check(cudaMemcpy(counts.data(), d_counts, n * sizeof(unsigned long long), cudaMemcpyDeviceToHost), "copy counts");
  } catch (...) {
    cudaFree(d_boards);
    cudaFree(d_counts);
    throw;
  }
  cudaFree(d_boards);
  cudaFree(d_counts);
  return counts;
}

std::uint64_t perft_bfs(const chess::Board& root, int depth, std::size_t max_level_boards) {
  if (depth <= 0) return 1;
  constexpr unsigned kThreads = 128;
  std::vector<chess::Board> level{root};
  auto d_level = std::make_unique<DeviceBuffer<chess::Board>>(1);
  check(cudaMemcpy(d_level->ptr, &root, sizeof root, cudaMemcpyHostToDevice), "copy root");
  size_t n = 1;
  int remaining = depth;
  // Expand while the next level fits, leaving the last ply to bulk counting.
  while (remaining > 1) {
    DeviceBuffer<unsigned> d_counts(n);
    count_kernel<<<blocks_for(n, kThreads), kThreads>>>(d_level->ptr, n, d_counts.ptr);
    check(cudaGetLastError(), "launch count kernel");
    std::vector<unsigned> counts(n);
    check(cudaMemcpy(counts.data(), d_counts.ptr, n * sizeof(unsigned), cudaMemcpyDeviceToHost), "copy counts");
    std::vector<unsigned long long> offsets(n);
    unsigned long long next = 0;
    for (size_t i = 0; i < n; ++i) {
      offsets[i] = next;
      next += counts[i];
    }
    if (next == 0) return 0;
    if (next > max_level_boards) break;
    DeviceBuffer<unsigned long long> d_offsets(n);
    check(cudaMemcpy(d_offsets.ptr, offsets.data(), n * sizeof(unsigned long long), cudaMemcpyHostToDevice),
          "copy offsets");
    auto d_next = std::make_unique<DeviceBuffer<chess::Board>>(next);
    expand_kernel<<<blocks_for(n, kThreads), kThreads>>>(d_level->ptr, n, d_offsets.ptr, d_next->ptr);
    check(cudaGetLastError(), "launch expand kernel");
    check(cudaDeviceSynchronize(), "run expand kernel");
    d_level = std::move(d_next);
    n = next;
    --remaining;
  }
  if (remaining == 1) {
    DeviceBuffer<unsigned long long> d_total(1);
    check(cudaMemset(d_total.ptr, 0, sizeof(unsigned long long)), "clear total");
    bulk_count_kernel<<<blocks_for(n, kThreads), kThreads>>>(d_level->ptr, n, d_total.ptr);
    check(cudaGetLastError(), "launch bulk count kernel");
    unsigned long long total = 0;
    check(cudaMemcpy(&total, d_total.ptr, sizeof total, cudaMemcpyDeviceToHost), "copy total");
    return total;
  }
  // The frontier is too wide to expand again: finish depth-first, one thread per board.
  std::vector<chess::Board> frontier(n);
  check(cudaMemcpy(frontier.data(), d_level->ptr, n * sizeof(chess::Board), cudaMemcpyDeviceToHost), "copy frontier");
  d_level.reset();
  std::uint64_t total = 0;
  for (std::uint64_t c : perft_batch(frontier, remaining)) total += c;
  return total;
}

std::vector<std::vector<chess::Move>> legal_moves_batch(const std::vector<chess::Board>& boards) {
  const int n = int(boards.size());
  std::vector<std::vector<chess::Move>> result(n);
  if (n == 0) return result;
  DeviceBuffer<chess::Board> d_boards(n);
  DeviceBuffer<unsigned short> d_moves(size_t(n) * chess::kMaxMoves);
  DeviceBuffer<int> d_counts(n);
  check(cudaMemcpy(d_boards.ptr, boards.data(), n * sizeof(chess::Board), cudaMemcpyHostToDevice), "copy boards");
  check(cudaDeviceSetLimit(cudaLimitStackSize, 2048), "set stack size");
  legal_moves_kernel<<<blocks_for(n, 128), 128>>>(d_boards.ptr, n, d_moves.ptr, d_counts.ptr);
  check(cudaGetLastError(), "launch legal moves kernel");
  std::vector<unsigned short> moves(size_t(n) * chess::kMaxMoves);
  std::vector<int> counts(n);
  check(cudaMemcpy(counts.data(), d_counts.ptr, n * sizeof(int), cudaMemcpyDeviceToHost), "copy counts");
  check(cudaMemcpy(moves.data(), d_moves.ptr, moves.size() * sizeof(unsigned short), cudaMemcpyDeviceToHost),
        "copy moves");
  for (int i = 0; i < n; ++i)
    for (int k = 0; k < counts[i]; ++k) result[i].push_back(chess::Move(moves[size_t(i) * chess::kMaxMoves + k]));
  return result;
}

}  // namespace pgmate::gpu
