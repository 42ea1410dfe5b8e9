// Perft on the six standard positions (chessprogramming wiki), to depth 5, plus the
// agreement of divide, threads and bulk counting with plain recursion.
#include <gtest/gtest.h>

#include "chess/fen.h"
#include "chess/perft.h"

namespace pgmate::chess {
namespace {

struct PerftCase {
  const char* name;
  const char* fen;
  std::uint64_t counts[5];
};

const PerftCase kStandard[] = {
    {"start", "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", {20, 400, 8902, 197281, 4865609}},
    {"kiwipete", "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
     {48, 2039, 97862, 4085603, 193690690}},
    {"position3", "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1", {14, 191, 2812, 43238, 674624}},
    {"position4", "r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1",
     {6, 264, 9467, 422333, 15833292}},
    {"position4_mirrored", "r2q1rk1/pP1p2pp/Q4n2/bbp1p3/Np6/1B3NBn/pPPP1PPP/R3K2R b KQ - 0 1",
     {6, 264, 9467, 422333, 15833292}},
    {"position5", "rnbq1k1r/pp1Pbppp/2p5/8/2B5/8/PPP1NnPP/RNBQK2R w KQ - 1 8", {44, 1486, 62379, 2103487, 89941194}},
    {"position6", "r4rk1/1pp1qppp/p1np1n2/2b1p1B1/2B1P1b1/P1NP1N2/1PP1QPPP/R4RK1 w - - 0 10",
     {46, 2079, 89890, 3894594, 164075551}},
};

class StandardPerft : public testing::TestWithParam<PerftCase> {};

TEST_P(StandardPerft, MatchesPublishedCounts) {
  const PerftCase& c = GetParam();
  const Board b = parse_fen(c.fen);
  for (int depth = 1; depth <= 5; ++depth) EXPECT_EQ(perft(b, depth), c.counts[depth - 1]) << "depth " << depth;
}

INSTANTIATE_TEST_SUITE_P(Positions, StandardPerft, testing::ValuesIn(kStandard),
                         [](const auto& info) { return std::string(info.param.name); });

// Bulk counting must agree with making every last-ply move and counting leaves.
std::uint64_t perft_without_bulk(const Board& b, int depth) {
  if (depth == 0) return 1;
  MoveList list;
  legal_moves(b, list);
  std::uint64_t n = 0;
  for (Move m : list) {
    Board next = b;
    next.play(m);
    n += perft_without_bulk(next, depth - 1);
  }
  return n;
}

TEST(Perft, BulkCountingAgreesWithFullExpansion) {
  for (const PerftCase& c : kStandard) {
    const Board b = parse_fen(c.fen);
    EXPECT_EQ(perft_without_bulk(b, 3), perft(b, 3)) << c.name;
  }
}

TEST(Perft, DivideSumsToTotalAndThreadsAgree) {
  const Board b = parse_fen(kStandard[1].fen);
  auto single = perft_divide(b, 3, 1);
  auto threaded = perft_divide(b, 3, 4);
  ASSERT_EQ(single.size(), 48u);
  std::uint64_t sum = 0;
  for (size_t i = 0; i < single.size(); ++i) {
    EXPECT_EQ(single[i].first, threaded[i].first);
    EXPECT_EQ(single[i].second, threaded[i].second);
    sum += single[i].second;
  }
  EXPECT_EQ(sum, 97862u);
  EXPECT_EQ(perft_parallel(b, 4, 3), 4085603u);
}

TEST(Perft, DepthZeroIsOneNode) { EXPECT_EQ(perft(parse_fen("startpos"), 0), 1u); }

}  // namespace
}  // namespace pgmate::chess
