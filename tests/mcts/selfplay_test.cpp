// Self-play over many games at once: batching, records, determinism, options; and the
// strength check that pure MCTS beats random play.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
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

// The Gumbel and playout cap options: parsed, checked by name, listed, stored.
TEST(SelfPlay, GumbelAndPlayoutCapOptions) {
  SelfPlayConfig c;
  EXPECT_EQ(c.search.root_search, RootSearch::kPuct);
  EXPECT_EQ(cheap_simulations_of(c), 25);  // a quarter of the 100 simulations
  set_option(c, "search", "gumbel");
  set_option(c, "gumbel-considered", "8");
  set_option(c, "c_visit", "30");
  set_option(c, "c_scale", "0.5");
  set_option(c, "first_game", "12");
  set_option(c, "full_search_fraction", "0.25");
  set_option(c, "simulations", "64");
  EXPECT_EQ(c.search.root_search, RootSearch::kGumbel);
  EXPECT_EQ(c.search.gumbel_considered, 8);
  EXPECT_FLOAT_EQ(c.search.gumbel_c_visit, 30.0f);
  EXPECT_FLOAT_EQ(c.search.gumbel_c_scale, 0.5f);
  EXPECT_EQ(c.first_game, 12);
  EXPECT_FLOAT_EQ(c.full_search_fraction, 0.25f);
  EXPECT_EQ(c.cheap_simulations, 16);  // follows simulations
  EXPECT_EQ(cheap_simulations_of(c), 16);
  set_option(c, "cheap_simulations", "5");
  EXPECT_EQ(cheap_simulations_of(c), 5);
  SelfPlayConfig given;
  set_option(given, "cheap_simulations", "7");
  set_option(given, "simulations", "400");
  EXPECT_EQ(cheap_simulations_of(given), 7);  // given, it stays
  // The Q normalisation brings its own c_scale, unless one is given.
  EXPECT_EQ(c.search.gumbel_q_normalise, QNormalise::kMinMax);
  SelfPlayConfig paper;
  set_option(paper, "q_normalise", "bounds");
  EXPECT_EQ(paper.search.gumbel_q_normalise, QNormalise::kBounds);
  EXPECT_FLOAT_EQ(paper.search.gumbel_c_scale, 1.0f);
  EXPECT_FLOAT_EQ(SelfPlayConfig{}.search.gumbel_c_scale, 0.1f);
  SelfPlayConfig puct;
  set_option(puct, "search", "puct");
  EXPECT_EQ(puct.search.root_search, RootSearch::kPuct);

  for (auto [name, value] : std::vector<std::pair<const char*, const char*>>{
           {"search", "alphabeta"}, {"search", ""}, {"gumbel_considered", "0"}, {"gumbel_considered", "257"},
           {"c_visit", "-1"}, {"c_scale", "0"}, {"first_game", "-1"}, {"first_game", "1.5"},
           {"full_search_fraction", "1.5"}, {"full_search_fraction", "-0.1"}, {"cheap_simulations", "0"},
           {"q_normalise", "zscore"}}) {
    try {
      SelfPlayConfig fresh;
      set_option(fresh, name, value);
      ADD_FAILURE() << name << "=" << value << " accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(std::string("option ") + name + ":"), std::string::npos) << e.what();
    }
  }
  try {
    SelfPlayConfig fresh;
    set_option(fresh, "gumbel_m", "4");
    ADD_FAILURE() << "gumbel_m accepted";
  } catch (const std::invalid_argument& e) {
    for (const char* known : {"search", "gumbel_considered", "c_visit", "c_scale", "first_game",
                              "full_search_fraction", "cheap_simulations", "cache_entries"})
      EXPECT_NE(std::string(e.what()).find(std::string(", ") + known), std::string::npos) << known << ": " << e.what();
  }

  // The stored parameters: the earlier keys first and in their order, the new ones after.
  const std::string json = config_json(c);
  const std::vector<std::string> keys = {
      "simulations", "c_puct", "fpu_reduction", "fpu_reduction_root", "noise", "dirichlet_alpha",
      "dirichlet_weight", "parallel", "leaves_per_game", "temperature", "temperature_plies",
      "final_temperature", "max_plies", "seed", "search", "gumbel_considered", "c_visit", "c_scale",
      "q_normalise", "full_search_fraction", "cheap_simulations"};
  size_t at = 0;
  for (const std::string& key : keys) {
    const size_t found = json.find("\"" + key + "\": ", at);
    ASSERT_NE(found, std::string::npos) << key << " in " << json;
    at = found;
  }
  for (const char* field : {"\"search\": \"gumbel\"", "\"gumbel_considered\": 8", "\"c_visit\": 30", "\"c_scale\": 0.5",
                            "\"full_search_fraction\": 0.25", "\"cheap_simulations\": 5}"})
    EXPECT_NE(json.find(field), std::string::npos) << field << " in " << json;
  EXPECT_NE(config_json(SelfPlayConfig{}).find("\"search\": \"puct\""), std::string::npos);
}

