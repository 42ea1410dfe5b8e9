// Standard numeric checkers notation, in PDN square numbers:
//   11-15        a simple move
//   15x24        a single jump
//   15x24x31     a multiple jump: every landing square, so two sequences with the same
//                start and end (taking different pieces, or the same pieces in another
//                order) read differently
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "checkers/fen.h"
#include "checkers/movegen.h"

namespace pgmate::checkers {

// "11-15" or "15x24x31" (the full path of a jump).
std::string to_text(const Move& m);

// Move text split into PDN square numbers and the separator, syntax only (no board):
// surrounding spaces are ignored and 'X' is read as 'x'. Throws ParseError naming the text
// when it is not well-formed notation.
struct MoveText {
  std::vector<int> squares;  // PDN numbers, 2 to kMaxCaptures + 1 of them
  char separator = '-';
};
MoveText lex_move(std::string_view text);

// A move without a board, from its squares: a simple move joins diagonal neighbours, each
// jump lands two diagonal squares away and no square is jumped twice; `captured` holds the
// squares jumped over, `crowns` stays 0. Throws ParseError "invalid <what>: <why>"
// otherwise (what: `checkers move "11-17"`).
Move move_from_squares(const MoveText& t, std::string_view what);

// Parses move text and returns the matching legal move of `b` under `rule`; throws
// ParseError naming the text when it is malformed, IllegalMove (a ParseError) naming the
// text and the position when it is not legal here.
// A jump may also be written with its start and end only ("15x31") when only one legal
// sequence joins them; 'X' is read as 'x'.
Move parse_move(const Board& b, std::string_view text, CaptureRule rule = CaptureRule::kAny);

// True when m (from, to, path) is one of b's legal moves under `rule`.
bool is_legal(const Board& b, const Move& m, CaptureRule rule = CaptureRule::kAny);

// "ongoing", "black_wins", "white_wins".
const char* status_name(Status s);

}  // namespace pgmate::checkers
