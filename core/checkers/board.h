// The checkers position: three 32-bit masks (12 bytes) and the side to move.
// Copy-make: play() changes the board in place; callers keep the old copy to undo.
#pragma once

#include "checkers/types.h"

namespace pgmate::checkers {

// Black's men on 1-12, White's on 21-32, in internal squares.
inline constexpr Mask kStartBlack = 0xE3820C38u;
inline constexpr Mask kStartWhite = 0x041C71C3u;
static_assert(kStartBlack == pdn_squares(1, 12) && kStartWhite == pdn_squares(21, 32));

struct Board {
  Mask white = 0;  // White's pieces (men and kings)
  Mask black = 0;  // Black's pieces
  Mask kings = 0;  // the kings of both sides
  Color side = kBlack;

  PGMATE_HD static constexpr Board start() { return Board{kStartWhite, kStartBlack, 0, kBlack}; }

  PGMATE_HD constexpr Mask pieces(Color c) const { return c == kWhite ? white : black; }
  PGMATE_HD constexpr Mask occupied() const { return white | black; }
  PGMATE_HD constexpr Mask empty() const { return ~(white | black); }
  PGMATE_HD constexpr Mask men(Color c) const { return pieces(c) & ~kings; }
  PGMATE_HD constexpr Mask kings_of(Color c) const { return pieces(c) & kings; }

  PGMATE_HD void play(const Move& m) { play(m.from, m.to, m.captured, m.crowns != 0); }

  // The move's effect without a Move: the piece on `from` goes to `to`, the pieces on
  // `captured` are taken, a man is crowned when `crowns`; then the other side moves.
  PGMATE_HD PGMATE_FORCEINLINE void play(Square from_square, Square to_square, Mask captured, bool crowns) {
    const Mask from = bit(from_square), to = bit(to_square);
    Mask& ours = side == kWhite ? white : black;
    Mask& theirs = side == kWhite ? black : white;
    // from == to is possible (a king's jump round a loop), so clear before setting.
    ours = (ours & ~from) | to;
    theirs &= ~captured;
    const Mask king = kings & from;
    kings &= ~(from | captured);
    if (king || crowns) kings |= to;
    side = ~side;
  }

  PGMATE_HD constexpr bool operator==(const Board& o) const {
    return white == o.white && black == o.black && kings == o.kings && side == o.side;
  }
  PGMATE_HD constexpr bool operator!=(const Board& o) const { return !(*this == o); }
};

}  // namespace pgmate::checkers
