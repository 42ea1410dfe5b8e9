#include "chess/board.h"

namespace pgmate::chess {

std::uint64_t Board::compute_key() const {
  std::uint64_t k = 0;
  for (Square s = 0; s < 64; ++s)
    if (mailbox[s] != kNoPiece) k ^= zobrist::piece(mailbox[s], s);
  k ^= zobrist::castling(castling);
  if (ep != kNoSquare) k ^= zobrist::en_passant(file_of(ep));
  if (side == kWhite) k ^= zobrist::side();
  return k;
}

}  // namespace pgmate::chess
