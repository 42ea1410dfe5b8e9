// Self-play over many games at once: batching, records, determinism, options; and the
// strength check that pure MCTS beats random play.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <numeric>
#include <set>
#include <stdexcept>

#include "chess/fen.h"
#include "chess/game.h"
#include "chess/movegen.h"
#include "mcts/eval_cache.h"
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

// The parameters without the seconds taken are the same text less that one field, so a
// PGN file of the same seed is the same file.
TEST(SelfPlay, ParametersJsonCanLeaveOutTheSeconds) {
  SelfPlayConfig config;
  FinishedGame game;
  game.index = 3;
  game.seed = 5;
  game.seconds = 1.5;
  const std::string with = game_parameters_json(config, game, "pure-mcts", "r");
  const std::string without = game_parameters_json(config, game, "pure-mcts", "r", GameSeconds::kOmit);
  const size_t at = with.find(", \"seconds\": 1.5}");
  ASSERT_NE(at, std::string::npos) << with;
  EXPECT_EQ(without, with.substr(0, at) + "}");
  EXPECT_NE(without.find("\"game_seed\": 5"), std::string::npos) << without;
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

// F1: self-play uses root noise, so no visits are carried over from the previous move's
// search: every stored position has this search's visits (one simulation expands the root,
// and a move proven lost counts none), and its policy target is their shares.
TEST(SelfPlay, StoredVisitsAreThisSearchsOnly) {
  FunctionEvaluator uniform(uniform_evaluation);
  SelfPlayConfig config = small_config();
  config.search.simulations = 40;
  ASSERT_TRUE(config.search.root_noise);
  int exact = 0, plies = 0;
  for (const FinishedGame& g : play_all(config, uniform)) {
    for (const PlyRecord& p : g.plies) {
      ++plies;
      const std::uint32_t total = std::accumulate(p.visits.begin(), p.visits.end(), 0u);
      EXPECT_LE(total, 39u);
      exact += total == 39u;
      ASSERT_EQ(p.policy.size(), p.visits.size());
      for (size_t i = 0; i < p.visits.size(); ++i)
        EXPECT_FLOAT_EQ(p.policy[i], total ? float(double(p.visits[i]) / total) : 0.0f);
    }
  }
  EXPECT_GT(plies, 0);
  EXPECT_GE(exact, plies * 9 / 10);
}

// F8: a run whose evaluator answers NaN stops with an error instead of crashing.
TEST(SelfPlay, NonFiniteEvaluationStopsTheRun) {
  int calls = 0;
  FunctionEvaluator broken([&](const EvalRequest& r) {
    EvalResult e = uniform_evaluation(r);
    if (++calls == 30) e.win = std::nanf("");
    return e;
  });
  SelfPlayConfig config = small_config();
  SelfPlayRunner runner(config, broken);
  EXPECT_THROW(runner.run([](FinishedGame&) {}), std::invalid_argument);
}

// The cache is sized for the run (about two moves of every game in progress) unless given.
TEST(SelfPlay, CacheSizeFollowsTheRun) {
  SelfPlayConfig c;
  EXPECT_EQ(c.cache_entries, SelfPlayConfig::kAutomaticCacheEntries);
  EXPECT_EQ(cache_entries_of(c), 2u * 1 * 100);  // one game, 100 simulations
  c.games = 100;
  EXPECT_EQ(cache_entries_of(c), 2u * 8 * 100);
  // Through set_option (the CLI and the procedure) the size is kept as a number, in step.
  SelfPlayConfig o;
  set_option(o, "games", "100");
  set_option(o, "simulations", "64");
  EXPECT_EQ(o.cache_entries, 2u * 8 * 64);
  set_option(o, "parallel", "16");
  EXPECT_EQ(o.cache_entries, 2u * 16 * 64);
  EXPECT_EQ(cache_entries_of(o), o.cache_entries);
  // Given, it stays.
  SelfPlayConfig given;
  set_option(given, "cache_entries", "5000");
  set_option(given, "parallel", "32");
  EXPECT_EQ(cache_entries_of(given), 5000u);
  SelfPlayConfig off;
  set_option(off, "cache_entries", "0");
  set_option(off, "simulations", "800");
  EXPECT_EQ(cache_entries_of(off), 0u);
  EXPECT_LT(estimated_memory_bytes(off), estimated_memory_bytes(o) * 100);
  // The memory estimate counts the cache the run will have.
  SelfPlayConfig big;
  set_option(big, "games", "1000");
  set_option(big, "parallel", "256");
  set_option(big, "simulations", "800");
  EXPECT_EQ(big.cache_entries, 2u * 256 * 800);
  SelfPlayConfig no_cache = big;
  no_cache.cache_entries = 0;
  EXPECT_GT(estimated_memory_bytes(big), estimated_memory_bytes(no_cache) + 2u * 256 * 800 * 100);
}

// F6: self-play (root noise) has no first-play urgency reduction at the root unless asked.
TEST(SelfPlay, FpuReductionRootFollowsTheNoise) {
  SelfPlayConfig c;
  EXPECT_TRUE(c.search.root_noise);
  EXPECT_EQ(c.search.fpu_reduction_root, 0.0f);
  EXPECT_EQ(SearchParams{}.fpu_reduction_root, SearchParams{}.fpu_reduction);  // no noise: the same
  set_option(c, "fpu_reduction", "0.4");
  EXPECT_EQ(c.search.fpu_reduction_root, 0.0f);
  set_option(c, "noise", "false");
  EXPECT_FLOAT_EQ(c.search.fpu_reduction_root, 0.4f);
  SelfPlayConfig given;
  set_option(given, "fpu-reduction-root", "0.1");
  set_option(given, "noise", "true");
  EXPECT_FLOAT_EQ(given.search.fpu_reduction_root, 0.1f);
  EXPECT_NE(config_json(given).find("\"fpu_reduction_root\": 0.1"), std::string::npos) << config_json(given);
  EXPECT_THROW(set_option(given, "fpu_reduction_root", "0.2"), std::invalid_argument);  // given twice
  SelfPlayConfig bad;
  EXPECT_THROW(set_option(bad, "fpu_reduction_root", "-1"), std::invalid_argument);
  try {
    set_option(bad, "bogus", "1");
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("fpu_reduction_root"), std::string::npos) << e.what();
  }
}

