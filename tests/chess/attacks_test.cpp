// The table-driven attack sets (PEXT or magics) against walking the rays.
#include <gtest/gtest.h>

#include <random>

#include "chess/bitboard.h"

namespace pgmate::chess {
namespace {

TEST(Attacks, SlidersMatchRayWalkOnRandomOccupancies) {
  std::mt19937_64 rng(42);
  for (int i = 0; i < 20000; ++i) {
    // Sparse and dense boards both matter: AND/OR a few random words.
    Bitboard occ = (i & 1) ? (rng() & rng()) : (rng() | rng());
    Square s = Square(rng() % 64);
    ASSERT_EQ(rook_attacks(s, occ), slider_attacks_slow(kRook, s, occ)) << s << " " << occ;
    ASSERT_EQ(bishop_attacks(s, occ), slider_attacks_slow(kBishop, s, occ)) << s << " " << occ;
    ASSERT_EQ(queen_attacks(s, occ), slider_attacks_slow(kQueen, s, occ)) << s << " " << occ;
  }
}

// The device path computes attacks without tables; it must give the same sets.
TEST(Attacks, TableFreeMatchesTables) {
  std::mt19937_64 rng(99);
  for (int i = 0; i < 20000; ++i) {
    Bitboard occ = (i & 1) ? (rng() & rng()) : (rng() | rng());
    Square s = Square(rng() % 64), t = Square(rng() % 64);
    ASSERT_EQ(table_free::rook_attacks(s, occ), rook_attacks(s, occ)) << s << " " << occ;
    ASSERT_EQ(table_free::bishop_attacks(s, occ), bishop_attacks(s, occ)) << s << " " << occ;
    ASSERT_EQ(table_free::between_and_target(s, t), between_and_target(s, t)) << s << " " << t;
    ASSERT_EQ(knight_attacks_set(bb(s)), knight_attacks(s));
    ASSERT_EQ(king_attacks_set(bb(s)), king_attacks(s));
    ASSERT_EQ(pawn_attacks_set(kBlack, bb(s)), pawn_attacks(kBlack, s));
  }
}

TEST(Attacks, LeapersCountsOnEmptyBoard) {
  // The geometric move totals of the SQL seed, done right.
  int knight = 0, king = 0;
  for (Square s = 0; s < 64; ++s) {
    knight += popcount(knight_attacks(s));
    king += popcount(king_attacks(s));
  }
  EXPECT_EQ(knight, 336);
  EXPECT_EQ(king, 420);
  EXPECT_EQ(popcount(knight_attacks(0)), 2);   // a1
  EXPECT_EQ(popcount(knight_attacks(27)), 8);  // d4
  EXPECT_EQ(king_attacks(0), bb(1) | bb(8) | bb(9));
}

TEST(Attacks, SliderTotalsOnEmptyBoard) {
  int rook = 0, bishop = 0;
  for (Square s = 0; s < 64; ++s) {
    rook += popcount(rook_attacks(s, 0));
    bishop += popcount(bishop_attacks(s, 0));
  }
  EXPECT_EQ(rook, 896);
  EXPECT_EQ(bishop, 560);
}

TEST(Attacks, PawnAttacks) {
  EXPECT_EQ(pawn_attacks(kWhite, make_square(4, 1)), bb(make_square(3, 2)) | bb(make_square(5, 2)));
  EXPECT_EQ(pawn_attacks(kWhite, make_square(0, 1)), bb(make_square(1, 2)));
  EXPECT_EQ(pawn_attacks(kBlack, make_square(7, 6)), bb(make_square(6, 5)));
}

TEST(Attacks, BetweenAndTarget) {
  // e1 to e8: e2..e7 plus e8.
  EXPECT_EQ(between_and_target(4, 60), (kFileA << 4) & ~kRank1);
  // a1 to h8 diagonal.
  EXPECT_EQ(popcount(between_and_target(0, 63)), 7);
  // Not aligned (knight's jump): only the target.
  EXPECT_EQ(between_and_target(0, 10), bb(10));
}

}  // namespace
}  // namespace pgmate::chess
