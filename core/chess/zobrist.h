// Zobrist keys in the Polyglot opening-book scheme, so keys agree with books and tools.
#pragma once

#include <cstdint>

#include "chess/types.h"

namespace pgmate::chess {

extern const std::uint64_t kPolyglotRandom[781];

namespace zobrist {

// Polyglot orders pieces black pawn, white pawn, black knight, ... white king.
inline std::uint64_t piece(Piece p, Square s) {
  int kind = 2 * type_of(p) + (color_of(p) == kWhite ? 1 : 0);
  return kPolyglotRandom[64 * kind + s];
}
// XOR of the keys of every right in `rights`.
inline std::uint64_t castling(std::uint8_t rights) {
  std::uint64_t k = 0;
  for (int i = 0; i < 4; ++i)
    if (rights & (1 << i)) k ^= kPolyglotRandom[768 + i];
  return k;
}
inline std::uint64_t en_passant(int file) { return kPolyglotRandom[772 + file]; }
// Polyglot adds this key when White is to move; XOR toggles the turn either way.
inline std::uint64_t side() { return kPolyglotRandom[780]; }

}  // namespace zobrist
}  // namespace pgmate::chess
