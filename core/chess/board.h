// The full position: bitboards by colour and type, a mailbox, and the state fields.
// Copy-make: play() changes the board in place; callers keep the old copy to undo.
#pragma once

#include "chess/bitboard.h"
#include "chess/zobrist.h"

namespace pgmate::chess {

struct Board {
  using Attacks = DefaultAttacks;  // slider lookups of the move generator

  Bitboard by_color[2];
  Bitboard by_type[6];
  Piece mailbox[64];
  std::uint64_t key;       // Polyglot Zobrist key (valid on the host)
  Color side;
  std::uint8_t castling;   // CastlingRight bits
  std::uint8_t ep;         // en-passant target square, or kNoSquare; set only when a pawn
                           // of the side to move stands beside the pushed pawn (Polyglot rule)
  std::uint16_t halfmove;  // plies since the last capture or pawn move
  std::uint16_t fullmove;  // starts at 1, grows after Black's move

  PGMATE_HD Bitboard occupied() const { return by_color[0] | by_color[1]; }
  PGMATE_HD Bitboard pieces(Color c) const { return by_color[c]; }
  PGMATE_HD Bitboard pieces(PieceType t) const { return by_type[t]; }
  PGMATE_HD Bitboard pieces(Color c, PieceType t) const { return by_color[c] & by_type[t]; }
  PGMATE_HD Piece piece_on(Square s) const { return mailbox[s]; }
  PGMATE_HD Square king_square(Color c) const { return lsb(pieces(c, kKing)); }

  // Pieces of colour `by` attacking square s, with the given occupancy.
  PGMATE_HD Bitboard attackers_to(Square s, Color by, Bitboard occ) const {
    Bitboard them = by_color[by];
    return ((pawn_attacks(~by, s) & by_type[kPawn]) | (knight_attacks(s) & by_type[kKnight]) |
            (king_attacks(s) & by_type[kKing]) |
            (rook_attacks(s, occ) & (by_type[kRook] | by_type[kQueen])) |
            (bishop_attacks(s, occ) & (by_type[kBishop] | by_type[kQueen]))) &
           them;
  }
  PGMATE_HD Bitboard checkers() const {
    return attackers_to(king_square(side), ~side, occupied());
  }
  PGMATE_HD bool in_check() const { return checkers() != 0; }

  PGMATE_HD void put(Piece p, Square s) {
    mailbox[s] = p;
    by_color[color_of(p)] |= bb(s);
    by_type[type_of(p)] |= bb(s);
  }
  PGMATE_HD void remove(Square s) {
    Piece p = mailbox[s];
    mailbox[s] = kNoPiece;
    by_color[color_of(p)] ^= bb(s);
    by_type[type_of(p)] ^= bb(s);
  }

  PGMATE_HD void clear() {
    for (int i = 0; i < 2; ++i) by_color[i] = 0;
    for (int i = 0; i < 6; ++i) by_type[i] = 0;
    for (int i = 0; i < 64; ++i) mailbox[i] = kNoPiece;
    key = 0;
    side = kWhite;
    castling = 0;
    ep = kNoSquare;
    halfmove = 0;
    fullmove = 1;
  }

  // Plays a legal move. With kKeys the Zobrist key is kept up to date (host only);
  // perft and device code skip that work.
  template <bool kKeys = true>
  PGMATE_HD void play(Move m);

  // Passes the turn (for analysis tools; not a chess move).
  void play_null() {
    if (ep != kNoSquare) {
      key ^= zobrist::en_passant(file_of(ep));
      ep = kNoSquare;
    }
    side = ~side;
    key ^= zobrist::side();
  }

  // Recomputes the key from scratch (after setting up a board by hand).
  std::uint64_t compute_key() const;

 private:
#if defined(__CUDA_ARCH__)
  static constexpr bool kHostKeys = false;
#else
  static constexpr bool kHostKeys = true;
#endif
};

// Castling rights lost when a piece leaves or lands on square s.
PGMATE_HD constexpr std::uint8_t castling_rights_touching(Square s) {
  switch (s) {
    case 0: return kWhiteOOO;
    case 4: return kWhiteOO | kWhiteOOO;
    case 7: return kWhiteOO;
    case 56: return kBlackOOO;
    case 60: return kBlackOO | kBlackOOO;
    case 63: return kBlackOO;
    default: return 0;
  }
}

constexpr Bitboard kCastlingSquares = bb(0) | bb(4) | bb(7) | bb(56) | bb(60) | bb(63);

template <bool kKeys>
PGMATE_HD inline void Board::play(Move m) {
  constexpr bool keys = kKeys && kHostKeys;
  const Color us = side, them = ~side;
  const Square from = m.from(), to = m.to();
  const Piece moving = mailbox[from];
  const PieceType moving_type = type_of(moving);

  if constexpr (keys) if (ep != kNoSquare) key ^= zobrist::en_passant(file_of(ep));
  ep = kNoSquare;
  // Both counters stop at their 16-bit limit rather than wrap (a wrapped clock would
  // undo a fifty-move draw). Moves that reach a user go through play_checked
  // (chess/notation.h), which refuses such a move instead.
  if (halfmove != 0xFFFF) ++halfmove;

  if (m.kind() == kCastling) {
    // King goes e1->g1/c1; the rook jumps from its corner to the square it crosses.
    const bool king_side = to > from;
    const Square rook_from = king_side ? from + 3 : from - 4;
    const Square rook_to = king_side ? from + 1 : from - 1;
    const Piece rook = mailbox[rook_from];
    remove(from);
    remove(rook_from);
    put(moving, to);
    put(rook, rook_to);
    if constexpr (keys)
      key ^= zobrist::piece(moving, from) ^ zobrist::piece(moving, to) ^
             zobrist::piece(rook, rook_from) ^ zobrist::piece(rook, rook_to);
  } else {
    Square captured_square = m.kind() == kEnPassant ? (us == kWhite ? to - 8 : to + 8) : to;
    Piece captured = mailbox[captured_square];
    if (captured != kNoPiece) {
      remove(captured_square);
      if constexpr (keys) key ^= zobrist::piece(captured, captured_square);
      halfmove = 0;
    }
    remove(from);
    Piece placed = m.kind() == kPromotion ? make_piece(us, m.promotion()) : moving;
    put(placed, to);
    if constexpr (keys) key ^= zobrist::piece(moving, from) ^ zobrist::piece(placed, to);

    if (moving_type == kPawn) {
      halfmove = 0;
      // A double push leaves an en-passant square only if an enemy pawn could take it.
      if ((from ^ to) == 16) {
        Square target = (from + to) / 2;
        Bitboard beside = (shift_east(bb(to)) | shift_west(bb(to))) & pieces(them, kPawn);
        if (beside) {
          ep = std::uint8_t(target);
          if constexpr (keys) key ^= zobrist::en_passant(file_of(target));
        }
      }
    }
  }

  if ((bb(from) | bb(to)) & kCastlingSquares) {
    std::uint8_t lost = castling & (castling_rights_touching(from) | castling_rights_touching(to));
    if (lost) {
      if constexpr (keys) key ^= zobrist::castling(lost);
      castling &= ~lost;
    }
  }

  if (us == kBlack && fullmove != 0xFFFF) ++fullmove;
  side = them;
  if constexpr (keys) key ^= zobrist::side();
}

}  // namespace pgmate::chess
