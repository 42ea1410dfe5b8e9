// The batcher: evaluation and legal-move requests from every connection are queued and
// merged into batches, run when a batch is full (max_batch positions), when the oldest
// queued item has waited `deadline`, or at once when no client can add to it (every
// connection is waiting for an answer); results are split back to each request.
//
// Evaluation batches run on their own threads (two on a GPU, so that one batch is encoded
// while another runs; one on the CPU); a batch that mixes networks runs once per network. Networks are held by a NetworkCache (several at once, within a
// memory budget); a job carries the network it was submitted for, so a load or an eviction
// meanwhile never changes or fails it. Legal-move batches run on a second thread on the
// CPU. A request larger than a batch is split over several.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "chess/board.h"
#include "link/protocol.h"
#include "worker/backend/eval_backend.h"
#include "worker/server/network_cache.h"
#include "worker/server/thread_pool.h"

namespace pgmate::worker {

using Clock = std::chrono::steady_clock;
using ErrorFn = std::function<void(protocol::ErrorCode, const std::string&)>;
using CancelFlag = std::shared_ptr<const std::atomic<bool>>;

struct BatcherConfig {
  int max_batch = 1024;                       // positions per batch
  std::chrono::microseconds deadline{1000};   // since the first queued item
  int encode_threads = -1;  // helpers encoding large batches; -1: min(8, CPUs - 1); 0: none
  int eval_threads = 0;     // batches in progress at once; 0: 2 on a CUDA backend, else 1
  // Called (once) when the backend throws DeviceLost; the batch fails either way.
  std::function<void(const std::string&)> on_device_lost = nullptr;
  // True when nothing more can join a batch (the server: every connection has a request
  // unanswered, so a client that waits for its answer sends nothing else): what is queued
  // then runs without waiting for the deadline. Unset: the deadline alone.
  std::function<bool()> all_clients_waiting = nullptr;
  std::size_t network_memory = std::size_t(2048) << 20;  // bytes the held networks may take
};

struct EvalJob {
  protocol::NetworkKey key;
  std::shared_ptr<const LoadedNetwork> network;  // required: from Batcher::find_network
  std::vector<std::vector<chess::Board>> inputs;  // each: 1..4 boards, newest first
  std::vector<std::uint8_t> repetitions;          // per input (0..2); empty: all 0
  CancelFlag cancelled;         // optional: set when nobody waits for the answer any more
  std::function<void(std::vector<protocol::EvalResult>&&)> done;
  ErrorFn fail;
};

struct LegalJob {
  std::vector<chess::Board> boards;
  CancelFlag cancelled;
  std::function<void(std::vector<std::vector<chess::Move>>&&)> done;
  ErrorFn fail;
};

struct BatcherStats {
  std::uint64_t eval_requests = 0;
  std::uint64_t eval_batches = 0;
  std::uint64_t eval_positions = 0;
  std::uint64_t eval_failures = 0;     // requests answered with an error
  double mean_batch_size = 0;
  int largest_batch = 0;
  double positions_per_s = 0;          // over the last few seconds
  std::size_t eval_queue_depth = 0;    // positions waiting
  std::uint64_t legal_requests = 0;
  std::uint64_t legal_batches = 0;
  std::uint64_t legal_positions = 0;
  std::size_t legal_queue_depth = 0;
};

// A queue of jobs measured in positions; take() assembles one batch.
template <class Task>
class BatchQueue {
 public:
  struct Slice {
    std::shared_ptr<Task> task;
    std::size_t begin = 0, end = 0;
  };

  // False (task not queued) once stopped.
  bool push(std::shared_ptr<Task> task, std::size_t positions) {
    {
      std::lock_guard lock(mutex_);
      if (stopped_) return false;
      entries_.push_back(Entry{std::move(task), positions, 0, Clock::now()});
      depth_ += positions;
    }
    cv_.notify_one();
    return true;
  }

  // Blocks until `max_positions` are queued, the oldest entry is `deadline` old or
  // `all_waiting` (when set) says nothing more can come, then takes up to max_positions
  // (splitting an entry if needed). Empty once stopped.
  std::vector<Slice> take(std::size_t max_positions, std::chrono::microseconds deadline,
                          const std::function<bool()>& all_waiting = nullptr) {
    std::unique_lock lock(mutex_);
    for (;;) {
      drop_cancelled();
      if (stopped_) return {};
      if (entries_.empty()) {
        cv_.wait(lock);
        continue;
      }
      if (depth_ >= max_positions || (all_waiting && all_waiting())) break;
      const auto due = entries_.front().enqueued + deadline;
      if (Clock::now() >= due) break;
      cv_.wait_until(lock, due);
    }
    std::vector<Slice> slices;
    std::size_t taken = 0;
    while (taken < max_positions && !entries_.empty()) {
      Entry& e = entries_.front();
      const std::size_t n = std::min(max_positions - taken, e.size - e.next);
      slices.push_back(Slice{e.task, e.next, e.next + n});
      e.next += n;
      taken += n;
      depth_ -= n;
      if (e.next == e.size) entries_.pop_front();
    }
    return slices;
  }

