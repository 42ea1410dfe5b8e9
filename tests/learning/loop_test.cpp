// The learning loop's own arithmetic (core/learning/loop.h): which self-play games an
// iteration still has to play, by which network, and how many training steps it takes.
// The loop itself runs against PostgreSQL in the learn suites (learn.sql, tests/cli/learn.sh).
#include <gtest/gtest.h>

#include <vector>

#include "learning/loop.h"

using namespace pgmate::learning;

namespace {

std::vector<std::vector<int>> ranges(int games, int best_games, std::vector<int> stored) {
  std::vector<std::vector<int>> out;
  for (const GameRange& r : missing_game_ranges(games, best_games, std::move(stored)))
    out.push_back({r.first, r.games, r.by_best ? 1 : 0});
  return out;
}

LoopSettings sampling(double samples_per_position, int sample_one_in, int batch) {
  LoopSettings s;
  s.samples_per_position = samples_per_position;
  s.sample_one_in = sample_one_in;
  s.batch = batch;
  return s;
}

}  // namespace

TEST(LearningLoop, AFreshIterationPlaysEveryGameInOneRange) {
  EXPECT_EQ(ranges(8, 8, {}), (std::vector<std::vector<int>>{{0, 8, 1}}));
  EXPECT_TRUE(ranges(0, 0, {}).empty());
}

TEST(LearningLoop, AResumedIterationPlaysOnlyTheGamesNotStored) {
  // games 0, 1 and 5 stored, out of order and once twice
  EXPECT_EQ(ranges(8, 8, {5, 1, 0, 1}), (std::vector<std::vector<int>>{{2, 3, 1}, {6, 2, 1}}));
  EXPECT_TRUE(ranges(4, 4, {0, 1, 2, 3}).empty());
}

TEST(LearningLoop, RangesSplitWhereTheCurrentNetworksShareBegins) {
  // escalation level 3: the last 30% of 10 games by the current network
  EXPECT_EQ(ranges(10, 7, {}), (std::vector<std::vector<int>>{{0, 7, 1}, {7, 3, 0}}));
  EXPECT_EQ(ranges(10, 7, {6, 7}), (std::vector<std::vector<int>>{{0, 6, 1}, {8, 2, 0}}));
  EXPECT_EQ(ranges(4, 0, {}), (std::vector<std::vector<int>>{{0, 4, 0}}));
}

TEST(LearningLoop, StepsDrawEachNewPositionSamplesPerPositionTimes) {
  const LoopSettings s = sampling(4, 1, 128);
  EXPECT_EQ(training_steps(s, 1000, 0.0), 32);   // ceil(4 * 1000 / 128) = ceil(31.25)
  EXPECT_EQ(training_steps(s, 1000, 0.5), 63);   // half of each batch is pretraining rows: ceil(62.5)
  EXPECT_EQ(training_steps(s, 0, 0.0), 1);       // at least one step
  EXPECT_EQ(training_steps(s, 1000000000000, 0.0), 10000000);  // at most ten million
  EXPECT_EQ(training_steps(sampling(4, 4, 128), 1000, 0.0), 8);
}

TEST(LearningLoop, FixedStepsWin) {
  LoopSettings s = sampling(4, 1, 128);
  s.steps = 7;
  EXPECT_EQ(training_steps(s, 1000, 0.0), 7);
}

TEST(LearningLoop, SettingsAreReadOnceWithTheirTypes) {
  SettingsContext context;
  context.have_eco_openings = [] { return true; };
  context.random_seed = [] { return std::int64_t(99); };
  JsonObject given;
  given["games"] = JsonValue::number("6");
  given["kl_weight"] = JsonValue::number("1.0");
  given["pretrain_data"] = JsonValue::string("SELECT 1");
  const LoopSettings s = loop_settings(new_run_settings(given, context));
  EXPECT_EQ(s.games, 6);
  EXPECT_EQ(s.seed, 99);
  EXPECT_EQ(s.arena_interval, 4);
  EXPECT_EQ(s.sanity_interval, 5);
  EXPECT_DOUBLE_EQ(s.pretrain_mix, 0.5);  // the default with pretrain_data
  EXPECT_TRUE(s.has_pretrain_data);
  EXPECT_FALSE(s.has_holdout);
  EXPECT_FALSE(s.steps.has_value());
  EXPECT_EQ(s.json.at("kl_weight").json, "1.0");  // passed on as given
  EXPECT_THROW(loop_settings(JsonObject{}), std::out_of_range);
}
