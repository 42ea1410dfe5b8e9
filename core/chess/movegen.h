// Legal move generation from check and pin masks (no make-and-test).
//
// The generator reports moves in groups (a from-square with a target set, or a pawn
// shift with a target set) to a Sink, so the same code both lists moves and counts them
// by popcount; perft's last ply uses the counting sink ("bulk counting").
// Host and device share this file.
#pragma once

#include "chess/board.h"

namespace pgmate::chess {

// Sink that writes moves into a MoveList. It keeps its own write position (a register)
// and sets list.size once, in finish(): nvcc read and wrote back a length kept in the list
// around every store, not telling it apart from the slots (local-memory round trips on
// the GPU).
struct MoveListSink {
  MoveList& list;
  Move* out = list.moves;
  PGMATE_HD void push(Move m) { *out++ = m; }
  PGMATE_HD void finish() { list.size = int(out - list.moves); }
  PGMATE_HD void moves_from(Square from, Bitboard targets) {
    while (targets) push(Move(from, pop_lsb(targets)));
  }
  PGMATE_HD void pawn_moves(Bitboard targets, int delta) {
    while (targets) {
      Square to = pop_lsb(targets);
      push(Move(to - delta, to));
    }
  }
  PGMATE_HD void pawn_promotions(Bitboard targets, int delta) {
    while (targets) {
      Square to = pop_lsb(targets);
      // Queen first: the most useful order for search and for listings.
      const Square from = to - delta;
      push(Move(from, to, kPromotion, kQueen));
      push(Move(from, to, kPromotion, kRook));
      push(Move(from, to, kPromotion, kBishop));
      push(Move(from, to, kPromotion, kKnight));
    }
  }
  PGMATE_HD void special(Move m) { push(m); }
};

// Sink that only counts.
struct MoveCountSink {
  std::uint64_t count = 0;
  PGMATE_HD void moves_from(Square, Bitboard targets) { count += popcount(targets); }
  PGMATE_HD void pawn_moves(Bitboard targets, int) { count += popcount(targets); }
  PGMATE_HD void pawn_promotions(Bitboard targets, int) { count += 4 * popcount(targets); }
  PGMATE_HD void special(Move) { ++count; }
};

// Whether the side to move (Us), not in check, may castle on that side: the right is kept
// (so king and rook stand at home), the squares between them are empty, and the two the
// king crosses are not attacked.
template <Color Us, class Position>
PGMATE_HD inline bool may_castle(const Position& b, bool king_side, Bitboard occ) {
  constexpr Color Them = Color(Us ^ 1);
  const Square k = Us == kWhite ? 4 : 60;
  if (king_side)
    return (b.castling & (Us == kWhite ? kWhiteOO : kBlackOO)) && !(occ & (bb(k + 1) | bb(k + 2))) &&
           !b.attackers_to(k + 1, Them, occ) && !b.attackers_to(k + 2, Them, occ);
  return (b.castling & (Us == kWhite ? kWhiteOOO : kBlackOOO)) && !(occ & (bb(k - 1) | bb(k - 2) | bb(k - 3))) &&
         !b.attackers_to(k - 1, Them, occ) && !b.attackers_to(k - 2, Them, occ);
}

// Works on any position type with pieces(Color), pieces(PieceType), attackers_to, ep,
// castling and an `Attacks` policy (bitboard.h): chess::Board, and CompactBoard
// (chess/compact_board.h) on the device.
template <Color Us, class Sink, class Position>
PGMATE_HD inline void generate_legal_for(const Position& b, Sink& sink) {
  using A = typename Position::Attacks;
  constexpr Color Them = Color(Us ^ 1);
  constexpr int kUp = Us == kWhite ? 8 : -8;
  constexpr Bitboard kPromotionRank = Us == kWhite ? kRank8 : kRank1;
  constexpr Bitboard kDoublePushRank = Us == kWhite ? kRank4 : kRank5;

  const Bitboard ours = b.pieces(Us), theirs = b.pieces(Them);
  const Bitboard occ = ours | theirs, empty = ~occ;
  const Square ksq = lsb(b.pieces(kKing) & ours);
  const Bitboard their_rq = (b.pieces(kRook) | b.pieces(kQueen)) & theirs;
  const Bitboard their_bq = (b.pieces(kBishop) | b.pieces(kQueen)) & theirs;

  // King steps: each target tested with the king lifted off the board, so it cannot
  // hide behind itself from a slider.
  const Bitboard checkers = b.attackers_to(ksq, Them, occ);
  {
    Bitboard targets = king_attacks(ksq) & ~ours, safe = 0;
    const Bitboard occ_without_king = occ ^ bb(ksq);
    while (targets) {
      Square t = pop_lsb(targets);
      if (!b.attackers_to(t, Them, occ_without_king)) safe |= bb(t);
    }
    sink.moves_from(ksq, safe);
  }
  if (more_than_one(checkers)) return;  // double check: only the king moves

  // Squares a non-king move may land on: anywhere, or on the checking line.
  const Bitboard target_mask = checkers ? A::between(ksq, lsb(checkers)) : ~Bitboard(0);
  const Bitboard movable = ~ours & target_mask;

  // Pin rays (between king and pinner, pinner included), split by line kind: a piece
  // pinned on a file/rank may only slide along pin_hv, a diagonal one along pin_d.
  Bitboard pin_hv = 0, pin_d = 0;
  {
    Bitboard snipers = A::rook(ksq, theirs) & their_rq;
    while (snipers) {
      Bitboard ray = A::between(ksq, pop_lsb(snipers));
      if (popcount(ray & ours) == 1) pin_hv |= ray;
    }
    snipers = A::bishop(ksq, theirs) & their_bq;
    while (snipers) {
      Bitboard ray = A::between(ksq, pop_lsb(snipers));
      if (popcount(ray & ours) == 1) pin_d |= ray;
    }
  }
  const Bitboard pinned = (pin_hv | pin_d) & ours;

  // Knights: a pinned knight never moves.
  for (Bitboard n = b.pieces(kKnight) & ours & ~pinned; n;) {
    Square s = pop_lsb(n);
    sink.moves_from(s, knight_attacks(s) & movable);
  }
  // Diagonal sliders; one pinned on a file or rank cannot move diagonally.
  for (Bitboard d = (b.pieces(kBishop) | b.pieces(kQueen)) & ours & ~pin_hv; d;) {
    Square s = pop_lsb(d);
    Bitboard t = A::bishop(s, occ) & movable;
    if (bb(s) & pin_d) t &= pin_d;
    sink.moves_from(s, t);
  }
  // Straight sliders; one pinned on a diagonal cannot move straight.
  for (Bitboard r = (b.pieces(kRook) | b.pieces(kQueen)) & ours & ~pin_d; r;) {
    Square s = pop_lsb(r);
    Bitboard t = A::rook(s, occ) & movable;
    if (bb(s) & pin_hv) t &= pin_hv;
    sink.moves_from(s, t);
  }

  // Pawns, set-wise.
  const Bitboard pawns = b.pieces(kPawn) & ours;
  auto up = [](Bitboard x) { return Us == kWhite ? x << 8 : x >> 8; };
  {
    const Bitboard free = pawns & ~pinned, pinned_hv = pawns & pin_hv;
    Bitboard single = up(free) & empty;
    Bitboard single_pinned = up(pinned_hv) & empty & pin_hv;
    Bitboard dbl = up(single) & empty & kDoublePushRank;
    Bitboard dbl_pinned = up(single_pinned) & empty & kDoublePushRank & pin_hv;
    single = (single | single_pinned) & target_mask;
    dbl = (dbl | dbl_pinned) & target_mask;
    sink.pawn_moves(single & ~kPromotionRank, kUp);
    sink.pawn_promotions(single & kPromotionRank, kUp);
    sink.pawn_moves(dbl, 2 * kUp);
  }
  {
    const Bitboard free = pawns & ~pinned, pinned_d = pawns & pin_d;
    const Bitboard capturable = theirs & target_mask;
    // West captures (toward file a) and east captures, from White's point of view.
    constexpr int kWest = Us == kWhite ? 7 : -9;
    constexpr int kEast = Us == kWhite ? 9 : -7;
    auto west = [](Bitboard x) { return Us == kWhite ? (x & ~kFileA) << 7 : (x & ~kFileA) >> 9; };
    auto east = [](Bitboard x) { return Us == kWhite ? (x & ~kFileH) << 9 : (x & ~kFileH) >> 7; };
    Bitboard w = (west(free) | (west(pinned_d) & pin_d)) & capturable;
    Bitboard e = (east(free) | (east(pinned_d) & pin_d)) & capturable;
    sink.pawn_moves(w & ~kPromotionRank, kWest);
    sink.pawn_promotions(w & kPromotionRank, kWest);
    sink.pawn_moves(e & ~kPromotionRank, kEast);
    sink.pawn_promotions(e & kPromotionRank, kEast);
  }
  if (b.ep != kNoSquare) {
    const Square ep = b.ep, captured = ep - kUp;
    if (target_mask & (bb(ep) | bb(captured))) {
      for (Bitboard c = pawn_attacks(Them, ep) & pawns; c;) {
        Square from = pop_lsb(c);
        // Rare enough to test exactly: lift both pawns, drop ours on ep, look for sliders.
        // This covers the pawn pinned on its rank by the two pawns together.
        Bitboard after = (occ ^ bb(from) ^ bb(captured)) | bb(ep);
        if ((A::rook(ksq, after) & their_rq) || (A::bishop(ksq, after) & their_bq))
          continue;
        sink.special(Move(from, ep, kEnPassant));
      }
    }
  }
  if (!checkers && (b.castling & (Us == kWhite ? (kWhiteOO | kWhiteOOO) : (kBlackOO | kBlackOOO)))) {
    const Square k = Us == kWhite ? 4 : 60;
    if (may_castle<Us>(b, true, occ)) sink.special(Move(k, k + 2, kCastling));
    if (may_castle<Us>(b, false, occ)) sink.special(Move(k, k - 2, kCastling));
  }
}

template <class Sink, class Position>
PGMATE_HD inline void generate_legal(const Position& b, Sink& sink) {
  if (b.side == kWhite)
    generate_legal_for<kWhite>(b, sink);
  else
    generate_legal_for<kBlack>(b, sink);
}

PGMATE_HD inline void legal_moves(const Board& b, MoveList& list) {
  MoveListSink sink{list};
  generate_legal(b, sink);
  sink.finish();
}

PGMATE_HD inline int count_legal_moves(const Board& b) {
  MoveCountSink sink;
  generate_legal(b, sink);
  return int(sink.count);
}

// Perft with bulk counting at the last ply.
PGMATE_HD inline std::uint64_t perft(const Board& b, int depth) {
  if (depth <= 0) return 1;
  if (depth == 1) return count_legal_moves(b);
  MoveList list;
  legal_moves(b, list);
  std::uint64_t nodes = 0;
  for (int i = 0; i < list.size; ++i) {
    Board next = b;
    next.play<false>(list.moves[i]);
    nodes += perft(next, depth - 1);
  }
  return nodes;
}

}  // namespace pgmate::chess
