#include "worker/server/train_sessions.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <stdexcept>
#include <utility>
#include <vector>

#include "worker/server/train_samples.h"

namespace pgmate::worker {

using protocol::ErrorCode;

namespace {

bool flag_set(const CancelFlag& f) { return f && f->load(std::memory_order_relaxed); }

std::string milliseconds_since(Clock::time_point t0) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f ms", std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
  return buf;
}

}  // namespace

TrainSessions::TrainSessions(std::unique_ptr<TrainBackend> backend, int max_sessions,
                             const std::atomic<bool>* stopping, DeviceLostFn on_device_lost, LogFn log)
    : backend_(std::move(backend)),
      max_sessions_(std::max(1, max_sessions)),
      stopping_(stopping),
      on_device_lost_(std::move(on_device_lost)),
      log_(std::move(log)) {
  if (backend_) thread_ = std::make_unique<ThreadPool>(1);
}

TrainSessions::~TrainSessions() { stop(); }

void TrainSessions::stop() {
  if (thread_) thread_->stop();
  // The thread is joined: nothing else touches the sessions now. Freed here, before the
  // backend that made them.
  if (!sessions_.empty()) log("closing " + std::to_string(sessions_.size()) + " training sessions");
  sessions_.clear();
  count_ = 0;
}

void TrainSessions::submit(std::uint64_t conn, std::function<void()> task, const ErrorFn& fail) {
  // The thread pool's turns are per owner: one connection's requests run in order, and
  // connections take turns.
  if (!thread_->submit(std::move(task), conn)) fail(ErrorCode::kShuttingDown, "the worker is shutting down");
}

bool TrainSessions::skip(const CancelFlag& cancelled, const ErrorFn& fail) const {
  if (flag_set(cancelled)) return true;  // nobody waits for the answer
  if (stopping_ && stopping_->load()) {
    fail(ErrorCode::kShuttingDown, "the worker is shutting down");
    return true;
  }
  return false;
}

template <class Work>
bool TrainSessions::guarded(const ErrorFn& fail, Work&& work) {
  try {
    work();
    return true;
  } catch (const DeviceLost& e) {
    if (!device_lost_.exchange(true) && on_device_lost_) on_device_lost_(e.what());
    fail(ErrorCode::kBackend, std::string("the GPU failed (") + e.what() + "); the worker restarts");
  } catch (const std::invalid_argument& e) {
    fail(ErrorCode::kBadRequest, e.what());
  } catch (const std::exception& e) {
    fail(ErrorCode::kBackend, e.what());
  } catch (...) {
    fail(ErrorCode::kInternal, "training failed (unknown exception)");
  }
  return false;
}

TrainSessions::Session* TrainSessions::find(std::uint64_t conn, std::uint32_t id, const ErrorFn& fail) {
  const auto it = sessions_.find(id);
  // Another connection's session is as unknown as one that never existed.
  if (it == sessions_.end() || it->second.conn != conn) {
    fail(ErrorCode::kBadRequest, "no training session " + std::to_string(id) + " on this connection");
    return nullptr;
  }
  return &it->second;
}

void TrainSessions::close(std::uint32_t id, const char* why) {
  const auto it = sessions_.find(id);
  if (it == sessions_.end()) return;
  const std::int64_t steps = it->second.trainer->steps_done();
  sessions_.erase(it);
  --count_;
  log("training session " + std::to_string(id) + " closed (" + why + ") at step " + std::to_string(steps) + "; " +
      std::to_string(sessions_.size()) + " open");
}

void TrainSessions::start(std::uint64_t conn, protocol::TrainStartRequest request, CancelFlag cancelled,
                          std::function<void(protocol::TrainStartReply&&)> done, ErrorFn fail) {
  if (!backend_) return fail(ErrorCode::kUnavailable, "this worker has no training backend");
  // A place is taken now, so that the limit also counts the starts still queued.
  for (int n = count_.load();;) {
    if (n >= max_sessions_)
      return fail(ErrorCode::kBusy, "too many training sessions (" + std::to_string(max_sessions_) +
                                        " open); close one first");
    if (count_.compare_exchange_weak(n, n + 1)) break;
  }
  auto req = std::make_shared<protocol::TrainStartRequest>(std::move(request));
  const bool queued = thread_->submit(
      [this, conn, req, cancelled, done = std::move(done), fail] {
        // The place is given back before the answer, so that a client answered can count on it.
        bool given_back = false;
        const ErrorFn give_back = [&](ErrorCode code, const std::string& message) {
          --count_;
          given_back = true;
          fail(code, message);
        };
        std::unique_ptr<TrainSession> trainer;
        if (skip(cancelled, give_back) ||
            !guarded(give_back, [&] {
              trainer = backend_->start(req->config, req->weights, req->reference, req->options, req->state,
                                       req->optimizer);
            })) {
          if (!given_back) --count_;
          return;
        }
        std::uint32_t id = next_id_++;
        while (id == 0 || sessions_.count(id)) id = next_id_++;  // after 2^32 sessions
        protocol::TrainStartReply reply;
        reply.session = id;
        reply.steps_done = trainer->steps_done();
        reply.device = trainer->device();
        log("training session " + std::to_string(id) + " opened on " + reply.device + " at step " +
            std::to_string(reply.steps_done) + (req->state ? " (resumed)" : req->optimizer ? " (optimizer taken over)" : "") + "; " +
            std::to_string(sessions_.size() + 1) + " open");
        sessions_.emplace(id, Session{conn, std::move(trainer)});
        done(std::move(reply));
      },
      conn);
  if (!queued) {
    --count_;
    fail(ErrorCode::kShuttingDown, "the worker is shutting down");
  }
}

