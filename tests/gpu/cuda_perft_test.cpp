// Chess perft on the GPU against the CPU and the published counts. Every test skips where no
// CUDA device exists; on a GPU machine each one reports exactly what it checked.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <thread>

#include "chess/fen.h"
#include "chess/movegen.h"
#include "worker/cuda/perft_kernel.h"

namespace pgmate::chess {
namespace {

#define SKIP_WITHOUT_GPU()                                                   \
  do {                                                                       \
    std::string why;                                                         \
    if (!gpu::cuda_device_available(&why)) GTEST_SKIP() << "no GPU: " << why; \
  } while (0)

constexpr const char* kKiwipete = "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1";
constexpr const char* kPosition3 = "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1";

struct SuiteEntry {
  std::string fen;
  Board board;
  std::vector<std::pair<int, std::uint64_t>> counts;  // (depth, nodes) from the EPD
};

const std::vector<SuiteEntry>& suite() {
  static const std::vector<SuiteEntry> entries = [] {
    std::vector<SuiteEntry> out;
    std::ifstream in(std::string(PGMATE_TEST_DATA_DIR) + "/perftsuite.epd");
    for (std::string line; std::getline(in, line);) {
      if (line.empty()) continue;
      const size_t semi = line.find(';');
      SuiteEntry e{line.substr(0, semi), parse_fen(line.substr(0, semi)), {}};
      std::istringstream fields(line.substr(semi));
      for (std::string field; std::getline(fields, field, ';');) {
        std::istringstream f(field);
        std::string label;
        std::uint64_t expected;
        if (f >> label >> expected) e.counts.emplace_back(std::atoi(label.c_str() + 1), expected);
      }
      out.push_back(std::move(e));
    }
    return out;
  }();
  return entries;
}

std::vector<Board> children(const Board& b) {
  std::vector<Board> out;
  MoveList list;
  legal_moves(b, list);
  for (Move m : list) {
    Board c = b;
    c.play(m);
    out.push_back(c);
  }
  return out;
}

std::uint64_t sum(const std::vector<std::uint64_t>& v) {
  std::uint64_t s = 0;
  for (auto x : v) s += x;
  return s;
}

TEST(CudaPerftPerThread, SuiteDepths1To4MatchPublishedCounts) {
  SKIP_WITHOUT_GPU();
  ASSERT_EQ(suite().size(), 127u);
  std::vector<Board> boards;
  for (const auto& e : suite()) boards.push_back(e.board);
  for (int depth = 1; depth <= 4; ++depth) {
    const auto counts = gpu::perft_batch(boards, depth);
    ASSERT_EQ(counts.size(), boards.size());
    for (size_t i = 0; i < boards.size(); ++i)
      for (auto [d, expected] : suite()[i].counts)
        if (d == depth) {
          EXPECT_EQ(counts[i], expected) << suite()[i].fen << " depth " << depth;
        }
  }
}

// Depth 5 as one thread per child at depth 4: every position's children in one launch
// (about 4,000 threads), summed per position.
TEST(CudaPerftPerThread, SuiteDepth5ThroughChildrenMatchesPublishedCounts) {
  SKIP_WITHOUT_GPU();
  std::vector<Board> boards;
  std::vector<size_t> owner;
  for (size_t i = 0; i < suite().size(); ++i)
    for (const Board& c : children(suite()[i].board)) {
      boards.push_back(c);
      owner.push_back(i);
    }
  const auto counts = gpu::perft_batch(boards, 4);
  ASSERT_EQ(counts.size(), boards.size());
  std::vector<std::uint64_t> totals(suite().size(), 0);
  for (size_t k = 0; k < boards.size(); ++k) totals[owner[k]] += counts[k];
  int checked = 0;
  for (size_t i = 0; i < suite().size(); ++i)
    for (auto [d, expected] : suite()[i].counts)
      if (d == 5) {
        EXPECT_EQ(totals[i], expected) << suite()[i].fen;
        ++checked;
      }
  EXPECT_GT(checked, 100);
}

// The review's stack-overflow cases: threads with 6 plies each (the old recursive kernel
// overflowed its device stack there), and the deepest frame the kernel allows.
TEST(CudaPerftPerThread, DeepThreadsDoNotOverflow) {
  SKIP_WITHOUT_GPU();
  const Board pos3 = parse_fen(kPosition3);
  EXPECT_EQ(gpu::perft_batch({pos3}, 6)[0], 11030083u) << "position 3, one thread, 6 plies";
  EXPECT_EQ(sum(gpu::perft_batch(children(pos3), 6)), 178633661u) << "position 3 depth 7, threads of 6 plies";
  EXPECT_EQ(sum(gpu::perft_batch(children(parse_fen("startpos")), 5)), 119060324u) << "start depth 6";
  const Board kings = parse_fen("8/8/3k4/8/8/4K3/8/8 w - - 0 1");
  EXPECT_EQ(gpu::perft_batch({kings}, gpu::kMaxPerThreadDepth)[0], perft(kings, gpu::kMaxPerThreadDepth))
      << "two kings, " << gpu::kMaxPerThreadDepth << " plies in one thread";
  EXPECT_THROW(gpu::perft_batch({kings}, gpu::kMaxPerThreadDepth + 1), std::invalid_argument);
  EXPECT_TRUE(gpu::perft_batch({}, 3).empty());
}

TEST(CudaPerftBreadthFirst, SuiteDepths1To5MatchPublishedCounts) {
  SKIP_WITHOUT_GPU();
  ASSERT_EQ(suite().size(), 127u);
  int checked = 0;
  for (const auto& e : suite())
    for (auto [d, expected] : e.counts)
      if (d <= 5) {
        EXPECT_EQ(gpu::perft_bfs(e.board, d), expected) << e.fen << " depth " << d;
        ++checked;
      }
  EXPECT_EQ(gpu::perft_bfs(suite()[0].board, 0), 1u);
  std::cout << checked << " counts checked\n";
}

TEST(CudaPerftBreadthFirst, SuiteDepth6OnTheFirstTenPositions) {
  SKIP_WITHOUT_GPU();
  for (size_t i = 0; i < 10; ++i)
    for (auto [d, expected] : suite()[i].counts)
      if (d == 6) {
        EXPECT_EQ(gpu::perft_bfs(suite()[i].board, 6), expected) << suite()[i].fen;
      }
}

TEST(CudaPerftBreadthFirst, ReviewRegressionCounts) {
  SKIP_WITHOUT_GPU();
  const Board pos3 = parse_fen(kPosition3), start = parse_fen("startpos");
  EXPECT_EQ(gpu::perft_bfs(pos3, 6), 11030083u);
  EXPECT_EQ(gpu::perft_bfs(pos3, 7), 178633661u);
  EXPECT_EQ(gpu::perft_bfs(start, 6), 119060324u);
  EXPECT_EQ(gpu::perft_bfs(start, 7), 3195901860u);
  EXPECT_EQ(gpu::perft_bfs(parse_fen(kKiwipete), 5), 193690690u);
}

// The leaf kernel's other register caps (80 and 64 registers, 3 and 4 blocks per SM)
// count the same.
TEST(CudaPerftBreadthFirst, LeafKernelWithMoreBlocksPerSmMatches) {
  SKIP_WITHOUT_GPU();
  gpu::BfsOptions options;
  for (int leaf_blocks : {3, 4}) {
    options.leaf_blocks_per_sm = leaf_blocks;
    EXPECT_EQ(gpu::perft_bfs(parse_fen("startpos"), 6, options), 119060324u) << leaf_blocks;
    EXPECT_EQ(gpu::perft_bfs(parse_fen(kKiwipete), 5, options), 193690690u) << leaf_blocks;
    EXPECT_EQ(gpu::perft_bfs(parse_fen(kPosition3), 7, options), 178633661u) << leaf_blocks;
  }
}

// Slider attacks from magic tables in device memory: the same counts.
TEST(CudaPerftBreadthFirst, MagicAttackTablesMatch) {
  SKIP_WITHOUT_GPU();
  gpu::BfsOptions options;
  options.magic_attacks = true;
  for (int leaf_blocks : {2, 3, 4}) {
    options.leaf_blocks_per_sm = leaf_blocks;
    EXPECT_EQ(gpu::perft_bfs(parse_fen("startpos"), 6, options), 119060324u) << leaf_blocks;
    EXPECT_EQ(gpu::perft_bfs(parse_fen(kKiwipete), 5, options), 193690690u) << leaf_blocks;
    EXPECT_EQ(gpu::perft_bfs(parse_fen(kPosition3), 7, options), 178633661u) << leaf_blocks;
  }
  options.leaf_blocks_per_sm = 0;
  for (const auto& e : suite())
    for (auto [d, expected] : e.counts)
      if (d == 4) {
        EXPECT_EQ(gpu::perft_bfs(e.board, d, options), expected) << e.fen;
      }
}

// A tiny memory budget forces every level to be split over its parents.
TEST(CudaPerftBreadthFirst, SmallMemoryBudgetSplitsLevelsAndStillMatches) {
  SKIP_WITHOUT_GPU();
  gpu::BfsOptions tiny;
  tiny.memory_bytes = std::size_t(4) << 20;
  EXPECT_EQ(gpu::perft_bfs(parse_fen("startpos"), 6, tiny), 119060324u);
  EXPECT_EQ(gpu::perft_bfs(parse_fen(kKiwipete), 5, tiny), 193690690u);
  tiny.memory_bytes = std::size_t(1) << 20;
  EXPECT_EQ(gpu::perft_bfs(parse_fen(kPosition3), 6, tiny), 11030083u);
}

// Cancel while a deep run is inside its kernels: the call must end within the bound.
template <class Run>
double cancel_latency_ms(Run run, std::chrono::milliseconds after) {
  using Clock = std::chrono::steady_clock;
  std::atomic<bool> cancel{false};
  Clock::time_point set_at{};
  std::thread canceller([&] {
    std::this_thread::sleep_for(after);
    set_at = Clock::now();
    cancel = true;
  });
  bool threw = false;
  try {
    run([&] { return cancel.load(); });
  } catch (const gpu::PerftCancelled&) {
    threw = true;
  }
  const auto end = Clock::now();
  canceller.join();
  EXPECT_TRUE(threw) << "the run finished before the cancel";
  return std::chrono::duration<double, std::milli>(end - set_at).count();
}

TEST(CudaPerftBreadthFirst, CancelOfDeepRunReturnsWithin500Ms) {
  SKIP_WITHOUT_GPU();
  const double ms = cancel_latency_ms(
      [](std::function<bool()> hook) {
        gpu::BfsOptions options;
        options.cancelled = std::move(hook);
        gpu::perft_bfs(parse_fen("startpos"), 10, options);
      },
      std::chrono::milliseconds(1500));
  std::cout << "breadth-first cancel latency: " << ms << " ms\n";
  RecordProperty("cancel_latency_ms", std::to_string(ms));
  EXPECT_LT(ms, 500.0);
  // The device is usable afterwards.
  EXPECT_EQ(gpu::perft_bfs(parse_fen("startpos"), 4), 197281u);
}

TEST(CudaPerftPerThread, CancelOfDeepBatchReturnsWithin500Ms) {
  SKIP_WITHOUT_GPU();
  const double ms = cancel_latency_ms(
      [](std::function<bool()> hook) { gpu::perft_batch(children(parse_fen("startpos")), 8, hook); },
      std::chrono::milliseconds(500));
  std::cout << "per-thread cancel latency: " << ms << " ms\n";
  RecordProperty("cancel_latency_ms", std::to_string(ms));
  EXPECT_LT(ms, 500.0);
  EXPECT_EQ(gpu::perft_batch({parse_fen("startpos")}, 3)[0], 8902u);
}

TEST(CudaMovegen, LegalMovesBatchMatchesCpuOnSuiteAndChildren) {
  SKIP_WITHOUT_GPU();
  std::vector<Board> boards;
  for (const auto& e : suite()) {
    boards.push_back(e.board);
    for (const Board& c : children(e.board)) boards.push_back(c);
  }
  const auto lists = gpu::legal_moves_batch(boards);
  ASSERT_EQ(lists.size(), boards.size());
  for (size_t i = 0; i < boards.size(); ++i) {
    MoveList expected;
    legal_moves(boards[i], expected);
    ASSERT_EQ(lists[i].size(), size_t(expected.size)) << to_fen(boards[i]);
    for (int k = 0; k < expected.size; ++k) EXPECT_EQ(lists[i][k], expected.moves[k]) << to_fen(boards[i]);
  }
}

}  // namespace
}  // namespace pgmate::chess
