// The 32-byte board used for storage (the SQL `board` type) and transport (worker frames).
//
// Layout (little-endian):
//   bytes  0..7   occupancy bitboard
//   bytes  8..23  one 4-bit code per occupied square, in square order (low nibble first):
//                 colour * 8 + type (type 0..5 = P N B R Q K); unused nibbles are 0
//   byte  24      bit 0: side to move (1 = Black); bits 1..4: castling rights (K Q k q)
//   byte  25      en-passant file + 1, or 0 for none (its rank follows from the side)
//   bytes 26..27  halfmove clock
//   bytes 28..29  fullmove number
//   bytes 30..31  zero
// At most 32 pieces fit, which every legal position respects (16 per side).
#pragma once

#include <array>
#include <cstdint>

#include "chess/board.h"

namespace pgmate::chess {

using PackedBoard = std::array<std::uint8_t, 32>;

PackedBoard pack(const Board& b);

// Validates everything (codes, counts, reserved bits, position rules) and throws
// ParseError on a value no pack() could have produced.
Board unpack(const PackedBoard& p);

}  // namespace pgmate::chess
