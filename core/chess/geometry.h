// Piece geometry: the move tables of the SQL "cross join" tradition (every move of each
// piece on an empty board), done with the real attack tables, and 8x8 matrix views.
//
// Piece names (matched ASCII case-insensitively): "king", "queen", "rook", "bishop",
// "knight", "white_pawn", "black_pawn" and "castling" (the four king moves e1g1, e1c1,
// e8g8, e8c8, listed apart from the king so the king's table stays the plain 420 steps).
//
// squares_crossed is the number of squares the piece passes over STRICTLY BETWEEN from and
// to: Chebyshev distance minus one for line moves (rook a1-a8: 6, a1-a2: 0). This is the
// definition that gives the tradition's totals (bishop 784, rook 1792, queen 2576); the
// "distance" reading (Chebyshev distance, a1-a8 = 7) gives 1344 / 2688 / 4032 instead.
// Applied uniformly: king steps and knight jumps cross 0, a single pawn push 0, a double
// push 1 (the square it passes, e.g. e3), castling 1 (the king passes f1 or d1).
// It is also the count of squares that must be empty for the move on a real board
// (castling on the queen side additionally needs b1/b8 empty, which the king never crosses).
//
// Matrices: m[row][col] with row 0 = rank 8 and column 0 = file a, i.e. the board as
// printed with White at the bottom; m[7 - rank_of(s)][file_of(s)].
#pragma once

#include <array>
#include <string>
#include <string_view>
#include <vector>

#include "chess/board.h"

namespace pgmate::chess {

struct GeometricMove {
  std::string piece;  // canonical lower-case name, e.g. "white_pawn"
  Square from, to;
  int squares_crossed;
};

using SquareMatrix = std::array<std::array<int, 8>, 8>;

// The canonical piece names, in table order.
const std::vector<std::string>& geometry_piece_names();

// Every geometric move of the named piece on an empty board (of all pieces without a
// name), ordered by piece (the order of geometry_piece_names), then from, then to
// (square numbers, a1 = 0 ... h8 = 63). Counts: king 420, queen 1456, rook 896,
// bishop 560, knight 336, white_pawn 140, black_pawn 140, castling 4 (3952 in all).
// Pawns: single pushes and diagonal captures from ranks 2-7, double pushes from the start
// rank; a pawn never stands on its first or last rank, so nothing moves from there.
// Throws std::invalid_argument listing the valid names for an unknown name; the empty
// name is one (as in move_mask), not "all pieces".
std::vector<GeometricMove> move_table();
std::vector<GeometricMove> move_table(std::string_view piece);

// 1 on each square the named piece on s can reach on an empty board, else 0: exactly the
// targets of move_table(piece) from s. Pawns: pushes (double from the start rank) and both
// diagonal captures. "castling" gives c1/g1 for e1 and c8/g8 for e8, zeros elsewhere.
// Throws std::invalid_argument for an unknown piece, a square outside 0..63, or a pawn on
// rank 1 or 8.
SquareMatrix move_mask(std::string_view piece, Square s);

// 1 on each square the piece standing on s attacks in b: attacks_of with the board's
// occupancy, so a slider stops at the first piece in each direction and that piece's
// square counts whatever its colour (own pieces are "defended" squares, still 1).
// A pawn attacks only its two diagonals (pushes are not attacks); a king's castling is
// not an attack. Throws std::invalid_argument when s is outside 0..63 or empty.
SquareMatrix attack_mask(const Board& b, Square s);

// The matrix of a set of squares (row 0 = rank 8, column 0 = file a).
SquareMatrix bitboard_matrix(Bitboard set);

}  // namespace pgmate::chess
