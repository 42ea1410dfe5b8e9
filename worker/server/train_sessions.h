// TRAIN_START, TRAIN_STEP and TRAIN_SAVE: the worker's training sessions, each a network in
// training opened by a TrainBackend and owned by the connection that started it.
//
// Every request runs on one training thread of its own (never the poll loop, never the
// control thread that loads networks): training steps take seconds on large batches and
// would otherwise hold up everything queued behind them. Requests queue per connection and
// the connections take turns, each one's requests in order, so a session's steps run in the
// order they were sent. A session can only be named by its connection; a connection that
// goes away takes its sessions with it (after its queued requests, which are skipped).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>

#include "link/protocol.h"
#include "worker/server/batcher.h"
#include "worker/server/thread_pool.h"
#include "worker/backend/train_backend.h"

namespace pgmate::worker {

class TrainSessions {
 public:
  using LogFn = std::function<void(const std::string&)>;
  using DeviceLostFn = std::function<void(const std::string&)>;

  // `backend` null: no training (requests are refused with kUnavailable, no thread runs).
  // `stopping` (optional) is checked before each request, which then fails with
  // kShuttingDown. `on_device_lost` is told (once) when the backend throws DeviceLost.
  TrainSessions(std::unique_ptr<TrainBackend> backend, int max_sessions, const std::atomic<bool>* stopping,
                DeviceLostFn on_device_lost = {}, LogFn log = {});
  ~TrainSessions();
  TrainSessions(const TrainSessions&) = delete;
  TrainSessions& operator=(const TrainSessions&) = delete;

  bool available() const { return backend_ != nullptr; }
  std::string device() const { return backend_ ? backend_->device() : std::string(); }
  int sessions() const { return count_.load(); }  // open, or being opened
  std::uint64_t steps() const { return steps_.load(); }  // optimizer steps taken, all sessions

  // Each calls exactly one of done / fail: from the training thread, or from the caller's
  // when refused at once (no backend: kUnavailable; max_sessions open: kBusy; stopping).
  // A request not yet started when its cancel flag is set (the connection went away) is
  // dropped without a call.
  // Errors: std::invalid_argument from the backend -> kBadRequest; other exceptions ->
  // kBackend with their message (a failed step leaves the session as it was); DeviceLost
  // -> kBackend and on_device_lost.
  void start(std::uint64_t conn, protocol::TrainStartRequest request, CancelFlag cancelled,
             std::function<void(protocol::TrainStartReply&&)> done, ErrorFn fail);
  void step(std::uint64_t conn, protocol::TrainStepRequest request, CancelFlag cancelled,
            std::function<void(const protocol::TrainMetrics&)> done, ErrorFn fail);
  // `max_reply_bytes`: the largest TRAIN_SAVE_REPLY payload allowed; a larger one fails
  // with kTooLarge and keeps the session (even with the close flag).
  void save(std::uint64_t conn, protocol::TrainSaveRequest request, std::size_t max_reply_bytes,
            CancelFlag cancelled, std::function<void(protocol::TrainSaveReply&&)> done, ErrorFn fail);

  // The connection closed: its sessions are closed once its queued requests are done.
  void drop_connection(std::uint64_t conn);

  // Runs what is queued (failing it when `stopping` is set), then closes every session.
  // Idempotent.
  void stop();

  static constexpr int kDefaultMaxSessions = 8;

 private:
  struct Session {
    std::uint64_t conn = 0;
    std::unique_ptr<TrainSession> trainer;
  };

  // Training thread only.
  Session* find(std::uint64_t conn, std::uint32_t id, const ErrorFn& fail);
  void close(std::uint32_t id, const char* why);
  bool skip(const CancelFlag& cancelled, const ErrorFn& fail) const;
  // Runs `work`; maps its exceptions to fail() (see above). True when it succeeded.
  template <class Work>
  bool guarded(const ErrorFn& fail, Work&& work);
  // Queues a task for `conn`; fails the request with kShuttingDown when the thread stopped.
  void submit(std::uint64_t conn, std::function<void()> task, const ErrorFn& fail);

  void log(const std::string& line) const {
    if (log_) log_(line);
  }

  std::unique_ptr<TrainBackend> backend_;
  const int max_sessions_;
  const std::atomic<bool>* stopping_;
  DeviceLostFn on_device_lost_;
  LogFn log_;
  std::atomic<bool> device_lost_{false};
  std::atomic<int> count_{0};  // sessions open plus starts queued (the limit counts both)
  std::atomic<std::uint64_t> steps_{0};
  std::unique_ptr<ThreadPool> thread_;  // one thread; null without a backend

  // Training thread only (and stop(), once the thread is joined).
  std::unordered_map<std::uint32_t, Session> sessions_;
  std::uint32_t next_id_ = 1;
};

}  // namespace pgmate::worker
