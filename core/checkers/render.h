// A text diagram of a checkers position, UTF-8, White at the bottom, like
// chess::board_diagram: one line per row (8 first) with the row number on the left and one
// space between squares, then the file letters, then the state line. Light squares (never
// used) are blank; empty dark squares are '·' (U+00B7); men are ○ (White, U+25CB) and
// ● (Black, U+25CF); kings are ♔ (White, U+2654) and ♚ (Black, U+265A). The state line is
// "Black to move" or "White to move", with ", Black wins" / ", White wins" when the side
// to move cannot move. Every line ends with '\n'. The start position:
//
//   8   ●   ●   ●   ●
//   7 ●   ●   ●   ●
//   6   ●   ●   ●   ●
//   5 ·   ·   ·   ·
//   4   ·   ·   ·   ·
//   3 ○   ○   ○   ○
//   2   ○   ○   ○   ○
//   1 ○   ○   ○   ○
//     a b c d e f g h
//   Black to move
//
// (rows 7, 5, 3 and 1 end in a light square, so with a trailing space).
#pragma once

#include <string>

#include "checkers/board.h"

namespace pgmate::checkers {

std::string board_diagram(const Board& b);

// The PDN numbers laid out the same way (a key to the squares), without a state line.
std::string square_numbers_diagram();

}  // namespace pgmate::checkers