SelfPlayConfig capped_config(float full_search_fraction) {
  SelfPlayConfig c = small_config();
  c.search.simulations = 40;
  c.cheap_simulations = 10;
  c.full_search_fraction = full_search_fraction;
  return c;
}

// Playout cap randomization: about the fraction asked of the moves get the full search,
// the others the cheap one; which ones depends on the game's seed only.
TEST(SelfPlay, PlayoutCapRandomizationFlagsCheapSearches) {
  FunctionEvaluator uniform(uniform_evaluation);
  // Per game index: the moves and which searches were full.
  using Played = std::map<std::int64_t, std::pair<std::vector<chess::Move>, std::vector<bool>>>;
  const auto played = [](const std::vector<FinishedGame>& games) {
    Played out;
    for (const FinishedGame& g : games)
      for (const PlyRecord& p : g.plies) {
        out[g.index].first.push_back(p.played);
        out[g.index].second.push_back(p.full_search);
      }
    return out;
  };
  const auto games = play_all(capped_config(0.5f), uniform);
  int full = 0, cheap = 0, exact = 0;
  for (const FinishedGame& g : games) {
    for (const PlyRecord& p : g.plies) {
      const std::uint32_t total = std::accumulate(p.visits.begin(), p.visits.end(), 0u);
      // One simulation expands the root; a move proven lost counts none.
      const std::uint32_t expected = p.full_search ? 39u : 9u;
      EXPECT_LE(total, expected);
      exact += total == expected;
      ++(p.full_search ? full : cheap);
    }
  }
  const int plies = full + cheap;
  ASSERT_GT(plies, 100);
  EXPECT_GT(full, plies * 3 / 10);
  EXPECT_GT(cheap, plies * 3 / 10);
  EXPECT_GE(exact, plies * 9 / 10);
  // The same seed, the same games and flags, however many games are in progress at once;
  // another seed, other flags.
  SelfPlayConfig one_at_a_time = capped_config(0.5f);
  one_at_a_time.parallel = 1;
  EXPECT_EQ(played(play_all(one_at_a_time, uniform)), played(games));
  SelfPlayConfig other_seed = capped_config(0.5f);
  other_seed.seed += 1000;
  EXPECT_NE(played(play_all(other_seed, uniform)), played(games));
  // Everything cheap, or everything full.
  for (float fraction : {0.0f, 1.0f})
    for (const FinishedGame& g : play_all(capped_config(fraction), uniform))
      for (const PlyRecord& p : g.plies) EXPECT_EQ(p.full_search, fraction == 1.0f);
}

// At fraction 1 (the default) nothing is drawn: the games are those of a run without the
// option, searched in full.
TEST(SelfPlay, FullSearchFractionOneChangesNothing) {
  RolloutEvaluator a(5), b(5), c(5);
  SelfPlayConfig plain = small_config();
  plain.search.simulations = 24;
  SelfPlayConfig with_option = plain;
  set_option(with_option, "full_search_fraction", "1");
  set_option(with_option, "cheap_simulations", "3");
  const auto first = play_all(plain, a), second = play_all(with_option, b);
  ASSERT_EQ(first.size(), second.size());
  for (size_t i = 0; i < first.size(); ++i) {
    EXPECT_EQ(first[i].moves, second[i].moves);
    ASSERT_EQ(first[i].plies.size(), second[i].plies.size());
    for (size_t j = 0; j < first[i].plies.size(); ++j) {
      EXPECT_EQ(first[i].plies[j].visits, second[i].plies[j].visits);
      EXPECT_TRUE(second[i].plies[j].full_search);
    }
  }
  // Below 1 the searches change (the check above could fail).
  SelfPlayConfig capped = plain;
  set_option(capped, "full_search_fraction", "0.5");
  set_option(capped, "cheap_simulations", "3");
  const auto third = play_all(capped, c);
  bool differs = false;
  for (size_t i = 0; i < first.size(); ++i) differs |= first[i].moves != third[i].moves;
  EXPECT_TRUE(differs);
}

