// A fixed-size pool of threads running queued tasks. Tasks queue per owner (a client
// connection; 0 for the worker's own work) and idle threads serve the owners in turn, each
// owner's tasks in FIFO order: a connection that queues many tasks (a deep perft split
// into thousands) delays another connection's work by one task, not by all of its own.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <vector>

namespace pgmate::worker {

class ThreadPool {
 public:
  explicit ThreadPool(int threads) {
    if (threads < 1) threads = 1;
    for (int i = 0; i < threads; ++i) threads_.emplace_back([this] { loop(); });
  }
  ~ThreadPool() { stop(); }
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  // Returns false (and drops the task) once stop() has begun.
  bool submit(std::function<void()> task, std::uint64_t owner = 0) {
    {
      std::lock_guard lock(mutex_);
      if (stopping_) return false;
      auto& queue = tasks_[owner];
      if (queue.empty()) turns_.push_back(owner);
      queue.push_back(std::move(task));
      ++queued_;
    }
    cv_.notify_one();
    return true;
  }

  // Runs the tasks already queued (tasks should check their own cancellation), then joins.
  void stop() {
    {
      std::lock_guard lock(mutex_);
      if (stopping_ && threads_.empty()) return;
      stopping_ = true;
    }
    cv_.notify_all();
    for (auto& t : threads_)
      if (t.joinable()) t.join();
    threads_.clear();
  }

  int size() const { return int(threads_.size()); }

  std::size_t queued() const {
    std::lock_guard lock(mutex_);
    return queued_;
  }

 private:
  void loop() {
    for (;;) {
      std::function<void()> task;
      {
        std::unique_lock lock(mutex_);
        cv_.wait(lock, [this] { return stopping_ || queued_ > 0; });
        if (queued_ == 0) return;  // stopping and drained
        // The owner whose turn it is; it goes to the back while it has tasks left.
        const std::uint64_t owner = turns_.front();
        turns_.pop_front();
        auto it = tasks_.find(owner);
        task = std::move(it->second.front());
        it->second.pop_front();
        --queued_;
        if (it->second.empty())
          tasks_.erase(it);
        else
          turns_.push_back(owner);
      }
      try {
        task();
      } catch (...) {
        // Tasks report their own errors; one that escapes must not take the worker down.
      }
    }
  }

  mutable std::mutex mutex_;
  std::condition_variable cv_;
  std::unordered_map<std::uint64_t, std::deque<std::function<void()>>> tasks_;  // per owner
  std::deque<std::uint64_t> turns_;  // owners with queued tasks, next first
  std::size_t queued_ = 0;
  std::vector<std::thread> threads_;
  bool stopping_ = false;
};

}  // namespace pgmate::worker
