// Material and pattern search against a plain replay that tests every position.
#include "gamedb/game_search.h"

#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "chess/fen.h"
#include "chess/movegen.h"
#include "chess/notation.h"

namespace pgmate::gamedb {
namespace {

using chess::Board;
using chess::Move;

// A game of random legal moves (at most `plies`) from `start`, with every position it passes.
struct RandomGame {
  Board start;
  std::vector<Move> moves;
  std::vector<Board> positions;
};
RandomGame random_game(std::mt19937& rng, const Board& start, int plies) {
  RandomGame g{start, {}, {start}};
  Board b = start;
  for (int ply = 0; ply < plies; ++ply) {
    chess::MoveList list;
    chess::legal_moves(b, list);
    if (list.size == 0) break;
    const Move m = list.moves[rng() % list.size];
    g.moves.push_back(m);
    b.play(m);
    g.positions.push_back(b);
  }
  return g;
}

TEST(Material, TextAndParse) {
  EXPECT_EQ(Material::of(chess::parse_fen("startpos")).text(), "KQRRBBNNPPPPPPPPvKQRRBBNNPPPPPPPP");
  const Material m = Material::of(chess::parse_fen("8/8/4k3/8/2r5/8/3RP3/4K3 w - - 0 1"));
  EXPECT_EQ(m.text(), "KRPvKR");
  EXPECT_EQ(Material::parse("KRPvKR"), m);
  EXPECT_EQ(Material::parse("KPRvKR"), m);  // any order
  EXPECT_EQ(m.men(0), 2);
  EXPECT_EQ(m.men(1), 1);
  EXPECT_EQ(Material::parse("KvK").text(), "KvK");
  for (const char* bad : {"KRP", "KRPvKRvK", "RKvK", "KXvK", "KvKPPPPPPPPP", "vK", "Kv"})
    EXPECT_THROW(Material::parse(bad), chess::ParseError) << bad;
  try {
    Material::parse("KXvK");
  } catch (const chess::ParseError& e) {
    EXPECT_NE(std::string(e.what()).find("\"KXvK\""), std::string::npos) << e.what();
  }
}

TEST(Pattern, ParseAndMatch) {
  const Board start = chess::parse_fen("startpos");
  EXPECT_TRUE(Pattern::parse("8/8/8/8/8/8/8/8").matches(start));
  EXPECT_TRUE(Pattern::parse("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR").matches(start));
  EXPECT_TRUE(Pattern::parse("8/8/8/8/......../8/8/8").matches(start));   // rank 4 empty
  EXPECT_TRUE(Pattern::parse("1n6/8/8/8/8/8/8/8").matches(start));  // a '1' is one square of anything
  EXPECT_FALSE(Pattern::parse("1N6/8/8/8/8/8/8/8").matches(start));
  EXPECT_FALSE(Pattern::parse("8/8/8/8/8/8/.???????/8").matches(start));  // a2 is not empty
  EXPECT_FALSE(Pattern::parse("8/8/8/8/3P4/8/8/8").matches(start));
  const Board after = chess::parse_fen("rnbqkbnr/pppppppp/8/8/3P4/8/PPP1PPPP/RNBQKBNR b KQkq - 0 1");
  EXPECT_TRUE(Pattern::parse("8/8/8/8/3P4/8/8/8").matches(after));
  EXPECT_FALSE(Pattern::parse("???????k/8/8/8/3P4/8/???.????/8").matches(after));  // h8 holds a rook
  EXPECT_TRUE(Pattern::parse("???????r/8/8/8/3P4/8/???.????/8").matches(after));
  for (const char* bad : {"8/8/8/8/8/8/8", "8/8/8/8/8/8/8/8/8", "9/8/8/8/8/8/8/8", "8/8/8/8/8/8/8/7", "8/8/8/8/8/8/8/7x",
                          "44/8/8/8/8/8/8/8x", "8/8/8/8/........//8/8/8", ""})
    EXPECT_THROW(Pattern::parse(bad), chess::ParseError) << bad;
}

// Random games: reaches_material and reaches_pattern agree with testing every position.
TEST(GameSearch, SameAsTestingEveryPosition) {
  std::mt19937 rng(3);
  const Pattern pattern = Pattern::parse("8/8/8/8/8/8/8/5R2");  // a white rook on f1
  int material_hits = 0, pattern_hits = 0, pruned = 0;
  for (int game = 0; game < 300; ++game) {
    const auto [start, moves, positions] =
        random_game(rng, chess::parse_fen("4k3/pp3ppp/8/8/8/8/PPP2PPP/R3K2R w KQ - 0 1"), 120);
    // The material of a position in the middle of the game: found, and a material no
    // position had: not found.
    const Material wanted = Material::of(positions[positions.size() / 2]);
    EXPECT_TRUE(reaches_material(start, moves, wanted));
    Material never = wanted;
    never.counts[0][0] = 9;  // nine white queens
    EXPECT_FALSE(reaches_material(start, moves, never));
    const Material krvk = Material::parse("KRvK");
    bool expected = false, expected_pattern = false;
    for (const Board& p : positions) {
      expected |= Material::of(p) == krvk;
      expected_pattern |= pattern.matches(p);
    }
    EXPECT_EQ(reaches_material(start, moves, krvk), expected) << game;
    // The stored signature never rules out a material the game reached.
    const std::uint64_t signature = material_signature(start, moves);
    EXPECT_TRUE(may_reach(signature, wanted)) << game;
    if (expected) {
      EXPECT_TRUE(may_reach(signature, krvk)) << game;
    }
    pruned += !may_reach(signature, krvk);
    EXPECT_EQ(reaches_pattern(start, moves, pattern), expected_pattern) << game;
    material_hits += expected;
    pattern_hits += expected_pattern;
  }
  EXPECT_GT(pruned, 100);  // most games end with more than a rook against a bare king
  EXPECT_GT(pattern_hits, 10);
  EXPECT_GT(300 - pattern_hits, 10);
  (void)material_hits;
}

// A stored game's summary and its position index entries come from one replay: the entries
// are append_game_entries' (game 0, result unknown until the caller sets them), repeated
// positions included; an illegal game yields none and leaves what was there.
TEST(GameSearch, SummaryEntriesAreTheGamesIndexEntries) {
  std::mt19937 rng(11);
  std::vector<pgmate::gamedb::PositionEntry> summarized = {{1, 2, 3}};  // kept as it is
  int with_repeats = 0;
  for (int game = 0; game < 200; ++game) {
    // Kings and knights shuffle back and forth: positions come back within a game.
    const auto [start, moves, positions] =
        random_game(rng, chess::parse_fen(game % 2 ? "4k3/8/8/3n4/8/8/8/4K1N1 w - - 0 1" : "startpos"), 80);
    const auto result = static_cast<pgmate::gamedb::GameResult>(game % 4);
    std::vector<pgmate::gamedb::PositionEntry> replayed, from_summary;
    pgmate::gamedb::append_game_entries(77, start, moves, result, replayed);
    ASSERT_TRUE(summarize(start, moves, &from_summary).legal);
    for (auto& e : from_summary) {
      EXPECT_EQ(e.game, 0u);
      e = {e.key, 77, pgmate::gamedb::EntryCode::with_result(e.code, result)};
    }
    EXPECT_EQ(from_summary, replayed) << game;
    with_repeats += replayed.size() < moves.size() + 1;
  }
  EXPECT_GT(with_repeats, 20);
  const std::vector<Move> illegal = {Move(12, 28), Move(12, 28)};  // e2e4 twice
  EXPECT_FALSE(summarize(chess::parse_fen("startpos"), illegal, &summarized).legal);
  EXPECT_EQ(summarized, (std::vector<pgmate::gamedb::PositionEntry>{{1, 2, 3}}));
}

// The summary of a game: legal or not, the same material signature, and squares that never
// rule out a pattern the game matched but rule out most that it did not.
TEST(GameSearch, SquareSignaturePrunesOnlyPatternsNeverMatched) {
  std::mt19937 rng(5);
  // A white king on each square of the 8th rank, a black knight on e4, a white pawn on d5.
  std::vector<Pattern> patterns;
  for (const char* p : {"K7/8/8/8/8/8/8/8", "1K6/8/8/8/8/8/8/8", "2K5/8/8/8/8/8/8/8", "3K4/8/8/8/8/8/8/8",
                        "4K3/8/8/8/8/8/8/8", "5K2/8/8/8/8/8/8/8", "6K1/8/8/8/8/8/8/8", "7K/8/8/8/8/8/8/8",
                        "8/8/8/8/4n3/8/8/8", "8/8/8/3P4/8/8/8/8"})
    patterns.push_back(Pattern::parse(p));
  int matched = 0, pruned = 0;
  for (int game = 0; game < 200; ++game) {
    const RandomGame played = random_game(rng, chess::parse_fen("startpos"), 150);
    const Board& start = played.start;
    const std::vector<Board>& positions = played.positions;
    std::vector<Move> moves;
    for (const Move m : played.moves) moves.push_back(chess::board_free(m));  // as stored
    const GameSummary summary = summarize(start, moves);
    ASSERT_TRUE(summary.legal);
    EXPECT_EQ(summary.material_signature, material_signature(start, moves));
    EXPECT_EQ(SquareSignature::from_bytes(summary.squares.bytes()).visited, summary.squares.visited);
    for (const Pattern& pattern : patterns) {
      bool truth = false;
      for (const Board& p : positions) truth |= pattern.matches(p);
      EXPECT_EQ(reaches_pattern(start, moves, pattern), truth) << game;
      if (truth) {
        EXPECT_TRUE(pattern.may_match(summary.squares)) << game;
      }
      matched += truth;
      pruned += !pattern.may_match(summary.squares);
    }
  }
  EXPECT_GT(matched, 50);
  EXPECT_GT(pruned, 1000);  // of 2000: most random games never take the king to the 8th rank

  // An illegal move: not legal, and the material signature says which move.
  const std::vector<Move> illegal = {Move(chess::make_square(4, 1), chess::make_square(4, 4))};  // e2e5
  EXPECT_FALSE(summarize(chess::parse_fen("startpos"), illegal).legal);
  EXPECT_THROW(material_signature(chess::parse_fen("startpos"), illegal), chess::IllegalMove);
  EXPECT_THROW(SquareSignature::from_bytes(std::vector<std::uint8_t>(47)), chess::ParseError);
}

TEST(GameSearch, PawnConesStopOnlyReplaysThatCanNoLongerMatch) {
  std::mt19937 rng(11);
  // Pawn patterns from one pawn to a chain, both colours, with pieces beside.
  std::vector<Pattern> patterns;
  for (const char* p : {"8/8/8/3pP3/8/8/8/8", "8/8/8/8/3P4/8/8/8", "8/8/8/8/8/2P5/1P6/8", "8/p7/8/8/8/8/8/8",
                        "8/8/2p5/8/4P3/8/8/8", "8/8/8/8/8/8/PPPPPPPP/8", "8/8/8/8/4N3/3P4/8/8", "8/8/8/2P5/8/8/8/8"})
    patterns.push_back(Pattern::parse(p));
  int matched = 0, stopped_early = 0;
  for (int game = 0; game < 300; ++game) {
    const RandomGame played = random_game(rng, chess::parse_fen("startpos"), 150);
    std::vector<Move> moves;
    for (const Move m : played.moves) moves.push_back(chess::board_free(m));
    for (const Pattern& pattern : patterns) {
      bool truth = false;
      for (const Board& p : played.positions) truth |= pattern.matches(p);
      EXPECT_EQ(reaches_pattern(played.start, moves, pattern), truth) << game;
      matched += truth;
      // Once impossible, impossible for good; never before the last position that matches.
      bool impossible = false;
      for (std::size_t i = 0; i < played.positions.size(); ++i) {
        const bool possible = pattern.still_possible(played.positions[i]);
        EXPECT_FALSE(impossible && possible) << game << " ply " << i;
        impossible |= !possible;
        if (impossible) {
          EXPECT_FALSE(pattern.matches(played.positions[i])) << game << " ply " << i;
        }
      }
      stopped_early += impossible && !pattern.still_possible(played.positions[played.positions.size() / 2]);
    }
  }
  EXPECT_GT(matched, 100);
  EXPECT_GT(stopped_early, 200);  // random games lose or advance their pawns: most replays stop by mid-game
}

}  // namespace
}  // namespace pgmate::gamedb
