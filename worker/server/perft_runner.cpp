#include "worker/server/perft_runner.h"

#include <cstdio>
#include <stdexcept>
#include <memory>
#include <vector>

#include "checkers/movegen.h"
#include "checkers/perft.h"
#include "chess/movegen.h"
#include "chess/perft.h"
#ifdef PGMATE_HAVE_CUDA
#include "worker/cuda/checkers_perft_kernel.h"
#include "worker/cuda/gpu_errors.h"
#include "worker/cuda/perft_kernel.h"
#endif

namespace pgmate::worker {

using protocol::ErrorCode;
using protocol::PerftDevice;

namespace {

struct Aborted {};  // thrown from the poll hook to unwind a running perft

constexpr const char* kShutdownMessage = "the worker is shutting down";
constexpr const char* kCancelledMessage = "perft cancelled";
constexpr const char* kOverflowMessage = "perft node count exceeds 2^64 - 1";

bool flag_set(const CancelFlag& f) { return f && f->load(std::memory_order_relaxed); }

// Counts the running perfts; released before the answer goes out, so a client that
// asks for the status right after its reply does not see its own perft still running.
struct RunningGuard {
  std::atomic<int>* n;
  explicit RunningGuard(std::atomic<int>& count) : n(&count) { ++*n; }
  ~RunningGuard() { release(); }
  void release() {
    if (n) --*n;
    n = nullptr;
  }
};

// Perft on the CPU pool, for either game. Shallow runs are one pool task; deep ones
// (`split`) one task per board of a frontier: the root's children, expanded further while
// the frontier has fewer than `min_tasks` boards or its tasks would be deeper than
// `max_task_depth`, up to kMaxSplitTasks boards (paths are kept, duplicates included, as
// perft counts them); the last task to finish answers. Tasks are queued as `owner`'s. Every task polls the cancel flag
// and the shutdown flag between subtrees (`perft(board, depth, poll)`, where poll throws
// Aborted), so an abandoned or interrupted run stops within milliseconds.
template <class Position, class PerftFn, class ChildrenFn>
void run_cpu_perft(ThreadPool& pool, std::atomic<int>& running, const std::atomic<bool>* stopping,
                   const Position& board, int depth, bool split, std::size_t min_tasks, int max_task_depth,
                   std::uint64_t owner, PerftFn perft, ChildrenFn children, CancelFlag cancelled,
                   std::function<void(std::uint64_t)> done, ErrorFn fail) {
  if (!split || depth < 2) {
    auto task = [&running, board, depth, cancelled, done, fail, stopping, perft] {
      RunningGuard guard(running);
      auto poll = [&] {
        if (flag_set(cancelled) || (stopping && stopping->load(std::memory_order_relaxed))) throw Aborted{};
      };
      std::uint64_t nodes;
      try {
        nodes = perft(board, depth, poll);
      } catch (const Aborted&) {
        guard.release();
        const bool shutting = stopping && stopping->load();
        return fail(shutting ? ErrorCode::kShuttingDown : ErrorCode::kBadRequest,
                    shutting ? kShutdownMessage : kCancelledMessage);
      }
      guard.release();
      done(nodes);
    };
    if (!pool.submit(std::move(task), owner)) fail(ErrorCode::kShuttingDown, kShutdownMessage);
    return;
  }

  // Deep: the root's children, and further plies while there are too few tasks (at least
  // two plies are left to every task).
  std::vector<Position> frontier;
  children(board, frontier);
  int remaining = depth - 1;
  while (!frontier.empty() && (frontier.size() < min_tasks || remaining > max_task_depth) && remaining > 2) {
    std::vector<Position> next;
    for (const Position& b : frontier) {
      children(b, next);
      if (next.size() > PerftRunner::kMaxSplitTasks) break;
    }
    if (next.size() > PerftRunner::kMaxSplitTasks) break;  // deep enough: tasks stay a bit larger
    frontier = std::move(next);
    --remaining;
  }
  if (frontier.empty()) return done(0);

  struct Split {
    std::atomic<std::uint64_t> nodes{0};
    std::atomic<std::size_t> left{0};
    std::atomic<bool> aborted{false};
    std::atomic<bool> overflowed{false};
    void add(std::uint64_t n) {
      std::uint64_t old = nodes.load(), sum;
      do {
        if (__builtin_add_overflow(old, n, &sum)) {
          overflowed = true;
          aborted = true;
          return;
        }
      } while (!nodes.compare_exchange_weak(old, sum));
    }
    std::function<void(std::uint64_t)> done;
    ErrorFn fail;
  };
  auto state = std::make_shared<Split>();
  state->left = frontier.size();
  state->done = std::move(done);
  state->fail = std::move(fail);
  auto finish_one = [state, stopping] {
    if (state->left.fetch_sub(1) != 1) return;
    if (state->overflowed) return state->fail(ErrorCode::kBadRequest, kOverflowMessage);
    if (!state->aborted) return state->done(state->nodes.load());
    const bool shutting = stopping && stopping->load();
    state->fail(shutting ? ErrorCode::kShuttingDown : ErrorCode::kBadRequest,
                shutting ? kShutdownMessage : kCancelledMessage);
  };
  for (const Position& child : frontier) {
    auto task = [&running, child, remaining, cancelled, state, stopping, finish_one, perft] {
      if (!state->aborted) {
        RunningGuard guard(running);
        auto poll = [&] {
          if (state->aborted.load(std::memory_order_relaxed) || flag_set(cancelled) ||
              (stopping && stopping->load(std::memory_order_relaxed)))
            throw Aborted{};
        };
        try {
          state->add(perft(child, remaining, poll));
        } catch (const Aborted&) {
          state->aborted = true;
        }
      }
      finish_one();
    };
    if (!pool.submit(std::move(task), owner)) {
      state->aborted = true;
      finish_one();
    }
  }
}

}  // namespace

PerftRunner::PerftRunner(ThreadPool& pool, bool gpu_allowed, const std::atomic<bool>* stopping,
                         DeviceFaultFn on_device_fault)
    : pool_(pool), stopping_(stopping), on_device_fault_(std::move(on_device_fault)) {
#ifdef PGMATE_HAVE_CUDA
  if (!gpu_allowed) {
    gpu_info_ = "GPU use disabled (--device cpu)";
  } else {
    std::string why;
    gpu_available_ = gpu::cuda_device_available(&why);
    gpu_info_ = gpu_available_ ? "cuda" : why;
  }
#else
  (void)gpu_allowed;
  gpu_info_ = "this pgmate-worker was built without CUDA";
#endif
}

bool PerftRunner::pick_device(PerftDevice device, int depth, int auto_gpu_min_depth, bool& gpu,
                              const ErrorFn& fail) {
  if (depth < 0 || depth > protocol::kMaxPerftDepth) {
    fail(ErrorCode::kBadRequest, "perft depth " + std::to_string(depth) + " out of range");
    return false;
  }
  if (stopping_ && stopping_->load()) {
    fail(ErrorCode::kShuttingDown, kShutdownMessage);
    return false;
  }
  gpu = false;
  switch (device) {
    case PerftDevice::kCpu: gpu = false; break;
    case PerftDevice::kGpu:
      if (!gpu_available_) {
        fail(ErrorCode::kUnavailable, gpu_faulted_ ? std::string("the GPU failed; the worker restarts")
                                                   : "no GPU available (" + gpu_info_ + ")");
        return false;
      }
      gpu = true;
      break;
    case PerftDevice::kAuto: gpu = gpu_available_ && depth >= auto_gpu_min_depth; break;
  }
  return true;
}

void PerftRunner::submit(const chess::Board& board, int depth, PerftDevice device, CancelFlag cancelled,
                         std::function<void(std::uint64_t)> done, ErrorFn fail, std::uint64_t owner) {
  ++requests_;
  bool gpu = false;
  if (!pick_device(device, depth, kAutoGpuMinDepth, gpu, fail)) return;
  if (gpu)
    run_gpu(board, depth, std::move(cancelled), std::move(done), std::move(fail));
  else
    run_cpu(board, depth, std::move(cancelled), std::move(done), std::move(fail), owner);
}

void PerftRunner::submit_checkers(const checkers::Board& board, int depth, checkers::CaptureRule rule,
                                  PerftDevice device, CancelFlag cancelled, std::function<void(std::uint64_t)> done,
                                  ErrorFn fail, std::uint64_t owner) {
  ++requests_;
  bool gpu = false;
  if (!pick_device(device, depth, kCheckersAutoGpuMinDepth, gpu, fail)) return;
  if (gpu) return run_checkers_gpu(board, depth, rule, std::move(cancelled), std::move(done), std::move(fail));
  const bool split = depth >= kCheckersSplitMinDepth && pool_.size() > 1;
  run_cpu_perft(
      pool_, running_, stopping_, board, depth, split, std::size_t(kCheckersTasksPerThread) * std::size_t(pool_.size()),
      kCheckersMaxTaskDepth, owner, [rule](const checkers::Board& b, int d, auto& poll) { return checkers::perft_polling(b, d, rule, poll); },
      [rule](const checkers::Board& b, std::vector<checkers::Board>& out) {
        checkers::MoveList list;
        checkers::legal_moves(b, list, rule);
        for (const checkers::Move& m : list) {
          checkers::Board child = b;
          child.play(m);
          out.push_back(child);
        }
      },
      std::move(cancelled), std::move(done), std::move(fail));
}

void PerftRunner::run_cpu(const chess::Board& board, int depth, CancelFlag cancelled,
                          std::function<void(std::uint64_t)> done, ErrorFn fail, std::uint64_t owner) {
  const bool split = depth >= kSplitMinDepth && pool_.size() > 1;
  run_cpu_perft(
      pool_, running_, stopping_, board, depth, split, 1, kMaxTaskDepth, owner,
      [](const chess::Board& b, int d, auto& poll) { return chess::perft_polling(b, d, poll); },
      [](const chess::Board& b, std::vector<chess::Board>& out) {
        chess::MoveList list;
        chess::legal_moves(b, list);
        for (chess::Move m : list) {
          chess::Board child = b;
          child.play<false>(m);
          out.push_back(child);
        }
      },
      std::move(cancelled), std::move(done), std::move(fail));
}

void PerftRunner::device_fault(const std::string& what, const ErrorFn& fail) {
  const bool first = !gpu_faulted_.exchange(true);
  gpu_available_ = false;
  if (first) std::fprintf(stderr, "pgmate-worker: GPU device fault, the CUDA context is lost: %s\n", what.c_str());
  fail(ErrorCode::kBackend, "the GPU failed (" + what + "); the worker restarts");
  if (first && on_device_fault_) on_device_fault_(what);
}

void PerftRunner::run_gpu(const chess::Board& board, int depth, CancelFlag cancelled,
                          std::function<void(std::uint64_t)> done, ErrorFn fail) {
  // Breadth-first on the device; the cancel and shutdown flags are polled while the kernels
  // run and stop them within a launch.
#ifdef PGMATE_HAVE_CUDA
  submit_gpu("GPU perft", [board, depth](const std::function<bool()>& aborted) {
    gpu::BfsOptions options;
    options.cancelled = aborted;
    return gpu::perft_bfs(board, depth, options);
  }, std::move(cancelled), std::move(done), std::move(fail));
#else
  (void)board;
  (void)depth;
  submit_gpu("GPU perft", {}, std::move(cancelled), std::move(done), std::move(fail));
#endif
}

void PerftRunner::run_checkers_gpu(const checkers::Board& board, int depth, checkers::CaptureRule rule,
                                   CancelFlag cancelled, std::function<void(std::uint64_t)> done, ErrorFn fail) {
  // The frontier is expanded on the host; the kernel runs in launches sized by estimated
  // nodes, the cancel and shutdown flags polled while they run.
#ifdef PGMATE_HAVE_CUDA
  submit_gpu("GPU checkers perft", [board, depth, rule](const std::function<bool()>& aborted) {
    return gpu::checkers_perft_split(board, depth, rule, aborted);
  }, std::move(cancelled), std::move(done), std::move(fail));
#else
  (void)board;
  (void)depth;
  (void)rule;
  submit_gpu("GPU checkers perft", {}, std::move(cancelled), std::move(done), std::move(fail));
#endif
}

void PerftRunner::submit_gpu(const char* what, std::function<std::uint64_t(const std::function<bool()>&)> count,
                             CancelFlag cancelled, std::function<void(std::uint64_t)> done, ErrorFn fail) {
#ifdef PGMATE_HAVE_CUDA
  const std::atomic<bool>* stopping = stopping_;
  auto task = [this, what, count, cancelled, done, fail, stopping] {
    RunningGuard guard(running_);
    const std::function<bool()> aborted = [&] { return flag_set(cancelled) || (stopping && stopping->load()); };
    std::uint64_t nodes = 0;
    try {
      std::lock_guard lock(gpu_mutex_);
      nodes = count(aborted);
    } catch (const gpu::PerftCancelled&) {
      guard.release();
      const bool shutting = stopping && stopping->load();
      return fail(shutting ? ErrorCode::kShuttingDown : ErrorCode::kBadRequest,
                  shutting ? kShutdownMessage : kCancelledMessage);
    } catch (const gpu::DeviceFault& e) {
      guard.release();
      return device_fault(e.what(), fail);
    } catch (const std::overflow_error&) {
      guard.release();
      return fail(ErrorCode::kBadRequest, kOverflowMessage);
    } catch (const std::exception& e) {
      guard.release();
      return fail(ErrorCode::kBackend, std::string(what) + " failed: " + e.what());
    }
    guard.release();
    done(nodes);
  };
  if (!pool_.submit(std::move(task))) fail(ErrorCode::kShuttingDown, kShutdownMessage);
#else
  (void)what;
  (void)count;
  (void)cancelled;
  (void)done;
  fail(ErrorCode::kUnavailable, "no GPU available (" + gpu_info_ + ")");
#endif
}

}  // namespace pgmate::worker
