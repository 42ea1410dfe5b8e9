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
#include "chess/magic_tables.h"
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

// The GPU's flat magic tables (chess/magic_tables.h) through a host policy, as the device
// policy reads them.
struct HostMagicAttacks {
  static inline MagicTableView view{};
  static Bitboard rook(Square s, Bitboard occ) { return view.attacks[magic_index(view.rook[s], occ)]; }
  static Bitboard bishop(Square s, Bitboard occ) { return view.attacks[magic_index(view.bishop[s], occ)]; }
  static Bitboard between(Square a, Square b) { return view.between[std::size_t(a) * 64 + std::size_t(b)]; }
};

TEST(CompactBoardPerft, FlatMagicTablesMatchTableFreeAttacks) {
  const MagicTables tables = MagicTables::build();
  ASSERT_EQ(tables.attacks.size(), 102400u + 5248u);
  HostMagicAttacks::view = tables.view();
  std::uint64_t x = 0x1234567887654321ULL;
  auto random = [&] {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return x;
  };
  for (Square s = 0; s < 64; ++s) {
    for (int i = 0; i < 2000; ++i) {
      const Bitboard occ = random() & random();
      ASSERT_EQ(HostMagicAttacks::rook(s, occ), table_free::rook_attacks(s, occ)) << s;
      ASSERT_EQ(HostMagicAttacks::bishop(s, occ), table_free::bishop_attacks(s, occ)) << s;
    }
    for (Square t = 0; t < 64; ++t) ASSERT_EQ(HostMagicAttacks::between(s, t), table_free::between_and_target(s, t));
  }
}

TEST(CompactBoardPerft, MagicPolicyPerftMatchesCpuPerftOnSuite) {
  const MagicTables tables = MagicTables::build();
  HostMagicAttacks::view = tables.view();
  auto never = [] { return false; };
  for (const auto& fen : suite_fens()) {
    const Board b = parse_fen(fen);
    const auto c = BasicCompactBoard<HostMagicAttacks>::from(b);
    for (int depth = 1; depth <= 3; ++depth)
      ASSERT_EQ(perft_iterative<8>(c, depth, never), perft(b, depth)) << fen << " depth " << depth;
  }
}

}  // namespace
}  // namespace pgmate::chess