  void stop() {
    {
      std::lock_guard lock(mutex_);
      stopped_ = true;
    }
    cv_.notify_all();
  }

  // The tasks still queued (after stop()); each once, even if partly taken.
  std::vector<std::shared_ptr<Task>> drain() {
    std::lock_guard lock(mutex_);
    std::vector<std::shared_ptr<Task>> out;
    for (auto& e : entries_) out.push_back(std::move(e.task));
    entries_.clear();
    depth_ = 0;
    return out;
  }

  std::size_t depth() const {
    std::lock_guard lock(mutex_);
    return depth_;
  }

 private:
  struct Entry {
    std::shared_ptr<Task> task;
    std::size_t size = 0, next = 0;
    Clock::time_point enqueued;
  };

  // Entries whose requester has gone away are not worth a batch slot.
  void drop_cancelled() {
    for (auto it = entries_.begin(); it != entries_.end();) {
      if (it->task->is_cancelled()) {
        depth_ -= it->size - it->next;
        it = entries_.erase(it);
      } else {
        ++it;
      }
    }
  }

  mutable std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<Entry> entries_;
  std::size_t depth_ = 0;
  bool stopped_ = false;
};

class Batcher {
 public:
  Batcher(std::unique_ptr<EvalBackend> backend, BatcherConfig config);
  ~Batcher();
  Batcher(const Batcher&) = delete;
  Batcher& operator=(const Batcher&) = delete;

  // Each job's done or fail is called exactly once (fail with kShuttingDown after stop()),
  // from a batcher thread or, on immediate errors, from the caller's thread. Jobs whose
  // cancel flag is set may be dropped without a call.
  void submit(EvalJob job);
  void submit(LegalJob job);

  // Finishes the batch in progress, fails everything queued with kShuttingDown, joins.
  void stop();

  // The held networks (NetworkCache): find_network gives null when not held; load_network
  // throws what the backend throws for bad weights. Neither waits for a running batch.
  std::shared_ptr<const LoadedNetwork> find_network(const protocol::NetworkKey& key) { return networks_.find(key); }
  std::shared_ptr<const LoadedNetwork> load_network(const protocol::NetworkKey& key, const std::string& config_json,
                                                    const std::string& weights) {
    return networks_.load(key, config_json, weights);
  }
  const NetworkCache& networks() const { return networks_; }
  std::string init_weights(const std::string& config_json, std::uint64_t seed);

  std::string device() const;
  InputForm input_form() const { return input_form_; }
  BatcherStats stats() const;
  const BatcherConfig& config() const { return config_; }

 private:
  struct EvalTask;
  struct LegalTask;
  struct EvalBuffers;
  void eval_loop();
  void legal_loop();
  void run_eval_batch(std::vector<BatchQueue<EvalTask>::Slice>& slices, EvalBuffers& buffers);
  void run_eval_group(std::span<const BatchQueue<EvalTask>::Slice> slices, EvalBuffers& buffers);  // one network
  void run_legal_batch(std::vector<BatchQueue<LegalTask>::Slice>& slices);

  std::unique_ptr<EvalBackend> backend_;
  const BatcherConfig config_;
  const Clock::time_point started_ = Clock::now();

  NetworkCache networks_;
  std::string device_;
  InputForm input_form_ = InputForm::kPlanes;

  std::unique_ptr<ThreadPool> encode_pool_;

  std::unique_ptr<BatchQueue<EvalTask>> eval_queue_;
  std::unique_ptr<BatchQueue<LegalTask>> legal_queue_;

  mutable std::mutex stats_mutex_;
  BatcherStats stats_;
  std::deque<std::pair<Clock::time_point, int>> recent_;  // finished eval batches: (time, positions)

  std::atomic<bool> stopped_{false};
  std::atomic<bool> device_lost_{false};
  std::vector<std::thread> eval_threads_;
  std::thread legal_thread_;
};

}  // namespace pgmate::worker
