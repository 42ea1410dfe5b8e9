// American (English) checkers: squares, colours, board geometry and the move.
//
// The 32 dark squares are bits of a 32-bit mask, in the seed's indexing, in which every
// diagonal step is a rotation of the mask by 1 or 7 (mod 32). The board as seen from
// White (White at the bottom, Black's back row at the top), dark squares only, each row
// from the left; on the left the internal index, on the right the standard PDN number:
//
//   row 8:    11  05  31  25         1   2   3   4      (b8 d8 f8 h8)
//   row 7:  10  04  30  24         5   6   7   8        (a7 c7 e7 g7)
//   row 6:    03  29  23  17         9  10  11  12
//   row 5:  02  28  22  16        13  14  15  16
//   row 4:    27  21  15  09        17  18  19  20
//   row 3:  26  20  14  08        21  22  23  24
//   row 2:    19  13  07  01        25  26  27  28
//   row 1:  18  12  06  00        29  30  31  32      (a1 c1 e1 g1)
//
// Black's men start on 1-12 and move down the page (south), White's start on 21-32 and
// move up (north); Black moves first. Steps, as rotations of the internal index:
//
//   north-west (up, toward file a)   +7      north-east (up, toward file h)   +1
//   south-west (down, toward file a) -1      south-east (down, toward file h) -7
//
// (internal index = 18 + (rank + file) / 2 + 7 * (rank - file) / 2 mod 32, with rank and
// file counted from 0 at a1). A rotation wraps around the edges of the board, so every
// step is masked with the squares that have a neighbour that way (kCanStep) first.
// Host and device share this file: everything a PGMATE_HD function reads is a constexpr
// scalar or computed; the PDN tables below are for the host (notation, FEN).
#pragma once

#include <cstdint>

#include "common/hd.h"

