// PERFT and CHECKERS_PERFT requests: core's perft on the CPU thread pool (deep runs split
// by root move over several pool threads), or the CUDA code (gpu::perft_bfs,
// gpu::checkers_perft_split) when built with CUDA and a device exists. Node counts that
// would pass 2^64 - 1 fail the request instead of wrapping.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>

#include "checkers/board.h"
#include "chess/board.h"
#include "link/protocol.h"
#include "worker/server/batcher.h"
#include "worker/server/thread_pool.h"

namespace pgmate::worker {

class PerftRunner {
 public:
  // Called once, from a pool thread, when a GPU perft hits an error that leaves the CUDA
  // context dead (gpu::DeviceFault): the process must restart to use the GPU again.
  using DeviceFaultFn = std::function<void(const std::string& what)>;

  // `gpu_allowed` false (--device cpu) keeps perft off the GPU. `stopping` (optional) is
  // watched by running perfts, which then fail with kShuttingDown. `on_device_fault`
  // (optional) is told of a device fault, after which the GPU is no longer offered.
  PerftRunner(ThreadPool& pool, bool gpu_allowed, const std::atomic<bool>* stopping,
              DeviceFaultFn on_device_fault = {});

  bool gpu_available() const { return gpu_available_.load(); }
  bool gpu_faulted() const { return gpu_faulted_.load(); }
  const std::string& gpu_info() const { return gpu_info_; }  // device or why there is none

  // Calls exactly one of done / fail, from a pool thread (or from the caller's thread when
  // the request is refused at once). A set cancel flag aborts the run within milliseconds.
  // `owner` (the connection) gets its turn on the pool beside the other owners.
  void submit(const chess::Board& board, int depth, protocol::PerftDevice device, CancelFlag cancelled,
              std::function<void(std::uint64_t)> done, ErrorFn fail, std::uint64_t owner = 0);

  // The same for American checkers under `rule`.
  void submit_checkers(const checkers::Board& board, int depth, checkers::CaptureRule rule,
                       protocol::PerftDevice device, CancelFlag cancelled, std::function<void(std::uint64_t)> done,
                       ErrorFn fail, std::uint64_t owner = 0);

  std::uint64_t requests() const { return requests_.load(); }
  int running() const { return running_.load(); }

  // Auto picks the GPU from this depth on (shallower runs are quicker than a kernel launch).
  static constexpr int kAutoGpuMinDepth = 6;
  // CPU runs from this depth on are split by root move over several pool threads.
  static constexpr int kSplitMinDepth = 6;
  // Checkers: perft 10 from the start takes about 0.1 s on one core, so auto picks the
  // GPU only from depth 11 (the host expansion and the launch cost more below that). The
  // root has only about 7 moves, so CPU runs from kCheckersSplitMinDepth on are split over
  // the boards a few plies down (at least kCheckersTasksPerThread per pool thread).
  static constexpr int kCheckersAutoGpuMinDepth = 11;
  static constexpr int kCheckersSplitMinDepth = 8;
  static constexpr int kCheckersTasksPerThread = 4;
  // Deep CPU runs are split until no task is deeper than this (a fraction of a second
  // each), so the pool's turns between connections come often; at most kMaxSplitTasks.
  static constexpr int kMaxTaskDepth = 5;
  static constexpr int kCheckersMaxTaskDepth = 11;
  static constexpr std::size_t kMaxSplitTasks = 200000;

 private:
  void run_cpu(const chess::Board& board, int depth, CancelFlag cancelled, std::function<void(std::uint64_t)> done,
               ErrorFn fail, std::uint64_t owner);
  void run_gpu(const chess::Board& board, int depth, CancelFlag cancelled, std::function<void(std::uint64_t)> done,
               ErrorFn fail);
  void run_checkers_gpu(const checkers::Board& board, int depth, checkers::CaptureRule rule, CancelFlag cancelled,
                        std::function<void(std::uint64_t)> done, ErrorFn fail);
  // Resolves the device of a request; false (after calling fail) when it cannot be served.
  bool pick_device(protocol::PerftDevice device, int depth, int auto_gpu_min_depth, bool& gpu, const ErrorFn& fail);

  ThreadPool& pool_;
  const std::atomic<bool>* stopping_;
  // Runs count (a GPU perft, given the abort test) on the pool under the GPU's lock, with
  // the errors every GPU perft answers; `what` names it in a failure.
  void submit_gpu(const char* what, std::function<std::uint64_t(const std::function<bool()>&)> count,
                  CancelFlag cancelled, std::function<void(std::uint64_t)> done, ErrorFn fail);
  // Logs the fault, withdraws the GPU, fails the request and tells on_device_fault_.
  void device_fault(const std::string& what, const ErrorFn& fail);

  std::atomic<bool> gpu_available_{false};
  std::atomic<bool> gpu_faulted_{false};
  std::string gpu_info_;
  DeviceFaultFn on_device_fault_;
  std::mutex gpu_mutex_;  // one GPU perft at a time
  std::atomic<std::uint64_t> requests_{0};
  std::atomic<int> running_{0};
};

}  // namespace pgmate::worker
