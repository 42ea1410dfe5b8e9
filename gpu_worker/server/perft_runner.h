// PERFT requests: core's perft on the CPU thread pool (deep runs split by root move over
// several pool threads), or gpu::perft_batch when built with CUDA and a device exists.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>

#include "chess/board.h"
#include "protocol/protocol.h"
#include "server/batcher.h"
#include "server/thread_pool.h"

namespace pgmate::worker {

class PerftRunner {
 public:
  // `gpu_allowed` false (--device cpu) keeps perft off the GPU. `stopping` (optional) is
  // watched by running perfts, which then fail with kShuttingDown.
  PerftRunner(ThreadPool& pool, bool gpu_allowed, const std::atomic<bool>* stopping);

  bool gpu_available() const { return gpu_available_; }
  const std::string& gpu_info() const { return gpu_info_; }  // device or why there is none

  // Calls exactly one of done / fail, from a pool thread (or from the caller's thread when
  // the request is refused at once). A set cancel flag aborts the run within milliseconds.
  void submit(const chess::Board& board, int depth, protocol::PerftDevice device, CancelFlag cancelled,
              std::function<void(std::uint64_t)> done, ErrorFn fail);

  std::uint64_t requests() const { return requests_.load(); }
  int running() const { return running_.load(); }

  // Auto picks the GPU from this depth on (shallower runs are quicker than a kernel launch).
  static constexpr int kAutoGpuMinDepth = 6;
  // CPU runs from this depth on are split by root move over several pool threads.
  static constexpr int kSplitMinDepth = 6;

 private:
  void run_cpu(const chess::Board& board, int depth, CancelFlag cancelled, std::function<void(std::uint64_t)> done,
               ErrorFn fail);
  void run_gpu(const chess::Board& board, int depth, CancelFlag cancelled, std::function<void(std::uint64_t)> done,
               ErrorFn fail);

  ThreadPool& pool_;
  const std::atomic<bool>* stopping_;
  bool gpu_available_ = false;
  std::string gpu_info_;
  std::mutex gpu_mutex_;  // one GPU perft at a time
  std::atomic<std::uint64_t> requests_{0};
  std::atomic<int> running_{0};
};

}  // namespace pgmate::worker
