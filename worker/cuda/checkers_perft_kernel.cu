#include "worker/cuda/checkers_perft_kernel.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "checkers/movegen.h"
#include "worker/cuda/perft_device.cuh"

namespace pgmate::gpu {

using detail::blocks_for;
using detail::CancelWord;
using detail::check;
using detail::PerftDevice;

static_assert(kMaxCheckersThreadDepth <= detail::kCheckersStackPlies, "the device stack is sized for fewer plies");

namespace {

constexpr unsigned kThreads = 64;

template <checkers::CaptureRule Rule>
__global__ void __launch_bounds__(kThreads) checkers_perft_kernel(const checkers::Board* boards, int n, int depth,
                                                                   CancelWord cancel, unsigned long long* counts) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) counts[i] = detail::cancel_requested(cancel) ? 0 : checkers::perft<Rule>(boards[i], depth);
}

// Sum of perft(boards[i], depth) over the chunk: one atomic per warp.
template <checkers::CaptureRule Rule>
__global__ void __launch_bounds__(kThreads) checkers_perft_sum_kernel(const checkers::Board* boards, std::size_t n,
                                                                       int depth, CancelWord cancel,
                                                                       unsigned long long* total) {
  const std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  unsigned stop = 0;
  if ((threadIdx.x & 31) == 0) stop = *cancel;
  stop = __shfl_sync(0xffffffffu, stop, 0);
  const unsigned long long nodes = (i < n && !stop) ? checkers::perft<Rule>(boards[i], depth) : 0;
  detail::warp_add(total, nodes);
}

// Host-split limits. A launch has at least kMinFrontier threads when the frontier allows,
// and a thread searches about kMaxNodesPerThread nodes (estimated). One GPU thread searches
// only some 10^4 nodes/s (an H100: 2-3e9 nodes/s over all its threads), and a running thread
// never looks at the cancel word, so the per-thread work bounds cancel latency: at 15,000
// nodes a cancel took 610 ms; at 1,000 it is tens of ms, with launches of about 0.1 s
// (kTargetNodesPerLaunch) so the network's stream also gets the SMs back often.
constexpr std::size_t kMinFrontier = std::size_t(1) << 18;
// A narrow frontier is widened only while threads keep at least this many plies (shallower
// threads would leave the host generating boards faster than the GPU consumes them).
constexpr int kMinThreadDepth = 5;
constexpr std::size_t kMaxSlice = std::size_t(1) << 22;  // boards per host expansion slice (64 MiB)
constexpr double kMaxNodesPerThread = 1000;
constexpr double kTargetNodesPerLaunch = kMaxNodesPerThread * double(kMinFrontier);
constexpr std::size_t kMaxChunk = std::size_t(1) << 22;

std::uint64_t add_checked(std::uint64_t a, std::uint64_t b) {
  std::uint64_t sum;
  if (__builtin_add_overflow(a, b, &sum)) throw std::overflow_error("perft node count exceeds 2^64 - 1");
  return sum;
}

struct CheckersBuffers {
  detail::DeviceBuffer<checkers::Board> boards;
  detail::DeviceBuffer<unsigned long long> counts;
  detail::PinnedBuffer<unsigned long long> total{1};
};
CheckersBuffers& buffers() {
  static CheckersBuffers* b = new CheckersBuffers();  // never destroyed: CUDA may be torn down first at exit
  return *b;
}

class SplitRun {
 public:
  SplitRun(PerftDevice& dev, checkers::CaptureRule rule, const std::function<bool()>& cancelled)
      : dev_(dev), rule_(rule), cancelled_(cancelled) {}

  // Plies `remaining` below every board of the frontier; `branching` estimates moves per board.
  std::uint64_t run(const std::vector<checkers::Board>& frontier, int remaining, double branching) {
    if (frontier.empty()) return 0;
    const double per_board = std::pow(std::max(branching, 1.0), remaining);
    const bool narrow = frontier.size() < kMinFrontier && remaining > kMinThreadDepth;
    if (remaining <= 1 || (!narrow && remaining <= kMaxCheckersThreadDepth && per_board <= kMaxNodesPerThread))
      return launch(frontier, remaining, per_board);
    // Too deep for one thread per board: one more ply on the host, in bounded slices.
    std::uint64_t nodes = 0;
    std::vector<checkers::Board> next;
    checkers::MoveList list;
    for (std::size_t at = 0; at < frontier.size();) {
      dev_.throw_if_cancelled(cancelled_);
      next.clear();
      const std::size_t first = at;
      while (at < frontier.size() && next.size() < kMaxSlice) {
        checkers::legal_moves(frontier[at++], list, rule_);
        for (const checkers::Move& m : list) {
          checkers::Board child = frontier[at - 1];
          child.play(m);
          next.push_back(child);
        }
      }
      nodes = add_checked(nodes, run(next, remaining - 1, double(next.size()) / double(at - first)));
    }
    return nodes;
  }

