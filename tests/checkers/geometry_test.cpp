// The square indexing against a plain 8x8 coordinate model: every diagonal neighbour of
// every square, in every direction, one and two steps, and nothing wrapping round an edge.
#include <gtest/gtest.h>

#include <array>

#include "checkers/board.h"

namespace pgmate::checkers {
namespace {

// The table: rows 8 to 1, the dark squares of each row from the left (file a).
constexpr int kRows[8][4] = {
    {11, 5, 31, 25}, {10, 4, 30, 24}, {3, 29, 23, 17}, {2, 28, 22, 16},
    {27, 21, 15, 9}, {26, 20, 14, 8}, {19, 13, 7, 1}, {18, 12, 6, 0},
};

struct Coord {
  int rank, file;  // 0-7, a1 = (0, 0)
};

// Coordinates of every internal square, from the table alone.
std::array<Coord, 32> coordinates() {
  std::array<Coord, 32> c{};
  std::array<bool, 32> seen{};
  for (int row = 0; row < 8; ++row)
    for (int i = 0; i < 4; ++i) {
      const int rank = 7 - row;
      const int file = 2 * i + (rank % 2);  // a1 is dark: dark squares have rank + file even
      const int s = kRows[row][i];
      EXPECT_FALSE(seen[s]) << s;
      seen[s] = true;
      c[s] = {rank, file};
    }
  return c;
}

// The internal square at (rank, file), or -1 off the board or on a light square.
int square_at(const std::array<Coord, 32>& c, int rank, int file) {
  for (int s = 0; s < 32; ++s)
    if (c[s].rank == rank && c[s].file == file) return s;
  return -1;
}

constexpr int kRankStep[4] = {1, 1, -1, -1};  // NW, NE, SW, SE
constexpr int kFileStep[4] = {-1, 1, -1, 1};

TEST(CheckersGeometry, EveryNeighbourMatchesTheCoordinateModel) {
  const auto c = coordinates();
  int neighbours = 0, edges = 0;
  for (int s = 0; s < 32; ++s) {
    for (int d = 0; d < 4; ++d) {
      for (int steps = 1; steps <= 2; ++steps) {
        const int r = c[s].rank + steps * kRankStep[d], f = c[s].file + steps * kFileStep[d];
        const int want = (r >= 0 && r < 8 && f >= 0 && f < 8) ? square_at(c, r, f) : -1;
        const Mask room = steps == 1 ? can_step(d) : can_jump(d);
        if (want < 0) {
          EXPECT_FALSE(room & bit(s)) << "square " << s << " direction " << d << " steps " << steps;
          if (steps == 1) {
            EXPECT_EQ(step(bit(s), d), 0u) << "square " << s << " wraps in direction " << d;
            ++edges;
          }
          continue;
        }
        ASSERT_TRUE(room & bit(s)) << "square " << s << " direction " << d << " steps " << steps;
        // A step is a rotation by shift_of(d), mod 32.
        EXPECT_EQ(want, (s + steps * shift_of(d)) % 32) << "square " << s << " direction " << d;
        if (steps == 1) {
          EXPECT_EQ(step(bit(s), d), bit(want)) << "square " << s << " direction " << d;
          EXPECT_EQ(neighbour(s, d), want);
          ++neighbours;
        }
      }
    }
  }
  // 7x7 interior 2x2 blocks, two diagonals each, both ways: 98 directed steps.
  EXPECT_EQ(neighbours, 98);
  EXPECT_EQ(neighbours + edges, 128);
}

TEST(CheckersGeometry, SetStepsNeverWrap) {
  const auto c = coordinates();
  for (int d = 0; d < 4; ++d) {
    Mask want = 0;
    for (int s = 0; s < 32; ++s) {
      const int t = square_at(c, c[s].rank + kRankStep[d], c[s].file + kFileStep[d]);
      if (t >= 0) want |= bit(t);
    }
    EXPECT_EQ(step(~Mask(0), d), want) << "direction " << d;
  }
}

TEST(CheckersGeometry, PdnNumbering) {
  const auto c = coordinates();
  for (int n = 1; n <= 32; ++n) {
    // Standard numbering: row by row from Black's back row (row 8), each row from the
    // left as White sees the board; 1 = b8, 4 = h8, 5 = a7, 29 = a1, 32 = g1.
    const int row = (n - 1) / 4, rank = 7 - row;
    const int file = 2 * ((n - 1) % 4) + (rank % 2);
    const int s = kPdnToSquare[n];
    EXPECT_EQ(c[s].rank, rank) << n;
    EXPECT_EQ(c[s].file, file) << n;
    EXPECT_EQ(kSquareToPdn[s], n);
    EXPECT_EQ(pdn_rank(n), rank);
    EXPECT_EQ(pdn_file(n), file);
    // The closed form of the indexing.
    EXPECT_EQ(s, (18 + (rank + file) / 2 + 7 * (rank - file) / 2 + 64) % 32) << n;
  }
  EXPECT_EQ(square_at(c, 7, 1), kPdnToSquare[1]);   // b8
  EXPECT_EQ(square_at(c, 0, 0), kPdnToSquare[29]);  // a1
  EXPECT_EQ(square_at(c, 0, 6), kPdnToSquare[32]);  // g1
}

TEST(CheckersGeometry, StartAndCrowningRows) {
  const auto c = coordinates();
  Mask black = 0, white = 0, row8 = 0, row1 = 0;
  for (int s = 0; s < 32; ++s) {
    if (c[s].rank >= 5) black |= bit(s);
    if (c[s].rank <= 2) white |= bit(s);
    if (c[s].rank == 7) row8 |= bit(s);
    if (c[s].rank == 0) row1 |= bit(s);
  }
  EXPECT_EQ(kStartBlack, black);
  EXPECT_EQ(kStartWhite, white);
  EXPECT_EQ(crown_row(kWhite), row8);
  EXPECT_EQ(crown_row(kBlack), row1);
  const Board b = Board::start();
  EXPECT_EQ(b.side, kBlack);
  EXPECT_EQ(b.kings, 0u);
  EXPECT_EQ(popcount(b.black), 12);
  EXPECT_EQ(popcount(b.white), 12);
}

TEST(CheckersGeometry, MoveIsSixteenBytesAndBoardIsSmall) {
  EXPECT_EQ(sizeof(Move), 16u);
  EXPECT_LE(sizeof(Board), 16u);
}

}  // namespace
}  // namespace pgmate::checkers
