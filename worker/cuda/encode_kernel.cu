#include "worker/cuda/encode_kernel.h"

#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

#include "worker/cuda/perft_device.cuh"
#include "nn/encoding_impl.h"

namespace pgmate::gpu {

namespace {

constexpr int kSlots = nn::kHistoryPositions;

using detail::check;

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

// Inputs with their repetition counts given (the worker's batches: the client counts them).
__global__ void encode_given_kernel(const chess::Board* boards, const std::uint8_t* counts,
                                    const std::uint8_t* repetitions, int n, float* out) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  nn::detail::encode_position(boards + size_t(i) * kSlots, counts[i], out + size_t(i) * nn::kInputSize,
                              repetitions[i]);
}

}  // namespace

void encode_on_device(const chess::Board* boards, const std::uint8_t* counts, const std::uint8_t* repetitions, int n,
                      float* planes, void* stream) {
  if (n <= 0) return;
  encode_given_kernel<<<(n + 63) / 64, 64, 0, static_cast<cudaStream_t>(stream)>>>(boards, counts, repetitions, n,
                                                                                 planes);
  check(cudaGetLastError(), "launch encode kernel");
}

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
  // The perft stream and RAII buffers: no legacy-stream work, nothing leaks when an
  // allocation or copy fails.
  detail::PerftDevice& dev = detail::PerftDevice::instance();
  std::lock_guard lock(dev.mutex());
  detail::DeviceBuffer<chess::Board> d_boards;
  detail::DeviceBuffer<int> d_counts;
  detail::DeviceBuffer<float> d_planes;
  d_boards.reserve(boards.size(), dev.stream());
  d_counts.reserve(counts.size(), dev.stream());
  d_planes.reserve(planes.size(), dev.stream());
  check(cudaMemcpyAsync(d_boards.get(), boards.data(), boards.size() * sizeof(chess::Board), cudaMemcpyHostToDevice,
                        dev.stream()),
        "copy boards");
  check(cudaMemcpyAsync(d_counts.get(), counts.data(), counts.size() * sizeof(int), cudaMemcpyHostToDevice,
                        dev.stream()),
        "copy counts");
  encode_kernel<<<(n + 63) / 64, 64, 0, dev.stream()>>>(d_boards.get(), d_counts.get(), n, d_planes.get());
  check(cudaGetLastError(), "launch encode kernel");
  dev.wait({}, "run encode kernel");  // sleeps on the event; a pageable copy would spin
  check(cudaMemcpyAsync(planes.data(), d_planes.get(), planes.size() * sizeof(float), cudaMemcpyDeviceToHost,
                        dev.stream()),
        "copy planes");
  dev.wait({}, "copy planes");
  d_boards.release(dev.stream());
  d_counts.release(dev.stream());
  d_planes.release(dev.stream());
  return planes;
}

}  // namespace pgmate::gpu
