// The run's settings and the fixed order and batches of its samples (the loop itself runs
// against a real worker in training_test and in the SQL and CLI tests).
#include "link/training_run.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <random>

#include <gtest/gtest.h>

namespace pgmate::worker {
namespace {

std::vector<std::vector<std::uint8_t>> fake_samples(int n) {
  std::vector<std::vector<std::uint8_t>> out;
  for (int i = 0; i < n; ++i) {
    std::vector<std::uint8_t> s(3 + i % 5, std::uint8_t(i));
    s[0] = std::uint8_t(i >> 8);
    out.push_back(s);
  }
  return out;
}

SampleSet sealed(const std::vector<std::vector<std::uint8_t>>& samples) {
  SampleSet set;
  for (const auto& s : samples) set.add(s);
  set.seal();
  return set;
}

std::vector<std::vector<std::uint8_t>> as_vectors(const std::vector<std::span<const std::uint8_t>>& batch) {
  std::vector<std::vector<std::uint8_t>> out;
  for (auto s : batch) out.emplace_back(s.begin(), s.end());
  return out;
}

TEST(SampleSet, TheOrderRowsCameInDoesNotMatter) {
  auto samples = fake_samples(300);
  const SampleSet a = sealed(samples);
  std::mt19937 rng(7);
  std::shuffle(samples.begin(), samples.end(), rng);
  const SampleSet b = sealed(samples);
  EXPECT_EQ(a.size(), 300u);
  EXPECT_EQ(a.sha256_hex(), b.sha256_hex());
  for (std::int64_t step : {0, 1, 5, 17})
    EXPECT_EQ(as_vectors(a.batch(step, 64, 42)), as_vectors(b.batch(step, 64, 42))) << "step " << step;
  samples.pop_back();
  EXPECT_NE(sealed(samples).sha256_hex(), a.sha256_hex());
}

TEST(SampleSet, EachEpochVisitsEverySampleOnceInItsOwnOrder) {
  const SampleSet set = sealed(fake_samples(100));
  // batch 10: steps 0..9 are epoch 0, 10..19 epoch 1.
  std::map<std::vector<std::uint8_t>, int> seen[2];
  std::vector<std::vector<std::uint8_t>> order[2];
  for (int step = 0; step < 20; ++step)
    for (auto& s : as_vectors(set.batch(step, 10, 3))) {
      ++seen[step / 10][s];
      order[step / 10].push_back(s);
    }
  for (int e = 0; e < 2; ++e) {
    EXPECT_EQ(seen[e].size(), 100u);
    for (const auto& [s, n] : seen[e]) EXPECT_EQ(n, 1);
  }
  EXPECT_NE(order[0], order[1]);
  // Another seed, another order; a batch that straddles two epochs takes from both.
  EXPECT_NE(as_vectors(set.batch(0, 10, 3)), as_vectors(set.batch(0, 10, 4)));
  EXPECT_EQ(set.batch(3, 30, 3).size(), 30u);
}

TEST(SampleSet, BatchesNeedASealedNonEmptySet) {
  SampleSet empty;
  empty.seal();
  EXPECT_EQ(empty.size(), 0u);
  EXPECT_THROW(empty.batch(0, 4, 0), std::logic_error);
  SampleSet open;
  open.add(fake_samples(1)[0]);
  EXPECT_THROW(open.batch(0, 4, 0), std::logic_error);
}

TEST(TrainingSettings, DefaultsRunKeysAndTrainerKeys) {
  const TrainingSettings d = parse_training_settings(1000, "{}");
  EXPECT_EQ(d.steps, 1000);
  EXPECT_EQ(d.batch, 256);
  EXPECT_EQ(d.log_every, 50);
  EXPECT_EQ(d.checkpoint_every, 500);
  EXPECT_EQ(d.trainer.total_steps, 1000);  // the schedule's length is the run's
  const TrainingSettings s = parse_training_settings(
      400, R"({"batch": 64, "log_every": 20, "checkpoint_every": 100, "holdout": "SELECT 1", "name": "n",
               "optimizer": "adamw", "lr": 0.002, "schedule": "cosine", "warmup_steps": 10})");
  EXPECT_EQ(s.batch, 64);
  EXPECT_EQ(s.holdout, "SELECT 1");
  EXPECT_EQ(s.name, "n");
  EXPECT_EQ(s.trainer.optimizer, "adamw");
  EXPECT_DOUBLE_EQ(s.trainer.lr, 0.002);
  EXPECT_EQ(s.trainer.total_steps, 400);
  EXPECT_EQ(parse_training_settings(400, R"({"schedule": "cosine", "total_steps": 900})").trainer.total_steps, 900);
}

TEST(TrainingSettings, BadOptionsAreRefusedNamingTheKey) {
  const auto message = [](std::int64_t steps, const std::string& json) {
    try {
      parse_training_settings(steps, json);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_NE(message(10, R"({"batch": 0})").find("batch"), std::string::npos);
  EXPECT_NE(message(10, R"({"batch": 9000})").find("batch"), std::string::npos);
  EXPECT_NE(message(10, R"({"log_every": 30, "checkpoint_every": 100})").find("multiple"), std::string::npos);
  EXPECT_NE(message(10, R"({"lr": -1})").find("lr"), std::string::npos);
  EXPECT_NE(message(10, R"({"speed": 1})").find("speed"), std::string::npos);
  EXPECT_NE(message(10, R"({"name": 5})").find("name"), std::string::npos);
  EXPECT_NE(message(10, R"({"batch": 8, "batch": 9})").find("repeated"), std::string::npos);
  EXPECT_NE(message(10, R"({"schedule": "cosine", "warmup_steps": 20})").find("total_steps"), std::string::npos);
  EXPECT_NE(message(0, "{}").find("steps"), std::string::npos);
  EXPECT_NE(message(10, R"({"kl_reference": 3})").find("kl_weight"), std::string::npos);
  EXPECT_NE(message(10, R"({"kl_reference": -1, "kl_weight": 0.1})").find("kl_reference"), std::string::npos);
  EXPECT_NE(message(10, R"({"optimizer_from": "last"})").find("optimizer_from"), std::string::npos);
  EXPECT_NE(message(10, R"({"holdout_at_start": "no"})").find("holdout_at_start"), std::string::npos);
  EXPECT_NE(message(10, R"({"holdout_at_start": 0})").find("holdout_at_start"), std::string::npos);
}

TEST(TrainingSettings, SettingsJsonIdentifiesWhatChangesTheWeights) {
  const TrainingSettings a =
      parse_training_settings(100, R"({"batch": 32, "name": "x", "holdout_limit": 50, "holdout_at_start": false})");
  const TrainingSettings b = parse_training_settings(100, R"({"batch": 32, "name": "y"})");
  const TrainingSettings c = parse_training_settings(100, R"({"batch": 32, "lr": 0.02})");
  EXPECT_EQ(settings_json(a), settings_json(b));  // what is measured changes no weight
  EXPECT_FALSE(a.holdout_at_start);
  EXPECT_TRUE(b.holdout_at_start);
  EXPECT_NE(settings_json(a), settings_json(c));
  EXPECT_NE(settings_json(a).find("\"batch\": 32"), std::string::npos);
  EXPECT_NE(settings_json(a).find("\"optimizer\""), std::string::npos);
  // The KL reference changes the updates; left out, the settings read as before it existed.
  const TrainingSettings d = parse_training_settings(100, R"({"batch": 32, "kl_weight": 0.1, "kl_reference": 7})");
  const TrainingSettings e = parse_training_settings(100, R"({"batch": 32, "kl_weight": 0.1})");
  EXPECT_EQ(d.kl_reference, 7);
  EXPECT_NE(settings_json(d), settings_json(e));
  EXPECT_NE(settings_json(d).find("\"kl_reference\": 7"), std::string::npos);
  EXPECT_EQ(settings_json(e).find("kl_reference"), std::string::npos);
  // So does the optimizer a run continues.
  const TrainingSettings f = parse_training_settings(100, R"({"batch": 32, "optimizer_from": 12})");
  EXPECT_EQ(f.optimizer_from, 12);
  EXPECT_NE(settings_json(f), settings_json(b));
  EXPECT_NE(settings_json(f).find("\"optimizer_from\": 12"), std::string::npos);
  EXPECT_EQ(settings_json(b).find("optimizer_from"), std::string::npos);
}

}  // namespace
}  // namespace pgmate::worker
