#include "gamedb/game_hash.h"

namespace pgmate::gamedb {

namespace {

// SplitMix64's finaliser: every input bit reaches every output bit.
std::uint64_t mix(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

}  // namespace

std::uint64_t game_hash(std::uint64_t start_key, std::span<const std::uint16_t> moves) {
  std::uint64_t h = mix(start_key);
  // Four moves a step: a chain over every move, so order and length both count.
  std::size_t i = 0;
  for (; i + 4 <= moves.size(); i += 4)
    h = mix(h ^ (std::uint64_t{moves[i]} | std::uint64_t{moves[i + 1]} << 16 | std::uint64_t{moves[i + 2]} << 32 |
                 std::uint64_t{moves[i + 3]} << 48));
  std::uint64_t tail = 0;
  for (int shift = 0; i < moves.size(); ++i, shift += 16) tail |= std::uint64_t{moves[i]} << shift;
  return mix(h ^ tail ^ (std::uint64_t{moves.size()} << 56));
}

}  // namespace pgmate::gamedb
