// The GPU's 64-byte board (chess/compact_board.h) run on the host: its play() must give the
// same position as Board::play, and its perft functions the same counts as chess::perft, on
// the whole 127-position suite. The device kernels run exactly these functions.
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "chess/compact_board.h"
#include "chess/fen.h"
#include "chess/movegen.h"

namespace pgmate::chess {
namespace {

std::vector<std::string> suite_fens() {
  std::ifstream in(std::string(PGMATE_TEST_DATA_DIR) + "/perftsuite.epd");
  std::vector<std::string> fens;
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) fens.push_back(line.substr(0, line.find(';')));
  return fens;
}

bool same(const CompactBoard& a, const CompactBoard& b) { return std::memcmp(&a, &b, sizeof a) == 0; }

TEST(CompactBoardPerft, PlayMatchesBoardPlayOnEveryChildToDepthTwo) {
  const auto fens = suite_fens();
  ASSERT_EQ(fens.size(), 127u);
  for (const auto& fen : fens) {
    const Board root = parse_fen(fen);
    MoveList list;
    legal_moves(root, list);
    for (Move m : list) {
      Board child = root;
      child.play<false>(m);
      CompactBoard compact = CompactBoard::from(root);
      compact.play(m);
      ASSERT_TRUE(same(compact, CompactBoard::from(child))) << fen << " move " << m.bits();
      MoveList replies;
      legal_moves(child, replies);
      for (Move r : replies) {
        Board grandchild = child;
        grandchild.play<false>(r);
        CompactBoard c2 = compact;
        c2.play(r);
        ASSERT_TRUE(same(c2, CompactBoard::from(grandchild))) << fen << " moves " << m.bits() << " " << r.bits();
      }
    }
  }
}

TEST(CompactBoardPerft, MoveListsMatchBoardMoveLists) {
  for (const auto& fen : suite_fens()) {
    const Board b = parse_fen(fen);
    MoveList expected, got;
    legal_moves(b, expected);
    legal_moves(CompactBoard::from(b), got);
    ASSERT_EQ(got.size, expected.size) << fen;
    for (int i = 0; i < got.size; ++i) EXPECT_EQ(got.moves[i], expected.moves[i]) << fen;
    EXPECT_EQ(count_legal_moves(CompactBoard::from(b)), expected.size) << fen;
  }
}

TEST(CompactBoardPerft, IterativeAndTwoPlyPerftMatchCpuPerftOnSuite) {
  const auto fens = suite_fens();
  ASSERT_EQ(fens.size(), 127u);
  auto never = [] { return false; };
  for (const auto& fen : fens) {
    const Board b = parse_fen(fen);
    const CompactBoard c = CompactBoard::from(b);
    EXPECT_EQ(perft_two_plies(c), perft(b, 2)) << fen;
    for (int depth = 0; depth <= 4; ++depth)
      ASSERT_EQ(perft_iterative<8>(c, depth, never), perft(b, depth)) << fen << " depth " << depth;
  }
}

TEST(CompactBoardPerft, IterativeStartPositionDepthFiveAndStop) {
  const CompactBoard start = CompactBoard::from(parse_fen("startpos"));
  EXPECT_EQ(perft_iterative<6>(start, 5, [] { return false; }), 4865609u);
  int asked = 0;
  EXPECT_LT(perft_iterative<6>(start, 5, [&] { return ++asked > 2; }), 4865609u);
  EXPECT_EQ(asked, 3);
}

}  // namespace
}  // namespace pgmate::chess
