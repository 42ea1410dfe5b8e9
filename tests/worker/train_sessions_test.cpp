// The training sessions (server/train_sessions.h) with a fake backend, no sockets and no
// LibTorch: ownership by connection, the session limit, order, error mapping, closing.
#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "chess/fen.h"
#include "worker/server/train_sessions.h"

namespace pgmate::worker {
namespace {

using namespace std::chrono_literals;
using protocol::ErrorCode;

// What the fake backend does next, set by the tests.
struct FakeTrainState {
  std::mutex mutex;
  std::vector<int> batch_sizes;   // every step's and evaluation's batch size, in order
  std::atomic<int> fail_next{0};  // 1 runtime_error, 2 invalid_argument, 3 DeviceLost
  std::atomic<int> delay_ms{0};
  std::atomic<int> open{0};       // sessions alive
};

class FakeSession : public TrainSession {
 public:
  FakeSession(std::shared_ptr<FakeTrainState> state, std::int64_t steps) : state_(std::move(state)), steps_(steps) {
    ++state_->open;
  }
  ~FakeSession() override { --state_->open; }
  nn::StepMetrics step(const nn::TrainBatch& batch) override {
    run(batch);
    nn::StepMetrics m;
    m.step = steps_++;
    m.total_loss = 1.0 / double(steps_);
    m.lr = 0.5;
    m.positions = batch.size;
    return m;
  }
  nn::EvalMetrics evaluate(const nn::TrainBatch& batch) override {
    run(batch);
    nn::EvalMetrics m;
    m.total_loss = 2;
    m.positions = batch.size;
    return m;
  }
  std::string weights() const override { return "weights@" + std::to_string(steps_); }
  std::string state() const override { return std::string(1000, 's'); }
  std::int64_t steps_done() const override { return steps_; }
  std::string device() const override { return "fake"; }

 private:
  void run(const nn::TrainBatch& batch) {
    if (int d = state_->delay_ms.load()) std::this_thread::sleep_for(std::chrono::milliseconds(d));
    switch (state_->fail_next.exchange(0)) {
      case 1: throw std::runtime_error("training step: the loss is not finite");
      case 2: throw std::invalid_argument("training batch: bad");
      case 3: throw DeviceLost("an illegal memory access was encountered");
      default: break;
    }
    std::lock_guard lock(state_->mutex);
    state_->batch_sizes.push_back(batch.size);
  }
  std::shared_ptr<FakeTrainState> state_;
  std::int64_t steps_;
};

class FakeTrainBackend : public TrainBackend {
 public:
  explicit FakeTrainBackend(std::shared_ptr<FakeTrainState> state) : state_(std::move(state)) {}
  std::string device() const override { return "fake"; }
  std::unique_ptr<TrainSession> start(const std::string& config, const std::string&, const std::optional<std::string>&,
                                      const std::string&, const std::optional<std::string>& state,
                                      const std::optional<std::string>&) override {
    if (config == "bad") throw std::invalid_argument("network config: bad");
    return std::make_unique<FakeSession>(state_, state ? std::int64_t(state->size()) : 0);
  }

 private:
  std::shared_ptr<FakeTrainState> state_;
};

template <class T>
struct Outcome {
  bool ok = false;
  T value{};
  ErrorCode code{};
  std::string error;
};

// Each call waits for its answer (or 5 s: a missing answer fails the test).
struct Harness {
  std::shared_ptr<FakeTrainState> state = std::make_shared<FakeTrainState>();
  std::atomic<bool> stopping{false};
  std::atomic<int> lost{0};
  TrainSessions sessions;

  explicit Harness(int max_sessions = 3, bool with_backend = true)
      : sessions(with_backend ? std::make_unique<FakeTrainBackend>(state) : nullptr, max_sessions, &stopping,
                 [this](const std::string&) { ++lost; }) {}

