// A second, deliberately plain move generator (an 8x8 array, coordinates, recursive jumps,
// its own FEN reading and square numbering) compared with the bitboard generator, move
// set against move set as notation with full paths, on thousands of playout positions
// under both capture rules.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "checkers/notation.h"
#include "playouts.h"

namespace pgmate::checkers {
namespace {

// ---- the reference ----
namespace reference {

// cell[rank][file], rank 0 = row 1 (White's back row), file 0 = a.
// 0 empty, 'w' / 'b' men, 'W' / 'B' kings.
struct Position {
  char cell[8][8] = {};
  char side = 'b';
};

// PDN numbering: row 8 first, each row from file a; only squares with rank + file even.
int number(int rank, int file) { return (7 - rank) * 4 + file / 2 + 1; }
void coords(int n, int& rank, int& file) {
  rank = 7 - (n - 1) / 4;
  file = 2 * ((n - 1) % 4) + (rank % 2);
}

// Reads the canonical PDN FEN "B:W21,K22:B1,2" (what to_fen writes).
Position from_fen(const std::string& fen) {
  Position p;
  p.side = fen[0] == 'W' ? 'w' : 'b';
  size_t i = 2;
  while (i < fen.size()) {
    const char colour = fen[i] == 'W' ? 'w' : 'b';
    ++i;
    while (i < fen.size() && fen[i] != ':') {
      if (fen[i] == ',') {
        ++i;
        continue;
      }
      bool king = false;
      if (fen[i] == 'K') {
        king = true;
        ++i;
      }
      int n = 0;
      while (i < fen.size() && fen[i] >= '0' && fen[i] <= '9') n = n * 10 + (fen[i++] - '0');
      int r, f;
      coords(n, r, f);
      p.cell[r][f] = king ? char(colour - 32) : colour;
    }
    ++i;
  }
  return p;
}

bool on_board(int r, int f) { return r >= 0 && r < 8 && f >= 0 && f < 8; }
bool mine(char c, char side) { return c && (c | 32) == side; }
bool theirs(char c, char side) { return c && (c | 32) != side; }

struct Finder {
  Position p;  // with the jumping piece lifted off its square
  char piece;
  std::vector<std::pair<int, std::string>> jumps;  // (pieces taken, text)
  bool taken[8][8] = {};

