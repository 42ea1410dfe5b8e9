// Perft from the start position at depths 1-8 against the published counts, and divide and
// threads agreeing with the plain count.
#include <gtest/gtest.h>

#include "checkers/fen.h"
#include "checkers/notation.h"
#include "checkers/perft.h"
#include "perft_counts.h"

namespace pgmate::checkers {
namespace {

TEST(CheckersPerft, StartPositionDepths1To8) {
  const Board b = Board::start();
  for (int depth = 1; depth <= 8; ++depth)
    EXPECT_EQ(perft(b, depth), testing::kStartPerft[depth - 1]) << "depth " << depth;
  EXPECT_EQ(perft(b, 0), 1u);
}

TEST(CheckersPerft, DivideAndThreads) {
  const Board b = parse_fen("startpos");
  const auto divide = perft_divide(b, 6, CaptureRule::kAny, 2);
  ASSERT_EQ(divide.size(), 7u);
  std::uint64_t total = 0;
  std::vector<std::string> moves;
  for (const auto& [move, nodes] : divide) {
    total += nodes;
    moves.push_back(to_text(move));
    Board child = b;
    child.play(move);
    EXPECT_EQ(nodes, perft(child, 5));
  }
  EXPECT_EQ(total, testing::kStartPerft[5]);
  EXPECT_EQ(moves, (std::vector<std::string>{"9-13", "9-14", "10-14", "10-15", "11-15", "11-16", "12-16"}));
  EXPECT_EQ(perft_parallel(b, 7, CaptureRule::kAny, 3), testing::kStartPerft[6]);
  EXPECT_TRUE(perft_divide(b, 0).empty());
}

TEST(CheckersPerft, PollingAgrees) {
  int polls = 0;
  EXPECT_EQ(perft_polling(Board::start(), 10, CaptureRule::kAny, [&] { ++polls; }), testing::kStartPerft[9]);
  EXPECT_GT(polls, 1);
}

TEST(CheckersPerft, LongestRuleFromTheStart) {
  // The longest rule only prunes when a choice of captures of different lengths arises,
  // so it can only lower the counts.
  const Board b = Board::start();
  for (int depth = 1; depth <= 7; ++depth) {
    const std::uint64_t longest = perft(b, depth, CaptureRule::kLongest);
    EXPECT_LE(longest, testing::kStartPerft[depth - 1]) << depth;
    if (depth <= 4) {
      EXPECT_EQ(longest, testing::kStartPerft[depth - 1]) << depth;  // no such choice yet
    }
  }
}

}  // namespace
}  // namespace pgmate::checkers