  template <class T, class Submit>
  static std::future<Outcome<T>> submit(Submit&& how) {
    auto promise = std::make_shared<std::promise<Outcome<T>>>();
    auto future = promise->get_future();
    how([promise](auto&& value) { promise->set_value(Outcome<T>{true, T(std::move(value)), {}, {}}); },
        [promise](ErrorCode code, const std::string& message) {
          promise->set_value(Outcome<T>{false, T{}, code, message});
        });
    return future;
  }
  template <class T>
  static Outcome<T> wait(std::future<Outcome<T>> f) {
    if (f.wait_for(5s) != std::future_status::ready) {
      ADD_FAILURE() << "no answer";
      return {};
    }
    return f.get();
  }

  std::future<Outcome<protocol::TrainStartReply>> start_async(std::uint64_t conn, const std::string& config = "tiny",
                                                              CancelFlag cancelled = nullptr) {
    return submit<protocol::TrainStartReply>([&](auto done, auto fail) {
      protocol::TrainStartRequest req;
      req.config = config;
      sessions.start(conn, req, cancelled, done, fail);
    });
  }
  Outcome<protocol::TrainStartReply> start(std::uint64_t conn, const std::string& config = "tiny") {
    return wait(start_async(conn, config));
  }
  std::future<Outcome<protocol::TrainMetrics>> step_async(std::uint64_t conn, std::uint32_t session, int samples = 1,
                                                          bool evaluate = false, CancelFlag cancelled = nullptr) {
    return submit<protocol::TrainMetrics>([&](auto done, auto fail) {
      protocol::TrainStepRequest req;
      req.session = session;
      req.mode = evaluate ? protocol::TrainMode::kEvaluate : protocol::TrainMode::kStep;
      protocol::TrainSample s;
      s.history = {chess::parse_fen(chess::kStartFen)};
      s.moves = {chess::Move(12, 28)};
      s.policy = {1};
      req.samples.assign(std::size_t(samples), s);
      sessions.step(conn, std::move(req), cancelled, done, fail);
    });
  }
  Outcome<protocol::TrainMetrics> step(std::uint64_t conn, std::uint32_t session, int samples = 1,
                                       bool evaluate = false) {
    return wait(step_async(conn, session, samples, evaluate));
  }
  Outcome<protocol::TrainSaveReply> save(std::uint64_t conn, std::uint32_t session, std::uint8_t flags,
                                         std::size_t limit = 1u << 20) {
    return wait(submit<protocol::TrainSaveReply>([&](auto done, auto fail) {
      sessions.save(conn, protocol::TrainSaveRequest{session, flags}, limit, nullptr, done, fail);
    }));
  }
};

bool eventually(const std::function<bool()>& condition) {
  for (int i = 0; i < 500; ++i) {
    if (condition()) return true;
    std::this_thread::sleep_for(10ms);
  }
  return condition();
}

TEST(TrainSessions, WithoutABackendEverythingIsUnavailable) {
  Harness h(3, false);
  EXPECT_FALSE(h.sessions.available());
  const auto s = h.start(1);
  EXPECT_FALSE(s.ok);
  EXPECT_EQ(s.code, ErrorCode::kUnavailable);
  EXPECT_EQ(h.step(1, 1).code, ErrorCode::kUnavailable);
  EXPECT_EQ(h.save(1, 1, 0).code, ErrorCode::kUnavailable);
  h.sessions.drop_connection(1);
  EXPECT_EQ(h.sessions.sessions(), 0);
}

TEST(TrainSessions, StepsRunInOrderAndEvaluationsChangeNothing) {
  Harness h;
  const auto s = h.start(1);
  ASSERT_TRUE(s.ok) << s.error;
  EXPECT_GT(s.value.session, 0u);
  EXPECT_EQ(s.value.steps_done, 0);
  EXPECT_EQ(s.value.device, "fake");
  EXPECT_EQ(h.sessions.sessions(), 1);
  // Queued at once, answered in order.
  std::vector<std::future<Outcome<protocol::TrainMetrics>>> pending;
  for (int i = 0; i < 20; ++i) pending.push_back(h.step_async(1, s.value.session, 1 + i, i % 5 == 4));
  std::int64_t next = 0;
  for (int i = 0; i < 20; ++i) {
    const auto m = Harness::wait(std::move(pending[std::size_t(i)]));
    ASSERT_TRUE(m.ok) << m.error;
    EXPECT_EQ(m.value.positions, std::uint32_t(1 + i));
    if (i % 5 == 4) {
      EXPECT_EQ(m.value.step, -1);
      EXPECT_EQ(m.value.total_loss, 2);
      EXPECT_EQ(m.value.lr, 0);
    } else {
      EXPECT_EQ(m.value.step, next++);
      EXPECT_EQ(m.value.lr, 0.5);
    }
  }
  std::vector<int> want;
  for (int i = 0; i < 20; ++i) want.push_back(1 + i);
  EXPECT_EQ(h.state->batch_sizes, want);
  EXPECT_EQ(h.sessions.steps(), 16u);
  const auto saved = h.save(1, s.value.session, protocol::kTrainSaveWeights);
  ASSERT_TRUE(saved.ok) << saved.error;
  EXPECT_EQ(saved.value.steps_done, 16);
  EXPECT_EQ(saved.value.weights, "weights@16");
  EXPECT_TRUE(saved.value.state.empty());
  const auto none = h.save(1, s.value.session, 0);
  EXPECT_TRUE(none.value.weights.empty() && none.value.state.empty());
  // With a state the backend resumes (the fake takes the state's size as the step count).
  const auto resumed = Harness::wait(Harness::submit<protocol::TrainStartReply>([&](auto done, auto fail) {
    protocol::TrainStartRequest req;
    req.state = std::string(7, 'x');
    h.sessions.start(1, req, nullptr, done, fail);
  }));
  ASSERT_TRUE(resumed.ok) << resumed.error;
  EXPECT_EQ(resumed.value.steps_done, 7);
}

TEST(TrainSessions, SessionsBelongToTheirConnection) {
  Harness h;
  const auto a = h.start(1), b = h.start(2);
  ASSERT_TRUE(a.ok && b.ok);
  EXPECT_NE(a.value.session, b.value.session);
  for (const auto& m : {h.step(2, a.value.session), h.step(1, 999)}) {
    EXPECT_FALSE(m.ok);
    EXPECT_EQ(m.code, ErrorCode::kBadRequest);
  }
  const auto other = h.save(2, a.value.session, protocol::kTrainSaveClose);
  EXPECT_EQ(other.code, ErrorCode::kBadRequest);
  EXPECT_EQ(other.error, "no training session " + std::to_string(a.value.session) + " on this connection");
  EXPECT_TRUE(h.step(1, a.value.session).ok);  // still there
  // A connection that goes away takes its sessions, not the others'.
  h.sessions.drop_connection(1);
  EXPECT_TRUE(eventually([&] { return h.sessions.sessions() == 1; }));
  EXPECT_EQ(h.state->open.load(), 1);
  EXPECT_EQ(h.step(1, a.value.session).code, ErrorCode::kBadRequest);
  EXPECT_TRUE(h.step(2, b.value.session).ok);
}

TEST(TrainSessions, TheLimitCountsOpenSessionsAndClosingFreesAPlace) {
  Harness h(2);
  const auto a = h.start(1), b = h.start(2);
  ASSERT_TRUE(a.ok && b.ok);
  const auto c = h.start(1);
  EXPECT_EQ(c.code, ErrorCode::kBusy);
  EXPECT_NE(c.error.find("too many training sessions"), std::string::npos) << c.error;
  const auto closed = h.save(1, a.value.session, protocol::kTrainSaveState | protocol::kTrainSaveClose);
  ASSERT_TRUE(closed.ok) << closed.error;
  EXPECT_EQ(closed.value.state.size(), 1000u);
  EXPECT_EQ(h.sessions.sessions(), 1);
  EXPECT_EQ(h.step(1, a.value.session).code, ErrorCode::kBadRequest);
  // A start that fails gives its place back.
  const auto bad = h.start(1, "bad");
  EXPECT_EQ(bad.code, ErrorCode::kBadRequest);
  EXPECT_EQ(bad.error, "network config: bad");
  EXPECT_EQ(h.sessions.sessions(), 1);
  const auto again = h.start(1);
  ASSERT_TRUE(again.ok);
  EXPECT_NE(again.value.session, a.value.session);  // ids are not reused
  EXPECT_EQ(h.sessions.sessions(), 2);
}

TEST(TrainSessions, ErrorsAreMappedAndTheSessionStaysUsable) {
  Harness h;
  const auto s = h.start(1);
  ASSERT_TRUE(s.ok);
  const std::uint32_t id = s.value.session;
  h.state->fail_next = 1;
  auto m = h.step(1, id);
  EXPECT_EQ(m.code, ErrorCode::kBackend);
  EXPECT_EQ(m.error, "training step: the loss is not finite");
  h.state->fail_next = 2;
  m = h.step(1, id);
  EXPECT_EQ(m.code, ErrorCode::kBadRequest);
  EXPECT_EQ(m.error, "training batch: bad");
  // A sample the batch builder refuses: kBadRequest naming it, before the backend runs.
  auto bad = Harness::wait(Harness::submit<protocol::TrainMetrics>([&](auto done, auto fail) {
    protocol::TrainStepRequest req;
    req.session = id;
    protocol::TrainSample sample;
    sample.history = {chess::parse_fen(chess::kStartFen)};
    sample.moves = {chess::Move(12, 36)};
    sample.policy = {1};
    req.samples = {sample};
    h.sessions.step(1, req, nullptr, done, fail);
  }));
  EXPECT_EQ(bad.code, ErrorCode::kBadRequest);
  EXPECT_NE(bad.error.find("sample 0: the target move e2e5 is not legal"), std::string::npos) << bad.error;
  m = h.step(1, id);
  ASSERT_TRUE(m.ok) << m.error;
  EXPECT_EQ(m.value.step, 0);  // the failed steps took none
  EXPECT_EQ(h.lost.load(), 0);
  h.state->fail_next = 3;
  m = h.step(1, id);
  EXPECT_EQ(m.code, ErrorCode::kBackend);
  EXPECT_NE(m.error.find("the GPU failed"), std::string::npos) << m.error;
  EXPECT_EQ(h.lost.load(), 1);
}

TEST(TrainSessions, ATooLargeSaveFailsAndKeepsTheSession) {
  Harness h;
  const auto s = h.start(1);
  ASSERT_TRUE(s.ok);
  const auto big = h.save(1, s.value.session, protocol::kTrainSaveState | protocol::kTrainSaveClose, 500);
  EXPECT_EQ(big.code, ErrorCode::kTooLarge);
  EXPECT_NE(big.error.find("exceeds the frame limit of 500 bytes"), std::string::npos) << big.error;
  EXPECT_EQ(h.sessions.sessions(), 1);
  EXPECT_TRUE(h.save(1, s.value.session, protocol::kTrainSaveWeights, 500).ok);
}

TEST(TrainSessions, CancelledRequestsAreDroppedAndStoppingFailsTheRest) {
  Harness h;
  const auto s = h.start(1);
  ASSERT_TRUE(s.ok);
  h.state->delay_ms = 200;
  auto running = h.step_async(1, s.value.session);
  auto flag = std::make_shared<std::atomic<bool>>(false);
  auto dropped = h.step_async(1, s.value.session, 1, false, flag);
  auto start = h.start_async(1, "tiny", flag);
  flag->store(true);
  EXPECT_TRUE(Harness::wait(std::move(running)).ok);
  // Skipped without an answer (nobody waits for one): the callbacks are released uncalled.
  ASSERT_EQ(dropped.wait_for(5s), std::future_status::ready);
  ASSERT_EQ(start.wait_for(5s), std::future_status::ready);
  EXPECT_THROW(dropped.get(), std::future_error);
  EXPECT_THROW(start.get(), std::future_error);
  EXPECT_EQ(h.sessions.sessions(), 1);  // the dropped start gave its place back
  h.state->delay_ms = 0;
  h.stopping = true;
  EXPECT_EQ(h.step(1, s.value.session).code, ErrorCode::kShuttingDown);
  h.sessions.stop();
  EXPECT_EQ(h.sessions.sessions(), 0);
  EXPECT_EQ(h.state->open.load(), 0);
  EXPECT_EQ(h.start(1).code, ErrorCode::kShuttingDown);
}

}  // namespace
}  // namespace pgmate::worker
