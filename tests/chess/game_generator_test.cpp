// Synthetic games: legal throughout, determined by (seed, index), results that fit the
// final position, realistic lengths and result mix, shared openings from the book, and
// PGN that reads back.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>

#include "chess/game_generator.h"
#include "chess/notation.h"
#include "chess/synthetic_tags.h"

namespace pgmate::chess {
namespace {

// The real book when installed, else none (the games are then all heuristic).
const PolyglotBook& test_book() {
  static const PolyglotBook book = std::filesystem::exists(std::string(kDefaultBookPath))
                                       ? PolyglotBook::load(std::string(kDefaultBookPath))
                                       : PolyglotBook();
  return book;
}

constexpr int kGames = 300;

const std::vector<GeneratedGame>& corpus() {
  static const std::vector<GeneratedGame> games = [] {
    std::vector<GeneratedGame> g;
    for (int i = 0; i < kGames; ++i) g.push_back(generate_game(test_book(), 42, i));
    return g;
  }();
  return games;
}

const std::string& tag(const GeneratedGame& g, const std::string& name) {
  for (const auto& [k, v] : g.tags)
    if (k == name) return v;
  static const std::string none;
  return none;
}

TEST(GameGenerator, EveryMoveLegalAndResultFitsTheEnd) {
  const GeneratorOptions options;
  for (const GeneratedGame& g : corpus()) {
    Game game(parse_fen("startpos"));
    for (Move m : g.moves) {
      ASSERT_TRUE(is_legal(game.board(), m)) << to_uci(m) << " in " << to_fen(game.board());
      ASSERT_EQ(game.status(), GameStatus::kOngoing) << "the game went on after it ended";
      game.play(m);
    }
    EXPECT_EQ(game.status(), g.status);
    const int balance = material_balance(game.board());
    switch (g.status) {
      case GameStatus::kCheckmate:
        // The side to move is mated: the other side won.
        EXPECT_EQ(g.result, game.board().side == kWhite ? "0-1" : "1-0");
        break;
      case GameStatus::kOngoing:
        EXPECT_EQ(int(g.moves.size()), g.target_plies);
        if (g.result == "1-0") EXPECT_GE(balance, options.adjudication_pawns);
        else if (g.result == "0-1") EXPECT_LE(balance, -options.adjudication_pawns);
        else EXPECT_LT(std::abs(balance), options.adjudication_pawns);
        break;
      default: EXPECT_EQ(g.result, "1/2-1/2") << status_name(g.status);
    }
    EXPECT_LE(int(g.moves.size()), g.target_plies);
  }
}

TEST(GameGenerator, DeterminedBySeedAndIndex) {
  // Made out of order, singly, the games are the same: nothing carries over between them.
  for (int i : {7, 0, 299, 7}) {
    const GeneratedGame again = generate_game(test_book(), 42, i);
    EXPECT_EQ(again.moves, corpus()[i].moves);
    EXPECT_EQ(again.tags, corpus()[i].tags);
    EXPECT_EQ(again.result, corpus()[i].result);
    EXPECT_EQ(to_pgn(again), to_pgn(corpus()[i]));
  }
  // Another seed, other games.
  int same = 0;
  for (int i = 0; i < 20; ++i) same += generate_game(test_book(), 43, i).moves == corpus()[i].moves;
  EXPECT_LT(same, 3);
}

TEST(GameGenerator, LengthsMostlySixtyToOneHundredTwenty) {
  std::vector<int> lengths;
  int in_range = 0;
  for (const GeneratedGame& g : corpus()) {
    lengths.push_back(int(g.moves.size()));
    in_range += g.moves.size() >= 60 && g.moves.size() <= 120;
  }
  std::sort(lengths.begin(), lengths.end());
  EXPECT_GE(lengths[kGames / 2], 70);
  EXPECT_LE(lengths[kGames / 2], 110);
  EXPECT_GE(in_range, kGames * 6 / 10) << "of " << kGames;
  EXPECT_GE(lengths.front(), 10);
  EXPECT_LE(lengths.back(), GeneratorOptions().max_plies);
}

TEST(GameGenerator, ResultMixLikeRealGames) {
  std::map<std::string, int> results;
  for (const GeneratedGame& g : corpus()) ++results[g.result];
  // Real databases: about 35-40% White wins, 30% draws, 25-30% Black wins.
  EXPECT_GE(results["1-0"], kGames * 28 / 100);
  EXPECT_LE(results["1-0"], kGames * 50 / 100);
  EXPECT_GE(results["1/2-1/2"], kGames * 18 / 100);
  EXPECT_LE(results["1/2-1/2"], kGames * 42 / 100);
  EXPECT_GE(results["0-1"], kGames * 18 / 100);
  EXPECT_LE(results["0-1"], kGames * 40 / 100);
  EXPECT_GT(results["1-0"], results["0-1"]);
}

TEST(GameGenerator, PopularOpeningsAreShared) {
  if (test_book().size() == 0) GTEST_SKIP() << kDefaultBookPath << " is absent (Debian package gnuchess-book)";
  const Board start = parse_fen("startpos");
  const Move e4 = parse_uci(start, "e2e4");
  int after_e4 = 0, in_book = 0;
  std::set<std::vector<std::uint16_t>> first_four;
  for (const GeneratedGame& g : corpus()) {
    after_e4 += g.moves[0] == e4;
    in_book += g.book_plies >= GeneratorOptions().min_book_plies;
    std::vector<std::uint16_t> opening;
    for (int i = 0; i < 4; ++i) opening.push_back(g.moves[i].bits());
    first_four.insert(opening);
  }
  EXPECT_GT(after_e4, kGames * 30 / 100);
  EXPECT_LT(after_e4, kGames * 50 / 100);
  EXPECT_GT(in_book, kGames * 90 / 100);
  // Shared, but not all alike.
  EXPECT_GT(first_four.size(), 20u);
  EXPECT_LT(first_four.size(), size_t(kGames / 2));
}

TEST(GameGenerator, TagsFromThePools) {
  std::set<std::string> players, events;
  for (const GeneratedGame& g : corpus()) {
    for (const char* name : {"Event", "Site", "Date", "Round", "White", "Black", "WhiteElo", "BlackElo"})
      EXPECT_FALSE(tag(g, name).empty()) << name;
    EXPECT_NE(tag(g, "White"), tag(g, "Black"));
    for (const char* elo : {"WhiteElo", "BlackElo"}) {
      const int rating = std::stoi(tag(g, elo));
      EXPECT_GE(rating, 1200);
      EXPECT_LE(rating, 2800);
    }
    const int year = std::stoi(tag(g, "Date").substr(0, 4));
    EXPECT_GE(year, 2000);
    EXPECT_LE(year, 2024);
    players.insert(tag(g, "White"));
    players.insert(tag(g, "Black"));
    events.insert(tag(g, "Event"));
  }
  EXPECT_GT(players.size(), 400u);
  EXPECT_GT(events.size(), 100u);
  // The pool: unique names, sorted by rating, a realistic spread.
  std::set<std::string> names;
  for (int r = 0; r < kSyntheticPlayers; ++r) names.insert(synthetic_player(r).name);
  EXPECT_EQ(names.size(), size_t(kSyntheticPlayers));
  EXPECT_GE(synthetic_player(0).rating, 1200);
  EXPECT_LE(synthetic_player(kSyntheticPlayers - 1).rating, 2800);
  EXPECT_LT(synthetic_player(kSyntheticPlayers / 10).rating, 1600);
  EXPECT_GT(synthetic_player(kSyntheticPlayers * 9 / 10).rating, 2100);
}

TEST(GameGenerator, PgnReadsBack) {
  std::string text;
  for (int i = 0; i < 40; ++i) {
    if (i) text += '\n';  // games are separated by a blank line
    text += to_pgn(corpus()[i]);
  }
  const std::vector<PgnGame> games = parse_pgn(text);
  ASSERT_EQ(games.size(), 40u);
  for (int i = 0; i < 40; ++i) {
    EXPECT_EQ(games[i].moves, corpus()[i].moves);
    EXPECT_EQ(games[i].result, corpus()[i].result);
    EXPECT_EQ(*games[i].tag("White"), tag(corpus()[i], "White"));
    EXPECT_EQ(*games[i].tag("BlackElo"), tag(corpus()[i], "BlackElo"));
  }
}

TEST(GameGenerator, WithoutABook) {
  const PolyglotBook none;
  const GeneratedGame g = generate_game(none, 1, 0);
  EXPECT_EQ(g.book_plies, 0);
  EXPECT_GT(g.moves.size(), 0u);
  EXPECT_EQ(to_pgn(generate_game(none, 1, 0)), to_pgn(g));
}

}  // namespace
}  // namespace pgmate::chess
