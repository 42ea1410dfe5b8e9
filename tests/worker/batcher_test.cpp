// The batcher without sockets: batches form by size and by deadline, large requests are
// split, results go back to the right request, failures reach every request once.
#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <future>
#include <thread>

#include "worker/server/batcher.h"
#include "worker_test_util.h"

namespace pgmate::worker {
namespace {

using namespace std::chrono_literals;
using protocol::ErrorCode;
using protocol::EvalResult;
using testing::FakeBackend;
using testing::FakeState;

struct Outcome {
  std::vector<EvalResult> results;
  ErrorCode code{};
  std::string error;
  bool ok = false;
};

// Submits one evaluation job; the future resolves when done or fail is called.
// The network is resolved now, as the server does when a request arrives.
std::future<Outcome> submit_eval(Batcher& b, std::vector<std::vector<chess::Board>> inputs,
                                 const protocol::NetworkKey& network = testing::test_network(),
                                 CancelFlag cancel = nullptr) {
  auto promise = std::make_shared<std::promise<Outcome>>();
  auto future = promise->get_future();
  EvalJob job;
  job.key = network;
  job.network = b.find_network(network);
  job.inputs = std::move(inputs);
  job.cancelled = std::move(cancel);
  job.done = [promise](std::vector<EvalResult>&& r) {
    Outcome o;
    o.results = std::move(r);
    o.ok = true;
    promise->set_value(std::move(o));
  };
  job.fail = [promise](ErrorCode code, const std::string& message) {
    Outcome o;
    o.code = code;
    o.error = message;
    promise->set_value(std::move(o));
  };
  b.submit(std::move(job));
  return future;
}

void expect_results(const std::vector<std::vector<chess::Board>>& inputs, const std::vector<EvalResult>& results) {
  ASSERT_EQ(results.size(), inputs.size());
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const EvalResult want = testing::expected_result(inputs[i]);
    EXPECT_EQ(results[i].win, want.win) << i;
    EXPECT_EQ(results[i].draw, want.draw) << i;
    EXPECT_EQ(results[i].loss, want.loss) << i;
    EXPECT_EQ(results[i].moves, want.moves) << i;
    EXPECT_EQ(results[i].priors, want.priors) << i;
  }
}

struct Fixture {
  std::shared_ptr<FakeState> state = std::make_shared<FakeState>();
  std::unique_ptr<Batcher> batcher;
  explicit Fixture(BatcherConfig config, bool takes_boards = false) {
    state->takes_boards = takes_boards;
    batcher = std::make_unique<Batcher>(std::make_unique<FakeBackend>(state), config);
    batcher->load_network(testing::test_network(), testing::kTestNetworkConfig, testing::fake_weights());
  }
};

TEST(BatchQueue, FlushesByDeadlineAndBySize) {
  struct Task {
    bool is_cancelled() const { return false; }
  };
  BatchQueue<Task> q;
  q.push(std::make_shared<Task>(), 3);
  auto t0 = Clock::now();
  auto slices = q.take(100, 20ms);
  EXPECT_GE(testing::ms_since(t0), 15);
  ASSERT_EQ(slices.size(), 1u);
  EXPECT_EQ(slices[0].end - slices[0].begin, 3u);

  // Full: no waiting, and a big entry is split across batches.
  auto big = std::make_shared<Task>();
  q.push(big, 250);
  t0 = Clock::now();
  slices = q.take(100, std::chrono::microseconds(10'000'000));
  EXPECT_LT(testing::ms_since(t0), 1000);
  ASSERT_EQ(slices.size(), 1u);
  EXPECT_EQ(slices[0].begin, 0u);
  EXPECT_EQ(slices[0].end, 100u);
  EXPECT_EQ(q.depth(), 150u);
  slices = q.take(100, 0us);
  EXPECT_EQ(slices[0].begin, 100u);
  EXPECT_EQ(slices[0].end, 200u);
  auto small = std::make_shared<Task>();
  q.push(small, 70);
  slices = q.take(100, 0us);
  ASSERT_EQ(slices.size(), 2u);
  EXPECT_EQ(slices[0].task, big);
  EXPECT_EQ(slices[0].begin, 200u);
  EXPECT_EQ(slices[0].end, 250u);
  EXPECT_EQ(slices[1].task, small);
  EXPECT_EQ(slices[1].end, 50u);
  EXPECT_EQ(q.depth(), 20u);

  // stop() wakes a waiting take(), which returns nothing; drain() hands back the rest.
  std::thread stopper([&] {
    std::this_thread::sleep_for(20ms);
    q.stop();
  });
  BatchQueue<Task> empty;
  std::thread stopper2([&] {
    std::this_thread::sleep_for(20ms);
    empty.stop();
  });
  EXPECT_TRUE(empty.take(10, 1s).empty());
  stopper.join();
  stopper2.join();
  EXPECT_TRUE(q.take(10, 0us).empty());
  EXPECT_EQ(q.drain().size(), 1u);
  EXPECT_FALSE(q.push(std::make_shared<Task>(), 1));
}

TEST(BatchQueue, DropsCancelledEntries) {
  struct Task {
    std::shared_ptr<std::atomic<bool>> flag = std::make_shared<std::atomic<bool>>(false);
    bool is_cancelled() const { return flag->load(); }
  };
  BatchQueue<Task> q;
  auto a = std::make_shared<Task>(), b = std::make_shared<Task>();
  q.push(a, 5);
  q.push(b, 5);
  a->flag->store(true);
  auto slices = q.take(100, 0us);
  ASSERT_EQ(slices.size(), 1u);
  EXPECT_EQ(slices[0].task, b);
  EXPECT_EQ(q.depth(), 0u);
}

TEST(Batcher, MergesConcurrentRequestsAndRoutesResults) {
  Fixture f({1024, std::chrono::microseconds(5000)});
  constexpr int kThreads = 16, kRounds = 10;
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (int r = 0; r < kRounds; ++r) {
        const auto inputs = testing::random_histories(1000 * t + r, 1 + (t + r) % 3);
        Outcome o = submit_eval(*f.batcher, inputs).get();
        if (!o.ok) {
          ++failures;
          continue;
        }
        expect_results(inputs, o.results);
      }
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(failures, 0);
  EXPECT_GT(f.state->largest(), 1) << "no batch merged two requests";
  const auto s = f.batcher->stats();
  EXPECT_EQ(s.eval_requests, std::uint64_t(kThreads * kRounds));
  EXPECT_GT(s.mean_batch_size, 1.0);
  EXPECT_EQ(s.eval_queue_depth, 0u);
  EXPECT_GT(s.positions_per_s, 0.0);
}

TEST(Batcher, SplitsLargeRequestsAtMaxBatch) {
  Fixture f({100, std::chrono::microseconds(1000)});
  const auto inputs = testing::random_histories(7, 250);
  Outcome o = submit_eval(*f.batcher, inputs).get();
  ASSERT_TRUE(o.ok) << o.error;
  expect_results(inputs, o.results);
  EXPECT_EQ(f.state->sizes(), (std::vector<int>{100, 100, 50}));
  for (int s : f.state->sizes()) EXPECT_LE(s, 100);
}

// Two evaluation threads (a GPU's default): batches run at once, and a request split over
// batches of both threads still gets each of its answers in its own place.
TEST(Batcher, TwoEvaluationThreadsRunBatchesAtOnce) {
  Fixture f({100, std::chrono::microseconds(1000), -1, 2});
  f.state->delay_ms = 20;
  const auto large = testing::random_histories(11, 1000);
  std::vector<std::vector<std::vector<chess::Board>>> small;
  for (int i = 0; i < 8; ++i) small.push_back(testing::random_histories(100 + i, 30 + i));
  auto large_outcome = submit_eval(*f.batcher, large);
  std::vector<std::future<Outcome>> small_outcomes;
  for (const auto& inputs : small) small_outcomes.push_back(submit_eval(*f.batcher, inputs));
  Outcome o = large_outcome.get();
  ASSERT_TRUE(o.ok) << o.error;
  expect_results(large, o.results);
  for (std::size_t i = 0; i < small.size(); ++i) {
    Outcome s = small_outcomes[i].get();
    ASSERT_TRUE(s.ok) << s.error;
    expect_results(small[i], s.results);
  }
  EXPECT_EQ(f.state->most_running.load(), 2);
  for (int size : f.state->sizes()) EXPECT_LE(size, 100);

  Fixture one({100, std::chrono::microseconds(1000), -1, 1});
  one.state->delay_ms = 5;
  ASSERT_TRUE(submit_eval(*one.batcher, large).get().ok);
  EXPECT_EQ(one.state->most_running.load(), 1);
}

TEST(Batcher, FullBatchRunsWithoutWaitingForTheDeadline) {
  Fixture f({8, std::chrono::microseconds(10'000'000)});
  const auto t0 = Clock::now();
  Outcome o = submit_eval(*f.batcher, testing::random_histories(3, 8)).get();
  EXPECT_TRUE(o.ok);
  EXPECT_LT(testing::ms_since(t0), 2000);
}

TEST(Batcher, DeadlineFlushesALoneRequest) {
  Fixture f({1024, std::chrono::microseconds(1000)});
  const auto inputs = testing::random_histories(5, 1);
  submit_eval(*f.batcher, inputs).get();  // warm up
  double best = 1e9;
  for (int i = 0; i < 5; ++i) {
    const auto t0 = Clock::now();
    Outcome o = submit_eval(*f.batcher, inputs).get();
    best = std::min(best, testing::ms_since(t0));
    EXPECT_TRUE(o.ok);
  }
  EXPECT_LT(best, 20);
  EXPECT_GE(best, 0.9);

  Fixture slow({1024, std::chrono::microseconds(60'000)});
  const auto t1 = Clock::now();
  EXPECT_TRUE(submit_eval(*slow.batcher, inputs).get().ok);
  EXPECT_GE(testing::ms_since(t1), 55);
}

TEST(Batcher, BackendFailureFailsEveryRequestOnce) {
  Fixture f({1024, std::chrono::microseconds(20'000)});
  f.state->fail_runs = true;
  auto a = submit_eval(*f.batcher, testing::random_histories(1, 3));
  auto b = submit_eval(*f.batcher, testing::random_histories(2, 2));
  for (auto* fut : {&a, &b}) {
    Outcome o = fut->get();
    EXPECT_FALSE(o.ok);
    EXPECT_EQ(o.code, ErrorCode::kBackend);
    EXPECT_NE(o.error.find("fake failure"), std::string::npos) << o.error;
  }
  f.state->fail_runs = false;
  EXPECT_TRUE(submit_eval(*f.batcher, testing::random_histories(3, 2)).get().ok);
  EXPECT_EQ(f.batcher->stats().eval_failures, 2u);
}

TEST(Batcher, NetworksAreKeyedByDatabaseIdAndWeights) {
  Fixture f({1024, std::chrono::microseconds(2000)});
  const auto inputs = testing::random_histories(9, 2);
  protocol::NetworkKey a = testing::test_network(5, 1);
  a.database = 100;
  Outcome o = submit_eval(*f.batcher, inputs, a).get();
  EXPECT_FALSE(o.ok);
  EXPECT_EQ(o.code, ErrorCode::kNotLoaded);
  EXPECT_NE(o.error.find("network 5 (database 100, weights 0101"), std::string::npos) << o.error;

  EXPECT_THROW(f.batcher->load_network(a, "{\"n\":5}", "garbage"), std::invalid_argument);
  EXPECT_EQ(f.batcher->find_network(a), nullptr);
  f.batcher->load_network(a, "{\"n\":5}", f.batcher->init_weights("{\"n\":5}", 1));
  EXPECT_TRUE(submit_eval(*f.batcher, inputs, a).get().ok);
  // The same id in another database, or with other weights (an updated row), is another network.
  protocol::NetworkKey other_database = a, other_weights = a;
  other_database.database = 101;
  other_weights.sha256[31] = 2;
  EXPECT_EQ(submit_eval(*f.batcher, inputs, other_database).get().code, ErrorCode::kNotLoaded);
  EXPECT_EQ(submit_eval(*f.batcher, inputs, other_weights).get().code, ErrorCode::kNotLoaded);
  f.batcher->load_network(other_weights, "{\"n\":6}", f.batcher->init_weights("{\"n\":6}", 1));
  {
    std::lock_guard lock(f.state->mutex);
    f.state->batch_networks.clear();
  }
  EXPECT_TRUE(submit_eval(*f.batcher, inputs, other_weights).get().ok);
  EXPECT_TRUE(submit_eval(*f.batcher, inputs, a).get().ok);
  std::lock_guard lock(f.state->mutex);
  EXPECT_EQ(f.state->batch_networks, (std::vector<std::string>{"{\"n\":6}", "{\"n\":5}"}));
}

TEST(Batcher, ABatchOfSeveralNetworksRunsOncePerNetwork) {
  Fixture f({1024, std::chrono::microseconds(50'000)});
  const auto b = testing::test_network(2);
  f.batcher->load_network(b, "{\"b\":1}", testing::fake_weights("{\"b\":1}"));
  {
    std::lock_guard lock(f.state->mutex);
    f.state->batch_networks.clear();
    f.state->batch_sizes.clear();
  }
  auto x = submit_eval(*f.batcher, testing::random_histories(1, 3));
  auto y = submit_eval(*f.batcher, testing::random_histories(2, 4), b);
  auto z = submit_eval(*f.batcher, testing::random_histories(3, 5));
  Outcome ox = x.get(), oy = y.get(), oz = z.get();
  ASSERT_TRUE(ox.ok && oy.ok && oz.ok);
  expect_results(testing::random_histories(2, 4), oy.results);
  expect_results(testing::random_histories(3, 5), oz.results);
  std::lock_guard lock(f.state->mutex);
  EXPECT_EQ(f.state->batch_networks, (std::vector<std::string>{testing::kTestNetworkConfig, "{\"b\":1}"}));
  EXPECT_EQ(f.state->batch_sizes, (std::vector<int>{8, 4}));
}

TEST(Batcher, HoldsSeveralNetworksLeastRecentlyUsedOutFirst) {
  BatcherConfig config{1024, std::chrono::microseconds(1000)};
  config.network_memory = (5u << 20) / 2;  // two networks of 1 MiB fit, three do not
  Fixture f(config);
  const auto one = testing::test_network(), two = testing::test_network(2), three = testing::test_network(3);
  f.batcher->load_network(two, "{}", testing::fake_weights());
  EXPECT_NE(f.batcher->find_network(one), nullptr);  // now the most recently used
  f.batcher->load_network(three, "{}", testing::fake_weights());
  EXPECT_NE(f.batcher->find_network(one), nullptr);
  EXPECT_EQ(f.batcher->find_network(two), nullptr);  // the least recently used went
  EXPECT_NE(f.batcher->find_network(three), nullptr);
  const auto held = f.batcher->networks().stats();
  EXPECT_EQ(held.held, 2u);
  EXPECT_EQ(held.evictions, 1u);
  EXPECT_EQ(held.bytes, 2u << 20);
  // Alternating between the two held networks reloads nothing.
  const int loads = f.state->loads.load();
  for (int i = 0; i < 10; ++i) {
    EXPECT_TRUE(submit_eval(*f.batcher, testing::random_histories(i, 1), i % 2 ? one : three).get().ok);
    f.batcher->load_network(i % 2 ? one : three, "{}", testing::fake_weights());  // already held: no load
  }
  EXPECT_EQ(f.state->loads.load(), loads);
  // The JSON lists them most recent first, and only one database's on request.
  const std::string json = f.batcher->networks().json(0);
  EXPECT_EQ(json.find("\"id\":1"), json.find("\"id\":"));  // one was used last
  EXPECT_EQ(f.batcher->networks().json(7), "[]");
}

TEST(Batcher, ANetworkLargerThanTheBudgetIsRefused) {
  BatcherConfig config{1024, std::chrono::microseconds(1000)};
  config.network_memory = 2u << 20;
  Fixture f(config);
  f.state->network_bytes = 3u << 20;
  try {
    f.batcher->load_network(testing::test_network(9), "{}", testing::fake_weights());
    FAIL() << "a 3 MiB network loaded into a 2 MiB budget";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("more than the worker's whole network memory budget"), std::string::npos)
        << e.what();
  }
  EXPECT_NE(f.batcher->find_network(testing::test_network()), nullptr);  // nothing else was dropped
}

TEST(Batcher, ConcurrentLoadsOfOneNetworkParseItOnce) {
  Fixture f({1024, std::chrono::microseconds(1000)});
  f.state->load_delay_ms = 100;
  const int before = f.state->loads.load();
  std::vector<std::thread> threads;
  std::atomic<int> same{0};
  std::shared_ptr<const LoadedNetwork> first;
  std::mutex m;
  for (int i = 0; i < 4; ++i)
    threads.emplace_back([&] {
      auto n = f.batcher->load_network(testing::test_network(4), "{}", testing::fake_weights());
      std::lock_guard lock(m);
      if (!first) first = n;
      if (n == first) ++same;
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(f.state->loads.load(), before + 1);
  EXPECT_EQ(same.load(), 4);
  // A failed load is shared the same way, and leaves nothing behind.
  std::vector<std::future<bool>> failed;
  for (int i = 0; i < 3; ++i)
    failed.push_back(std::async(std::launch::async, [&] {
      try {
        f.batcher->load_network(testing::test_network(5), "{}", "garbage");
      } catch (const std::invalid_argument&) {
        return true;
      }
      return false;
    }));
  for (auto& r : failed) EXPECT_TRUE(r.get());
  EXPECT_EQ(f.batcher->find_network(testing::test_network(5)), nullptr);
}

TEST(Batcher, AJobKeepsItsNetworkWhenItIsEvicted) {
  BatcherConfig config{1024, std::chrono::microseconds(100'000)};
  config.network_memory = 1u << 20;  // one network at a time
  Fixture f(config);
  const auto inputs = testing::random_histories(5, 3);
  auto queued = submit_eval(*f.batcher, inputs);  // waits for its deadline
  f.batcher->load_network(testing::test_network(2), "{\"other\":1}", testing::fake_weights("{\"other\":1}"));
  EXPECT_EQ(f.batcher->find_network(testing::test_network()), nullptr);  // evicted meanwhile
  Outcome o = queued.get();
  ASSERT_TRUE(o.ok) << o.error;
  expect_results(inputs, o.results);
  std::lock_guard lock(f.state->mutex);
  EXPECT_EQ(f.state->batch_networks.back(), testing::kTestNetworkConfig);
}

// One job with repetition counts, on the test network; its results (or the failure thrown).
std::vector<EvalResult> evaluate_with_repetitions(Batcher& b, const std::vector<std::vector<chess::Board>>& inputs,
                                                  std::vector<std::uint8_t> repetitions) {
  auto promise = std::make_shared<std::promise<std::vector<EvalResult>>>();
  EvalJob job;
  job.key = testing::test_network();
  job.network = b.find_network(job.key);
  job.inputs = inputs;
  job.repetitions = std::move(repetitions);
  job.done = [promise](std::vector<EvalResult>&& r) { promise->set_value(std::move(r)); };
  job.fail = [promise](ErrorCode, const std::string& m) { promise->set_exception(std::make_exception_ptr(std::runtime_error(m))); };
  b.submit(std::move(job));
  return promise->get_future().get();
}

TEST(Batcher, RepetitionsReachTheEncoder) {
  Fixture f({1024, std::chrono::microseconds(1000)});
  const auto inputs = testing::random_histories(11, 2);
  const auto results = evaluate_with_repetitions(*f.batcher, inputs, {2, 0});
  EXPECT_EQ(results[0].win, testing::expected_result(inputs[0], 2).win);
  EXPECT_NE(results[0].win, testing::expected_result(inputs[0], 0).win);
  EXPECT_EQ(results[1].win, testing::expected_result(inputs[1], 0).win);
}

// A backend that encodes its inputs gets each input's boards, history count and repetition
// count in place of planes, and answers as from the planes.
TEST(Batcher, ABackendThatTakesBoardsGetsTheInputsBoards) {
  Fixture f({64, std::chrono::microseconds(1000)}, /*takes_boards=*/true);
  EXPECT_EQ(f.batcher->input_form(), InputForm::kBoards);
  std::vector<std::future<Outcome>> futures;
  std::vector<std::vector<std::vector<chess::Board>>> inputs;
  for (int r = 0; r < 5; ++r) {
    inputs.push_back(testing::random_histories(100 + unsigned(r), 30));  // 150 inputs: over two batches
    futures.push_back(submit_eval(*f.batcher, inputs.back()));
  }
  for (int r = 0; r < 5; ++r) {
    Outcome o = futures[std::size_t(r)].get();
    ASSERT_TRUE(o.ok) << o.error;
    expect_results(inputs[std::size_t(r)], o.results);
  }
  EXPECT_EQ(f.state->largest(), 64);

  const auto histories = testing::random_histories(12, 2);
  const auto results = evaluate_with_repetitions(*f.batcher, histories, {2, 1});
  EXPECT_EQ(results[0].win, testing::expected_result(histories[0], 2).win);
  EXPECT_EQ(results[1].win, testing::expected_result(histories[1], 1).win);
  EXPECT_NE(results[0].win, testing::expected_result(histories[0], 0).win);
}

TEST(Batcher, StopFailsQueuedRequests) {
  Fixture f({1024, std::chrono::microseconds(10'000'000)});
  auto a = submit_eval(*f.batcher, testing::random_histories(1, 1));
  std::this_thread::sleep_for(20ms);
  f.batcher->stop();
  Outcome o = a.get();
  EXPECT_FALSE(o.ok);
  EXPECT_EQ(o.code, ErrorCode::kShuttingDown);
  Outcome late = submit_eval(*f.batcher, testing::random_histories(1, 1)).get();
  EXPECT_EQ(late.code, ErrorCode::kShuttingDown);
}

TEST(Batcher, EmptyAndCancelledRequests) {
  Fixture f({1024, std::chrono::microseconds(30'000)});
  Outcome empty = submit_eval(*f.batcher, {}).get();
  EXPECT_TRUE(empty.ok);
  EXPECT_TRUE(empty.results.empty());
  auto cancel = std::make_shared<std::atomic<bool>>(false);
  auto dropped = submit_eval(*f.batcher, testing::random_histories(1, 4), testing::test_network(), cancel);
  cancel->store(true);
  auto kept = submit_eval(*f.batcher, testing::random_histories(2, 3));
  EXPECT_TRUE(kept.get().ok);
  EXPECT_EQ(f.state->sizes(), std::vector<int>{3});
  // Dropped without an answer: the job (and its promise) is gone, neither callback ran.
  EXPECT_THROW(dropped.get(), std::future_error);
}

TEST(Batcher, LegalMovesBatchesMatchCore) {
  Fixture f({64, std::chrono::microseconds(2000)});
  std::vector<std::future<std::vector<std::vector<chess::Move>>>> futures;
  std::vector<std::vector<chess::Board>> requests;
  for (int r = 0; r < 20; ++r) requests.push_back(testing::random_positions(100 + r, 1 + r * 7));
  for (const auto& boards : requests) {
    auto promise = std::make_shared<std::promise<std::vector<std::vector<chess::Move>>>>();
    futures.push_back(promise->get_future());
    LegalJob job;
    job.boards = boards;
    job.done = [promise](std::vector<std::vector<chess::Move>>&& m) { promise->set_value(std::move(m)); };
    job.fail = [promise](ErrorCode, const std::string& e) {
      promise->set_exception(std::make_exception_ptr(std::runtime_error(e)));
    };
    f.batcher->submit(std::move(job));
  }
  for (std::size_t r = 0; r < requests.size(); ++r) {
    const auto moves = futures[r].get();
    ASSERT_EQ(moves.size(), requests[r].size());
    for (std::size_t i = 0; i < moves.size(); ++i) {
      chess::MoveList list;
      chess::legal_moves(requests[r][i], list);
      EXPECT_EQ(moves[i], std::vector<chess::Move>(list.begin(), list.end()));
    }
  }
  const auto s = f.batcher->stats();
  EXPECT_EQ(s.legal_requests, 20u);
  EXPECT_GT(s.legal_positions, 0u);
  EXPECT_EQ(f.state->runs.load(), 0);  // legal moves never touch the network
}

}  // namespace
}  // namespace pgmate::worker
