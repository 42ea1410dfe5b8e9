#include "server/perft_runner.h"

#include <memory>
#include <vector>

#include "checkers/movegen.h"
#include "checkers/perft.h"
#include "chess/movegen.h"
#include "chess/perft.h"
#ifdef PGMATE_HAVE_CUDA
#include "cuda/checkers_perft_kernel.h"
#include "cuda/perft_kernel.h"
#endif

namespace pgmate::worker {

using protocol::ErrorCode;
using protocol::PerftDevice;

namespace {

struct Aborted {};  // thrown from the poll hook to unwind a running perft

constexpr const char* kShutdownMessage = "the worker is shutting down";
constexpr const char* kCancelledMessage = "perft cancelled";

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
    std::function<void(std::uint64_t)> done;
    ErrorFn fail;
  };
  auto state = std::make_shared<Split>();
  state->left = frontier.size();
  state->done = std::move(done);
  state->fail = std::move(fail);
  auto finish_one = [state, stopping] {
    if (state->left.fetch_sub(1) != 1) return;
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
          state->nodes += perft(child, remaining, poll);
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

PerftRunner::PerftRunner(ThreadPool& pool, bool gpu_allowed, const std::atomic<bool>* stopping)
    : pool_(pool), stopping_(stopping) {
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
        fail(ErrorCode::kUnavailable, "no GPU available (" + gpu_info_ + ")");
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

void PerftRunner::run_gpu(const chess::Board& board, int depth, CancelFlag cancelled,
                          std::function<void(std::uint64_t)> done, ErrorFn fail) {
#ifdef PGMATE_HAVE_CUDA
  const std::atomic<bool>* stopping = stopping_;
  auto task = [this, board, depth, cancelled, done, fail, stopping] {
    RunningGuard guard(running_);
    auto aborted = [&] { return flag_set(cancelled) || (stopping && stopping->load()); };
    auto fail_aborted = [&] {
      guard.release();
      const bool shutting = stopping && stopping->load();
      fail(shutting ? ErrorCode::kShuttingDown : ErrorCode::kBadRequest,
           shutting ? kShutdownMessage : kCancelledMessage);
    };
    if (depth == 0) {
      guard.release();
      return done(1);
    }
    // Expand a few plies on the CPU so the kernel gets one thread per frontier board.
    constexpr std::size_t kTargetFrontier = 20000;
    constexpr std::uint64_t kMaxFrontier = 2000000;
    constexpr std::size_t kChunk = 65536;  // boards per kernel call; cancel is checked between calls
    std::vector<chess::Board> frontier{board};
    int remaining = depth;
    chess::MoveList list;
    while (remaining > 3 && frontier.size() < kTargetFrontier) {
      std::uint64_t next_size = 0;
      for (const auto& b : frontier) next_size += std::uint64_t(chess::count_legal_moves(b));
      if (next_size > kMaxFrontier) break;
      std::vector<chess::Board> next;
      next.reserve(next_size);
      for (const auto& b : frontier) {
        chess::legal_moves(b, list);
        for (chess::Move m : list) {
          chess::Board child = b;
          child.play<false>(m);
          next.push_back(child);
        }
      }
      frontier = std::move(next);
      --remaining;
      if (aborted()) return fail_aborted();
    }
    if (frontier.empty()) {
      guard.release();
      return done(0);
    }
    std::uint64_t nodes = 0;
    try {
      std::lock_guard lock(gpu_mutex_);
      for (std::size_t at = 0; at < frontier.size(); at += kChunk) {
        if (aborted()) return fail_aborted();
        const std::size_t end = std::min(frontier.size(), at + kChunk);
        std::vector<chess::Board> chunk(frontier.begin() + std::ptrdiff_t(at), frontier.begin() + std::ptrdiff_t(end));
        for (std::uint64_t n : gpu::perft_batch(chunk, remaining)) nodes += n;
      }
    } catch (const std::exception& e) {
      guard.release();
      return fail(ErrorCode::kBackend, std::string("GPU perft failed: ") + e.what());
    }
    guard.release();
    done(nodes);
  };
  if (!pool_.submit(std::move(task))) fail(ErrorCode::kShuttingDown, kShutdownMessage);
#else
  (void)board;
  (void)depth;
  (void)cancelled;
  (void)done;
  fail(ErrorCode::kUnavailable, "no GPU available (" + gpu_info_ + ")");
#endif
}

void PerftRunner::run_checkers_gpu(const checkers::Board& board, int depth, checkers::CaptureRule rule,
                                   CancelFlag cancelled, std::function<void(std::uint64_t)> done, ErrorFn fail) {
#ifdef PGMATE_HAVE_CUDA
  const std::atomic<bool>* stopping = stopping_;
  auto task = [this, board, depth, rule, cancelled, done, fail, stopping] {
    RunningGuard guard(running_);
    auto aborted = [&] { return flag_set(cancelled) || (stopping && stopping->load()); };
    std::uint64_t nodes = 0;
    try {
      std::lock_guard lock(gpu_mutex_);
      // The frontier is expanded on the host; the kernel runs in chunks, the cancel and
      // shutdown flags asked between them.
      nodes = gpu::checkers_perft_split(board, depth, rule, aborted);
    } catch (const gpu::PerftCancelled&) {
      guard.release();
      const bool shutting = stopping && stopping->load();
      return fail(shutting ? ErrorCode::kShuttingDown : ErrorCode::kBadRequest,
                  shutting ? kShutdownMessage : kCancelledMessage);
    } catch (const std::exception& e) {
      guard.release();
      return fail(ErrorCode::kBackend, std::string("GPU checkers perft failed: ") + e.what());
    }
    guard.release();
    done(nodes);
  };
  if (!pool_.submit(std::move(task))) fail(ErrorCode::kShuttingDown, kShutdownMessage);
#else
  (void)board;
  (void)depth;
  (void)rule;
  (void)cancelled;
  (void)done;
  fail(ErrorCode::kUnavailable, "no GPU available (" + gpu_info_ + ")");
#endif
}

}  // namespace pgmate::worker
