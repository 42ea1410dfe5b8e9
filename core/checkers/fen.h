// The PDN FEN form of a checkers position, in and out, with strict validation:
//
//   B:W21,22,23,24,25,26,27,28,29,30,31,32:B1,2,3,4,5,6,7,8,9,10,11,12     (the start)
//   W:WK3,21:B12,K30
//
// Field 1 is the side to move (B or W); then one field for each colour, in either order,
// each the colour letter followed by that side's squares (PDN numbers 1-32, comma-separated,
// 'K' before a king's square; a range like 1-12 or K1-3 is accepted on input). A side may
// have no pieces ("W:W:B1"). Output is canonical: side, White's field, Black's field, each
// sorted by square number, no ranges.
#pragma once

#include <string>
#include <string_view>

#include "checkers/board.h"
#include "chess/fen.h"

namespace pgmate::checkers {

// Every rejected input (FEN, move text) throws a ParseError naming the input and the fault;
// well-formed move text that is not legal on the board, an IllegalMove (a ParseError).
using ParseError = chess::ParseError;
using IllegalMove = chess::IllegalMove;

inline constexpr std::string_view kStartFen = "B:W21,22,23,24,25,26,27,28,29,30,31,32:B1,2,3,4,5,6,7,8,9,10,11,12";

// Parses a PDN FEN; "startpos" is the start position. Rejected (ParseError naming the field
// and the character or square): a missing or extra field, a side other than B or W, a
// colour field given twice, a square that is not a number in 1-32, a square listed twice,
// a man on its crowning row (White's on 1-4, Black's on 29-32), more than 12 pieces a side.
Board parse_fen(std::string_view fen);

std::string to_fen(const Board& b);

// Checks what every position must obey (disjoint colours, kings among the pieces, at most
// 12 pieces a side, no man on its crowning row); throws ParseError naming `what` if not.
void validate_position(const Board& b, std::string_view what);

// The PDN number of an internal square, as text ("1" to "32").
std::string square_name(Square s);

}  // namespace pgmate::checkers
