// Self-play over many games at once: batching, records, determinism, options; and the
// strength check that pure MCTS beats random play.
#include <gtest/gtest.h>

#include <numeric>
#include <set>

#include "chess/fen.h"
#include "chess/game.h"
#include "chess/movegen.h"
#include "mcts/rollout_evaluator.h"
#include "mcts/selfplay.h"

namespace pgmate::mcts {
namespace {

SelfPlayConfig small_config() {
  SelfPlayConfig c;
  c.games = 6;
  c.parallel = 4;
  c.search.simulations = 8;
  c.max_plies = 30;
  c.seed = 99;
  return c;
}

std::vector<FinishedGame> play_all(const SelfPlayConfig& config, Evaluator& evaluator) {
  std::vector<FinishedGame> games;
  SelfPlayRunner runner(config, evaluator);
  runner.run([&](FinishedGame& g) { games.push_back(g); });
  return games;
}

TEST(SelfPlay, GamesAreCompleteAndConsistent) {
  FunctionEvaluator uniform(uniform_evaluation);
  SelfPlayConfig config = small_config();
  std::vector<FinishedGame> games;
  std::vector<double> batch_means;
  SelfPlayRunner runner(config, uniform);
  runner.run([&](FinishedGame& g) { games.push_back(g); },
             [&](const SelfPlayStats& s) { batch_means.push_back(s.mean_batch()); });
  ASSERT_EQ(games.size(), 6u);
  std::set<std::int64_t> indexes;
  for (const FinishedGame& g : games) {
    indexes.insert(g.index);
    ASSERT_EQ(g.plies.size(), g.moves.size());
    chess::Game replay(g.start);
    for (size_t i = 0; i < g.moves.size(); ++i) {
      const PlyRecord& p = g.plies[i];
      EXPECT_EQ(p.board.key, replay.board().key);
      EXPECT_EQ(p.played, g.moves[i]);
      EXPECT_EQ(p.moves.size(), p.visits.size());
      EXPECT_EQ(p.moves.size(), p.priors.size());
      EXPECT_EQ(int(p.moves.size()), chess::count_legal_moves(p.board));
      EXPECT_GT(std::accumulate(p.visits.begin(), p.visits.end(), 0u), 0u);
      EXPECT_GE(p.value, -1.0f);
      EXPECT_LE(p.value, 1.0f);
      replay.play(p.played);
    }
    if (g.termination == "max_plies") {
      EXPECT_EQ(g.moves.size(), 30u);
      EXPECT_EQ(g.result, "1/2-1/2");
    } else {
      EXPECT_EQ(std::string(chess::status_name(replay.status())), g.termination);
    }
  }
  EXPECT_EQ(indexes, (std::set<std::int64_t>{0, 1, 2, 3, 4, 5}));
  const SelfPlayStats& s = runner.stats();
  EXPECT_EQ(s.games_done, 6);
  EXPECT_EQ(s.white_wins + s.draws + s.black_wins, 6);
  // Four games at a time: batches of up to four, fewer when a game's leaf is found in the
  // evaluation cache or as the last games finish.
  EXPECT_EQ(s.batches, uniform.batches());
  EXPECT_GT(s.mean_batch(), 2.5);
  EXPECT_LE(s.mean_batch(), 4.0);
}

TEST(SelfPlay, SameSeedSameGames) {
  RolloutEvaluator a(5), b(5), c(6);
  SelfPlayConfig config = small_config();
  const auto first = play_all(config, a), second = play_all(config, b);
  ASSERT_EQ(first.size(), second.size());
  for (size_t i = 0; i < first.size(); ++i) EXPECT_EQ(first[i].moves, second[i].moves);
  config.seed = 100;
  const auto other = play_all(config, c);
  bool differs = false;
  for (size_t i = 0; i < first.size(); ++i) differs |= first[i].moves != other[i].moves;
  EXPECT_TRUE(differs);
}

TEST(SelfPlay, RestartedRunContinuesWithTheNextGames) {
  FunctionEvaluator uniform(uniform_evaluation);
  SelfPlayConfig config = small_config();
  config.parallel = 1;  // game order = index order
  const auto all = play_all(config, uniform);
  config.first_game = 4;
  config.games = 2;
  const auto rest = play_all(config, uniform);
  ASSERT_EQ(rest.size(), 2u);
  EXPECT_EQ(rest[0].index, 4);
  EXPECT_EQ(rest[0].moves, all[4].moves);
  EXPECT_EQ(rest[1].moves, all[5].moves);
}

TEST(SelfPlay, LeavesPerGameBatchMore) {
  FunctionEvaluator uniform(uniform_evaluation);
  SelfPlayConfig config = small_config();
  config.games = 2;
  config.parallel = 2;
  config.leaves_per_game = 4;
  config.search.simulations = 32;
  SelfPlayRunner runner(config, uniform);
  runner.run([](FinishedGame&) {});
  EXPECT_GT(runner.stats().mean_batch(), 4.0);
}

TEST(SelfPlay, OptionsAreCheckedByName) {
  SelfPlayConfig c;
  set_option(c, "simulations", "64");
  set_option(c, "c-puct", "2.5");
  set_option(c, "noise", "false");
  set_option(c, "seed", "18446744073709551615");
  EXPECT_EQ(c.search.simulations, 64);
  EXPECT_FLOAT_EQ(c.search.c_puct, 2.5f);
  EXPECT_FALSE(c.search.root_noise);
  EXPECT_EQ(c.seed, ~std::uint64_t(0));
  for (auto [name, value] : std::vector<std::pair<const char*, const char*>>{
           {"simulations", "0"}, {"simulations", "12x"}, {"c_puct", "-1"}, {"noise", "maybe"},
           {"dirichlet_weight", "1.5"}, {"bogus", "1"}, {"max_plies", ""}}) {
    try {
      SelfPlayConfig fresh;  // the value is wrong, not the option given twice
      set_option(fresh, name, value);
      ADD_FAILURE() << name << "=" << value << " accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(name), std::string::npos) << e.what();
    }
  }
  const std::string json = config_json(c);
  EXPECT_NE(json.find("\"simulations\": 64"), std::string::npos) << json;
  EXPECT_NE(json.find("\"c_puct\": 2.5"), std::string::npos) << json;
}

// max-plies and max_plies are one option: given both ways, neither value silently wins.
TEST(SelfPlay, OptionGivenTwiceIsAnError) {
  const auto error = [](std::vector<std::pair<const char*, const char*>> options) -> std::string {
    SelfPlayConfig c;
    try {
      for (auto [name, value] : options) set_option(c, name, value);
    } catch (const std::invalid_argument& e) {
      return e.what();
    }
    return "no error";
  };
  EXPECT_EQ(error({{"max-plies", "10"}, {"max_plies", "20"}}),
            "option max_plies is given twice, as \"max-plies\" and \"max_plies\"");
  EXPECT_EQ(error({{"c_puct", "2"}, {"c-puct", "3"}}), "option c_puct is given twice, as \"c_puct\" and \"c-puct\"");
  EXPECT_EQ(error({{"seed", "1"}, {"seed", "2"}}), "option seed is given twice");
  EXPECT_EQ(error({{"max-plies", "10"}, {"c-puct", "2"}}), "no error");
  // A value refused the first time does not count as given.
  SelfPlayConfig c;
  EXPECT_THROW(set_option(c, "max_plies", "lots"), std::invalid_argument);
  set_option(c, "max-plies", "30");
  EXPECT_EQ(c.max_plies, 30);
}

// Pure MCTS (200 simulations, no noise, best move) against uniformly random moves: it
// must win at least 36 of 40 games. Colours alternate; the seed is fixed.
TEST(SelfPlay, PureMctsBeatsRandomPlay) {
  constexpr int kGames = 40;
  int wins = 0;
  for (int g = 0; g < kGames; ++g) {
    const chess::Color mcts_side = g % 2 ? chess::kBlack : chess::kWhite;
    RolloutEvaluator pure(1000 + std::uint64_t(g));
    SearchParams params;
    params.simulations = 200;
    Search search(params, std::uint64_t(g));
    Rng random_player(std::uint64_t(g) * 7919 + 1);
    Rng choice(3);
    chess::Game game(chess::parse_fen(chess::kStartFen));
    while (game.status() == chess::GameStatus::kOngoing && game.moves().size() < 600) {
      chess::Move m;
      if (game.board().side == mcts_side) {
        search.set_game(game);
        search_position(search, pure);
        m = search.choose_move(0, choice);
      } else {
        chess::MoveList list;
        chess::legal_moves(game.board(), list);
        m = list.moves[random_player.below(std::uint32_t(list.size))];
      }
      game.play(m);
    }
    if (game.status() == chess::GameStatus::kCheckmate && game.board().side != mcts_side) ++wins;
  }
  EXPECT_GE(wins, 36) << wins << " wins of " << kGames;
  RecordProperty("wins", wins);
}

}  // namespace
}  // namespace pgmate::mcts