namespace pgmate::checkers {

using Mask = std::uint32_t;
using Square = int;  // internal index 0-31

enum Color : std::uint8_t { kBlack = 0, kWhite = 1 };
PGMATE_HD constexpr Color operator~(Color c) { return Color(c ^ 1); }

PGMATE_HD constexpr Mask bit(Square s) { return Mask(1) << s; }

PGMATE_HD PGMATE_FORCEINLINE int popcount(Mask m) {
#if defined(__CUDA_ARCH__)
  return __popc(m);
#elif defined(__POPCNT__)
  return __builtin_popcount(m);
#else
  // Without the POPCNT instruction the builtin is a library call; this is faster inline.
  m = m - ((m >> 1) & 0x55555555u);
  m = (m & 0x33333333u) + ((m >> 2) & 0x33333333u);
  return int((((m + (m >> 4)) & 0x0F0F0F0Fu) * 0x01010101u) >> 24);
#endif
}

// Index of the lowest set bit; m must not be 0.
PGMATE_HD PGMATE_FORCEINLINE Square lsb(Mask m) {
#if defined(__CUDA_ARCH__)
  return __ffs(static_cast<int>(m)) - 1;
#else
  return __builtin_ctz(m);
#endif
}

PGMATE_HD PGMATE_FORCEINLINE Square pop_lsb(Mask& m) {
  const Square s = lsb(m);
  m &= m - 1;
  return s;
}

// Rotation left by n, 1 <= n <= 31 (compiles to one rotate instruction).
PGMATE_HD constexpr Mask rotl(Mask m, int n) { return (m << n) | (m >> (32 - n)); }

// ---- Geometry ----

// PDN number (1-32) to internal index; entry 0 is unused.
inline constexpr std::uint8_t kPdnToSquare[33] = {
    0xFF, 11, 5,  31, 25, 10, 4,  30, 24, 3,  29, 23, 17, 2,  28, 22, 16,
    27,   21, 15, 9,  26, 20, 14, 8,  19, 13, 7,  1,  18, 12, 6,  0};

// Internal index to PDN number.
inline constexpr std::uint8_t kSquareToPdn[32] = {32, 28, 13, 9, 6, 2, 31, 27, 24, 20, 5, 1, 30, 26, 23, 19,
                                                  16, 12, 29, 25, 22, 18, 15, 11, 8, 4, 21, 17, 14, 10, 7, 3};

// Board coordinates of PDN square n: rank 0 (row 1, White's back row) to 7, file 0 (a) to 7.
constexpr int pdn_rank(int n) { return 7 - (n - 1) / 4; }
constexpr int pdn_file(int n) { return 2 * ((n - 1) % 4) + ((n - 1) / 4 % 2 == 0 ? 1 : 0); }

// The internal squares of PDN numbers first..last.
constexpr Mask pdn_squares(int first, int last) {
  Mask m = 0;
  for (int n = first; n <= last; ++n) m |= Mask(1) << kPdnToSquare[n];
  return m;
}

enum Direction : int { kNorthWest = 0, kNorthEast = 1, kSouthWest = 2, kSouthEast = 3 };

// The rotation that takes a square one step in direction d.
PGMATE_HD constexpr int shift_of(int d) { return d == kNorthWest ? 7 : d == kNorthEast ? 1 : d == kSouthWest ? 31 : 25; }
constexpr int rank_step(int d) { return d <= kNorthEast ? 1 : -1; }
constexpr int file_step(int d) { return d == kNorthWest || d == kSouthWest ? -1 : 1; }

namespace detail {
// Squares with `steps` diagonal steps in direction d still on the board, from coordinates.
constexpr Mask has_room(int d, int steps) {
  Mask m = 0;
  for (int n = 1; n <= 32; ++n) {
    const int r = pdn_rank(n) + steps * rank_step(d), f = pdn_file(n) + steps * file_step(d);
    if (r >= 0 && r < 8 && f >= 0 && f < 8) m |= Mask(1) << kPdnToSquare[n];
  }
  return m;
}
// Every step of the table agrees with the rotation: checked at compile time.
constexpr bool rotations_match_layout() {
  for (int n = 1; n <= 32; ++n) {
    if (kSquareToPdn[kPdnToSquare[n]] != n) return false;
    for (int d = 0; d < 4; ++d) {
      const int r = pdn_rank(n) + rank_step(d), f = pdn_file(n) + file_step(d);
      if (r < 0 || r > 7 || f < 0 || f > 7) continue;
      const int m = (7 - r) * 4 + f / 2 + 1;  // PDN number of the neighbour
      if (kPdnToSquare[m] != ((kPdnToSquare[n] + shift_of(d)) & 31)) return false;
    }
  }
  return true;
}
}  // namespace detail
static_assert(detail::rotations_match_layout(), "square table and step rotations disagree");

// Squares that have a neighbour (kCanStep) or a square two steps away (kCanJump) that way.
inline constexpr Mask kCanStepNW = detail::has_room(kNorthWest, 1);
inline constexpr Mask kCanStepNE = detail::has_room(kNorthEast, 1);
inline constexpr Mask kCanStepSW = detail::has_room(kSouthWest, 1);
inline constexpr Mask kCanStepSE = detail::has_room(kSouthEast, 1);
inline constexpr Mask kCanJumpNW = detail::has_room(kNorthWest, 2);
inline constexpr Mask kCanJumpNE = detail::has_room(kNorthEast, 2);
inline constexpr Mask kCanJumpSW = detail::has_room(kSouthWest, 2);
inline constexpr Mask kCanJumpSE = detail::has_room(kSouthEast, 2);

PGMATE_HD constexpr Mask can_step(int d) {
  return d == kNorthWest ? kCanStepNW : d == kNorthEast ? kCanStepNE : d == kSouthWest ? kCanStepSW : kCanStepSE;
}
PGMATE_HD constexpr Mask can_jump(int d) {
  return d == kNorthWest ? kCanJumpNW : d == kNorthEast ? kCanJumpNE : d == kSouthWest ? kCanJumpSW : kCanJumpSE;
}

// Every square of m one step in direction d (squares without a neighbour there drop out).
PGMATE_HD constexpr Mask step(Mask m, int d) { return rotl(m & can_step(d), shift_of(d)); }
// The neighbour of s in direction d (s must have one).
PGMATE_HD constexpr Square neighbour(Square s, int d) { return (s + shift_of(d)) & 31; }

// Crowning rows: White crowns on row 8 (PDN 1-4), Black on row 1 (PDN 29-32).
inline constexpr Mask kRow8 = bit(11) | bit(5) | bit(31) | bit(25);
inline constexpr Mask kRow1 = bit(18) | bit(12) | bit(6) | bit(0);
static_assert(kRow8 == pdn_squares(1, 4) && kRow1 == pdn_squares(29, 32));
PGMATE_HD constexpr Mask crown_row(Color c) { return c == kWhite ? kRow8 : kRow1; }
// The two directions a man of colour c moves in: first_forward(c) and first_forward(c) + 1.
PGMATE_HD constexpr int first_forward(Color c) { return c == kWhite ? kNorthWest : kSouthWest; }

// ---- Moves ----

// At most 9 pieces can be taken in one move: the landing squares of a jumping piece all
// share its square's (rank, file) parity, so it can only take pieces on the other dark
// class, and only the 9 of those off the edge can be jumped.
constexpr int kMaxCaptures = 9;

// A move: simple (captures == 0) or a complete jump sequence. 16 bytes. Two jumps may
// share from and to and even the captured set (a king going round a loop either way):
// the path tells them apart.
struct Move {
  Mask captured;                        // internal squares of the pieces taken
  std::uint8_t from, to;                // internal squares
  std::uint8_t captures;                // pieces taken (0 for a simple move)
  std::uint8_t crowns;                  // 1 when a man ends the move on its crowning row
  std::uint8_t path[kMaxCaptures - 1];  // landing squares before `to`: captures - 1 of them

  PGMATE_HD constexpr bool is_capture() const { return captures != 0; }
  // Landing square i of the jump sequence, 0 <= i < captures (the last is `to`).
  PGMATE_HD constexpr Square landing(int i) const { return i == captures - 1 ? to : path[i]; }
  PGMATE_HD bool operator==(const Move& o) const {
    if (from != o.from || to != o.to || captures != o.captures || captured != o.captured) return false;
    for (int i = 0; i + 1 < captures; ++i)
      if (path[i] != o.path[i]) return false;
    return true;
  }
  PGMATE_HD bool operator!=(const Move& o) const { return !(*this == o); }
};
static_assert(sizeof(Move) == 16);

// Enough for any position: a side has at most 12 pieces, a simple-move position at most 4
// moves a piece, and a piece at most 16 jump sequences (a king inside all 9 capturable
// squares; found by exhaustive search), so 12 * 16 bounds every list.
constexpr int kMaxMoves = 192;

struct MoveList {
  Move moves[kMaxMoves];
  int size = 0;
  PGMATE_HD void push(const Move& m) { moves[size++] = m; }
  PGMATE_HD const Move* begin() const { return moves; }
  PGMATE_HD const Move* end() const { return moves + size; }
};

// Which capture sequences are legal: any (the American rule: a player may choose any
// capture, though each must be completed), or only those taking the most pieces.
enum class CaptureRule : std::uint8_t { kAny = 0, kLongest = 1 };

}  // namespace pgmate::checkers
