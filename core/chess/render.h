// Board pictures: a Unicode text diagram and a self-contained SVG. White is always at the
// bottom.
#pragma once

#include <string>

#include "chess/board.h"

namespace pgmate::chess {

// Text diagram, UTF-8, one line per rank (8 first) with the rank number on the left and
// one space between squares; pieces as ♔♕♖♗♘♙ (White) and ♚♛♜♝♞♟ (Black), empty squares
// as '·' (U+00B7); then the file letters, then the state line, e.g.
//   "White to move, castling KQkq, en passant e3, check"
// ("castling"/"en passant"/"check" only when there are any). Every line ends with '\n'.
std::string board_diagram(const Board& b);

// A self-contained SVG (no external fonts, images or CSS): 8x8 light/dark squares
// (one <rect> each), file letters a-h below and rank numbers 1-8 on the left, pieces as
// Unicode glyphs in <text class="piece ..."> elements (the solid glyph for both colours,
// White's filled white and outlined, so they read the same on light and dark squares).
// Highlights are extra <rect>s: the from and to squares of last_move when it is not null,
// and a red glow under the king of the side to move when it is in check.
// Starts with "<svg" and ends with "</svg>\n".
std::string board_svg(const Board& b, Move last_move = Move());

}  // namespace pgmate::chess
