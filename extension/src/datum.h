// Conversions between SQL values and core types. Every PostgreSQL call in here goes
// through pg_call, so callers may hold C++ objects.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "chess/board.h"
#include "chess/packed.h"
#include "guard.h"

namespace pgmate::pg {

// board: the packed 32-byte form, passed by reference.
constexpr int kBoardSize = 32;
chess::Board board_from_datum(Datum d);
Datum board_to_datum(const chess::Board& b);
inline chess::Board board_arg(FunctionCallInfo fcinfo, int n) { return board_from_datum(PG_GETARG_DATUM(n)); }

// move: 16 bits by value, in board-free form (see chess::board_free).
chess::Move move_from_datum(Datum d);
Datum move_to_datum(chess::Move m);
inline chess::Move move_arg(FunctionCallInfo fcinfo, int n) { return move_from_datum(PG_GETARG_DATUM(n)); }

std::string text_arg(FunctionCallInfo fcinfo, int n);
Datum text_datum(std::string_view s);
char* cstring_copy(std::string_view s);  // palloc'd, for type output functions

// Square name argument ("e4"); throws 22P02 naming the text when it is not a square.
chess::Square square_arg(FunctionCallInfo fcinfo, int n);

// Piece as FEN letter ("N", "p").
std::string piece_text(chess::Piece p);

// Elements of a one-dimensional array argument of fixed-size elements (board[] or
// move[]); NULL elements are an error naming their position.
std::vector<Datum> array_elements(FunctionCallInfo fcinfo, int n, const char* what);

// A move[] argument read in place (no copy): an array stores nothing for its NULL
// elements, so the others lie contiguous as 16-bit values.
struct MoveValues {
  std::span<const std::uint16_t> present;  // the non-NULL elements, in order
  int first_null = -1;                     // index of the first NULL element, -1 for none
  int dimensions = 1;
};
MoveValues move_values(Datum array);
inline MoveValues move_values_arg(FunctionCallInfo fcinfo, int n) { return move_values(PG_GETARG_DATUM(n)); }

// The moves of a one-dimensional move[] argument as their 16-bit values, in place; NULL
// elements are an error naming their position, as for array_elements.
std::span<const std::uint16_t> move_bits_arg(FunctionCallInfo fcinfo, int n, const char* what);

// Seconds left on a clock after each move (PgnGame::clocks, -1 for none) as interval[]
// (NULL elements for none).
Datum clocks_to_datum(const std::vector<double>& seconds);

// Builds a one-dimensional SQL array of the given element type.
Datum make_array(const std::vector<Datum>& elements, Oid element_type);

// Element type of the array a function returns, or of an array column of a result row
// (so the extension never looks its own types up by name).
Oid return_element_type(FunctionCallInfo fcinfo);
Oid column_element_type(TupleDesc desc, int column);

}  // namespace pgmate::pg
