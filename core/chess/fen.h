// FEN in and out, with strict validation and errors that name the field and character.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

#include "chess/board.h"

namespace pgmate::chess {

// Every rejected input (FEN, UCI, SAN, packed board) throws a ParseError whose message
// names the input and what is wrong with it.
class ParseError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

// A well-formed move that the position does not allow: not legal there (or SAN that
// names no single legal move), or one whose move counters would pass 65535. A ParseError,
// so "rejected input" stays one catch; SQL tells them apart: IllegalMove is 22023, text
// that does not parse 22P02.
class IllegalMove : public ParseError {
 public:
  using ParseError::ParseError;
};

inline constexpr std::string_view kStartFen = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";

// Parses a FEN (the clocks may be left out: they default to "0 1"). "startpos" is accepted
// as the start position. Positions that cannot occur are rejected with the reason.
// An en-passant square that no enemy pawn could take is dropped (Polyglot rule), so equal
// positions compare equal.
Board parse_fen(std::string_view fen);

std::string to_fen(const Board& b);

// Checks the rules every reachable position obeys (kings, pawns, counts, check, castling
// and en-passant consistency); throws ParseError with `what` naming the input on failure.
void validate_position(const Board& b, std::string_view what);

std::string square_name(Square s);
// Parses "e4"; returns kNoSquare when the text is not a square.
Square parse_square(std::string_view text);

char piece_char(Piece p);  // 'P', 'n', ...; '.' for kNoPiece

}  // namespace pgmate::chess
