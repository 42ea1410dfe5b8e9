// The per-thread CUDA perft must match the CPU counts (runs only where a GPU exists).
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "chess/fen.h"
#include "chess/movegen.h"
#include "cuda/perft_kernel.h"

namespace pgmate::chess {
namespace {

TEST(CudaPerft, MatchesCpuOnStandardPositionsAndTheirChildren) {
  std::string why;
  if (!gpu::cuda_device_available(&why)) GTEST_SKIP() << "skipped: " << why;
  std::vector<Board> boards;
  for (const char* fen : {"startpos", "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
                          "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
                          "r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1",
                          "rnbq1k1r/pp1Pbppp/2p5/8/2B5/8/PPP1NnPP/RNBQK2R w KQ - 1 8",
                          "r4rk1/1pp1qppp/p1np1n2/2b1p1B1/2B1P1b1/P1NP1N2/1PP1QPPP/R4RK1 w - - 0 10"}) {
    const Board root = parse_fen(fen);
    boards.push_back(root);
    MoveList list;
    legal_moves(root, list);
    for (Move m : list) {
      Board child = root;
      child.play(m);
      boards.push_back(child);
    }
  }
  for (int depth = 1; depth <= 3; ++depth) {
    const auto gpu_counts = gpu::perft_batch(boards, depth);
    ASSERT_EQ(gpu_counts.size(), boards.size());
    for (size_t i = 0; i < boards.size(); ++i)
      ASSERT_EQ(gpu_counts[i], perft(boards[i], depth)) << to_fen(boards[i]) << " depth " << depth;
  }
}

}  // namespace
}  // namespace pgmate::chess

namespace pgmate::chess {
namespace {

const char* const kSix[] = {"startpos", "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
                            "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
                            "r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1",
                            "rnbq1k1r/pp1Pbppp/2p5/8/2B5/8/PPP1NnPP/RNBQK2R w KQ - 1 8",
                            "r4rk1/1pp1qppp/p1np1n2/2b1p1B1/2B1P1b1/P1NP1N2/1PP1QPPP/R4RK1 w - - 0 10"};

TEST(CudaPerft, BreadthFirstMatchesCpu) {
  std::string why;
  if (!gpu::cuda_device_available(&why)) GTEST_SKIP() << "skipped: " << why;
  for (const char* fen : kSix) {
    const Board b = parse_fen(fen);
    for (int depth = 1; depth <= 4; ++depth) EXPECT_EQ(gpu::perft_bfs(b, depth), perft(b, depth)) << fen << " " << depth;
    // A tiny level budget forces the per-thread finish.
    EXPECT_EQ(gpu::perft_bfs(b, 4, 1000), perft(b, 4)) << fen;
  }
}

// The whole perft suite, breadth-first on the GPU, against the published counts.
TEST(CudaPerft, PerftSuiteToDepth4) {
  std::string why;
  if (!gpu::cuda_device_available(&why)) GTEST_SKIP() << "skipped: " << why;
  std::ifstream in(std::string(PGMATE_TEST_DATA_DIR) + "/perftsuite.epd");
  ASSERT_TRUE(in);
  int positions = 0;
  for (std::string line; std::getline(in, line);) {
    if (line.empty()) continue;
    const size_t semi = line.find(';');
    const Board b = parse_fen(line.substr(0, semi));
    std::istringstream fields(line.substr(semi));
    for (std::string field; std::getline(fields, field, ';');) {
      std::istringstream f(field);
      std::string label;
      std::uint64_t expected;
      if (!(f >> label >> expected)) continue;
      const int depth = std::atoi(label.c_str() + 1);
      if (depth > 4) continue;
      EXPECT_EQ(gpu::perft_bfs(b, depth), expected) << line.substr(0, semi) << " depth " << depth;
    }
    ++positions;
  }
  EXPECT_EQ(positions, 127);
}

TEST(CudaMovegen, LegalMovesBatchMatchesCpu) {
  std::string why;
  if (!gpu::cuda_device_available(&why)) GTEST_SKIP() << "skipped: " << why;
  std::vector<Board> boards;
  for (const char* fen : kSix) {
    const Board root = parse_fen(fen);
    MoveList list;
    legal_moves(root, list);
    for (Move m : list) {
      Board child = root;
      child.play(m);
      boards.push_back(child);
    }
  }
  const auto lists = gpu::legal_moves_batch(boards);
  ASSERT_EQ(lists.size(), boards.size());
  for (size_t i = 0; i < boards.size(); ++i) {
    MoveList expected;
    legal_moves(boards[i], expected);
    ASSERT_EQ(lists[i].size(), size_t(expected.size)) << to_fen(boards[i]);
    for (int k = 0; k < expected.size; ++k) EXPECT_EQ(lists[i][k], expected.moves[k]);
  }
}

}  // namespace
}  // namespace pgmate::chess
