// game_hash: the same start and moves give the same hash; any change of start, order,
// length or promotion piece gives another.
#include "gamedb/game_hash.h"

#include <gtest/gtest.h>

#include <set>
#include <vector>

#include "chess/fen.h"
#include "chess/movegen.h"

namespace pgmate::gamedb {
namespace {

std::uint64_t hash(const chess::Board& start, const std::vector<std::uint16_t>& moves) {
  return game_hash(start.key, moves);
}

TEST(GameHash, SameGameSameHashAnyChangeAnother) {
  const chess::Board start = chess::parse_fen("startpos");
  const chess::Board other = chess::parse_fen("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR b KQkq - 0 1");
  const std::vector<std::uint16_t> game = {796, 3364, 390, 3059, 197};
  EXPECT_EQ(hash(start, game), hash(chess::parse_fen("startpos"), std::vector<std::uint16_t>(game)));
  std::set<std::uint64_t> seen = {hash(start, game), hash(other, game), hash(start, {})};
  auto add = [&](const std::vector<std::uint16_t>& moves) { EXPECT_TRUE(seen.insert(hash(start, moves)).second); };
  add({3364, 796, 390, 3059, 197});        // order
  add({796, 3364, 390, 3059});             // length: one move fewer
  add({796, 3364, 390, 3059, 197, 0});     // one more (even a zero one)
  add({796, 3364, 390, 3059, 197 | 0x4000});  // another promotion piece
  EXPECT_EQ(seen.size(), 7u);
  // Stored hashes are compared with new ones: the function may never change.
  EXPECT_EQ(hash(start, game), 0x61a9b9e4c0f1ba99ULL) << std::hex << hash(start, game);
}

// Every prefix of random games: as many hashes as distinct move sequences (short
// prefixes of two games are sometimes the same sequence).
TEST(GameHash, NoCollisionsAmongManyGames) {
  std::set<std::uint64_t> hashes;
  std::set<std::vector<std::uint16_t>> sequences;
  std::uint64_t state = 1;
  for (int g = 0; g < 2000; ++g) {
    std::vector<std::uint16_t> moves;
    for (int i = 0; i < 50; ++i) {
      state = state * 6364136223846793005ULL + 1442695040888963407ULL;
      moves.push_back(static_cast<std::uint16_t>(state >> 48));
      sequences.insert(moves);
      hashes.insert(game_hash(12345, moves));
    }
  }
  EXPECT_GT(sequences.size(), 99000u);
  EXPECT_EQ(hashes.size(), sequences.size());
}

}  // namespace
}  // namespace pgmate::gamedb
