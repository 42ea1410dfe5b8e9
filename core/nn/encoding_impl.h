// The encoder's body, shared by the host (encoding.cpp) and CUDA kernels: plain bitboard
// code marked PGMATE_HD, no library calls.
#pragma once

#include "chess/bitboard.h"
#include "chess/board.h"
#include "nn/encoding.h"

namespace pgmate::nn::detail {

using namespace pgmate::chess;

// The position in the side to move's frame: pc[0] ours, pc[1] theirs; we move north.
struct View {
  Bitboard pc[2][6];
  Bitboard side[2];
  Bitboard occ;
};

PGMATE_HD PGMATE_FORCEINLINE Bitboard byte_swap(Bitboard b) {
  b = ((b >> 8) & 0x00FF00FF00FF00FFULL) | ((b & 0x00FF00FF00FF00FFULL) << 8);
  b = ((b >> 16) & 0x0000FFFF0000FFFFULL) | ((b & 0x0000FFFF0000FFFFULL) << 16);
  return (b >> 32) | (b << 32);
}
PGMATE_HD PGMATE_FORCEINLINE Bitboard orient(Bitboard b, bool flip) { return flip ? byte_swap(b) : b; }
PGMATE_HD PGMATE_FORCEINLINE float at_most_1(float x) { return x < 1.0f ? x : 1.0f; }

PGMATE_HD PGMATE_FORCEINLINE void make_view(const Board& b, Color us, View& v) {
  const bool flip = us == kBlack;
  const Bitboard ours = b.by_color[us], theirs = b.by_color[~us];
  for (int t = 0; t < 6; ++t) {
    v.pc[0][t] = orient(b.by_type[t] & ours, flip);
    v.pc[1][t] = orient(b.by_type[t] & theirs, flip);
  }
  v.side[0] = orient(ours, flip);
  v.side[1] = orient(theirs, flip);
  v.occ = v.side[0] | v.side[1];
}

PGMATE_HD PGMATE_FORCEINLINE void set_bits(float* plane, Bitboard b, float value = 1.0f) {
  while (b) plane[pop_lsb(b)] = value;
}

PGMATE_HD PGMATE_FORCEINLINE void fill_plane(float* plane, float value) {
  for (int i = 0; i < kPlaneSize; ++i) plane[i] = value;
}

PGMATE_HD PGMATE_FORCEINLINE Bitboard north_fill(Bitboard b) {
  b |= b << 8;
  b |= b << 16;
  b |= b << 32;
  return b;
}
PGMATE_HD PGMATE_FORCEINLINE Bitboard south_fill(Bitboard b) {
  b |= b >> 8;
  b |= b >> 16;
  b |= b >> 32;
  return b;
}

// Per-square attack counts saturating at 4, bit-sliced: three bitboards hold each square's
// count in binary (ones, twos) plus a sticky "4 or more" bit.
struct AttackCounter {
  Bitboard ones = 0, twos = 0, fours = 0;
  PGMATE_HD PGMATE_FORCEINLINE void add(Bitboard a) {
    const Bitboard c1 = ones & a;
    ones ^= a;
    const Bitboard c2 = twos & c1;
    twos ^= c1;
    fours |= c2;
  }
  // The count of square s plus `extra` (0/1), clipped at 4, divided by 4.
  PGMATE_HD PGMATE_FORCEINLINE float quarter(Square s, int extra) const {
    int c = (fours >> s) & 1 ? 4 : int((ones >> s) & 1) + 2 * int((twos >> s) & 1);
    c += extra;
    return c >= 4 ? 1.0f : 0.25f * float(c);
  }
};

PGMATE_HD inline void write_pieces(const View& v, float* out) {
  for (int side = 0; side < 2; ++side)
    for (int t = 0; t < 6; ++t) set_bits(out + (side * 6 + t) * kPlaneSize, v.pc[side][t]);
}

constexpr Bitboard kCentre = bb(27) | bb(28) | bb(35) | bb(36);  // d4 e4 d5 e5

// Planes 48..71 of the current position b (View v, already in b's side to move frame).
PGMATE_HD inline void write_features(const Board& b, const View& v, float* out, int repetitions) {
  const Color us = b.side;
  const bool white = us == kWhite;
  const Bitboard ours = v.side[0], theirs = v.side[1], occ = v.occ;
  const Bitboard* o = v.pc[0];
  const Bitboard* t = v.pc[1];

  // ---- whole-board scalars
  if (white) fill_plane(out + kPlaneSideToMove * kPlaneSize, 1.0f);
  fill_plane(out + kPlaneFullmove * kPlaneSize, at_most_1(float(b.fullmove) / 200.0f));
  const std::uint8_t oo = white ? kWhiteOO : kBlackOO, ooo = white ? kWhiteOOO : kBlackOOO;
  const std::uint8_t their_oo = white ? kBlackOO : kWhiteOO, their_ooo = white ? kBlackOOO : kWhiteOOO;
  if (b.castling & oo) fill_plane(out + kPlaneCastlingOursOO * kPlaneSize, 1.0f);
  if (b.castling & ooo) fill_plane(out + kPlaneCastlingOursOOO * kPlaneSize, 1.0f);
  if (b.castling & their_oo) fill_plane(out + kPlaneCastlingTheirsOO * kPlaneSize, 1.0f);
  if (b.castling & their_ooo) fill_plane(out + kPlaneCastlingTheirsOOO * kPlaneSize, 1.0f);
  if (b.ep < 64) out[kPlaneEnPassant * kPlaneSize + (white ? b.ep : b.ep ^ 56)] = 1.0f;
  fill_plane(out + kPlaneHalfmove * kPlaneSize, at_most_1(float(b.halfmove) / 100.0f));
  if (repetitions > 0)
    fill_plane(out + kPlaneRepetitions * kPlaneSize, repetitions >= 2 ? 1.0f : 0.5f);

  // ---- their attacks, by attacker class
  const Bitboard their_pawn_att = pawn_attacks_set(kBlack, t[kPawn]);
  Bitboard their_minor_att = knight_attacks_set(t[kKnight]);
  for (Bitboard x = t[kBishop]; x;) their_minor_att |= bishop_attacks(pop_lsb(x), occ);
  Bitboard their_rook_att = 0;
  for (Bitboard x = t[kRook]; x;) their_rook_att |= rook_attacks(pop_lsb(x), occ);
  Bitboard their_queen_att = 0;
  for (Bitboard x = t[kQueen]; x;) their_queen_att |= queen_attacks(pop_lsb(x), occ);
  const Bitboard their_king = t[kKing];
  const Bitboard their_king_att = their_king ? king_attacks_set(their_king) : 0;
  const Bitboard their_att =
      their_pawn_att | their_minor_att | their_rook_att | their_queen_att | their_king_att;

  // ---- pins on our king
  const Bitboard our_king = o[kKing];
  Bitboard pin_hv = 0, pin_d = 0, pinned = 0;
  if (our_king) {
    const Square ksq = lsb(our_king);
    for (Bitboard s = rook_attacks(ksq, theirs) & (t[kRook] | t[kQueen]); s;) {
      const Bitboard ray = between_and_target(ksq, pop_lsb(s));
      if (popcount(ray & ours) == 1) {
        pin_hv |= ray;
        pinned |= ray & ours;
      }
    }
    for (Bitboard s = bishop_attacks(ksq, theirs) & (t[kBishop] | t[kQueen]); s;) {
      const Bitboard ray = between_and_target(ksq, pop_lsb(s));
      if (popcount(ray & ours) == 1) {
        pin_d |= ray;
        pinned |= ray & ours;
      }
    }
  }

  // ---- our attacks (counted), mobility and trapped pieces
  AttackCounter count;
  count.add((o[kPawn] & ~kFileA) << 7);
  count.add((o[kPawn] & ~kFileH) << 9);
  Bitboard our_att = pawn_attacks_set(kWhite, o[kPawn]);
  Bitboard trapped = 0;
  // Their pieces a mover of each type may take without losing material.
  const Bitboard take_minor = t[kKnight] | t[kBishop] | t[kRook] | t[kQueen];
  const Bitboard take_rook = t[kRook] | t[kQueen];
  const Bitboard unsafe = their_att;
  float* knight_plane = out + kPlaneKnightMobility * kPlaneSize;
  float* bishop_plane = out + kPlaneBishopMobility * kPlaneSize;

  for (Bitboard x = o[kKnight]; x;) {
    const Square s = pop_lsb(x);
    const Bitboard a = knight_attacks(s);
    count.add(a);
    our_att |= a;
    if (bb(s) & pinned) continue;  // a pinned knight never moves
    const Bitboard dest = a & ~ours;
    knight_plane[s] = float(popcount(dest)) * (1.0f / 8.0f);
    if (dest && !(dest & (~unsafe | take_minor))) trapped |= bb(s);
  }
  for (Bitboard x = o[kBishop]; x;) {
    const Square s = pop_lsb(x);
    const Bitboard a = bishop_attacks(s, occ);
    count.add(a);
    our_att |= a;
    Bitboard dest = a & ~ours;
    if (bb(s) & pin_hv) dest = 0;
    else if (bb(s) & pin_d) dest &= pin_d;
    bishop_plane[s] = float(popcount(dest)) * (1.0f / 13.0f);
    if (dest && !(dest & (~unsafe | take_minor))) trapped |= bb(s);
  }
  for (Bitboard x = o[kRook]; x;) {
    const Square s = pop_lsb(x);
    const Bitboard a = rook_attacks(s, occ);
    count.add(a);
    our_att |= a;
    Bitboard dest = a & ~ours;
    if (bb(s) & pin_d) dest = 0;
    else if (bb(s) & pin_hv) dest &= pin_hv;
    if (dest && !(dest & (~unsafe | take_rook))) trapped |= bb(s);
  }
  for (Bitboard x = o[kQueen]; x;) {
    const Square s = pop_lsb(x);
    const Bitboard a = queen_attacks(s, occ);
    count.add(a);
    our_att |= a;
    Bitboard dest = a & ~ours;
    if (bb(s) & pin_hv) dest &= pin_hv;
    else if (bb(s) & pin_d) dest &= pin_d;
    if (dest && !(dest & (~unsafe | t[kQueen]))) trapped |= bb(s);
  }
  const Bitboard our_king_att = our_king ? king_attacks_set(our_king) : 0;
  our_att |= our_king_att;

  if (our_king & their_att) fill_plane(out + kPlaneInCheck * kPlaneSize, 1.0f);
  set_bits(out + kPlaneOurAttacks * kPlaneSize, our_att);
  set_bits(out + kPlaneTheirAttacks * kPlaneSize, their_att);

  // ---- king zones and centre (counts of our attackers / 4)
  if (their_king) {
    float* p = out + kPlaneTheirKingZoneAttack * kPlaneSize;
    for (Bitboard z = their_king_att | their_king; z;) {
      const Square s = pop_lsb(z);
      p[s] = count.quarter(s, int((our_king_att >> s) & 1));
    }
  }
  if (our_king) {
    float* p = out + kPlaneOurKingZoneDefence * kPlaneSize;
    for (Bitboard z = our_king_att | our_king; z;) {
      const Square s = pop_lsb(z);
      p[s] = count.quarter(s, 0);
    }
  }
  {
    float* p = out + kPlaneCentreControl * kPlaneSize;
    for (Bitboard z = kCentre; z;) {
      const Square s = pop_lsb(z);
      p[s] = count.quarter(s, int((our_king_att >> s) & 1));
    }
  }

  // ---- pawn structure
  const Bitboard op = o[kPawn], tp = t[kPawn];
  const Bitboard below_theirs = south_fill(tp >> 8);  // squares behind their pawns (from us)
  const Bitboard blockers = below_theirs | shift_east(below_theirs) | shift_west(below_theirs);
  set_bits(out + kPlanePassedPawns * kPlaneSize, op & ~blockers);
  const Bitboard our_files = north_fill(south_fill(op));
  set_bits(out + kPlaneIsolatedPawns * kPlaneSize,
           op & ~(shift_east(our_files) | shift_west(our_files)));
  const Bitboard pawn_span = pawn_attacks_set(kWhite, north_fill(op));
  set_bits(out + kPlaneWeakSquares * kPlaneSize, (kRank3 | kRank4 | kRank5 | kRank6) & ~pawn_span);

  // ---- tactical sets
  set_bits(out + kPlanePinned * kPlaneSize, pinned);
  set_bits(out + kPlaneHanging * kPlaneSize, ours & ~our_king & their_att & ~our_att);
  const Bitboard by_lower = ((o[kKnight] | o[kBishop]) & their_pawn_att) |
                            (o[kRook] & (their_pawn_att | their_minor_att)) |
                            (o[kQueen] & (their_pawn_att | their_minor_att | their_rook_att));
  set_bits(out + kPlaneAttackedByLower * kPlaneSize, by_lower);
  set_bits(out + kPlaneTrapped * kPlaneSize, trapped);
}

PGMATE_HD inline bool same_position(const Board& a, const Board& b) {
  if (a.side != b.side || a.castling != b.castling || a.ep != b.ep) return false;
  if (a.by_color[0] != b.by_color[0] || a.by_color[1] != b.by_color[1]) return false;
  for (int t = 0; t < 6; ++t)
    if (a.by_type[t] != b.by_type[t]) return false;
  return true;
}

// Writes the 72 planes of history[0] (with up to 3 earlier positions) into out.
PGMATE_HD inline void encode_position(const Board* history, int count, float* out, int repetitions) {
  for (int i = 0; i < kInputSize; ++i) out[i] = 0.0f;
  if (count < 1 || history == nullptr) return;
  if (count > kHistoryPositions) count = kHistoryPositions;
  const Board& current = history[0];
  const Color us = current.side;
  View v;
  make_view(current, us, v);
  write_pieces(v, out);
  for (int i = 1; i < count; ++i) {
    View h;
    make_view(history[i], us, h);
    write_pieces(h, out + i * kPlanesPerPosition * kPlaneSize);
  }
  write_features(current, v, out, repetitions);
}

}  // namespace pgmate::nn::detail