 private:
  std::uint64_t launch(const std::vector<checkers::Board>& boards, int depth, double per_board) {
    const auto chunk = std::size_t(std::clamp(kTargetNodesPerLaunch / std::max(per_board, 1.0), 1024.0, double(kMaxChunk)));
    auto& buf = buffers();
    std::uint64_t nodes = 0;
    for (std::size_t at = 0; at < boards.size(); at += chunk) {
      dev_.throw_if_cancelled(cancelled_);
      const std::size_t n = std::min(chunk, boards.size() - at);
      checkers::Board* d_boards = buf.boards.reserve(chunk, dev_.stream());
      unsigned long long* d_total = buf.counts.reserve(1, dev_.stream());
      check(cudaMemcpyAsync(d_boards, boards.data() + at, n * sizeof(checkers::Board), cudaMemcpyHostToDevice,
                            dev_.stream()),
            "copy boards");
      check(cudaMemsetAsync(d_total, 0, sizeof *d_total, dev_.stream()), "clear total");
      if (rule_ == checkers::CaptureRule::kLongest)
        checkers_perft_sum_kernel<checkers::CaptureRule::kLongest><<<blocks_for(n, kThreads), kThreads, 0, dev_.stream()>>>(
            d_boards, n, depth, dev_.device_cancel_word(), d_total);
      else
        checkers_perft_sum_kernel<checkers::CaptureRule::kAny><<<blocks_for(n, kThreads), kThreads, 0, dev_.stream()>>>(
            d_boards, n, depth, dev_.device_cancel_word(), d_total);
      check(cudaGetLastError(), "launch checkers perft kernel");
      check(cudaMemcpyAsync(buf.total.get(), d_total, sizeof *d_total, cudaMemcpyDeviceToHost, dev_.stream()),
            "read total");
      dev_.wait(cancelled_, "run checkers perft kernel");
      nodes = add_checked(nodes, buf.total[0]);
    }
    return nodes;
  }

  PerftDevice& dev_;
  checkers::CaptureRule rule_;
  const std::function<bool()>& cancelled_;
};

}  // namespace

std::vector<std::uint64_t> checkers_perft_batch(const std::vector<checkers::Board>& boards, int depth,
                                                checkers::CaptureRule rule, const std::function<bool()>& cancelled) {
  if (depth > kMaxCheckersThreadDepth)
    throw std::invalid_argument("checkers_perft_batch: depth " + std::to_string(depth) + " is over " +
                                std::to_string(kMaxCheckersThreadDepth));
  const std::size_t n = boards.size();
  std::vector<std::uint64_t> counts(n);
  if (n == 0) return counts;
  if (n > std::size_t(1) << 30) throw std::invalid_argument("checkers_perft_batch: too many boards for one launch");
  PerftDevice& dev = PerftDevice::instance();
  std::lock_guard lock(dev.mutex());
  dev.ensure_checkers_stack();
  dev.reset_cancel();
  auto& buf = buffers();
  checkers::Board* d_boards = buf.boards.reserve(n, dev.stream());
  unsigned long long* d_counts = buf.counts.reserve(n, dev.stream());
  check(cudaMemcpyAsync(d_boards, boards.data(), n * sizeof(checkers::Board), cudaMemcpyHostToDevice, dev.stream()),
        "copy boards");
  const unsigned blocks = blocks_for(n, kThreads);
  if (rule == checkers::CaptureRule::kLongest)
    checkers_perft_kernel<checkers::CaptureRule::kLongest><<<blocks, kThreads, 0, dev.stream()>>>(
        d_boards, int(n), depth, dev.device_cancel_word(), d_counts);
  else
    checkers_perft_kernel<checkers::CaptureRule::kAny><<<blocks, kThreads, 0, dev.stream()>>>(
        d_boards, int(n), depth, dev.device_cancel_word(), d_counts);
  check(cudaGetLastError(), "launch checkers perft kernel");
  // Wait (polling the cancel hook) before copying to pageable memory: that copy would
  // block the host until the kernel ends.
  dev.wait(cancelled, "run checkers perft kernel");
  check(cudaMemcpyAsync(counts.data(), d_counts, n * sizeof(unsigned long long), cudaMemcpyDeviceToHost, dev.stream()),
        "copy counts");
  dev.wait({}, "copy counts");
  return counts;
}

std::uint64_t checkers_perft_split(const checkers::Board& root, int depth, checkers::CaptureRule rule,
                                   const std::function<bool()>& cancelled) {
  if (depth <= 0) return 1;
  PerftDevice& dev = PerftDevice::instance();
  std::lock_guard lock(dev.mutex());
  dev.ensure_checkers_stack();
  dev.reset_cancel();
  SplitRun run(dev, rule, cancelled);
  const std::uint64_t nodes = run.run({root}, depth, double(std::max<std::uint64_t>(1, checkers::count_legal_moves(root, rule))));
  dev.throw_if_cancelled(cancelled);
  return nodes;
}

}  // namespace pgmate::gpu