// A measurement, not a check (run with --gtest_also_run_disabled_tests): the evaluation
// cache's hit rate in self-play at the automatic cache size. Pure MCTS with each position's
// playout seeded by the position (so the evaluator is deterministic and may be cached),
// 16 games at once, 64 simulations, 20 plies.
TEST(SelfPlay, DISABLED_CacheHitRate) {
  FunctionEvaluator pure(
      [](const EvalRequest& r) {
        RolloutEvaluator rollout(EvalCache::key_of(r));
        EvalResult e;
        rollout.evaluate(std::span<const EvalRequest>(&r, 1), std::span<EvalResult>(&e, 1));
        return e;
      },
      "pure-mcts seeded by position");
  const auto measure = [&](const char* what, SelfPlayConfig config) {
    SelfPlayRunner runner(config, pure);
    runner.run([](FinishedGame&) {});
    const SelfPlayStats& s = runner.stats();
    const std::int64_t lookups = s.cache_hits + s.evaluations;
    std::printf("%-44s cache %8zu  hits %7lld / lookups %7lld = %5.1f%%  evaluations %lld\n", what,
                cache_entries_of(config), (long long)s.cache_hits, (long long)lookups,
                lookups ? 100.0 * double(s.cache_hits) / double(lookups) : 0.0, (long long)s.evaluations);
  };
  SelfPlayConfig config;
  config.games = 16;
  config.parallel = 16;
  config.search.simulations = 64;
  config.max_plies = 20;
  config.seed = 2024;
  measure("noise, no tree reuse, automatic cache", config);
  SelfPlayConfig large = config;
  large.cache_entries = 100000;
  measure("noise, no tree reuse, 100000 entries", large);
  SelfPlayConfig reuse = config;
  reuse.search.root_noise = false;
  reuse.search.fpu_reduction_root = reuse.search.fpu_reduction;
  measure("no noise, tree reuse, automatic cache", reuse);
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