namespace {

// The fields a step's and an evaluation's metrics share, as the reply carries them.
template <class Metrics>
protocol::TrainMetrics shared_metrics(const Metrics& m) {
  protocol::TrainMetrics out;
  out.policy_loss = m.policy_loss;
  out.value_loss = m.value_loss;
  out.kl = m.kl;
  out.total_loss = m.total_loss;
  out.accuracy = m.accuracy;
  out.kl_weight = m.kl_weight;
  out.positions = std::uint32_t(m.positions);
  return out;
}

}  // namespace

void TrainSessions::step(std::uint64_t conn, protocol::TrainStepRequest request, CancelFlag cancelled,
                         std::function<void(const protocol::TrainMetrics&)> done, ErrorFn fail) {
  if (!backend_) return fail(ErrorCode::kUnavailable, "this worker has no training backend");
  auto req = std::make_shared<protocol::TrainStepRequest>(std::move(request));
  submit(
      conn,
      [this, conn, req, cancelled, done = std::move(done), fail] {
        if (skip(cancelled, fail)) return;
        Session* session = find(conn, req->session, fail);
        if (!session) return;
        protocol::TrainMetrics out;
        const bool ok = guarded(fail, [&] {
          const nn::TrainBatch batch = make_train_batch(req->samples);
          if (req->mode == protocol::TrainMode::kStep) {
            const nn::StepMetrics m = session->trainer->step(batch);
            out = shared_metrics(m);
            out.step = m.step;
            out.lr = m.lr;
            out.grad_norm = m.grad_norm;
            ++steps_;
          } else {
            out = shared_metrics(session->trainer->evaluate(batch));
            out.step = -1;
          }
        });
        if (ok) done(out);
      },
      fail);
}

void TrainSessions::save(std::uint64_t conn, protocol::TrainSaveRequest request, std::size_t max_reply_bytes,
                         CancelFlag cancelled, std::function<void(protocol::TrainSaveReply&&)> done, ErrorFn fail) {
  if (!backend_) return fail(ErrorCode::kUnavailable, "this worker has no training backend");
  submit(
      conn,
      [this, conn, request, max_reply_bytes, cancelled, done = std::move(done), fail] {
        if (skip(cancelled, fail)) return;
        Session* session = find(conn, request.session, fail);
        if (!session) return;
        const auto t0 = Clock::now();
        protocol::TrainSaveReply reply;
        const bool ok = guarded(fail, [&] {
          reply.steps_done = session->trainer->steps_done();
          if (request.flags & protocol::kTrainSaveWeights) reply.weights = session->trainer->weights();
          if (request.flags & protocol::kTrainSaveState) reply.state = session->trainer->state();
        });
        if (!ok) return;
        const std::size_t bytes = 8 + 4 + reply.weights.size() + 4 + reply.state.size();
        if (bytes > max_reply_bytes)
          return fail(ErrorCode::kTooLarge, "training session " + std::to_string(request.session) + ": the reply (" +
                                                std::to_string(bytes) + " bytes) exceeds the frame limit of " +
                                                std::to_string(max_reply_bytes) +
                                                " bytes; ask for the weights and the state separately");
        if (request.flags & (protocol::kTrainSaveWeights | protocol::kTrainSaveState))
          log("training session " + std::to_string(request.session) + " saved at step " +
              std::to_string(reply.steps_done) + " (" + std::to_string(bytes) + " bytes, " + milliseconds_since(t0) +
              ")");
        if (request.flags & protocol::kTrainSaveClose) close(request.session, "asked by its client");
        done(std::move(reply));
      },
      fail);
}

void TrainSessions::drop_connection(std::uint64_t conn) {
  if (!thread_) return;
  // Queued behind the connection's own requests (skipped: they see its cancel flag). If the
  // thread has stopped, stop() closes everything anyway.
  thread_->submit(
      [this, conn] {
        std::vector<std::uint32_t> ids;
        for (const auto& [id, s] : sessions_)
          if (s.conn == conn) ids.push_back(id);
        for (std::uint32_t id : ids) close(id, "its client went away");
      },
      conn);
}

}  // namespace pgmate::worker
