// The CUDA checkers perft (per-thread batch and the host-split single position) must match
// the CPU counts under both capture rules (runs only where a GPU exists).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <iostream>
#include <thread>

#include "../checkers/perft_counts.h"
#include "../checkers/playouts.h"
#include "checkers/fen.h"
#include "checkers/movegen.h"
#include "worker/cuda/checkers_perft_kernel.h"
#include "worker/cuda/perft_kernel.h"

namespace pgmate::checkers {
namespace {

constexpr CaptureRule kRules[] = {CaptureRule::kAny, CaptureRule::kLongest};

// Random playout positions (every third, to keep the CPU side short), and crafted ones
// with kings.
std::vector<Board> test_positions() {
  std::vector<Board> out;
  for (const char* fen : {"W:WK3,21:B12,K30", "W:WK22:B9,10,17,18", "B:W26,27:BK22", "B:WK1,K2,K3,K4:BK29,K30,K31,K32",
                          "W:W:B1"})
    out.push_back(parse_fen(fen));
  int i = 0;
  for (CaptureRule rule : kRules)
    for (const Board& b : testing::playout_positions(rule == CaptureRule::kAny ? 11 : 12, 12, 200, rule))
      if (i++ % 3 == 0) out.push_back(b);
  return out;
}

TEST(CudaCheckersPerft, BatchMatchesCpuOnPlayoutPositions) {
  std::string why;
  if (!gpu::cuda_device_available(&why)) GTEST_SKIP() << "skipped: " << why;
  const auto boards = test_positions();
  ASSERT_GT(boards.size(), 100u);
  for (CaptureRule rule : kRules)
    for (int depth = 0; depth <= 4; ++depth) {
      const auto counts = gpu::checkers_perft_batch(boards, depth, rule);
      ASSERT_EQ(counts.size(), boards.size());
      for (std::size_t i = 0; i < boards.size(); ++i)
        ASSERT_EQ(counts[i], perft(boards[i], depth, rule))
            << to_fen(boards[i]) << " depth " << depth << " rule " << int(rule);
    }
  EXPECT_TRUE(gpu::checkers_perft_batch({}, 3).empty());
  EXPECT_THROW(gpu::checkers_perft_batch(boards, gpu::kMaxCheckersThreadDepth + 1), std::invalid_argument);
}

TEST(CudaCheckersPerft, BatchStartPositionMatchesPublishedCounts) {
  std::string why;
  if (!gpu::cuda_device_available(&why)) GTEST_SKIP() << "skipped: " << why;
  for (int depth = 1; depth <= 9; ++depth)
    EXPECT_EQ(gpu::checkers_perft_batch({Board::start()}, depth)[0], testing::kStartPerft[depth - 1]) << depth;
}

TEST(CudaCheckersPerft, SplitMatchesCpu) {
  std::string why;
  if (!gpu::cuda_device_available(&why)) GTEST_SKIP() << "skipped: " << why;
  const Board start = Board::start();
  for (CaptureRule rule : kRules)
    for (int depth = 0; depth <= 11; ++depth)
      EXPECT_EQ(gpu::checkers_perft_split(start, depth, rule), perft(start, depth, rule))
          << "start depth " << depth << " rule " << int(rule);
  // Deeper than the host-expansion cap on per-thread depth.
  EXPECT_EQ(gpu::checkers_perft_split(start, 13), testing::kStartPerft[12]);
  const auto boards = test_positions();
  for (CaptureRule rule : kRules)
    for (std::size_t i = 0; i < boards.size(); i += 9)
      for (int depth : {1, 3, 6})
        EXPECT_EQ(gpu::checkers_perft_split(boards[i], depth, rule), perft(boards[i], depth, rule))
            << to_fen(boards[i]) << " depth " << depth << " rule " << int(rule);
}

TEST(CudaCheckersPerft, SplitHonoursTheCancelHook) {
  std::string why;
  if (!gpu::cuda_device_available(&why)) GTEST_SKIP() << "skipped: " << why;
  std::atomic<int> asked{0};
  EXPECT_THROW(gpu::checkers_perft_split(Board::start(), 20, CaptureRule::kAny, [&] { return ++asked > 0; }),
               gpu::PerftCancelled);
  EXPECT_GT(asked.load(), 0);
  EXPECT_EQ(gpu::checkers_perft_split(Board::start(), 6, CaptureRule::kAny, [] { return false; }),
            testing::kStartPerft[5]);
}

// Deep enough that the host splits several plies and the launches are sized by estimated
// nodes (start position depth 14 and 15).
TEST(CudaCheckersPerft, SplitDeepStartPositionMatchesPublishedCounts) {
  std::string why;
  if (!gpu::cuda_device_available(&why)) GTEST_SKIP() << "skipped: " << why;
  EXPECT_EQ(gpu::checkers_perft_split(Board::start(), 14), testing::kStartPerft[13]);
  EXPECT_EQ(gpu::checkers_perft_split(Board::start(), 15), testing::kStartPerft[14]);
}

TEST(CudaCheckersPerft, CancelOfDeepSplitReturnsWithin500Ms) {
  std::string why;
  if (!gpu::cuda_device_available(&why)) GTEST_SKIP() << "skipped: " << why;
  using Clock = std::chrono::steady_clock;
  std::atomic<bool> cancel{false};
  Clock::time_point set_at{};
  std::thread canceller([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    set_at = Clock::now();
    cancel = true;
  });
  EXPECT_THROW(gpu::checkers_perft_split(Board::start(), 20, CaptureRule::kAny, [&] { return cancel.load(); }),
               gpu::PerftCancelled);
  const double ms = std::chrono::duration<double, std::milli>(Clock::now() - set_at).count();
  canceller.join();
  std::cout << "checkers cancel latency: " << ms << " ms\n";
  RecordProperty("cancel_latency_ms", std::to_string(ms));
  EXPECT_LT(ms, 500.0);
  EXPECT_EQ(gpu::checkers_perft_split(Board::start(), 8), testing::kStartPerft[7]);
}

}  // namespace
}  // namespace pgmate::checkers
