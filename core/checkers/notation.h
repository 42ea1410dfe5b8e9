// Standard numeric checkers notation, in PDN square numbers:
//   11-15        a simple move
//   15x24        a single jump
//   15x24x31     a multiple jump: every landing square, so two sequences with the same
//                start and end (taking different pieces, or the same pieces in another
//                order) read differently
#pragma once

#include <string>
#include <string_view>

#include "checkers/fen.h"
#include "checkers/movegen.h"

namespace pgmate::checkers {

// "11-15" or "15x24x31" (the full path of a jump).
std::string to_text(const Move& m);

// Parses move text and returns the matching legal move of `b` under `rule`; throws
// ParseError naming the text (and the position) when it is malformed or not legal here.
// A jump may also be written with its start and end only ("15x31") when only one legal
// sequence joins them; 'X' is read as 'x'.
Move parse_move(const Board& b, std::string_view text, CaptureRule rule = CaptureRule::kAny);

// True when m (from, to, path) is one of b's legal moves under `rule`.
bool is_legal(const Board& b, const Move& m, CaptureRule rule = CaptureRule::kAny);

// "ongoing", "black_wins", "white_wins".
const char* status_name(Status s);

}  // namespace pgmate::checkers
