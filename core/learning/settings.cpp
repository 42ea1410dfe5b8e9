#include "learning/settings.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "common/json.h"

namespace pgmate::learning {

namespace {

// The table behind pgmate.learning_options: kind, bounds or choices, default (nullptr:
// computed, see new_run_settings), per call or a setting.
const std::vector<OptionSpec> kSpecs = {
      {1, "network", OptionKind::Int, "1", "9200000000000000000", {}, nullptr, true,
       "a new run starts from this network (default: a new network of the preset)"},
      {2, "preset", OptionKind::Text, nullptr, nullptr, {"tiny", "small", "seed"}, "\"small\"", false,
       "network preset of a new run without network"},
      {3, "games", OptionKind::Int, "1", "100000", {}, "32", false,
       "self-play games per iteration"},
      {4, "simulations", OptionKind::Int, "1", "100000", {}, "32", false,
       "search simulations per move in self-play"},
      {5, "search", OptionKind::Text, nullptr, nullptr, {"puct", "gumbel"}, "\"gumbel\"", false,
       "self-play root search"},
      {6, "parallel", OptionKind::Int, "1", "4096", {}, "16", false,
       "self-play games in progress at once"},
      {7, "max_plies", OptionKind::Int, "10", "100000", {}, "300", false,
       "self-play and arena games end as draws after this many plies"},
      {8, "full_search_fraction", OptionKind::Number, "0", "1", {}, "1", false,
       "share of moves searched in full (playout cap randomization); the rest get cheap_simulations and are no policy target"},
      {9, "cheap_simulations", OptionKind::Int, "1", "100000", {}, nullptr, false,
       "simulations of a cheap search (default: simulations / 4)"},
      {10, "steps", OptionKind::Int, "1", "10000000", {}, nullptr, false,
       "training steps per iteration (default: as many as samples_per_position asks for)"},
      {11, "batch", OptionKind::Int, "1", "8192", {}, "128", false,
       "positions per training step (a new run on a CUDA worker: 1024, see learning_device_defaults)"},
      {12, "lr", OptionKind::Number, "0.0000001", "10", {}, nullptr, false,
       "AdamW learning rate (default 0.0003 when the run starts from a network, else 0.001, times sqrt(8) with the CUDA batch of 1024; escalation level 2 halves it)"},
      {13, "optimizer_state", OptionKind::Text, nullptr, nullptr, {"carry", "fresh"}, "\"carry\"", false,
       "carry: each training continues the AdamW moments of the one that made the current network (a veto starts afresh); fresh: a new optimizer every iteration"},
      {14, "window", OptionKind::Int, "1", "100000000", {}, "20000", false,
       "newest self-play positions trained on"},
      {15, "pretrain_mix", OptionKind::Number, "0", "0.95", {}, nullptr, false,
       "share of pretraining rows in the training data (default 0.5 with pretrain_data, else 0)"},
      {16, "pretrain_data", OptionKind::Text, nullptr, nullptr, {}, nullptr, false,
       "a query of pretraining rows: board, history, repetitions, played, wdl (as pgmate.game_targets)"},
      {17, "kl_weight", OptionKind::Number, "0", "100", {}, nullptr, false,
       "weight of KL to the start network (default 1 when the run starts from a network, else 0)"},
      {18, "value_target", OptionKind::Text, nullptr, nullptr, {"z", "q", "mix"}, "\"z\"", false,
       "value target: game result z, search value q, or a mix"},
      {19, "q_ratio", OptionKind::Number, "0", "1", {}, "0.5", false,
       "share of q in the value target with value_target mix"},
      {20, "sample_one_in", OptionKind::Int, "1", "1000", {}, "1", false,
       "train on 1 of every k positions of a game"},
      {21, "holdout", OptionKind::Text, nullptr, nullptr, {}, nullptr, false,
       "a query of held-out rows, measured after every training"},
      {22, "arena_interval", OptionKind::Int, "1", "1000", {}, "4", false,
       "iterations between arena rounds (the candidate of the iterations between goes on training, the best network plays self-play)"},
      {23, "arena_games", OptionKind::Int, "2", "100000", {}, "100", false,
       "games of the candidate against the best network (100: a 50-Elo-better candidate is promoted about half the time at a draw rate of 30%, see docs/learning.md)"},
      {24, "arena_simulations", OptionKind::Int, "1", "100000", {}, nullptr, false,
       "simulations per move in arena games (default: simulations)"},
      {25, "arena_search", OptionKind::Text, nullptr, nullptr, {"puct", "gumbel"}, "\"puct\"", false,
       "root search of the networks in arena games"},
      {26, "promotion_threshold", OptionKind::Number, "0", "1", {}, nullptr, false,
       "promotion by score instead of promotion_los: a score against the best network of at least this promotes"},
      {27, "promotion_elo0", OptionKind::Number, "-1000", "1000", {}, "0", false,
       "with promotion_elo1: the SPRT's H0, the Elo (over the best) that must not promote"},
      {28, "promotion_elo1", OptionKind::Number, "-1000", "1000", {}, nullptr, false,
       "promotion by SPRT (H1: this Elo over the best, alpha = beta = 0.05; arena_games the most games): promoted only when H1 is accepted; it comes before promotion_threshold and promotion_los"},
      {29, "veto_threshold", OptionKind::Number, "0", "1", {}, nullptr, false,
       "veto by score instead of veto_los: a score below this against the best, an older or the start network vetoes"},
      {30, "veto_games", OptionKind::Int, "0", "100000", {}, "0", false,
       "games against an older best and the start network in each arena round (0: none)"},
      {31, "sanity_games", OptionKind::Int, "0", "100000", {}, "10", false,
       "games against random and mcts:arena_simulations, recorded every sanity_interval arena rounds"},
      {32, "kl_warning", OptionKind::Number, "0", "100", {}, "0.15", false,
       "a KL above this is warned about"},
      {33, "kl_arena", OptionKind::Number, "0", "100", {}, "0.3", false,
       "a KL above this calls an arena round at once"},
      {34, "seed", OptionKind::Int, "0", "9200000000000000000", {}, nullptr, false,
       "seeds self-play, sampling and arena openings (default: random)"},
      {35, "openings", OptionKind::Text, nullptr, nullptr, {"eco", "startpos"}, "\"eco\"", false,
       "arena openings: pgmate.openings drawn by the seed (pgmate import --openings loads them), or the start position"},
      {36, "stop_after", OptionKind::Text, nullptr, nullptr, {"selfplay", "training"}, nullptr, true,
       "this call stops after that step of its first iteration (the iteration stays in progress)"},
      {37, "promotion_los", OptionKind::Number, "0.5", "1", {}, "0.95", false,
       "the candidate is promoted when its likelihood of superiority over the best network (pentanomial, arena_games games) is at least this: an equal network is promoted 1 - promotion_los of the time"},
      {38, "veto_los", OptionKind::Number, "0", "0.49", {}, "0.01", false,
       "the candidate is vetoed when its likelihood of superiority over the best (or an older or the start) network is below this"},
      {39, "sanity_interval", OptionKind::Int, "1", "1000", {}, "5", false,
       "arena rounds between the sanity games (against random and pure MCTS)"},
      {40, "samples_per_position", OptionKind::Number, "0.01", "1000", {}, "3", false,
       "without steps: each iteration trains ceil(this x its new self-play positions / (batch x (1 - pretraining share))) steps, so a position is drawn about this often while in the window, however full the window"},
      {41, "kl_reference", OptionKind::Text, nullptr, nullptr, {"start", "best"}, "\"start\"", false,
       "the network the KL term holds the candidate to: the start network, or the best network when the iteration began"},
};

const OptionSpec* find_spec(const std::string& name) {
  for (const auto& s : kSpecs)
    if (name == s.name) return &s;
  return nullptr;
}

// jsonb's order of an object's keys (shorter first, then by bytes): the order in which
// PostgreSQL lists them, so the first problem named is the one SQL would name.
std::vector<std::string> jsonb_key_order(const JsonObject& object) {
  std::vector<std::string> keys;
  for (const auto& [k, v] : object) keys.push_back(k);
  std::stable_sort(keys.begin(), keys.end(),
                   [](const std::string& a, const std::string& b) { return a.size() < b.size(); });
  return keys;
}

JsonValue default_value(const char* json) {
  const std::string s = json;
  if (!s.empty() && s.front() == '"') return {JsonType::String, s, s.substr(1, s.size() - 2)};
  return JsonValue::number(s);
}

bool is_integer_literal(const std::string& s) {
  std::size_t i = s.size() > 0 && s[0] == '-' ? 1 : 0;
  if (i == s.size()) return false;
  for (; i < s.size(); ++i)
    if (s[i] < '0' || s[i] > '9') return false;
  return true;
}

std::string joined(const std::vector<const char*>& names) {
  std::string out;
  for (const char* n : names) out += (out.empty() ? "" : ", ") + std::string(n);
  return out;
}

// Unknown keys and values of the wrong kind or out of bounds; the given settings (per-call
// keys and nulls left out).
JsonObject checked_options(const JsonObject& given) {
  for (const auto& key : jsonb_key_order(given))
    if (!find_spec(key)) {
      std::vector<const char*> names;
      for (const auto& s : kSpecs) names.push_back(s.name);
      throw OptionError("unknown learn option \"" + key + "\"", "known: " + joined(names));
    }
  JsonObject resolved;
  for (const auto& spec : kSpecs) {
    const auto it = given.find(spec.name);
    if (it == given.end() || it->second.type == JsonType::Null) continue;
    const JsonValue& value = it->second;
    const std::string prefix = std::string("learn option \"") + spec.name + "\": " + value.json + " is not ";
    if (spec.kind == OptionKind::Text) {
      if (value.type != JsonType::String ||
          (!spec.choices.empty() && std::none_of(spec.choices.begin(), spec.choices.end(),
                                                 [&](const char* c) { return value.text == c; })))
        throw OptionError(prefix + (spec.choices.empty() ? "a string" : "one of " + joined(spec.choices)));
    } else {
      if (value.type != JsonType::Number) throw OptionError(prefix + "a number");
      const double number = std::strtod(value.json.c_str(), nullptr);
      // An integer is written as one (2, not 2.0): the value is stored as given.
      if ((spec.kind == OptionKind::Int && !is_integer_literal(value.json)) ||
          number < std::strtod(spec.low, nullptr) || number > std::strtod(spec.high, nullptr))
        throw OptionError(prefix + (spec.kind == OptionKind::Int ? "an integer" : "a number") + " from " + spec.low +
                          " to " + spec.high);
    }
    if (!spec.per_call) resolved[spec.name] = value;
  }
  return resolved;
}

bool same_json(const JsonValue& a, const JsonValue& b) {
  if (a.type != b.type) return false;
  if (a.type == JsonType::Number) return std::strtod(a.json.c_str(), nullptr) == std::strtod(b.json.c_str(), nullptr);
  return a.json == b.json;
}

std::int64_t int_of(const JsonObject& settings, const std::string& key) {
  return std::strtoll(settings.at(key).json.c_str(), nullptr, 10);
}

}  // namespace

const std::vector<OptionSpec>& option_specs() { return kSpecs; }

const char* kind_name(OptionKind kind) {
  switch (kind) {
    case OptionKind::Int: return "int";
    case OptionKind::Number: return "number";
    case OptionKind::Text: return "text";
  }
  return "text";
}

JsonValue JsonValue::string(const std::string& s) { return {JsonType::String, json_string(s), s}; }

void require_object(JsonType type, const std::string& json) {
  if (type != JsonType::Object) throw OptionError("learn options must be a JSON object, not " + json);
}

double number_of(const JsonObject& settings, const std::string& key) {
  return std::strtod(settings.at(key).json.c_str(), nullptr);
}

JsonObject new_run_settings(const JsonObject& given, const SettingsContext& context) {
  JsonObject resolved = checked_options(given);
  for (const auto& spec : kSpecs)
    if (!spec.per_call && spec.default_json && !resolved.count(spec.name))
      resolved[spec.name] = default_value(spec.default_json);
  // Defaults that follow other options.
  if (!resolved.count("cheap_simulations"))
    resolved["cheap_simulations"] =
        JsonValue::number(std::to_string(std::max<std::int64_t>(1, int_of(resolved, "simulations") / 4)));
  if (!resolved.count("arena_simulations")) resolved["arena_simulations"] = resolved.at("simulations");
  if (!resolved.count("pretrain_mix"))
    resolved["pretrain_mix"] = JsonValue::number(resolved.count("pretrain_data") ? "0.5" : "0");
  // Fine-tuning a given network: a smaller step and a firmer hold on its policy, chosen on
  // validation games (bench/RESULTS.md, "learn"): at the learning rate of a new network
  // the first 100 steps cost it two points of top-1 on games it never saw.
  const bool from_network = given.count("network") > 0;
  if (!resolved.count("lr")) resolved["lr"] = JsonValue::number(from_network ? "0.0003" : "0.001");
  if (!resolved.count("kl_weight")) resolved["kl_weight"] = JsonValue::number(from_network ? "1.0" : "0");
  if (!resolved.count("seed")) resolved["seed"] = JsonValue::number(std::to_string(context.random_seed()));

  if (number_of(resolved, "pretrain_mix") > 0 && !resolved.count("pretrain_data"))
    throw OptionError("learn option \"pretrain_mix\": " + resolved.at("pretrain_mix").json +
                      " needs \"pretrain_data\", a query of pretraining rows");
  for (const char* games : {"arena_games", "veto_games", "sanity_games"})
    if (int_of(resolved, games) % 2 != 0)
      throw OptionError(
          "learn options \"arena_games\", \"veto_games\" and \"sanity_games\" must be even (games are played in "
          "pairs, colours swapped)");
  if (resolved.count("promotion_elo1") && number_of(resolved, "promotion_elo1") <= number_of(resolved, "promotion_elo0"))
    throw OptionError("learn option \"promotion_elo1\" (" + resolved.at("promotion_elo1").json +
                      ") must be above \"promotion_elo0\" (" + resolved.at("promotion_elo0").json + ")");
  if (resolved.count("veto_threshold") && resolved.count("promotion_threshold") &&
      number_of(resolved, "veto_threshold") >= number_of(resolved, "promotion_threshold"))
    throw OptionError("learn option \"veto_threshold\" (" + resolved.at("veto_threshold").json +
                      ") must be below \"promotion_threshold\" (" + resolved.at("promotion_threshold").json + ")");
  if (resolved.at("openings").text == "eco" && !context.have_eco_openings())
    throw OptionError("learn option \"openings\": \"eco\" needs the ECO lines in pgmate.openings",
                      "Load them with pgmate import --openings, or give \"openings\": \"startpos\".");
  return resolved;
}

void check_call_against_stored(const JsonObject& given, const JsonObject& stored, const SettingsContext& context) {
  const JsonObject resolved = checked_options(given);
  try {
    (void)new_run_settings(stored, context);
  } catch (const OptionError& e) {
    throw OptionError(std::string("the learning run's stored settings are not valid: ") + e.what());
  }
  for (const auto& spec : kSpecs)
    if (spec.per_call && stored.count(spec.name))
      throw OptionError("the learning run's stored settings are not valid: they hold a per-call option");
  for (const auto& key : jsonb_key_order(resolved)) {
    const auto it = stored.find(key);
    if (it == stored.end() || !same_json(it->second, resolved.at(key)))
      throw OptionError("learn option \"" + key + "\": the run has " + (it == stored.end() ? "null" : it->second.json) +
                            ", not " + resolved.at(key).json,
                        "A run's settings stay as it began; start another run to change them.");
  }
}

// The GPU check measured 6.5-7.1k samples/s at a batch of 256 and 15.9k at 1,024 for the
// seed network: 128 leaves most of a GPU idle. The rate grows by the square-root rule for
// Adam with a larger batch.
JsonObject device_defaults(JsonObject settings, const JsonObject& given, const std::string& device) {
  if (given.count("batch") || device.rfind("cuda", 0) != 0) return settings;
  settings["batch"] = JsonValue::number("1024");
  if (!given.count("lr")) settings["lr"] = JsonValue::number(round_decimal(number_of(settings, "lr") * std::sqrt(8.0), 6));
  return settings;
}

std::string object_json(const JsonObject& object) {
  std::string out = "{";
  for (const auto& [key, value] : object) {
    if (out.size() > 1) out += ", ";
    append_json_string(out, key);
    out += ": " + value.json;
  }
  return out + "}";
}

std::string round_decimal(double x, int places) {
  if (!std::isfinite(x)) return x != x ? "NaN" : x > 0 ? "Infinity" : "-Infinity";
  // 15 significant digits, as float8 becomes numeric
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.14e", x);
  return round_decimal_literal(buf, places);
}

std::string round_decimal_literal(const std::string& literal, int places) {
  // [-]digits[.digits][e[+-]digits] as digits and the place of the decimal point in them
  std::size_t i = 0;
  const bool negative = !literal.empty() && literal[0] == '-';
  if (negative || (!literal.empty() && literal[0] == '+')) ++i;
  std::string digits;
  int point = -1;
  for (; i < literal.size() && literal[i] != 'e' && literal[i] != 'E'; ++i) {
    if (literal[i] == '.') {
      point = int(digits.size());
    } else if (literal[i] >= '0' && literal[i] <= '9') {
      digits += literal[i];
    } else {
      return literal;  // not a decimal number: as it is
    }
  }
  if (digits.empty()) return literal;
  if (point < 0) point = int(digits.size());
  if (i < literal.size()) point += std::atoi(literal.c_str() + i + 1);
  if (point <= 0) {
    digits = std::string(std::size_t(1 - point), '0') + digits;
    point = 1;
  }
  const std::size_t keep = std::size_t(point + places);
  if (digits.size() < keep + 1) digits.append(keep + 1 - digits.size(), '0');
  const bool up = digits[keep] >= '5';  // half away from zero
  digits.resize(keep);
  if (up) {
    int d = int(keep) - 1;
    for (; d >= 0 && digits[std::size_t(d)] == '9'; --d) digits[std::size_t(d)] = '0';
    if (d >= 0) {
      ++digits[std::size_t(d)];
    } else {
      digits = "1" + digits;
      ++point;
    }
  }
  std::string whole = digits.substr(0, std::size_t(point));
  whole.erase(0, std::min(whole.find_first_not_of('0'), whole.size() - 1));
  std::string out = whole;
  if (places > 0) {
    out += '.';
    out.append(digits, std::size_t(point), std::string::npos);
  }
  if (negative && digits.find_first_not_of('0') != std::string::npos) out = "-" + out;
  return out;
}

}  // namespace pgmate::learning
