// American checkers in SQL: conversions between the `checkers_board` / `checkers_move`
// values and core/checkers, and the move syntax shared by the type and the functions.
//
// checkers_board: 16 bytes, passed by reference: White's, Black's and the kings' masks
// (uint32 each, internal square indexing of core/checkers/types.h, host byte order), the
// side to move (0 Black, 1 White) and three zero bytes, so equal positions are
// byte-equal.
//
// checkers_move: 16 bytes, the core Move struct in board-free canonical form: from, to,
// captures (number of jumps, 0 for a simple move), the landing squares before `to`, and
// `captured` = the squares jumped over, which the path alone determines (every jump
// passes over the square between its two landing squares). What only a board can tell,
// `crowns`, is always 0, and unused path bytes are 0; so a move read from text, from
// binary input or from legal_moves is byte-equal to every other form of the same move, and
// equality, hashing and ordering need no board.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "checkers/fen.h"
#include "checkers/movegen.h"
#include "datum.h"

namespace pgmate::pg {

constexpr int kCheckersBoardSize = 16;
constexpr int kCheckersMoveSize = 16;

checkers::Board checkers_board_from_datum(Datum d);
Datum checkers_board_to_datum(const checkers::Board& b);
inline checkers::Board checkers_board_arg(FunctionCallInfo fcinfo, int n) {
  return checkers_board_from_datum(PG_GETARG_DATUM(n));
}

// The board-free canonical form (see above).
checkers::Move checkers_board_free(const checkers::Move& m);
bool same_checkers_move(const checkers::Move& a, const checkers::Move& b);  // canonical forms byte-equal

checkers::Move checkers_move_from_datum(Datum d);
Datum checkers_move_to_datum(const checkers::Move& m);  // stores the canonical form
inline checkers::Move checkers_move_arg(FunctionCallInfo fcinfo, int n) {
  return checkers_move_from_datum(PG_GETARG_DATUM(n));
}

// Move text split into PDN square numbers and the separator ('-' or 'x'), read the way
// checkers::parse_move reads it (surrounding spaces ignored, 'X' read as 'x'). Throws
// checkers::ParseError naming the text when it is not well-formed notation.
struct CheckersMoveText {
  std::vector<int> squares;  // PDN numbers, 2 to kMaxCaptures + 1 of them
  char separator = '-';
};
CheckersMoveText lex_checkers_move(std::string_view text);

// A board-free move from its squares: a simple move joins diagonal neighbours, each jump
// lands two diagonal squares away and no square is jumped twice. Throws
// checkers::ParseError "invalid <what>: <why>" otherwise (what: `checkers move "11-17"`).
checkers::Move checkers_move_from_squares(const CheckersMoveText& t, std::string_view what);

// rule argument: 'any' or 'longest' (22023 otherwise).
checkers::CaptureRule capture_rule_arg(FunctionCallInfo fcinfo, int n);

}  // namespace pgmate::pg
