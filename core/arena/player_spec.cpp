#include "arena/player_spec.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <unordered_set>
#include <stdexcept>

#include "common/flat_json.h"
#include "common/json.h"
#include "common/text.h"
#include "mcts/selfplay.h"

namespace pgmate::arena {
namespace {

constexpr const char* kSearchKeys[] = {"simulations",     "c_puct",           "fpu_reduction", "fpu_reduction_root",
                                       "noise",           "dirichlet_alpha",  "dirichlet_weight", "temperature",
                                       "temperature_plies", "search",         "gumbel_considered", "c_visit",
                                       "c_scale",         "q_normalise"};

[[noreturn]] void fail(const std::string& problem) { throw std::invalid_argument("player spec: " + problem); }

std::int64_t whole_number(const std::string& key, const std::string& value, std::int64_t lo, std::int64_t hi) {
  std::int64_t v = 0;
  const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
  if (value.empty() || ec != std::errc() || end != value.data() + value.size() || v < lo || v > hi)
    fail(key + " must be a whole number from " + std::to_string(lo) + " to " + std::to_string(hi) + ", not " +
         quote_input(value, 40));
  return v;
}

bool is_search_key(std::string_view key) {
  for (const char* k : kSearchKeys)
    if (key == k) return true;
  return false;
}

// The shortest text that reads back as the same float (0.1, not 0.100000001).
std::string number_text(float v) {
  char buf[32];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  return ec == std::errc() ? std::string(buf, end) : std::to_string(v);
}

// "k=v,k=v" -> fields (values may hold blanks: "Skill Level=0").
void append_pairs(std::string_view text, std::vector<std::pair<std::string, std::string>>& out) {
  while (!text.empty()) {
    const std::size_t comma = text.find(',');
    const std::string_view item = text.substr(0, comma);
    const std::size_t eq = item.find('=');
    if (eq == std::string_view::npos || eq == 0) fail("expected KEY=VALUE, not " + quote_input(item, 60));
    out.emplace_back(std::string(item.substr(0, eq)), std::string(item.substr(eq + 1)));
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
  }
}

}  // namespace

std::vector<std::string> command_words(const std::string& command) {
  std::vector<std::string> words;
  std::string word;
  for (char c : command) {
    if (c == ' ' || c == '\t') {
      if (!word.empty()) words.push_back(std::move(word));
      word.clear();
    } else {
      word += c;
    }
  }
  if (!word.empty()) words.push_back(std::move(word));
  return words;
}

PlayerSpec player_spec_from_fields(const std::vector<std::pair<std::string, std::string>>& fields) {
  // A key given twice is refused, never "the last one wins": a spec built by appending
  // text to a prefix (net:ID:S followed by KEY=VALUE pairs) must not be able to change
  // what the prefix says, least of all the player's type.
  std::unordered_set<std::string_view> seen;
  for (const auto& field : fields)
    if (!seen.insert(field.first).second) fail("key " + quote_input(field.first, 40) + " is given twice");
  std::string type;
  for (const auto& [k, v] : fields)
    if (k == "type") type = v;
  PlayerSpec spec;
  if (type == "random") spec.type = PlayerType::kRandom;
  else if (type == "mcts") spec.type = PlayerType::kMcts;
  else if (type == "net") spec.type = PlayerType::kNetwork;
  else if (type == "uci") spec.type = PlayerType::kUci;
  else fail(type.empty() ? "\"type\" is missing (random, mcts, net or uci)"
                         : "unknown type " + quote_input(type, 40) + " (random, mcts, net or uci)");

  // Search settings through mcts::set_option, so they are spelled and checked as
  // self-play's are; matches default to no noise and the most visited move.
  mcts::SelfPlayConfig search;
  search.search.root_noise = false;
  search.search.fpu_reduction_root = search.search.fpu_reduction;
  search.temperature = 0;
  search.temperature_plies = 0;
  bool have_simulations = false, have_limit = false;
  for (const auto& [key, value] : fields) {
    if (key == "type") continue;
    if (spec.type == PlayerType::kUci) {
      if (key == "command") {
        spec.command = value;
        if (command_words(value).empty()) fail("\"command\" is empty");
      } else if (key == "nodes") {
        spec.limits.nodes = whole_number(key, value, 1, std::int64_t(1) << 40);
        have_limit = true;
      } else if (key == "movetime") {
        spec.limits.movetime_ms = whole_number(key, value, 1, 3600000);
        have_limit = true;
      } else if (key == "depth") {
        spec.limits.depth = int(whole_number(key, value, 1, 200));
        have_limit = true;
      } else {
        for (const auto& [k, v] : spec.uci_options)
          if (k == key) fail("UCI option " + quote_input(key, 40) + " is given twice");
        if (key.empty() || key.find_first_of("\n\r") != std::string::npos || value.find_first_of("\n\r") != std::string::npos)
          fail("bad UCI option " + quote_input(key, 40));
        spec.uci_options.emplace_back(key, value);
      }
      continue;
    }
    if (spec.type == PlayerType::kNetwork && key == "network") {
      spec.network = whole_number(key, value, 1, INT64_MAX);
      continue;
    }
    if (spec.type == PlayerType::kRandom || !is_search_key(key))
      fail("unknown key " + quote_input(key, 40) + " for a " + type + " player" +
           (spec.type == PlayerType::kRandom ? "" : " (known: network, simulations, c_puct, fpu_reduction, "
                                                    "fpu_reduction_root, noise, dirichlet_alpha, dirichlet_weight, "
                                                    "temperature, temperature_plies, search, gumbel_considered, "
                                                    "c_visit, c_scale, q_normalise)"));
    try {
      mcts::set_option(search, key, value);
    } catch (const std::invalid_argument& e) {
      fail(e.what());
    }
    if (key == "simulations") have_simulations = true;
  }
  if (spec.type == PlayerType::kUci) {
    if (spec.command.empty()) fail("a uci player needs \"command\"");
    if (!have_limit) spec.limits.movetime_ms = 100;
  }
  if (spec.type == PlayerType::kNetwork && spec.network == 0) fail("a net player needs \"network\" (an id of pgmate.networks)");
  if ((spec.type == PlayerType::kMcts || spec.type == PlayerType::kNetwork) && !have_simulations)
    fail("a " + type + " player needs \"simulations\"");
  spec.search = search.search;
  spec.temperature = search.temperature;
  spec.temperature_plies = search.temperature_plies;
  return spec;
}

PlayerSpec parse_player_spec(std::string_view text) {
  try {
    std::vector<std::pair<std::string, std::string>> fields;
    std::size_t first = text.find_first_not_of(" \t\n");
    if (first != std::string_view::npos && text[first] == '{') {
      for (auto& f : parse_flat_json(text, "player spec")) fields.emplace_back(std::move(f.key), std::move(f.value));
      return player_spec_from_fields(fields);
    }
    const std::size_t colon = text.find(':');
    const std::string_view type = text.substr(0, colon);
    std::string_view rest = colon == std::string_view::npos ? std::string_view() : text.substr(colon + 1);
    // The next ':'-separated part, as a field when there is one (else the field is
    // missing, and named as such).
    const auto next_part = [&rest, &fields](const char* key) {
      const std::size_t c = rest.find(':');
      const std::string_view part = rest.substr(0, c);
      rest = c == std::string_view::npos ? std::string_view() : rest.substr(c + 1);
      if (!part.empty()) fields.emplace_back(key, std::string(part));
    };
    fields.emplace_back("type", std::string(type));
    if (type == "random") {
      if (colon != std::string_view::npos) fail("random takes no settings");
    } else if (type == "mcts") {
      next_part("simulations");
    } else if (type == "net") {
      next_part("network");
      next_part("simulations");
    } else if (type == "uci") {
      next_part("command");
    } else {
      fail("unknown player " + quote_input(text, 60) + " (random, mcts:S, net:ID:S, uci:COMMAND or a JSON object)");
    }
    append_pairs(rest, fields);
    return player_spec_from_fields(fields);
  } catch (const std::invalid_argument& e) {
    const std::string what = e.what();
    // Name the spec the message is about, once.
    throw std::invalid_argument("player spec " + quote_input(text, 80) + what.substr(std::string("player spec").size()));
  }
}

std::string to_json(const PlayerSpec& s) {
  std::string out = "{\"type\": ";
  const auto field = [&out](std::string_view key, const std::string& json_value) {
    out += ", ";
    append_json_string(out, key);
    out += ": " + json_value;
  };
  switch (s.type) {
    case PlayerType::kRandom: out += "\"random\""; break;
    case PlayerType::kMcts: out += "\"mcts\""; break;
    case PlayerType::kNetwork: out += "\"net\""; break;
    case PlayerType::kUci: out += "\"uci\""; break;
  }
  if (s.type == PlayerType::kNetwork) field("network", std::to_string(s.network));
  if (s.type == PlayerType::kMcts || s.type == PlayerType::kNetwork) {
    field("simulations", std::to_string(s.search.simulations));
    field("c_puct", number_text(s.search.c_puct));
    field("fpu_reduction", number_text(s.search.fpu_reduction));
    field("fpu_reduction_root", number_text(s.search.fpu_reduction_root));
    field("noise", s.search.root_noise ? "true" : "false");
    if (s.search.root_noise) {
      field("dirichlet_alpha", number_text(s.search.dirichlet_alpha));
      field("dirichlet_weight", number_text(s.search.dirichlet_weight));
    }
    field("temperature", number_text(s.temperature));
    field("temperature_plies", std::to_string(s.temperature_plies));
    // Only for Gumbel players: the specs of PUCT players stored before it read the same.
    if (s.search.root_search == mcts::RootSearch::kGumbel) {
      field("search", "\"gumbel\"");
      field("gumbel_considered", std::to_string(s.search.gumbel_considered));
      field("c_visit", number_text(s.search.gumbel_c_visit));
      field("c_scale", number_text(s.search.gumbel_c_scale));
      field("q_normalise", std::string("\"") + mcts::q_normalise_name(s.search.gumbel_q_normalise) + "\"");
    }
  }
  if (s.type == PlayerType::kUci) {
    field("command", json_string(s.command));
    if (s.limits.nodes) field("nodes", std::to_string(s.limits.nodes));
    if (s.limits.movetime_ms) field("movetime", std::to_string(s.limits.movetime_ms));
    if (s.limits.depth) field("depth", std::to_string(s.limits.depth));
    for (const auto& [k, v] : s.uci_options) field(k, json_string(v));
  }
  return out + "}";
}

std::string display_name(const PlayerSpec& s) {
  std::string name;
  std::vector<std::string> extras;
  const PlayerSpec defaults = s.type == PlayerType::kMcts || s.type == PlayerType::kNetwork
                                  ? player_spec_from_fields({{"type", "mcts"}, {"simulations", "1"}})
                                  : PlayerSpec{};
  const auto differs = [&](const char* key, float v, float d) {
    if (v != d) extras.push_back(std::string(key) + "=" + number_text(v));
  };
  switch (s.type) {
    case PlayerType::kRandom: return "random";
    case PlayerType::kMcts: name = "mcts:" + std::to_string(s.search.simulations); break;
    case PlayerType::kNetwork: name = "net:" + std::to_string(s.network) + ":" + std::to_string(s.search.simulations); break;
    case PlayerType::kUci: {
      const auto words = command_words(s.command);
      std::string program = words.empty() ? s.command : words[0];
      if (const auto slash = program.rfind('/'); slash != std::string::npos) program = program.substr(slash + 1);
      for (std::size_t i = 1; i < words.size(); ++i) program += " " + words[i];
      name = "uci:" + program;
      if (s.limits.nodes) extras.push_back("nodes=" + std::to_string(s.limits.nodes));
      if (s.limits.movetime_ms) extras.push_back("movetime=" + std::to_string(s.limits.movetime_ms));
      if (s.limits.depth) extras.push_back("depth=" + std::to_string(s.limits.depth));
      for (const auto& [k, v] : s.uci_options) extras.push_back(k + "=" + v);
      break;
    }
  }
  if (s.type != PlayerType::kUci) {
    differs("c_puct", s.search.c_puct, defaults.search.c_puct);
    differs("fpu_reduction", s.search.fpu_reduction, defaults.search.fpu_reduction);
    if (s.search.root_noise) extras.push_back("noise=true");
    differs("temperature", s.temperature, 0);
    if (s.temperature_plies) extras.push_back("temperature_plies=" + std::to_string(s.temperature_plies));
    if (s.search.root_search == mcts::RootSearch::kGumbel) {
      extras.push_back("search=gumbel");
      if (s.search.gumbel_considered != defaults.search.gumbel_considered)
        extras.push_back("gumbel_considered=" + std::to_string(s.search.gumbel_considered));
      differs("c_visit", s.search.gumbel_c_visit, defaults.search.gumbel_c_visit);
      if (s.search.gumbel_q_normalise != defaults.search.gumbel_q_normalise)
        extras.push_back(std::string("q_normalise=") + mcts::q_normalise_name(s.search.gumbel_q_normalise));
      differs("c_scale", s.search.gumbel_c_scale, mcts::default_c_scale(s.search.gumbel_q_normalise));
    }
  }
  for (std::size_t i = 0; i < extras.size(); ++i) name += (i ? "," : ":") + extras[i];
  return name;
}

}  // namespace pgmate::arena