  void jump_on(int r, int f, const std::string& text, int count) {
    const bool king = piece == 'W' || piece == 'B';
    const int forward = piece == 'w' ? 1 : -1;
    // A man that has just reached the far row is crowned and stops.
    if (!king && count > 0 && r == (piece == 'w' ? 7 : 0)) {
      jumps.push_back({count, text});
      return;
    }
    bool went_on = false;
    for (int dr : {1, -1}) {
      if (!king && dr != forward) continue;
      for (int df : {1, -1}) {
        const int mr = r + dr, mf = f + df, lr = r + 2 * dr, lf = f + 2 * df;
        if (!on_board(lr, lf)) continue;
        if (!theirs(p.cell[mr][mf], p.side) || taken[mr][mf] || p.cell[lr][lf]) continue;
        taken[mr][mf] = true;
        went_on = true;
        jump_on(lr, lf, text + "x" + std::to_string(number(lr, lf)), count + 1);
        taken[mr][mf] = false;
      }
    }
    if (!went_on && count > 0) jumps.push_back({count, text});
  }
};

std::vector<std::string> legal_moves(const Position& p, bool longest) {
  std::vector<std::pair<int, std::string>> jumps;
  std::vector<std::string> steps;
  for (int r = 0; r < 8; ++r)
    for (int f = 0; f < 8; ++f) {
      const char c = p.cell[r][f];
      if (!mine(c, p.side)) continue;
      Finder finder{p, c, {}, {}};
      finder.p.cell[r][f] = 0;
      finder.jump_on(r, f, std::to_string(number(r, f)), 0);
      jumps.insert(jumps.end(), finder.jumps.begin(), finder.jumps.end());
      const bool king = c == 'W' || c == 'B';
      for (int dr : {1, -1}) {
        if (!king && dr != (c == 'w' ? 1 : -1)) continue;
        for (int df : {1, -1})
          if (on_board(r + dr, f + df) && !p.cell[r + dr][f + df])
            steps.push_back(std::to_string(number(r, f)) + "-" + std::to_string(number(r + dr, f + df)));
      }
    }
  std::vector<std::string> out;
  if (jumps.empty()) {
    out = steps;
  } else {
    int most = 0;
    for (const auto& j : jumps) most = std::max(most, j.first);
    for (const auto& j : jumps)
      if (!longest || j.first == most) out.push_back(j.second);
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace reference

std::vector<std::string> fast_moves(const Board& b, CaptureRule rule) {
  MoveList list;
  legal_moves(b, list, rule);
  std::vector<std::string> out;
  for (const Move& m : list) out.push_back(to_text(m));
  std::sort(out.begin(), out.end());
  return out;
}

void compare_on(const std::vector<Board>& positions, CaptureRule rule, int& compared, int& with_kings,
                int& multi_jumps) {
  const bool longest = rule == CaptureRule::kLongest;
  for (const Board& b : positions) {
    const std::string fen = to_fen(b);
    const auto want = reference::legal_moves(reference::from_fen(fen), longest);
    ASSERT_EQ(fast_moves(b, rule), want) << fen << (longest ? " (longest)" : "");
    ASSERT_EQ(count_legal_moves(b, rule), want.size()) << fen;
    ++compared;
    with_kings += b.kings != 0;
    for (const auto& m : want) multi_jumps += std::count(m.begin(), m.end(), 'x') > 1;
  }
}

TEST(CheckersReferenceDifferential, PlayoutPositionsAnyCapture) {
  int compared = 0, with_kings = 0, multi = 0;
  compare_on(testing::playout_positions(1, 60, 250, CaptureRule::kAny), CaptureRule::kAny, compared, with_kings, multi);
  compare_on(testing::playout_positions(2, 30, 250, CaptureRule::kLongest), CaptureRule::kAny, compared, with_kings,
             multi);
  EXPECT_GT(compared, 3000);
  EXPECT_GT(with_kings, 500);
  EXPECT_GT(multi, 50);
}

TEST(CheckersReferenceDifferential, PlayoutPositionsLongestCapture) {
  int compared = 0, with_kings = 0, multi = 0;
  compare_on(testing::playout_positions(3, 60, 250, CaptureRule::kLongest), CaptureRule::kLongest, compared,
             with_kings, multi);
  compare_on(testing::playout_positions(4, 30, 250, CaptureRule::kAny), CaptureRule::kLongest, compared, with_kings,
             multi);
  EXPECT_GT(compared, 3000);
  EXPECT_GT(with_kings, 500);
  EXPECT_GT(multi, 50);
}

// Random placements: many kings and multi-jumps, far from any game.
TEST(CheckersReferenceDifferential, RandomPlacements) {
  std::mt19937 rng(77);
  std::vector<Board> boards;
  for (int i = 0; i < 4000; ++i) {
    Board b;
    b.side = rng() & 1 ? kWhite : kBlack;
    const int white = 1 + int(rng() % 12), black = 1 + int(rng() % 12);
    for (int placed = 0; placed < white + black;) {
      const Square s = int(rng() % 32);
      if (b.occupied() & bit(s)) continue;
      const Color c = placed < white ? kWhite : kBlack;
      const bool king = (rng() % 3 == 0) || (crown_row(c) & bit(s));
      (c == kWhite ? b.white : b.black) |= bit(s);
      if (king) b.kings |= bit(s);
      ++placed;
    }
    boards.push_back(b);
  }
  int compared = 0, with_kings = 0, multi = 0;
  compare_on(boards, CaptureRule::kAny, compared, with_kings, multi);
  compare_on(boards, CaptureRule::kLongest, compared, with_kings, multi);
  EXPECT_GT(multi, 500);
}

}  // namespace
}  // namespace pgmate::checkers
