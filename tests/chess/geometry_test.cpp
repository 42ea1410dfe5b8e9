// Piece move tables on an empty board and the 8x8 matrix views.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <tuple>

#include "chess/fen.h"
#include "chess/geometry.h"

namespace pgmate::chess {
namespace {

using Row = std::array<int, 8>;

struct Totals {
  int moves = 0;
  int crossed = 0;
};

Totals totals(const std::string& piece) {
  Totals t;
  for (const GeometricMove& m : move_table(piece)) {
    EXPECT_EQ(m.piece, piece);
    ++t.moves;
    t.crossed += m.squares_crossed;
  }
  return t;
}

TEST(Geometry, SliderTotals) {
  // squares_crossed = squares strictly between from and to; these are the tradition's totals.
  EXPECT_EQ(totals("bishop").moves, 560);
  EXPECT_EQ(totals("bishop").crossed, 784);
  EXPECT_EQ(totals("rook").moves, 896);
  EXPECT_EQ(totals("rook").crossed, 1792);
  EXPECT_EQ(totals("queen").moves, 1456);
  EXPECT_EQ(totals("queen").crossed, 2576);
}

TEST(Geometry, OtherTotals) {
  EXPECT_EQ(totals("knight").moves, 336);
  EXPECT_EQ(totals("knight").crossed, 0);
  EXPECT_EQ(totals("king").moves, 420);
  EXPECT_EQ(totals("king").crossed, 0);
  // Pawns: 48 single pushes + 8 double pushes + 84 captures per colour.
  EXPECT_EQ(totals("white_pawn").moves, 140);
  EXPECT_EQ(totals("black_pawn").moves, 140);
  EXPECT_EQ(totals("white_pawn").moves + totals("black_pawn").moves, 280);
  EXPECT_EQ(totals("white_pawn").crossed, 8);  // each double push passes one square
  EXPECT_EQ(totals("black_pawn").crossed, 8);
  EXPECT_EQ(totals("castling").moves, 4);
  EXPECT_EQ(totals("castling").crossed, 4);
}

TEST(Geometry, NoFilterIsEverythingInOrder) {
  const auto all = move_table();
  EXPECT_EQ(all.size(), 560u + 896 + 1456 + 336 + 420 + 280 + 4);
  // Grouped by piece in geometry_piece_names() order, then by from, then by to.
  const auto& names = geometry_piece_names();
  std::map<std::string, int> rank;
  for (size_t i = 0; i < names.size(); ++i) rank[names[i]] = int(i);
  for (size_t i = 1; i < all.size(); ++i) {
    const auto& a = all[i - 1];
    const auto& b = all[i];
    const auto ka = std::make_tuple(rank.at(a.piece), a.from, a.to);
    const auto kb = std::make_tuple(rank.at(b.piece), b.from, b.to);
    ASSERT_LT(ka, kb) << i;
  }
  std::set<std::string> seen;
  for (const auto& m : all) seen.insert(m.piece);
  EXPECT_EQ(seen.size(), 8u);
}

TEST(Geometry, FilterIsCaseInsensitive) {
  EXPECT_EQ(move_table("Knight").size(), 336u);
  EXPECT_EQ(move_table("KING").size(), 420u);
  EXPECT_EQ(move_table("KING")[0].piece, "king");
}

TEST(Geometry, UnknownPieceThrowsListingNames) {
  try {
    move_table("pawn");
    FAIL() << "no exception";
  } catch (const std::invalid_argument& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("pawn"), std::string::npos);
    for (const auto& n : geometry_piece_names()) EXPECT_NE(what.find(n), std::string::npos) << n;
  }
  EXPECT_THROW(move_table("dragon"), std::invalid_argument);
  EXPECT_THROW(move_mask("dragon", 0), std::invalid_argument);
}

// The empty name is an unknown piece in both functions (it once meant "all" in move_table
// only; SQL's NULL is the way to ask for every piece).
TEST(Geometry, EmptyPieceNameIsAnError) {
  for (auto call : {+[] { move_table(""); }, +[] { move_mask("", 27); }}) {
    try {
      call();
      ADD_FAILURE() << "no exception";
    } catch (const std::invalid_argument& e) {
      EXPECT_EQ(std::string(e.what()).rfind("unknown piece \"\" (valid: king, ", 0), 0u) << e.what();
    }
  }
}

TEST(Geometry, SquaresCrossedExamples) {
  std::map<std::pair<Square, Square>, int> rook, pawn, castle, knight;
  for (const auto& m : move_table("rook")) rook[{m.from, m.to}] = m.squares_crossed;
  for (const auto& m : move_table("white_pawn")) pawn[{m.from, m.to}] = m.squares_crossed;
  for (const auto& m : move_table("castling")) castle[{m.from, m.to}] = m.squares_crossed;
  for (const auto& m : move_table("knight")) knight[{m.from, m.to}] = m.squares_crossed;
  EXPECT_EQ(rook.at({parse_square("a1"), parse_square("a8")}), 6);
  EXPECT_EQ(rook.at({parse_square("a1"), parse_square("a2")}), 0);
  EXPECT_EQ(rook.at({parse_square("h1"), parse_square("a1")}), 6);
  EXPECT_EQ(pawn.at({parse_square("e2"), parse_square("e4")}), 1);
  EXPECT_EQ(pawn.at({parse_square("e2"), parse_square("e3")}), 0);
  EXPECT_EQ(pawn.at({parse_square("e2"), parse_square("d3")}), 0);
  EXPECT_EQ(knight.at({parse_square("g1"), parse_square("f3")}), 0);
  EXPECT_EQ(castle.size(), 4u);
  EXPECT_EQ(castle.at({parse_square("e1"), parse_square("g1")}), 1);
  EXPECT_EQ(castle.at({parse_square("e1"), parse_square("c1")}), 1);
  EXPECT_EQ(castle.at({parse_square("e8"), parse_square("g8")}), 1);
  EXPECT_EQ(castle.at({parse_square("e8"), parse_square("c8")}), 1);
}

TEST(Geometry, PawnsNeverMoveFromTheEdgeRanks) {
  for (const char* name : {"white_pawn", "black_pawn"})
    for (const auto& m : move_table(name)) {
      EXPECT_NE(rank_of(m.from), 0) << name;
      EXPECT_NE(rank_of(m.from), 7) << name;
    }
  // White pawns from rank 7 still push to rank 8 (one move per square, no promotion split).
  int from7 = 0;
  for (const auto& m : move_table("white_pawn")) from7 += rank_of(m.from) == 6;
  EXPECT_EQ(from7, 8 + 14);
}

TEST(Geometry, KingMatrixD4) {
  const SquareMatrix m = move_mask("king", parse_square("d4"));
  EXPECT_EQ(m[0], (Row{0, 0, 0, 0, 0, 0, 0, 0}));  // rank 8
  EXPECT_EQ(m[1], (Row{0, 0, 0, 0, 0, 0, 0, 0}));
  EXPECT_EQ(m[2], (Row{0, 0, 0, 0, 0, 0, 0, 0}));
  EXPECT_EQ(m[3], (Row{0, 0, 1, 1, 1, 0, 0, 0}));  // rank 5
  EXPECT_EQ(m[4], (Row{0, 0, 1, 0, 1, 0, 0, 0}));  // rank 4: c4 . e4
  EXPECT_EQ(m[5], (Row{0, 0, 1, 1, 1, 0, 0, 0}));  // rank 3
  EXPECT_EQ(m[6], (Row{0, 0, 0, 0, 0, 0, 0, 0}));
  EXPECT_EQ(m[7], (Row{0, 0, 0, 0, 0, 0, 0, 0}));  // rank 1
}

TEST(Geometry, KingMatrixA8) {
  const SquareMatrix m = move_mask("king", parse_square("a8"));
  EXPECT_EQ(m[0], (Row{0, 1, 0, 0, 0, 0, 0, 0}));  // b8
  EXPECT_EQ(m[1], (Row{1, 1, 0, 0, 0, 0, 0, 0}));  // a7 b7
  for (int r = 2; r < 8; ++r) EXPECT_EQ(m[r], (Row{0, 0, 0, 0, 0, 0, 0, 0})) << r;
}

TEST(Geometry, KnightMatrixA1) {
  const SquareMatrix m = move_mask("knight", parse_square("a1"));
  SquareMatrix want{};
  want[5][1] = 1;  // b3
  want[6][2] = 1;  // c2
  EXPECT_EQ(m, want);
}

TEST(Geometry, WhitePawnMatrixE2) {
  // Pushes (single and double from the start rank) and both diagonal captures.
  const SquareMatrix m = move_mask("white_pawn", parse_square("e2"));
  SquareMatrix want{};
  want[4][4] = 1;  // e4
  want[5][4] = 1;  // e3
  want[5][3] = 1;  // d3
  want[5][5] = 1;  // f3
  EXPECT_EQ(m, want);
  const SquareMatrix black = move_mask("black_pawn", parse_square("a7"));
  SquareMatrix want_black{};
  want_black[2][0] = 1;  // a6
  want_black[3][0] = 1;  // a5
  want_black[2][1] = 1;  // b6
  EXPECT_EQ(black, want_black);
}

TEST(Geometry, MoveMaskMatchesTable) {
  for (const auto& name : geometry_piece_names()) {
    std::map<Square, SquareMatrix> from_table;
    for (const auto& m : move_table(name)) from_table[m.from][7 - rank_of(m.to)][file_of(m.to)] = 1;
    for (Square s = 0; s < 64; ++s) {
      const bool pawn = name == "white_pawn" || name == "black_pawn";
      if (pawn && (rank_of(s) == 0 || rank_of(s) == 7)) continue;
      EXPECT_EQ(move_mask(name, s), from_table[s]) << name << " " << square_name(s);
    }
  }
  SquareMatrix castle_e1{};
  castle_e1[7][2] = castle_e1[7][6] = 1;
  EXPECT_EQ(move_mask("castling", parse_square("e1")), castle_e1);
  EXPECT_EQ(move_mask("castling", parse_square("d4")), SquareMatrix{});
}

TEST(Geometry, MoveMaskRejectsBadInput) {
  EXPECT_THROW(move_mask("white_pawn", parse_square("e1")), std::invalid_argument);
  EXPECT_THROW(move_mask("white_pawn", parse_square("e8")), std::invalid_argument);
  EXPECT_THROW(move_mask("black_pawn", parse_square("a1")), std::invalid_argument);
  EXPECT_THROW(move_mask("black_pawn", parse_square("h8")), std::invalid_argument);
  EXPECT_THROW(move_mask("king", -1), std::invalid_argument);
  EXPECT_THROW(move_mask("king", 64), std::invalid_argument);
}

TEST(Geometry, AttackMaskStartKnightG1) {
  // Attacked squares regardless of occupant: e2 holds a white pawn and still counts.
  const Board b = parse_fen(kStartFen);
  const SquareMatrix m = attack_mask(b, parse_square("g1"));
  SquareMatrix want{};
  want[5][5] = 1;  // f3
  want[5][7] = 1;  // h3
  want[6][4] = 1;  // e2
  EXPECT_EQ(m, want);
}

TEST(Geometry, AttackMaskBlockersAndPawns) {
  const Board start = parse_fen(kStartFen);
  // The rook on a1 is boxed in: it attacks (defends) a2 and b1 only.
  SquareMatrix rook{};
  rook[6][0] = rook[7][1] = 1;
  EXPECT_EQ(attack_mask(start, parse_square("a1")), rook);
  // A pawn attacks its diagonals, not the squares it pushes to.
  SquareMatrix pawn{};
  pawn[5][3] = pawn[5][5] = 1;
  EXPECT_EQ(attack_mask(start, parse_square("e2")), pawn);
  // Black pawn on a7 attacks b6 only.
  SquareMatrix black_pawn{};
  black_pawn[2][1] = 1;
  EXPECT_EQ(attack_mask(start, parse_square("a7")), black_pawn);

  // A slider stops on the first piece of either colour, which counts.
  const Board b = parse_fen("4k3/8/8/3p4/8/8/3R1N2/4K3 w - - 0 1");
  SquareMatrix r{};
  r[3][3] = r[4][3] = r[5][3] = 1;            // d5 (black pawn), d4, d3
  r[7][3] = 1;                                 // d1
  r[6][0] = r[6][1] = r[6][2] = r[6][4] = r[6][5] = 1;  // a2 b2 c2 e2 f2 (own knight)
  EXPECT_EQ(attack_mask(b, parse_square("d2")), r);
}

TEST(Geometry, AttackMaskEmptySquareThrows) {
  const Board b = parse_fen(kStartFen);
  EXPECT_THROW(attack_mask(b, parse_square("e4")), std::invalid_argument);
  EXPECT_THROW(attack_mask(b, 64), std::invalid_argument);
}

TEST(Geometry, BitboardMatrixLayout) {
  const SquareMatrix m = bitboard_matrix(bb(parse_square("a8")) | bb(parse_square("h1")));
  EXPECT_EQ(m[0][0], 1);
  EXPECT_EQ(m[7][7], 1);
  int ones = 0;
  for (const auto& row : m)
    for (int v : row) ones += v;
  EXPECT_EQ(ones, 2);
}

}  // namespace
}  // namespace pgmate::chess
