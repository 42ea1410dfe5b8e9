// The learning loop's options, settings, gate and escalation (core/learning): the same
// answers as pgmate.learning_settings, learning_gate and learning_escalation give in SQL.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "learning/gate.h"
#include "learning/settings.h"

using namespace pgmate::learning;

namespace {

JsonObject object(std::initializer_list<std::pair<const char*, const char*>> members) {
  JsonObject o;
  for (const auto& [k, v] : members) {
    const std::string s = v;
    o[k] = s.front() == '"' ? JsonValue::string(s.substr(1, s.size() - 2)) : JsonValue::number(s);
  }
  return o;
}

SettingsContext context(bool eco = true) {
  SettingsContext c;
  c.have_eco_openings = [eco] { return eco; };
  c.random_seed = [] { return std::int64_t(12345); };
  return c;
}

std::string error_of(const JsonObject& given, bool eco = true) {
  try {
    new_run_settings(given, context(eco));
  } catch (const OptionError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(LearningOptions, AreNumberedInOrderWithUniqueNames) {
  std::set<std::string> names;
  int position = 0;
  for (const auto& spec : option_specs()) {
    EXPECT_EQ(spec.position, ++position);
    EXPECT_TRUE(names.insert(spec.name).second) << spec.name;
    EXPECT_EQ(spec.kind == OptionKind::Text, spec.low == nullptr) << spec.name;
  }
  EXPECT_EQ(position, 41);
}

TEST(LearningSettings, CompleteANewRunWithDefaultsThatFollowOthers) {
  const JsonObject s = new_run_settings(object({{"simulations", "10"}, {"openings", "\"startpos\""}}), context());
  EXPECT_EQ(s.at("cheap_simulations").json, "2");
  EXPECT_EQ(s.at("arena_simulations").json, "10");
  EXPECT_EQ(s.at("pretrain_mix").json, "0");
  EXPECT_EQ(s.at("lr").json, "0.001");
  EXPECT_EQ(s.at("kl_weight").json, "0");
  EXPECT_EQ(s.at("seed").json, "12345");
  EXPECT_EQ(s.at("games").json, "32");
  EXPECT_EQ(s.at("search").text, "gumbel");
  EXPECT_FALSE(s.count("network"));  // per call, not a setting
  const JsonObject tuned = new_run_settings(object({{"network", "4"}, {"pretrain_data", "\"SELECT 1\""}}), context());
  EXPECT_EQ(tuned.at("lr").json, "0.0003");
  EXPECT_EQ(tuned.at("kl_weight").json, "1.0");
  EXPECT_EQ(tuned.at("pretrain_mix").json, "0.5");
}

TEST(LearningSettings, NameTheOptionOfEachProblem) {
  EXPECT_EQ(error_of(object({{"games", "3.5"}})), "learn option \"games\": 3.5 is not an integer from 1 to 100000");
  EXPECT_EQ(error_of(object({{"games", "\"many\""}})), "learn option \"games\": \"many\" is not a number");
  EXPECT_EQ(error_of(object({{"search", "\"mcts\""}})), "learn option \"search\": \"mcts\" is not one of puct, gumbel");
  EXPECT_EQ(error_of(object({{"pretrain_data", "5"}})), "learn option \"pretrain_data\": 5 is not a string");
  EXPECT_EQ(error_of(object({{"lr", "0.0000001"}, {"veto_los", "0.5"}})),
            "learn option \"veto_los\": 0.5 is not a number from 0 to 0.49");
  EXPECT_EQ(error_of(object({{"arena_games", "3"}})).rfind("learn options \"arena_games\"", 0), 0u);
  EXPECT_EQ(error_of(object({{"promotion_elo0", "10"}, {"promotion_elo1", "5"}})),
            "learn option \"promotion_elo1\" (5) must be above \"promotion_elo0\" (10)");
  EXPECT_EQ(error_of(object({{"veto_threshold", "0.6"}, {"promotion_threshold", "0.55"}})),
            "learn option \"veto_threshold\" (0.6) must be below \"promotion_threshold\" (0.55)");
  EXPECT_EQ(error_of(object({{"pretrain_mix", "0.5"}})),
            "learn option \"pretrain_mix\": 0.5 needs \"pretrain_data\", a query of pretraining rows");
  EXPECT_EQ(error_of(object({}), false), "learn option \"openings\": \"eco\" needs the ECO lines in pgmate.openings");
  EXPECT_EQ(error_of(object({{"openings", "\"startpos\""}}), false), "");
  // unknown names first, the shortest first as jsonb lists them
  try {
    new_run_settings(object({{"gamezz", "1"}, {"gamez", "1"}, {"games", "x"}}), context());
    FAIL();
  } catch (const OptionError& e) {
    EXPECT_STREQ(e.what(), "unknown learn option \"gamez\"");
    EXPECT_EQ(e.hint().rfind("known: network, preset, games,", 0), 0u);
  }
  EXPECT_THROW(require_object(JsonType::Array, "[1, 2]"), OptionError);
}

TEST(LearningSettings, OfAnExistingRunNeverChange) {
  const JsonObject stored = new_run_settings(object({{"games", "4"}, {"openings", "\"startpos\""}}), context());
  EXPECT_NO_THROW(check_call_against_stored(object({{"games", "4"}, {"network", "7"}, {"stop_after", "\"selfplay\""}}),
                                            stored, context()));
  try {
    check_call_against_stored(object({{"games", "5"}}), stored, context());
    FAIL();
  } catch (const OptionError& e) {
    EXPECT_STREQ(e.what(), "learn option \"games\": the run has 4, not 5");
  }
  JsonObject edited = stored;
  edited["games"] = JsonValue::number("0");
  try {
    check_call_against_stored(object({}), edited, context());
    FAIL();
  } catch (const OptionError& e) {
    EXPECT_STREQ(e.what(),
                 "the learning run's stored settings are not valid: learn option \"games\": 0 is not an integer from 1 to 100000");
  }
  edited = stored;
  edited["stop_after"] = JsonValue::string("training");
  EXPECT_THROW(check_call_against_stored(object({}), edited, context()), OptionError);
}

TEST(LearningSettings, OnACudaWorkerTrainLargerBatchesFaster) {
  const JsonObject s = new_run_settings(object({{"openings", "\"startpos\""}}), context());
  EXPECT_EQ(device_defaults(s, {}, "cpu").at("batch").json, "128");
  const JsonObject cuda = device_defaults(s, {}, "cuda:0");
  EXPECT_EQ(cuda.at("batch").json, "1024");
  EXPECT_EQ(cuda.at("lr").json, "0.002828");
  EXPECT_EQ(device_defaults(s, object({{"batch", "256"}}), "cuda:0").at("lr").json, "0.001");
  EXPECT_EQ(device_defaults(s, object({{"lr", "0.001"}}), "cuda:0").at("lr").json, "0.001");
}

TEST(LearningSettings, RoundAsSqlNumericDoes) {
  EXPECT_EQ(round_decimal(0.5, 3), "0.500");
  EXPECT_EQ(round_decimal(0.0625, 3), "0.063");  // half away from zero, not to even
  EXPECT_EQ(round_decimal(-143.94, 1), "-143.9");
  EXPECT_EQ(round_decimal(-0.0001, 3), "0.000");
  EXPECT_EQ(round_decimal(9.9996, 3), "10.000");
  EXPECT_EQ(round_decimal(0.0003 * 2.8284271247461903, 6), "0.000849");
  EXPECT_EQ(round_decimal(12345.678, 0), "12346");
  EXPECT_EQ(round_decimal(0, 1), "0.0");
}

TEST(LearningGate, VetoesBeforeItPromotes) {
  const JsonObject los = object({{"promotion_los", "0.95"}, {"veto_los", "0.01"}});
  const JsonObject score = object({{"promotion_threshold", "0.55"}, {"veto_threshold", "0.35"}});
  const JsonObject sprt = object({{"promotion_los", "0.95"}, {"veto_los", "0.01"}, {"promotion_elo1", "30"}});
  const MatchOutcome strong{0.6, 0.97, ""}, weak{0.3, 0.02, ""}, h1{0.55, 0.8, "H1"};
  EXPECT_EQ(gate_decision(strong, {}, los), "promoted");
  EXPECT_EQ(gate_decision(strong, {{0.3, 0.005, ""}}, los), "vetoed");
  EXPECT_EQ(gate_decision(strong, {{0.34, 0.2, ""}}, los), "promoted");
  EXPECT_EQ(gate_decision(strong, {{0.34, 0.2, ""}}, score), "vetoed");
  EXPECT_EQ(gate_decision(weak, {}, los), "kept");
  EXPECT_EQ(gate_decision(weak, {}, score), "vetoed");
  EXPECT_EQ(gate_decision(h1, {}, sprt), "promoted");
  EXPECT_EQ(gate_decision(strong, {}, sprt), "kept");
  EXPECT_EQ(gate_decision(MatchOutcome{}, {}, los), "kept");  // a NULL decides nothing
}

TEST(LearningEscalation, ChangesOneThingALevel) {
  const Escalation one = escalation(1, 0.5, 0.001, 0), two = escalation(2, 0.5, 0.001, 0),
                   three = escalation(3, 0.5, 0.001, 0), four = escalation(4, 0.9, 0.001, 0.3);
  EXPECT_DOUBLE_EQ(one.exclude_share, 0.25);
  EXPECT_DOUBLE_EQ(one.new_pretrain_mix, 0.7);
  EXPECT_DOUBLE_EQ(two.new_lr, 0.0005);
  EXPECT_DOUBLE_EQ(three.new_current_share, 0.3);
  EXPECT_DOUBLE_EQ(four.exclude_share, 0.5);
  EXPECT_DOUBLE_EQ(four.new_pretrain_mix, 0.9);
  EXPECT_DOUBLE_EQ(four.new_current_share, 0.3);
  EXPECT_DOUBLE_EQ(escalation(1, 0.9, 0.001, 0).new_pretrain_mix, 0.95);
}

TEST(LearningGate, GivesItsReasonAsTheIterationKeepsIt) {
  const JsonObject best = object({{"score", "0.5"}, {"elo", "0"}, {"elo_lower", "-143.88"}, {"elo_upper", "143.88"},
                                  {"los", "0.5"}, {"games", "2"}, {"sprt", "\"continue\""}});
  EXPECT_EQ(arena_reason(best, nullptr, 0, nullptr, object({{"promotion_los", "0.95"}, {"veto_los", "0.01"}})),
            "score 0.500, Elo 0.0 [-143.9, 143.9], LOS 0.500 against the best network over 2 games (promotion at LOS "
            "0.95, veto below LOS 0.01)");
  const JsonObject older = object({{"score", "0.25"}}), start = object({{"score", "0.0625"}});
  EXPECT_EQ(arena_reason(best, &older, 17, &start,
                         object({{"promotion_elo0", "0"}, {"promotion_elo1", "10"}, {"veto_threshold", "0.35"}})),
            "score 0.500, Elo 0.0 [-143.9, 143.9], LOS 0.500 against the best network over 2 games, SPRT [0, 10]: "
            "undecided (veto below a score of 0.35), 0.250 against older network 17, 0.063 against the start network");
  EXPECT_EQ(arena_reason(object({{"games", "4"}}), nullptr, 0, nullptr, object({{"promotion_threshold", "0.55"}})),
            "score , Elo  [, ], LOS  against the best network over 4 games (promotion at a score of 0.55, veto below "
            "LOS )");
  EXPECT_EQ(round_decimal_literal("0.12349999999999999", 3), "0.123");
  EXPECT_EQ(round_decimal_literal("1e-05", 6), "0.000010");
  EXPECT_EQ(round_decimal_literal("-2.5", 0), "-3");
}
