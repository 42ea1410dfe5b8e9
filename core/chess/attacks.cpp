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

// Magic multipliers found once by the search below (fixed seed) and kept, so start-up
// only fills the tables; the search remains as the fallback should one fail to verify.
constexpr Bitboard kRookMagics[64] = {
    0x008000908064C000ULL, 0x0040200040001000ULL, 0x0180100080A0010AULL, 0x8880041000800800ULL,
    0x1200100201200804ULL, 0x0200020004011008ULL, 0x2180010000800600ULL, 0x0200005088210204ULL,
    0x0400800040008021ULL, 0x0400400020005000ULL, 0x8240801000200080ULL, 0x8611001004200900ULL,
    0x008180800C001800ULL, 0x0100800200800400ULL, 0x0A02000102000408ULL, 0x8020802300104280ULL,
    0x0080004000402000ULL, 0xE010104000402000ULL, 0x0800808010002000ULL, 0xA280210008100100ULL,
    0x0001818014000800ULL, 0xA002010100080400ULL, 0x0080240001020870ULL, 0x0001020004048845ULL,
    0x0081826280004004ULL, 0x2020810900284000ULL, 0x0200100080802000ULL, 0x0200080080100080ULL,
    0x8083080100100500ULL, 0x4406000901000400ULL, 0x0005020080800100ULL, 0x0090204200008114ULL,
    0x0010400094800420ULL, 0x0900804000802002ULL, 0x0201001841002000ULL, 0x4100080080801000ULL,
    0x4540040080800800ULL, 0x0002001004040020ULL, 0x0281195814001002ULL, 0x1240800040800100ULL,
    0x0880042000524004ULL, 0x02C080410206002CULL, 0x0801200241050010ULL, 0x8400080010008080ULL,
    0x0008000500090010ULL, 0x0082009084020008ULL, 0x4012000108020004ULL, 0x9000104D08860004ULL,
    0x2004204114800100ULL, 0x0148802112400300ULL, 0x0202842000100880ULL, 0x001B080080900080ULL,
    0x001A002008100600ULL, 0x0004008004020080ULL, 0x5181000600040300ULL, 0x0000044401128A00ULL,
    0x8044110480002441ULL, 0x2008110084402202ULL, 0x90806005090010C1ULL, 0x000420310A004A42ULL,
    0x0023001004020801ULL, 0x0882001008040102ULL, 0x000230088118020CULL, 0x0000019025040042ULL,
};
constexpr Bitboard kBishopMagics[64] = {
    0x0045010808008680ULL, 0x2002080204004898ULL, 0x0210009A10400006ULL, 0x0824050200810200ULL,
    0x0006061105004090ULL, 0x00010108C0000000ULL, 0x0814040282104004ULL, 0x0012012201106800ULL,
    0x10823014100C1040ULL, 0x0080C2088802808CULL, 0x0281108410404000ULL, 0x0101212041826200ULL,
    0x0020141028221058ULL, 0x2201020202200202ULL, 0x000082A801482000ULL, 0x0000008401411044ULL,
    0x0007103014300404ULL, 0x0002091110010100ULL, 0x42140012040C0808ULL, 0x0800808802004020ULL,
    0x90C4004210140000ULL, 0x0800200900A01000ULL, 0x00D0400201108810ULL, 0x80820183814412A0ULL,
    0x00A01008202202B4ULL, 0x01C2021A09500402ULL, 0x0084440208042400ULL, 0x800400400C090100ULL,
    0xBA10040010802100ULL, 0xD182009006005000ULL, 0x5011021001009004ULL, 0x0020420200510400ULL,
    0x0292104000468800ULL, 0x00043009091C0500ULL, 0x0280441000020025ULL, 0x0042820080080080ULL,
    0x0440101010010040ULL, 0x1000900100808080ULL, 0x0108108120089800ULL, 0x0044010200012682ULL,
    0xC002500420900400ULL, 0x0040482210710800ULL, 0x0002060024000200ULL, 0x0281020A44000800ULL,
    0xA0021200A4000200ULL, 0x0001301000840840ULL, 0x2868500108444220ULL, 0x0004111041000200ULL,
    0x8044020842080200ULL, 0x0000220104210200ULL, 0x0000021201044000ULL, 0x0000280884040028ULL,
    0x4012114010858003ULL, 0x0000081004082B88ULL, 0x3892700508208002ULL, 0x00220A041B060400ULL,
    0x0812020284014881ULL, 0x010434A282103100ULL, 0x0490400824020800ULL, 0x4A20002C00208800ULL,
    0x000000A011020200ULL, 0x4002940A02482202ULL, 0x5100100202140406ULL, 0x02102000840540C1ULL,
};

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

void init_slider(PieceType type, const Bitboard* known_magics, tables::SliderEntry* entries, Bitboard* storage,
                 Prng& prng) {
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
    (void)known_magics;
    e.magic = 0;
    for (size_t i = 0; i < occupancies.size(); ++i)
      next[pext_portable(occupancies[i], e.mask)] = references[i];
#else
    (void)pext_portable;
    std::vector<int> epoch(size, 0);
    for (int attempt = 1;; ++attempt) {
      Bitboard magic = known_magics[s];
      if (attempt > 1) {
        do magic = prng.sparse();
        while (popcount((e.mask * magic) >> 56) < 6);
      }
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
    init_slider(kRook, kRookMagics, tables::rook, g_rook_attacks, prng);
    init_slider(kBishop, kBishopMagics, tables::bishop, g_bishop_attacks, prng);
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

const Bitboard* tables::known_rook_magics() { return kRookMagics; }
const Bitboard* tables::known_bishop_magics() { return kBishopMagics; }

}  // namespace pgmate::chess
