#include "chess/packed.h"

#include <cstring>

#include "chess/fen.h"

namespace pgmate::chess {

PackedBoard pack(const Board& b) {
  PackedBoard p{};
  Bitboard occ = b.occupied();
  std::memcpy(p.data(), &occ, 8);  // the library targets little-endian hosts
  int index = 0;
  for (Bitboard o = occ; o;) {
    Square s = pop_lsb(o);
    Piece piece = b.piece_on(s);
    p[8 + index / 2] |= std::uint8_t(piece << (4 * (index & 1)));
    ++index;
  }
  p[24] = std::uint8_t((b.side == kBlack ? 1 : 0) | (b.castling << 1));
  p[25] = b.ep == kNoSquare ? 0 : std::uint8_t(file_of(b.ep) + 1);
  p[26] = std::uint8_t(b.halfmove & 0xFF);
  p[27] = std::uint8_t(b.halfmove >> 8);
  p[28] = std::uint8_t(b.fullmove & 0xFF);
  p[29] = std::uint8_t(b.fullmove >> 8);
  return p;
}

Board unpack(const PackedBoard& p) {
  auto reject = [](const std::string& why) { throw ParseError("invalid packed board: " + why); };
  Board b;
  b.clear();
  Bitboard occ;
  std::memcpy(&occ, p.data(), 8);
  int count = popcount(occ);
  if (count > 32) reject(std::to_string(count) + " occupied squares (at most 32)");
  int index = 0;
  for (Bitboard o = occ; o;) {
    Square s = pop_lsb(o);
    std::uint8_t code = (p[8 + index / 2] >> (4 * (index & 1))) & 0xF;
    if ((code & 7) > kKing) reject("unknown piece code " + std::to_string(code) + " on " + square_name(s));
    b.put(code, s);
    ++index;
  }
  for (; index < 32; ++index)
    if ((p[8 + index / 2] >> (4 * (index & 1))) & 0xF) reject("data after the last piece");
  if (p[24] & 0xE0) reject("reserved bits set in the flags byte");
  b.side = (p[24] & 1) ? kBlack : kWhite;
  b.castling = (p[24] >> 1) & 0xF;
  if (p[25] > 8) reject("en-passant file " + std::to_string(p[25]) + " out of range");
  if (p[25]) b.ep = std::uint8_t(make_square(p[25] - 1, b.side == kWhite ? 5 : 2));
  b.halfmove = std::uint16_t(p[26] | (p[27] << 8));
  b.fullmove = std::uint16_t(p[28] | (p[29] << 8));
  if (b.fullmove == 0) reject("fullmove number 0");
  if (p[30] || p[31]) reject("reserved bytes are not zero");
  validate_position(b, "packed board");
  if (b.ep != kNoSquare && !(pawn_attacks(~b.side, b.ep) & b.pieces(b.side, kPawn)))
    reject("en-passant square " + square_name(b.ep) + " that no pawn can take");
  b.key = b.compute_key();
  return b;
}

}  // namespace pgmate::chess
