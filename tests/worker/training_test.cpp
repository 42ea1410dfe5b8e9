// Training over the worker protocol, end to end: a Server with the LibTorch evaluation and
// training backends on the CPU, on a temporary socket, and WorkerClient's train_* calls.
// Tiny networks (the "tiny" preset) throughout.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "chess/fen.h"
#include "chess/movegen.h"
#include "chess/notation.h"
#include "link/worker_client.h"
#include "common/sha256.h"
#include "worker/nn/network.h"
#include "link/network_config.h"
#include "link/protocol.h"
#include "worker/server/server.h"
#include "worker/backend/train_backend.h"
#include "worker_test_util.h"

namespace pgmate::worker {
namespace {

using namespace std::chrono_literals;
using protocol::Bytes;
using protocol::TrainMetrics;
using protocol::TrainSample;

const std::string kTiny = "tiny";
const std::string kAdamW = R"({"optimizer": "adamw", "lr": 0.003, "weight_decay": 0})";

struct TrainingServer {
  testing::TempDir dir;
  std::unique_ptr<Server> server;

  explicit TrainingServer(bool with_training = true, int max_sessions = 8) {
    ServerConfig config;
    config.socket_path = dir.file("worker.sock");
    config.threads = 1;
    config.max_train_sessions = max_sessions;
    server = std::make_unique<Server>(config, make_torch_backend("cpu"),
                                      with_training ? make_torch_train_backend("cpu") : nullptr);
    server->start();
  }
  ~TrainingServer() { server->stop(); }
  WorkerClient client() const {
    ClientOptions o;
    o.address = server->socket_path();
    o.request_timeout = 60s;
    return WorkerClient(o);
  }
};

// Random positions from random games, each with a few of its legal moves as the target
// (one-hot with `one_hot`), a random WDL target and repetition count; encoded.
std::vector<Bytes> make_samples(std::uint64_t seed, int count, bool one_hot = true) {
  std::mt19937_64 rng(seed);
  std::vector<Bytes> out;
  std::uniform_real_distribution<float> unit(0.05f, 1.0f);
  for (const auto& history : testing::random_histories(seed, count * 2)) {
    if (int(out.size()) == count) break;
    chess::MoveList legal;
    chess::legal_moves(history.front(), legal);
    if (legal.size == 0) continue;
    TrainSample s;
    s.history = history;
    s.repetitions = std::uint8_t(rng() % 3);
    const int n = one_hot ? 1 : std::min(legal.size, 1 + int(rng() % 3));
    std::vector<chess::Move> moves(legal.begin(), legal.end());
    std::shuffle(moves.begin(), moves.end(), rng);
    for (int k = 0; k < n; ++k) {
      s.moves.push_back(moves[std::size_t(k)]);
      s.policy.push_back(one_hot ? 1.0f : unit(rng));
    }
    for (float& v : s.wdl) v = 0;
    s.wdl[rng() % 3] = 1;
    protocol::Writer w;
    protocol::encode_train_sample(w, s);
    out.push_back(std::move(w.bytes()));
  }
  return out;
}

std::vector<std::span<const std::uint8_t>> spans(const std::vector<Bytes>& samples) {
  return {samples.begin(), samples.end()};
}

TrainSample decoded(const Bytes& sample) {
  protocol::Reader r(sample, protocol::MessageType::kTrainStep);
  return protocol::decode_train_sample(r, 0);
}

protocol::NetworkKey key_of(std::int64_t id, const std::string& weights) {
  protocol::NetworkKey k;
  k.id = id;
  k.sha256 = sha256(weights);
  return k;
}

int training_sessions(WorkerClient& client) {
  const std::string json = client.status_json();
  const std::string field = "\"training_sessions\":";
  const auto at = json.find(field);
  if (at == std::string::npos) throw std::runtime_error("no training_sessions in " + json);
  return std::atoi(json.c_str() + at + field.size());
}

void expect_same(const TrainMetrics& a, const TrainMetrics& b) {
  EXPECT_EQ(a.step, b.step);
  EXPECT_DOUBLE_EQ(a.policy_loss, b.policy_loss);
  EXPECT_DOUBLE_EQ(a.value_loss, b.value_loss);
  EXPECT_DOUBLE_EQ(a.kl, b.kl);
  EXPECT_DOUBLE_EQ(a.total_loss, b.total_loss);
  EXPECT_DOUBLE_EQ(a.accuracy, b.accuracy);
  EXPECT_DOUBLE_EQ(a.lr, b.lr);
  EXPECT_DOUBLE_EQ(a.grad_norm, b.grad_norm);
  EXPECT_DOUBLE_EQ(a.kl_weight, b.kl_weight);
  EXPECT_EQ(a.positions, b.positions);
}

template <class F>
std::string worker_error(F&& f) {
  try {
    f();
  } catch (const WorkerError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no WorkerError";
  return "";
}

TEST(WorkerTraining, TheLossFallsOnARepeatedBatchAndTheWeightsServeEvaluations) {
  TrainingServer ts;
  WorkerClient client = ts.client();
  const std::string initial = client.init_network_weights(kTiny, 3);
  const auto session = client.train_start(kTiny, initial, std::nullopt, kAdamW, std::nullopt);
  EXPECT_GT(session.session, 0u);
  EXPECT_EQ(session.steps_done, 0);
  EXPECT_EQ(session.device, "cpu");
  EXPECT_EQ(training_sessions(client), 1);

  const auto samples = make_samples(1, 16);
  const TrainMetrics before = client.train_step(session.session, spans(samples), /*evaluate_only=*/true);
  EXPECT_EQ(before.step, -1);
  double first = 0, last = 0;
  for (int i = 0; i < 20; ++i) {
    const TrainMetrics m = client.train_step(session.session, spans(samples));
    EXPECT_EQ(m.step, i);
    EXPECT_EQ(m.positions, 16u);
    EXPECT_DOUBLE_EQ(m.lr, 0.003);
    EXPECT_GT(m.grad_norm, 0);
    if (i == 0) first = m.total_loss;
    last = m.total_loss;
  }
  const TrainMetrics after = client.train_step(session.session, spans(samples), true);
  std::printf("loss %.3f -> %.3f over 20 steps; eval policy %.3f -> %.3f, value %.3f -> %.3f, top-1 %.2f -> %.2f\n",
              first, last, before.policy_loss, after.policy_loss, before.value_loss, after.value_loss,
              before.accuracy, after.accuracy);
  EXPECT_LT(last, 0.8 * first);
  EXPECT_LT(after.policy_loss, before.policy_loss);
  EXPECT_LT(after.value_loss, before.value_loss);
  EXPECT_NE(client.status_json().find("\"training_steps\":20"), std::string::npos) << client.status_json();

  // The trained weights: a network file the worker serves, and that prefers the targets.
  const auto saved = client.train_save(session.session, /*weights=*/true, /*state=*/false);
  EXPECT_EQ(saved.steps_done, 20);
  EXPECT_TRUE(saved.state.empty());
  EXPECT_NO_THROW(nn::load_network(nn::parse_network_config(kTiny), saved.weights));
  client.load_network(key_of(1, initial), kTiny, initial);
  client.load_network(key_of(2, saved.weights), kTiny, saved.weights);
  std::vector<EvalInput> inputs;
  std::vector<chess::Move> targets;
  for (const auto& bytes : samples) {
    const TrainSample s = decoded(bytes);
    inputs.push_back(EvalInput{s.history, s.repetitions});
    targets.push_back(s.moves[0]);
  }
  const auto old_out = client.evaluate(inputs, key_of(1, initial)).outputs;
  const auto new_out = client.evaluate(inputs, key_of(2, saved.weights)).outputs;
  ASSERT_EQ(new_out.size(), inputs.size());
  int preferred = 0;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const auto& moves = new_out[i].moves;
    const auto at = std::find(moves.begin(), moves.end(), targets[i]);
    ASSERT_NE(at, moves.end());
    const auto k = std::size_t(at - moves.begin());
    if (new_out[i].priors[k] > old_out[i].priors[k]) ++preferred;
  }
  EXPECT_GE(preferred, 14) << "of 16";
}

TEST(WorkerTraining, AResumedSessionTakesTheSameNextStep) {
  TrainingServer ts;
  WorkerClient client = ts.client();
  const std::string weights = client.init_network_weights(kTiny, 4);
  const std::string reference = client.init_network_weights(kTiny, 5);
  const std::string options =
      R"({"optimizer": "adamw", "lr": 0.002, "schedule": "cosine", "warmup_steps": 2, "total_steps": 10, "seed": 5, "kl_weight": 0.2, "kl_target": 0.001})";
  std::vector<std::vector<Bytes>> batches;
  for (int i = 0; i < 5; ++i) batches.push_back(make_samples(10 + i, 6, i % 2 == 0));

  const auto run = client.train_start(kTiny, weights, reference, options, std::nullopt);
  for (int i = 0; i < 3; ++i) client.train_step(run.session, spans(batches[std::size_t(i)]));
  const auto saved = client.train_save(run.session, true, true);
  EXPECT_EQ(saved.steps_done, 3);
  EXPECT_FALSE(saved.state.empty());
  EXPECT_FALSE(saved.weights.empty());

  // Resumed with the same options, and with "" (the saved ones): config and weights are not needed.
  const auto same = client.train_start("", "", reference, options, saved.state);
  const auto kept = client.train_start("", "", reference, "", saved.state);
  EXPECT_EQ(same.steps_done, 3);
  EXPECT_EQ(kept.steps_done, 3);
  EXPECT_EQ(training_sessions(client), 3);
  for (int i = 3; i < 5; ++i) {
    SCOPED_TRACE("step " + std::to_string(i));
    const auto a = client.train_step(run.session, spans(batches[std::size_t(i)]));
    const auto b = client.train_step(same.session, spans(batches[std::size_t(i)]));
    const auto c = client.train_step(kept.session, spans(batches[std::size_t(i)]));
    EXPECT_EQ(a.step, i);
    expect_same(a, b);
    expect_same(a, c);
  }
  EXPECT_EQ(client.train_save(same.session, true, false).weights, client.train_save(run.session, true, false).weights);
  // Another reference than the one trained against is refused.
  const std::string msg = worker_error([&] { client.train_start("", "", weights, options, saved.state); });
  EXPECT_NE(msg.find("reference"), std::string::npos) << msg;
}

// The learning loop's next candidate: a new session on the trained weights that takes the
// last run's optimizer makes the update that run would have made next (a step count of its
// own: 0); one that does not makes another.
TEST(WorkerTraining, ANewSessionTakesAnEarlierRunsOptimizer) {
  TrainingServer ts;
  WorkerClient client = ts.client();
  const std::string options = R"({"optimizer": "adamw", "lr": 0.002, "schedule": "constant", "dropout": 0, "seed": 8})";
  std::vector<std::vector<Bytes>> batches;
  for (int i = 0; i < 4; ++i) batches.push_back(make_samples(40 + i, 6, i % 2 == 0));
  const auto run = client.train_start(kTiny, client.init_network_weights(kTiny, 6), std::nullopt, options, std::nullopt);
  for (int i = 0; i < 2; ++i) client.train_step(run.session, spans(batches[std::size_t(i)]));
  const auto saved = client.train_save(run.session, true, true);

  const auto next = client.train_start(kTiny, saved.weights, std::nullopt, options, std::nullopt, saved.state);
  const auto cold = client.train_start(kTiny, saved.weights, std::nullopt, options, std::nullopt);
  EXPECT_EQ(next.steps_done, 0);
  for (int i = 2; i < 4; ++i) {
    SCOPED_TRACE("step " + std::to_string(i));
    const auto a = client.train_step(run.session, spans(batches[std::size_t(i)]));
    const auto b = client.train_step(next.session, spans(batches[std::size_t(i)]));
    client.train_step(cold.session, spans(batches[std::size_t(i)]));
    EXPECT_EQ(b.step, i - 2);
    EXPECT_EQ(a.total_loss, b.total_loss);
    EXPECT_EQ(a.grad_norm, b.grad_norm);
  }
  const std::string trained = client.train_save(run.session, true, false).weights;
  EXPECT_EQ(client.train_save(next.session, true, false).weights, trained);
  EXPECT_NE(client.train_save(cold.session, true, false).weights, trained);
  // An optimizer of another kind is refused, naming it.
  const std::string msg = worker_error([&] {
    client.train_start(kTiny, saved.weights, std::nullopt, R"({"optimizer": "sgd"})", std::nullopt, saved.state);
  });
  EXPECT_NE(msg.find("optimizer"), std::string::npos) << msg;
}

TEST(WorkerTraining, AnIllegalTargetMoveIsNamedAndTheSessionGoesOn) {
  TrainingServer ts;
  WorkerClient client = ts.client();
  const auto session = client.train_start(kTiny, client.init_network_weights(kTiny, 6), std::nullopt, kAdamW, std::nullopt);
  auto samples = make_samples(20, 3);
  client.train_step(session.session, spans(samples));
  TrainSample bad = decoded(samples[2]);
  const chess::Board& b = bad.history.front();
  // A move of no piece: from an empty square.
  chess::Square empty = 0;
  while (b.piece_on(empty) != chess::kNoPiece) ++empty;
  bad.moves = {chess::Move(empty, chess::Square(empty == 63 ? 62 : empty + 1))};
  protocol::Writer w;
  protocol::encode_train_sample(w, bad);
  samples[2] = std::move(w.bytes());
  const std::string msg = worker_error([&] { client.train_step(session.session, spans(samples)); });
  EXPECT_NE(msg.find("sample 2: the target move " + chess::to_uci(bad.moves[0]) + " is not legal in " +
                     chess::to_fen(b)),
            std::string::npos)
      << msg;
  samples[2] = make_samples(21, 1)[0];
  const auto m = client.train_step(session.session, spans(samples));
  EXPECT_EQ(m.step, 1);  // the refused request took no step
}

TEST(WorkerTraining, ANonFiniteLossFailsTheStepAndKeepsTheWeights) {
  TrainingServer ts;
  WorkerClient client = ts.client();
  // The largest learning rate the options allow, and weight decay that makes every step
  // multiply the weights by about -9: they overflow within a few dozen steps.
  const auto session = client.train_start(kTiny, client.init_network_weights(kTiny, 7), std::nullopt,
                                          R"({"optimizer": "sgd", "lr": 10, "weight_decay": 1, "dropout": 0})",
                                          std::nullopt);
  const auto samples = make_samples(30, 4);
  std::string before, msg;
  std::int64_t steps = 0;
  for (int i = 0; i < 200 && msg.empty(); ++i) {
    before = client.train_save(session.session, true, false).weights;
    try {
      client.train_step(session.session, spans(samples));
      ++steps;
    } catch (const WorkerError& e) {
      msg = e.what();
    }
  }
  ASSERT_FALSE(msg.empty()) << "the loss stayed finite for 200 steps";
  std::printf("failed after %lld steps: %s\n", static_cast<long long>(steps), msg.c_str());
  EXPECT_NE(msg.find("not finite"), std::string::npos) << msg;
  // The session answers, with the weights of before the failed step.
  const auto saved = client.train_save(session.session, true, false);
  EXPECT_EQ(saved.steps_done, steps);
  EXPECT_EQ(saved.weights, before);
  EXPECT_NO_THROW(client.train_step(session.session, spans(samples), true));
}

TEST(WorkerTraining, SessionsEndWithTheirConnectionAndBelongToIt) {
  TrainingServer ts;
  WorkerClient watcher = ts.client();
  const std::string weights = watcher.init_network_weights(kTiny, 8);
  const auto samples = make_samples(40, 2);
  std::uint32_t id = 0;
  {
    WorkerClient owner = ts.client();
    id = owner.train_start(kTiny, weights, std::nullopt, "", std::nullopt).session;
    owner.train_step(id, spans(samples));
    EXPECT_EQ(training_sessions(watcher), 1);
    // Another connection cannot use it.
    const std::string msg = worker_error([&] { watcher.train_step(id, spans(samples)); });
    EXPECT_NE(msg.find("no training session " + std::to_string(id) + " on this connection"), std::string::npos) << msg;
    EXPECT_NE(worker_error([&] { watcher.train_save(id, true, false, true); }).find("no training session"),
              std::string::npos);
  }
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (training_sessions(watcher) != 0 && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(10ms);
  EXPECT_EQ(training_sessions(watcher), 0);

  // Closing by TRAIN_SAVE: the answer comes first, then the session is gone.
  const auto mine = watcher.train_start(kTiny, weights, std::nullopt, "", std::nullopt);
  const auto last = watcher.train_save(mine.session, false, true, /*close=*/true);
  EXPECT_FALSE(last.state.empty());
  EXPECT_EQ(training_sessions(watcher), 0);
  EXPECT_NE(worker_error([&] { watcher.train_step(mine.session, spans(samples)); }).find("no training session"),
            std::string::npos);
  EXPECT_NE(worker_error([&] { watcher.train_step(12345, spans(samples)); })
                .find("no training session 12345 on this connection"),
            std::string::npos);
}

TEST(WorkerTraining, EvaluatingChangesNothing) {
  TrainingServer ts;
  WorkerClient client = ts.client();
  const auto session = client.train_start(kTiny, client.init_network_weights(kTiny, 9), std::nullopt, kAdamW, std::nullopt);
  const auto samples = make_samples(50, 8, false);
  client.train_step(session.session, spans(samples));
  const auto weights = client.train_save(session.session, true, false);
  const auto a = client.train_step(session.session, spans(samples), true);
  const auto b = client.train_step(session.session, spans(samples), true);
  EXPECT_EQ(a, b);
  EXPECT_EQ(a.step, -1);
  EXPECT_EQ(a.lr, 0);
  EXPECT_EQ(a.grad_norm, 0);
  EXPECT_EQ(a.positions, 8u);
  EXPECT_GT(a.total_loss, 0);
  EXPECT_NEAR(a.total_loss, a.policy_loss + a.value_loss, 1e-5);
  const auto after = client.train_save(session.session, true, false);
  EXPECT_EQ(after.steps_done, 1);
  EXPECT_EQ(after.weights, weights.weights);
  // A step then changes them.
  EXPECT_EQ(client.train_step(session.session, spans(samples)).step, 1);
  EXPECT_NE(client.train_step(session.session, spans(samples), true).total_loss, a.total_loss);
}

TEST(WorkerTraining, RefusalsAreWorkerErrors) {
  TrainingServer ts(true, 2);
  WorkerClient client = ts.client();
  const std::string weights = client.init_network_weights(kTiny, 10);
  // Bad options, configuration, weights or state: named, and no session is left open.
  EXPECT_NE(worker_error([&] { client.train_start(kTiny, weights, std::nullopt, R"({"lr": 100})", std::nullopt); })
                .find("\"lr\""),
            std::string::npos);
  EXPECT_NE(worker_error([&] { client.train_start("{\"filters\":7}", weights, std::nullopt, "", std::nullopt); })
                .find("filters"),
            std::string::npos);
  EXPECT_FALSE(worker_error([&] { client.train_start(kTiny, "junk", std::nullopt, "", std::nullopt); }).empty());
  EXPECT_FALSE(worker_error([&] { client.train_start("", "", std::nullopt, "", std::string("junk")); }).empty());
  EXPECT_EQ(training_sessions(client), 0);
  // The limit: the refusal leaves the connection and its sessions as they were.
  const auto a = client.train_start(kTiny, weights, std::nullopt, "", std::nullopt);
  client.train_start(kTiny, weights, std::nullopt, "", std::nullopt);
  EXPECT_NE(worker_error([&] { client.train_start(kTiny, weights, std::nullopt, "", std::nullopt); })
                .find("too many training sessions"),
            std::string::npos);
  EXPECT_EQ(client.train_step(a.session, spans(make_samples(60, 2))).step, 0);
  EXPECT_THROW(client.train_step(a.session, {}), WorkerError);
}

TEST(WorkerTraining, AWorkerWithoutTrainingSaysSo) {
  TrainingServer ts(false);
  WorkerClient client = ts.client();
  const std::string msg = worker_error(
      [&] { client.train_start(kTiny, client.init_network_weights(kTiny, 11), std::nullopt, "", std::nullopt); });
  EXPECT_NE(msg.find("no training backend"), std::string::npos) << msg;
  EXPECT_NE(client.status_json().find("\"training\":null"), std::string::npos);
  EXPECT_EQ(client.perft(chess::parse_fen(chess::kStartFen), 2), 400u);  // the connection is fine
}

}  // namespace
}  // namespace pgmate::worker
