// Magic-multiplication slider tables in flat arrays (offsets, no host pointers), so they
// can be copied to device memory as they are. Built on the host from the same multipliers
// as the host tables (a deterministic search replaces one that does not verify); checked
// against the table-free attacks by tests.
#pragma once

#include <cstdint>
#include <vector>

#include "chess/bitboard.h"

namespace pgmate::chess {

struct MagicEntry {
  Bitboard mask;
  Bitboard magic;
  std::uint32_t offset;  // into the shared attack array
  std::uint32_t shift;
};

// Pointers to tables (host or device memory).
struct MagicTableView {
  const MagicEntry* rook;     // [64]
  const MagicEntry* bishop;   // [64]
  const Bitboard* attacks;    // 102400 rook entries, then 5248 bishop entries
  const Bitboard* between;    // [64 * 64], as between_and_target(a, b)
};

PGMATE_HD PGMATE_FORCEINLINE std::size_t magic_index(const MagicEntry& e, Bitboard occ) {
  return e.offset + std::size_t(((occ & e.mask) * e.magic) >> e.shift);
}

struct MagicTables {
  std::vector<MagicEntry> rook, bishop;
  std::vector<Bitboard> attacks;
  std::vector<Bitboard> between;

  MagicTableView view() const { return {rook.data(), bishop.data(), attacks.data(), between.data()}; }

  static MagicTables build() {
    MagicTables t;
    t.rook.resize(64);
    t.bishop.resize(64);
    fill(t, t.rook, tables::known_rook_magics(), false);
    fill(t, t.bishop, tables::known_bishop_magics(), true);
    t.between.resize(64 * 64);
    for (Square a = 0; a < 64; ++a)
      for (Square b = 0; b < 64; ++b) t.between[std::size_t(a) * 64 + std::size_t(b)] = table_free::between_and_target(a, b);
    return t;
  }

 private:
  static Bitboard reference(bool bishop, Square s, Bitboard occ) {
    return bishop ? table_free::bishop_attacks(s, occ) : table_free::rook_attacks(s, occ);
  }
  static void fill(MagicTables& t, std::vector<MagicEntry>& entries, const Bitboard* known, bool bishop) {
    std::uint64_t prng = 0x9E3779B97F4A7C15ULL;
    auto next = [&] {
      prng ^= prng >> 12;
      prng ^= prng << 25;
      prng ^= prng >> 27;
      return prng * 0x2545F4914F6CDD1DULL;
    };
    for (Square s = 0; s < 64; ++s) {
      const Bitboard edges =
          ((kRank1 | kRank8) & ~(kRank1 << (8 * rank_of(s)))) | ((kFileA | kFileH) & ~(kFileA << file_of(s)));
      MagicEntry& e = entries[std::size_t(s)];
      e.mask = reference(bishop, s, 0) & ~edges;
      const int bits = popcount(e.mask);
      e.shift = std::uint32_t(64 - bits);
      e.offset = std::uint32_t(t.attacks.size());
      const std::size_t size = std::size_t(1) << bits;
      std::vector<Bitboard> occupancies, references;
      Bitboard sub = 0;
      do {
        occupancies.push_back(sub);
        references.push_back(reference(bishop, s, sub));
        sub = (sub - e.mask) & e.mask;
      } while (sub);
      std::vector<Bitboard> slots(size);
      std::vector<bool> used(size);
      for (Bitboard magic = known[s];; magic = next() & next() & next()) {
        std::fill(used.begin(), used.end(), false);
        bool ok = true;
        for (std::size_t i = 0; i < occupancies.size() && ok; ++i) {
          const std::size_t idx = std::size_t(((occupancies[i] & e.mask) * magic) >> e.shift);
          if (!used[idx]) {
            used[idx] = true;
            slots[idx] = references[i];
          } else if (slots[idx] != references[i]) {
            ok = false;
          }
        }
        if (ok) {
          e.magic = magic;
          break;
        }
      }
      t.attacks.insert(t.attacks.end(), slots.begin(), slots.end());
    }
  }
};

}  // namespace pgmate::chess
