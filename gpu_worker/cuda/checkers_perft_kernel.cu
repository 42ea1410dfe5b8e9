#include "cuda/checkers_perft_kernel.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <string>

#include "checkers/movegen.h"

namespace pgmate::gpu {

namespace {

void check(cudaError_t err, const char* what) {
  if (err != cudaSuccess) throw std::runtime_error(std::string("CUDA ") + what + ": " + cudaGetErrorString(err));
}

template <checkers::CaptureRule Rule>
__global__ void checkers_perft_kernel(const checkers::Board* boards, int n, int depth, unsigned long long* counts) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) counts[i] = checkers::perft<Rule>(boards[i], depth);
}

template <class T>
struct DeviceBuffer {
  T* ptr = nullptr;
  explicit DeviceBuffer(size_t n) { check(cudaMalloc(&ptr, std::max<size_t>(n, 1) * sizeof(T)), "malloc"); }
  ~DeviceBuffer() { cudaFree(ptr); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
};

// Host-side expansion limits for checkers_perft_split.
constexpr std::size_t kMinFrontier = 4096;       // expand at least this far (while depth allows)
constexpr std::size_t kMaxFrontier = 1u << 21;   // 2M boards (32 MiB): never expand beyond
constexpr int kMaxThreadDepth = 10;              // keep expanding while a thread would have more plies
constexpr std::size_t kChunk = 65536;            // boards per kernel call; cancel is asked between calls

}  // namespace

std::vector<std::uint64_t> checkers_perft_batch(const std::vector<checkers::Board>& boards, int depth,
                                                checkers::CaptureRule rule) {
  const size_t n = boards.size();
  std::vector<std::uint64_t> counts(n);
  if (n == 0) return counts;
  if (n > size_t(1) << 30) throw std::runtime_error("checkers_perft_batch: too many boards for one launch");
  // Each perft level (perft, generate_moves_for, the jump walker, the sink) keeps under
  // 500 bytes on the thread's stack (ptxas -v, sm_75 and sm_90; no move list is stored).
  check(cudaDeviceSetLimit(cudaLimitStackSize, 1024 + 640 * size_t(std::max(depth, 0) + 1)), "set stack size");
  DeviceBuffer<checkers::Board> d_boards(n);
  DeviceBuffer<unsigned long long> d_counts(n);
  check(cudaMemcpy(d_boards.ptr, boards.data(), n * sizeof(checkers::Board), cudaMemcpyHostToDevice), "copy boards");
  constexpr unsigned kThreads = 64;
  const unsigned blocks = unsigned((n + kThreads - 1) / kThreads);
  if (rule == checkers::CaptureRule::kLongest)
    checkers_perft_kernel<checkers::CaptureRule::kLongest><<<blocks, kThreads>>>(d_boards.ptr, int(n), depth,
                                                                               d_counts.ptr);
  else
    checkers_perft_kernel<checkers::CaptureRule::kAny><<<blocks, kThreads>>>(d_boards.ptr, int(n), depth,
                                                                           d_counts.ptr);
  check(cudaGetLastError(), "launch checkers perft kernel");
  check(cudaDeviceSynchronize(), "run checkers perft kernel");
  check(cudaMemcpy(counts.data(), d_counts.ptr, n * sizeof(unsigned long long), cudaMemcpyDeviceToHost),
        "copy counts");
  return counts;
}

std::uint64_t checkers_perft_split(const checkers::Board& root, int depth, checkers::CaptureRule rule,
                                   const std::function<bool()>& cancelled) {
  if (depth <= 0) return 1;
  auto stop_if_cancelled = [&] {
    if (cancelled && cancelled()) throw PerftCancelled();
  };
  // Expand on the host, one ply at a time, keeping every path (a position reached twice
  // is counted twice, as perft counts it). At least one ply is left to the GPU.
  std::vector<checkers::Board> frontier{root};
  int remaining = depth;
  checkers::MoveList list;
  while (remaining > 1 && !frontier.empty()) {
    const bool wide_enough = frontier.size() >= kMinFrontier;
    if (wide_enough && remaining <= kMaxThreadDepth) break;
    std::uint64_t next_size = 0;
    for (const auto& b : frontier) next_size += checkers::count_legal_moves(b, rule);
    if (wide_enough && next_size > kMaxFrontier) break;
    std::vector<checkers::Board> next;
    next.reserve(next_size);
    for (const auto& b : frontier) {
      checkers::legal_moves(b, list, rule);
      for (const checkers::Move& m : list) {
        checkers::Board child = b;
        child.play(m);
        next.push_back(child);
      }
    }
    frontier = std::move(next);
    --remaining;
    stop_if_cancelled();
  }
  std::uint64_t nodes = 0;
  std::vector<checkers::Board> chunk;
  for (size_t at = 0; at < frontier.size(); at += kChunk) {
    stop_if_cancelled();
    const size_t end = std::min(frontier.size(), at + kChunk);
    chunk.assign(frontier.begin() + std::ptrdiff_t(at), frontier.begin() + std::ptrdiff_t(end));
    for (std::uint64_t c : checkers_perft_batch(chunk, remaining, rule)) nodes += c;
  }
  return nodes;
}

}  // namespace pgmate::gpu
