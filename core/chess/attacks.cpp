// Builds the host attack tables once, at load time.
#include <cstdlib>
#include <vector>

#include "chess/bitboard.h"

namespace pgmate::chess {

namespace tables {
SliderEntry rook[64];
SliderEntry bishop[64];
Bitboard knight[64];
Bitboard king[64];
Bitboard pawn[2][64];
Bitboard line[64][64];
Bitboard between[64][64];
}  // namespace tables

namespace {

constexpr int kRookDirs[4][2] = {{1, 0}, {-1, 0}, {0, 1}, {0, -1}};
constexpr int kBishopDirs[4][2] = {{1, 1}, {1, -1}, {-1, 1}, {-1, -1}};

// Rook tables hold 102400 entries and bishop tables 5248 (sum over squares of 2^bits).
Bitboard g_rook_attacks[102400];
Bitboard g_bishop_attacks[5248];

// Software PEXT: packs the bits of `occ` selected by `mask` into the low bits.
Bitboard pext_portable(Bitboard occ, Bitboard mask) {
  Bitboard result = 0;
  for (Bitboard bit = 1; mask; bit <<= 1) {
    Bitboard low = mask & -mask;
    if (occ & low) result |= bit;
    mask &= mask - 1;
  }
  return result;
}

// xorshift64*, fixed seed: the magic search is deterministic and takes a few ms.
struct Prng {
  std::uint64_t s = 0x2545F4914F6CDD1DULL;
  std::uint64_t next() {
    s ^= s >> 12;
    s ^= s << 25;
    s ^= s >> 27;
    return s * 0x2545F4914F6CDD1DULL;
  }
  std::uint64_t sparse() { return next() & next() & next(); }
};

void init_slider(PieceType type, tables::SliderEntry* entries, Bitboard* storage, Prng& prng) {
  Bitboard* next = storage;
  std::vector<Bitboard> occupancies, references;
  for (Square s = 0; s < 64; ++s) {
    Bitboard edges = ((kRank1 | kRank8) & ~(kRank1 << (8 * rank_of(s)))) |
                     ((kFileA | kFileH) & ~(kFileA << file_of(s)));
    tables::SliderEntry& e = entries[s];
    e.mask = slider_attacks_slow(type, s, 0) & ~edges;
    int bits = popcount(e.mask);
    e.shift = 64 - bits;
    e.attacks = next;
    size_t size = size_t(1) << bits;

    // Enumerate every subset of the mask (Carry-Rippler) with its true attack set.
    occupancies.clear();
    references.clear();
    Bitboard sub = 0;
    do {
      occupancies.push_back(sub);
      references.push_back(slider_attacks_slow(type, s, sub));
      sub = (sub - e.mask) & e.mask;
    } while (sub);

#if defined(PGMATE_USE_PEXT)
    e.magic = 0;
    for (size_t i = 0; i < occupancies.size(); ++i)
      next[pext_portable(occupancies[i], e.mask)] = references[i];
#else
    (void)pext_portable;
    std::vector<int> epoch(size, 0);
    for (int attempt = 1;; ++attempt) {
      Bitboard magic;
      do magic = prng.sparse();
      while (popcount((e.mask * magic) >> 56) < 6);
      bool ok = true;
      for (size_t i = 0; i < occupancies.size() && ok; ++i) {
        size_t idx = ((occupancies[i] & e.mask) * magic) >> e.shift;
        if (epoch[idx] < attempt) {
          epoch[idx] = attempt;
          next[idx] = references[i];
        } else if (next[idx] != references[i]) {
          ok = false;
        }
      }
      if (ok) {
        e.magic = magic;
        break;
      }
    }
#endif
    next += size;
  }
  (void)prng;
}

struct TableInit {
  TableInit() {
    for (Square s = 0; s < 64; ++s) {
      tables::knight[s] = knight_attacks_set(bb(s));
      tables::king[s] = king_attacks_set(bb(s));
      tables::pawn[kWhite][s] = pawn_attacks_set(kWhite, bb(s));
      tables::pawn[kBlack][s] = pawn_attacks_set(kBlack, bb(s));
    }
    Prng prng;
    init_slider(kRook, tables::rook, g_rook_attacks, prng);
    init_slider(kBishop, tables::bishop, g_bishop_attacks, prng);
    for (Square a = 0; a < 64; ++a) {
      for (Square b = 0; b < 64; ++b) {
        tables::between[a][b] = bb(b);
        tables::line[a][b] = 0;
        if (a == b) continue;
        for (PieceType t : {kBishop, kRook}) {
          if (slider_attacks_slow(t, a, 0) & bb(b)) {
            tables::line[a][b] =
                (slider_attacks_slow(t, a, 0) & slider_attacks_slow(t, b, 0)) | bb(a) | bb(b);
            tables::between[a][b] =
                (slider_attacks_slow(t, a, bb(b)) & slider_attacks_slow(t, b, bb(a))) | bb(b);
          }
        }
      }
    }
  }
};

const TableInit g_table_init;

}  // namespace

Bitboard slider_attacks_slow(PieceType t, Square s, Bitboard occ) {
  Bitboard result = 0;
  auto walk = [&](const int (&dirs)[4][2]) {
    for (const auto& d : dirs) {
      int f = file_of(s) + d[0], r = rank_of(s) + d[1];
      while (f >= 0 && f < 8 && r >= 0 && r < 8) {
        Square t2 = make_square(f, r);
        result |= bb(t2);
        if (occ & bb(t2)) break;
        f += d[0];
        r += d[1];
      }
    }
  };
  if (t == kRook || t == kQueen) walk(kRookDirs);
  if (t == kBishop || t == kQueen) walk(kBishopDirs);
  return result;
}

}  // namespace pgmate::chess
