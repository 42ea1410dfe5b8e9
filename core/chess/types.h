// Basic chess types: squares, colours, pieces and the 16-bit move.
#pragma once

#include <cstdint>

#include "common/hd.h"

namespace pgmate::chess {

using Bitboard = std::uint64_t;

// Square 0 = a1, 7 = h1, 63 = h8 (little-endian rank-file mapping).
using Square = int;
constexpr Square kNoSquare = 64;

enum Color : std::uint8_t { kWhite = 0, kBlack = 1 };
PGMATE_HD constexpr Color operator~(Color c) { return Color(c ^ 1); }

enum PieceType : std::uint8_t { kPawn = 0, kKnight, kBishop, kRook, kQueen, kKing, kNoPieceType };

// Piece = colour * 8 + type; kNoPiece marks an empty square in the mailbox.
using Piece = std::uint8_t;
constexpr Piece kNoPiece = 0xFF;
PGMATE_HD constexpr Piece make_piece(Color c, PieceType t) { return Piece(c * 8 + t); }
PGMATE_HD constexpr PieceType type_of(Piece p) { return PieceType(p & 7); }
PGMATE_HD constexpr Color color_of(Piece p) { return Color(p >> 3); }

PGMATE_HD constexpr int file_of(Square s) { return s & 7; }
PGMATE_HD constexpr int rank_of(Square s) { return s >> 3; }
PGMATE_HD constexpr Square make_square(int file, int rank) { return rank * 8 + file; }
PGMATE_HD constexpr Bitboard bb(Square s) { return Bitboard(1) << s; }

// Castling rights as four bits.
enum CastlingRight : std::uint8_t {
  kWhiteOO = 1,
  kWhiteOOO = 2,
  kBlackOO = 4,
  kBlackOOO = 8,
  kAllCastling = 15,
};

// A move in 16 bits: from (6), to (6), kind (2), promotion piece (2).
// Castling is encoded king-to-destination (e1g1), as in UCI.
enum MoveKind : std::uint16_t { kNormal = 0, kPromotion = 1, kEnPassant = 2, kCastling = 3 };

class Move {
 public:
  PGMATE_HD constexpr Move() : bits_(0) {}
  PGMATE_HD constexpr explicit Move(std::uint16_t bits) : bits_(bits) {}
  PGMATE_HD constexpr Move(Square from, Square to, MoveKind kind = kNormal,
                           PieceType promotion = kKnight)
      : bits_(std::uint16_t(from | (to << 6) | (kind << 12) | ((promotion - kKnight) << 14))) {}

  PGMATE_HD constexpr Square from() const { return bits_ & 63; }
  PGMATE_HD constexpr Square to() const { return (bits_ >> 6) & 63; }
  PGMATE_HD constexpr MoveKind kind() const { return MoveKind((bits_ >> 12) & 3); }
  // Only meaningful for kPromotion.
  PGMATE_HD constexpr PieceType promotion() const { return PieceType(((bits_ >> 14) & 3) + kKnight); }
  PGMATE_HD constexpr std::uint16_t bits() const { return bits_; }
  PGMATE_HD constexpr bool is_null() const { return bits_ == 0; }
  PGMATE_HD constexpr bool operator==(const Move& o) const { return bits_ == o.bits_; }
  PGMATE_HD constexpr bool operator!=(const Move& o) const { return bits_ != o.bits_; }

 private:
  std::uint16_t bits_;
};

// The longest legal-move list of any chess position is 218.
constexpr int kMaxMoves = 256;

struct MoveList {
  // In a union so that making a list leaves its slots as they are. Move() makes a null
  // move, and a list is made at every node of a perft or search: zeroing its 512 bytes
  // each time cost a GPU thread 64 local-memory stores.
  union {
    Move moves[kMaxMoves];
  };
  int size = 0;
  PGMATE_HD MoveList() {}
  PGMATE_HD const Move* begin() const { return moves; }
  PGMATE_HD const Move* end() const { return moves + size; }
};

}  // namespace pgmate::chess