// first_game=k plays game k of a run started at 0, whatever the games around it.
TEST(SelfPlay, FirstGameOptionReproducesThatGame) {
  FunctionEvaluator uniform(uniform_evaluation);
  SelfPlayConfig config = small_config();  // four games at a time
  const auto all = play_all(config, uniform);
  for (int k : {0, 3, 5}) {
    SelfPlayConfig one = small_config();
    set_option(one, "first_game", std::to_string(k));
    set_option(one, "games", "1");
    const auto game = play_all(one, uniform);
    ASSERT_EQ(game.size(), 1u);
    EXPECT_EQ(game[0].index, k);
    const auto same = std::find_if(all.begin(), all.end(), [&](const FinishedGame& g) { return g.index == k; });
    ASSERT_NE(same, all.end());
    EXPECT_EQ(game[0].seed, same->seed);
    EXPECT_EQ(game[0].moves, same->moves);
  }
}

// Gumbel self-play: complete games of legal moves whose stored policy targets are improved
// policies (distributions over every legal move), with the visits on the considered moves.
TEST(SelfPlay, GumbelGamesStoreImprovedPolicies) {
  RolloutEvaluator pure(11);
  SelfPlayConfig config = small_config();
  set_option(config, "search", "gumbel");
  set_option(config, "gumbel_considered", "4");
  set_option(config, "simulations", "17");
  set_option(config, "max_plies", "40");
  const auto games = play_all(config, pure);
  ASSERT_EQ(games.size(), 6u);
  int plies = 0, spread = 0;
  for (const FinishedGame& g : games) {
    chess::Game replay(g.start);
    for (size_t i = 0; i < g.plies.size(); ++i) {
      const PlyRecord& p = g.plies[i];
      ++plies;
      ASSERT_EQ(p.board.key, replay.board().key);
      ASSERT_EQ(int(p.moves.size()), chess::count_legal_moves(p.board));
      ASSERT_NE(std::find(p.moves.begin(), p.moves.end(), p.played), p.moves.end());
      ASSERT_EQ(p.policy.size(), p.moves.size());
      EXPECT_NEAR(std::accumulate(p.policy.begin(), p.policy.end(), 0.0), 1.0, 1e-5);
      const auto visited = std::count_if(p.visits.begin(), p.visits.end(), [](std::uint32_t v) { return v > 0; });
      EXPECT_LE(visited, 4);
      EXPECT_LE(std::accumulate(p.visits.begin(), p.visits.end(), 0u), 16u);
      // Not the visit shares: unvisited moves get some of the target too.
      spread += std::count_if(p.policy.begin(), p.policy.end(), [](float x) { return x > 0; }) > visited;
      replay.play(p.played);
    }
    EXPECT_EQ(replay.moves(), g.moves);
    if (g.termination == "max_plies")
      EXPECT_EQ(g.moves.size(), 40u);
    else
      EXPECT_EQ(std::string(chess::status_name(replay.status())), g.termination);
  }
  EXPECT_GE(spread, plies / 2);
}

// Under Gumbel the move played ignores the temperature and the move choice's random
// stream: without noise, games of different seeds are the same game.
TEST(SelfPlay, GumbelWithoutNoiseIgnoresTheTemperature) {
  FunctionEvaluator uniform(uniform_evaluation);
  SelfPlayConfig config = small_config();
  set_option(config, "search", "gumbel");
  set_option(config, "noise", "false");
  set_option(config, "temperature", "2");
  set_option(config, "final_temperature", "2");
  const auto games = play_all(config, uniform);
  for (const FinishedGame& g : games) EXPECT_EQ(g.moves, games.front().moves);
  // The same under PUCT: the temperature makes the games differ.
  config.search.root_search = RootSearch::kPuct;
  const auto puct = play_all(config, uniform);
  bool differs = false;
  for (const FinishedGame& g : puct) differs |= g.moves != puct.front().moves;
  EXPECT_TRUE(differs);
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
