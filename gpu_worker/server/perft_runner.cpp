#include "server/perft_runner.h"

#include <memory>
#include <vector>

#include "chess/movegen.h"
#include "chess/perft.h"
#ifdef PGMATE_HAVE_CUDA
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

void PerftRunner::submit(const chess::Board& board, int depth, PerftDevice device, CancelFlag cancelled,
                         std::function<void(std::uint64_t)> done, ErrorFn fail) {
  ++requests_;
  if (depth < 0 || depth > protocol::kMaxPerftDepth)
    return fail(ErrorCode::kBadRequest, "perft depth " + std::to_string(depth) + " out of range");
  if (stopping_ && stopping_->load()) return fail(ErrorCode::kShuttingDown, kShutdownMessage);
  bool gpu = false;
  switch (device) {
    case PerftDevice::kCpu: gpu = false; break;
    case PerftDevice::kGpu:
      if (!gpu_available_) return fail(ErrorCode::kUnavailable, "no GPU available (" + gpu_info_ + ")");
      gpu = true;
      break;
    case PerftDevice::kAuto: gpu = gpu_available_ && depth >= kAutoGpuMinDepth; break;
  }
  if (gpu)
    run_gpu(board, depth, std::move(cancelled), std::move(done), std::move(fail));
  else
    run_cpu(board, depth, std::move(cancelled), std::move(done), std::move(fail));
}

void PerftRunner::run_cpu(const chess::Board& board, int depth, CancelFlag cancelled,
                          std::function<void(std::uint64_t)> done, ErrorFn fail) {
  const std::atomic<bool>* stopping = stopping_;

  if (depth < kSplitMinDepth || pool_.size() == 1) {
    auto task = [this, board, depth, cancelled, done, fail, stopping] {
      RunningGuard guard(running_);
      auto poll = [&] {
        if (flag_set(cancelled) || (stopping && stopping->load(std::memory_order_relaxed))) throw Aborted{};
      };
      std::uint64_t nodes;
      try {
        nodes = chess::perft_polling(board, depth, poll);
      } catch (const Aborted&) {
        guard.release();
        const bool shutting = stopping && stopping->load();
        return fail(shutting ? ErrorCode::kShuttingDown : ErrorCode::kBadRequest,
                    shutting ? kShutdownMessage : kCancelledMessage);
      }
      guard.release();
      done(nodes);
    };
    if (!pool_.submit(std::move(task))) fail(ErrorCode::kShuttingDown, kShutdownMessage);
    return;
  }

  // Deep: one pool task per root move; the last one to finish answers.
  chess::MoveList list;
  chess::legal_moves(board, list);
  if (list.size == 0) return done(0);

  struct Split {
    std::atomic<std::uint64_t> nodes{0};
    std::atomic<int> left{0};
    std::atomic<bool> aborted{false};
    std::function<void(std::uint64_t)> done;
    ErrorFn fail;
  };
  auto split = std::make_shared<Split>();
  split->left = list.size;
  split->done = std::move(done);
  split->fail = std::move(fail);
  auto finish_one = [split, stopping] {
    if (split->left.fetch_sub(1) != 1) return;
    if (!split->aborted) return split->done(split->nodes.load());
    const bool shutting = stopping && stopping->load();
    split->fail(shutting ? ErrorCode::kShuttingDown : ErrorCode::kBadRequest,
                shutting ? kShutdownMessage : kCancelledMessage);
  };
  for (chess::Move m : list) {
    chess::Board child = board;
    child.play<false>(m);
    auto task = [this, child, depth, cancelled, split, stopping, finish_one] {
      if (!split->aborted) {
        RunningGuard guard(running_);
        auto poll = [&] {
          if (split->aborted.load(std::memory_order_relaxed) || flag_set(cancelled) ||
              (stopping && stopping->load(std::memory_order_relaxed)))
            throw Aborted{};
        };
        try {
          split->nodes += chess::perft_polling(child, depth - 1, poll);
        } catch (const Aborted&) {
          split->aborted = true;
        }
      }
      finish_one();
    };
    if (!pool_.submit(std::move(task))) {
      split->aborted = true;
      finish_one();
    }
  }
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

}  // namespace pgmate::worker
