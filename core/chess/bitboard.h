// Bitboard primitives and attack sets.
//
// Host code reads precomputed tables (sliders through PEXT or magic multiplication,
// chosen at build time by PGMATE_USE_PEXT). Device code computes the same sets without
// tables (shifts and hyperbola quintessence), so the move generator above it is one source.
// Defining PGMATE_TABLE_FREE_ATTACKS gives the device path on the host, for tests.
#pragma once

#include "chess/types.h"

#if defined(PGMATE_USE_PEXT) && !defined(__CUDA_ARCH__)
#include <immintrin.h>
#endif

namespace pgmate::chess {

constexpr Bitboard kFileA = 0x0101010101010101ULL;
constexpr Bitboard kFileH = kFileA << 7;
constexpr Bitboard kRank1 = 0xFFULL;
constexpr Bitboard kRank2 = kRank1 << 8;
constexpr Bitboard kRank3 = kRank1 << 16;
constexpr Bitboard kRank4 = kRank1 << 24;
constexpr Bitboard kRank5 = kRank1 << 32;
constexpr Bitboard kRank6 = kRank1 << 40;
constexpr Bitboard kRank7 = kRank1 << 48;
constexpr Bitboard kRank8 = kRank1 << 56;
constexpr Bitboard kDarkSquares = 0xAA55AA55AA55AA55ULL;

PGMATE_HD PGMATE_FORCEINLINE int popcount(Bitboard b) {
#if defined(__CUDA_ARCH__)
  return __popcll(b);
#else
  return __builtin_popcountll(b);
#endif
}

// Index of the lowest set bit; b must not be 0.
PGMATE_HD PGMATE_FORCEINLINE Square lsb(Bitboard b) {
#if defined(__CUDA_ARCH__)
  return __ffsll(static_cast<long long>(b)) - 1;
#else
  return __builtin_ctzll(b);
#endif
}

PGMATE_HD PGMATE_FORCEINLINE Square pop_lsb(Bitboard& b) {
  Square s = lsb(b);
  b &= b - 1;
  return s;
}

PGMATE_HD PGMATE_FORCEINLINE bool more_than_one(Bitboard b) { return (b & (b - 1)) != 0; }

// Shift every bit one step; bits leaving the board disappear.
PGMATE_HD constexpr Bitboard shift_north(Bitboard b) { return b << 8; }
PGMATE_HD constexpr Bitboard shift_south(Bitboard b) { return b >> 8; }
PGMATE_HD constexpr Bitboard shift_east(Bitboard b) { return (b & ~kFileH) << 1; }
PGMATE_HD constexpr Bitboard shift_west(Bitboard b) { return (b & ~kFileA) >> 1; }

// Squares attacked by pawns of colour c standing on the set `pawns`.
PGMATE_HD constexpr Bitboard pawn_attacks_set(Color c, Bitboard pawns) {
  return c == kWhite ? ((pawns & ~kFileA) << 7) | ((pawns & ~kFileH) << 9)
                     : ((pawns & ~kFileA) >> 9) | ((pawns & ~kFileH) >> 7);
}

PGMATE_HD constexpr Bitboard knight_attacks_set(Bitboard b) {
  Bitboard l1 = (b >> 1) & ~kFileH, l2 = (b >> 2) & ~(kFileH | (kFileH >> 1));
  Bitboard r1 = (b << 1) & ~kFileA, r2 = (b << 2) & ~(kFileA | (kFileA << 1));
  Bitboard h1 = l1 | r1, h2 = l2 | r2;
  return (h1 << 16) | (h1 >> 16) | (h2 << 8) | (h2 >> 8);
}

PGMATE_HD constexpr Bitboard king_attacks_set(Bitboard b) {
  Bitboard row = b | shift_east(b) | shift_west(b);
  return (row | shift_north(row) | shift_south(row)) & ~b;
}

// ---- Host tables (attacks.cpp) ----
namespace tables {
struct SliderEntry {
  Bitboard mask;        // relevant occupancy (edges excluded)
  Bitboard magic;       // multiplier when PEXT is not used
  const Bitboard* attacks;
  unsigned shift;
};
extern SliderEntry rook[64];
extern SliderEntry bishop[64];
extern Bitboard knight[64];
extern Bitboard king[64];
extern Bitboard pawn[2][64];
extern Bitboard line[64][64];     // whole line through two aligned squares, else 0
extern Bitboard between[64][64];  // squares strictly between, plus the second square
// The magic multipliers the tables start from (64 each; for tables built elsewhere, e.g.
// the GPU's in chess/magic_tables.h).
const Bitboard* known_rook_magics();
const Bitboard* known_bishop_magics();

inline Bitboard lookup(const SliderEntry& e, Bitboard occ) {
#if defined(PGMATE_USE_PEXT) && !defined(__CUDA_ARCH__)
  return e.attacks[_pext_u64(occ, e.mask)];
#else
  return e.attacks[((occ & e.mask) * e.magic) >> e.shift];
#endif
}
}  // namespace tables

// ---- Table-free attacks (the device path; also built on the host by tests) ----
#if defined(__CUDA_ARCH__) || defined(PGMATE_TABLE_FREE_ATTACKS)
#define PGMATE_ATTACKS_FROM_TABLES 0
#else
#define PGMATE_ATTACKS_FROM_TABLES 1
#endif

namespace table_free {
PGMATE_HD PGMATE_FORCEINLINE Bitboard reverse_bits(Bitboard b) {
#if defined(__CUDA_ARCH__)
  return __brevll(b);
#else
  b = ((b >> 1) & 0x5555555555555555ULL) | ((b & 0x5555555555555555ULL) << 1);
  b = ((b >> 2) & 0x3333333333333333ULL) | ((b & 0x3333333333333333ULL) << 2);
  b = ((b >> 4) & 0x0F0F0F0F0F0F0F0FULL) | ((b & 0x0F0F0F0F0F0F0F0FULL) << 4);
  return __builtin_bswap64(b);
#endif
}
// Attacks along one line `mask` (which contains s) from s, by hyperbola quintessence.
PGMATE_HD PGMATE_FORCEINLINE Bitboard line_attacks(Square s, Bitboard occ, Bitboard mask) {
  Bitboard o = occ & mask, r = bb(s);
  Bitboard forward = o - 2 * r;
  Bitboard reverse = reverse_bits(reverse_bits(o) - 2 * reverse_bits(r));
  return (forward ^ reverse) & mask;
}
PGMATE_HD PGMATE_FORCEINLINE Bitboard file_mask(Square s) { return kFileA << file_of(s); }
PGMATE_HD PGMATE_FORCEINLINE Bitboard rank_mask(Square s) { return kRank1 << (8 * rank_of(s)); }
PGMATE_HD PGMATE_FORCEINLINE Bitboard diag_mask(Square s) {
  int d = file_of(s) - rank_of(s);  // a1-h8 direction
  Bitboard main = 0x8040201008040201ULL;
  return d >= 0 ? main >> (8 * d) : main << (-8 * d);
}
PGMATE_HD PGMATE_FORCEINLINE Bitboard anti_mask(Square s) {
  int d = 7 - file_of(s) - rank_of(s);  // h1-a8 direction
  Bitboard anti = 0x0102040810204080ULL;
  return d >= 0 ? anti >> (8 * d) : anti << (-8 * d);
}
PGMATE_HD PGMATE_FORCEINLINE Bitboard rook_attacks(Square s, Bitboard occ) {
  return line_attacks(s, occ, file_mask(s)) | line_attacks(s, occ, rank_mask(s));
}
PGMATE_HD PGMATE_FORCEINLINE Bitboard bishop_attacks(Square s, Bitboard occ) {
  return line_attacks(s, occ, diag_mask(s)) | line_attacks(s, occ, anti_mask(s));
}
PGMATE_HD PGMATE_FORCEINLINE Bitboard between_and_target(Square a, Square b) {
  Bitboard ra = rook_attacks(a, bb(b));
  if (ra & bb(b)) return (ra & rook_attacks(b, bb(a))) | bb(b);
  Bitboard da = bishop_attacks(a, bb(b));
  if (da & bb(b)) return (da & bishop_attacks(b, bb(a))) | bb(b);
  return bb(b);
}
}  // namespace table_free

PGMATE_HD PGMATE_FORCEINLINE Bitboard rook_attacks(Square s, Bitboard occ) {
#if !PGMATE_ATTACKS_FROM_TABLES
  return table_free::rook_attacks(s, occ);
#else
  return tables::lookup(tables::rook[s], occ);
#endif
}

PGMATE_HD PGMATE_FORCEINLINE Bitboard bishop_attacks(Square s, Bitboard occ) {
#if !PGMATE_ATTACKS_FROM_TABLES
  return table_free::bishop_attacks(s, occ);
#else
  return tables::lookup(tables::bishop[s], occ);
#endif
}

PGMATE_HD PGMATE_FORCEINLINE Bitboard queen_attacks(Square s, Bitboard occ) {
  return rook_attacks(s, occ) | bishop_attacks(s, occ);
}

PGMATE_HD PGMATE_FORCEINLINE Bitboard knight_attacks(Square s) {
#if !PGMATE_ATTACKS_FROM_TABLES
  return knight_attacks_set(bb(s));
#else
  return tables::knight[s];
#endif
}

PGMATE_HD PGMATE_FORCEINLINE Bitboard king_attacks(Square s) {
#if !PGMATE_ATTACKS_FROM_TABLES
  return king_attacks_set(bb(s));
#else
  return tables::king[s];
#endif
}

PGMATE_HD PGMATE_FORCEINLINE Bitboard pawn_attacks(Color c, Square s) {
#if !PGMATE_ATTACKS_FROM_TABLES
  return pawn_attacks_set(c, bb(s));
#else
  return tables::pawn[c][s];
#endif
}

// Squares strictly between a and b plus b itself when they share a line; else just b.
// (The set of squares that stop a check from a slider on b to a king on a.)
PGMATE_HD PGMATE_FORCEINLINE Bitboard between_and_target(Square a, Square b) {
#if !PGMATE_ATTACKS_FROM_TABLES
  return table_free::between_and_target(a, b);
#else
  return tables::between[a][b];
#endif
}

// The slider and line lookups the move generator uses, as a policy: a position type names
// its policy as `Attacks` (the default is these functions; the GPU may plug in tables).
struct DefaultAttacks {
  PGMATE_HD PGMATE_FORCEINLINE static Bitboard rook(Square s, Bitboard occ) { return rook_attacks(s, occ); }
  PGMATE_HD PGMATE_FORCEINLINE static Bitboard bishop(Square s, Bitboard occ) { return bishop_attacks(s, occ); }
  PGMATE_HD PGMATE_FORCEINLINE static Bitboard between(Square a, Square b) { return between_and_target(a, b); }
};

// Attacks of a piece of the given type (pawns need a colour) on square s.
PGMATE_HD inline Bitboard attacks_of(PieceType t, Color c, Square s, Bitboard occ) {
  switch (t) {
    case kPawn: return pawn_attacks(c, s);
    case kKnight: return knight_attacks(s);
    case kBishop: return bishop_attacks(s, occ);
    case kRook: return rook_attacks(s, occ);
    case kQueen: return queen_attacks(s, occ);
    default: return king_attacks(s);
  }
}

// Attacks of a piece on an empty board, computed by walking rays (used to build tables
// and by tests as a slow reference).
Bitboard slider_attacks_slow(PieceType t, Square s, Bitboard occ);

}  // namespace pgmate::chess
