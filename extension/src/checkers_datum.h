// American checkers in SQL: conversions between the `checkers_board` / `checkers_move`
// values and core/checkers.
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

// rule argument: 'any' or 'longest' (22023 otherwise).
checkers::CaptureRule capture_rule_arg(FunctionCallInfo fcinfo, int n);

}  // namespace pgmate::pg
