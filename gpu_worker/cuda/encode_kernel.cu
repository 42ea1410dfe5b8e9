#include "cuda/encode_kernel.h"

#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

#include "nn/encoding_impl.h"

namespace pgmate::gpu {

namespace {

constexpr int kSlots = nn::kHistoryPositions;

void check(cudaError_t err, const char* what) {
  if (err != cudaSuccess) throw std::runtime_error(std::string("CUDA ") + what + ": " + cudaGetErrorString(err));
}

// boards: kSlots per input (history, newest first); counts: how many are real.
__global__ void encode_kernel(const chess::Board* boards, const int* counts, int n, float* out) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const chess::Board* h = boards + size_t(i) * kSlots;
  const int count = counts[i];
  int repetitions = 0;
  // Only the history handed in can show repetitions (as on the host).
  const int reach = count - 1 < h[0].halfmove ? count - 1 : h[0].halfmove;
  for (int k = 2; k <= reach; k += 2)
    if (nn::detail::same_position(h[0], h[k])) ++repetitions;
  nn::detail::encode_position(h, count, out + size_t(i) * nn::kInputSize, repetitions);
}

}  // namespace

std::vector<float> encode_batch(const std::vector<std::vector<chess::Board>>& histories) {
  const int n = int(histories.size());
  std::vector<float> planes(size_t(n) * nn::kInputSize);
  if (n == 0) return planes;
  std::vector<chess::Board> boards(size_t(n) * kSlots);
  std::vector<int> counts(n);
  for (int i = 0; i < n; ++i) {
    counts[i] = int(histories[i].size() < size_t(kSlots) ? histories[i].size() : size_t(kSlots));
    for (int k = 0; k < counts[i]; ++k) boards[size_t(i) * kSlots + k] = histories[i][k];
  }
  chess::Board* d_boards = nullptr;
  int* d_counts = nullptr;
  float* d_planes = nullptr;
  check(cudaMalloc(&d_boards, boards.size() * sizeof(chess::Board)), "malloc boards");
  check(cudaMalloc(&d_counts, counts.size() * sizeof(int)), "malloc counts");
  check(cudaMalloc(&d_planes, planes.size() * sizeof(float)), "malloc planes");
  try {
    check(cudaMemcpy(d_boards, boards.data(), boards.size() * sizeof(chess::Board), cudaMemcpyHostToDevice), "copy boards");
    check(cudaMemcpy(d_counts, counts.data(), counts.size() * sizeof(int), cudaMemcpyHostToDevice), "copy counts");
    encode_kernel<<<(n + 63) / 64, 64>>>(d_boards, d_counts, n, d_planes);
    check(cudaGetLastError(), "launch encode kernel");
    check(cudaMemcpy(planes.data(), d_planes, planes.size() * sizeof(float), cudaMemcpyDeviceToHost), "copy planes");
  } catch (...) {
    cudaFree(d_boards);
    cudaFree(d_counts);
    cudaFree(d_planes);
    throw;
  }
  cudaFree(d_boards);
  cudaFree(d_counts);
  cudaFree(d_planes);
  return planes;
}

}  // namespace pgmate::gpu
