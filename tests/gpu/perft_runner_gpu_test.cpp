// PerftRunner, the server's perft entry point: GPU and CPU give the same counts, and a
// cancelled GPU perft fails promptly with the cancel message (skips without a device).
#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <iostream>
#include <thread>

#include "checkers/perft.h"
#include "chess/fen.h"
#include "worker/cuda/perft_kernel.h"
#include "worker/server/perft_runner.h"

namespace pgmate::worker {
namespace {

using protocol::PerftDevice;

struct Outcome {
  bool ok = false;
  std::uint64_t nodes = 0;
  protocol::ErrorCode code{};
  std::string message;
};

template <class Submit>
Outcome run(Submit submit) {
  auto promise = std::make_shared<std::promise<Outcome>>();
  auto future = promise->get_future();
  submit([promise](std::uint64_t n) { promise->set_value(Outcome{true, n, {}, {}}); },
         [promise](protocol::ErrorCode c, const std::string& m) { promise->set_value(Outcome{false, 0, c, m}); });
  return future.get();
}

TEST(PerftRunnerGpu, ChessAndCheckersGpuCountsEqualCpuCounts) {
  std::string why;
  if (!gpu::cuda_device_available(&why)) GTEST_SKIP() << "no GPU: " << why;
  ThreadPool pool(2);
  PerftRunner runner(pool, true, nullptr);
  ASSERT_TRUE(runner.gpu_available()) << runner.gpu_info();
  for (auto [fen, depth] : {std::pair<const char*, int>{"startpos", 6},
                            {"r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1", 5},
                            {"8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1", 6}}) {
    const chess::Board b = chess::parse_fen(fen);
    Outcome results[2];
    int i = 0;
    for (PerftDevice device : {PerftDevice::kGpu, PerftDevice::kCpu}) {
      results[i++] = run([&](auto done, auto fail) { runner.submit(b, depth, device, nullptr, done, fail); });
    }
    ASSERT_TRUE(results[0].ok) << fen << ": " << results[0].message;
    ASSERT_TRUE(results[1].ok) << fen << ": " << results[1].message;
    EXPECT_EQ(results[0].nodes, results[1].nodes) << fen << " depth " << depth;
  }
  const checkers::Board start = checkers::Board::start();
  for (auto rule : {checkers::CaptureRule::kAny, checkers::CaptureRule::kLongest}) {
    const Outcome g = run([&](auto done, auto fail) {
      runner.submit_checkers(start, 11, rule, PerftDevice::kGpu, nullptr, done, fail);
    });
    const Outcome c = run([&](auto done, auto fail) {
      runner.submit_checkers(start, 11, rule, PerftDevice::kCpu, nullptr, done, fail);
    });
    ASSERT_TRUE(g.ok) << g.message;
    ASSERT_TRUE(c.ok) << c.message;
    EXPECT_EQ(g.nodes, c.nodes) << "checkers start depth 11, rule " << int(rule);
  }
  EXPECT_TRUE(runner.gpu_available());
  EXPECT_FALSE(runner.gpu_faulted());
}

TEST(PerftRunnerGpu, CancelledDeepGpuPerftFailsWithin500Ms) {
  std::string why;
  if (!gpu::cuda_device_available(&why)) GTEST_SKIP() << "no GPU: " << why;
  ThreadPool pool(2);
  PerftRunner runner(pool, true, nullptr);
  auto flag = std::make_shared<std::atomic<bool>>(false);
  auto promise = std::make_shared<std::promise<Outcome>>();
  auto future = promise->get_future();
  runner.submit(
      chess::parse_fen("startpos"), 11, PerftDevice::kGpu, flag,
      [promise](std::uint64_t n) { promise->set_value(Outcome{true, n, {}, {}}); },
      [promise](protocol::ErrorCode c, const std::string& m) { promise->set_value(Outcome{false, 0, c, m}); });
  std::this_thread::sleep_for(std::chrono::seconds(2));
  const auto set_at = std::chrono::steady_clock::now();
  flag->store(true);
  ASSERT_EQ(future.wait_for(std::chrono::seconds(5)), std::future_status::ready) << "cancel not seen within 5 s";
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - set_at).count();
  const Outcome o = future.get();
  std::cout << "PerftRunner GPU cancel latency: " << ms << " ms\n";
  RecordProperty("cancel_latency_ms", std::to_string(ms));
  EXPECT_FALSE(o.ok);
  EXPECT_EQ(o.message, "perft cancelled");
  EXPECT_LT(ms, 500.0);
}

}  // namespace
}  // namespace pgmate::worker
