#include "cuda/perft_kernel.h"

#include <cuda_runtime.h>

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

}  // namespace pgmate::gpu
