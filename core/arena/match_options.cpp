#include "arena/match_options.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <stdexcept>

#include "common/json.h"
#include "common/text.h"
#include "common/random.h"

namespace pgmate::arena {
namespace {

[[noreturn]] void fail(std::string_view name, std::string_view value, const std::string& expected) {
  throw std::invalid_argument("option " + std::string(name) + ": " + quote_input(value, 60) + " is not " + expected);
}

template <class T>
T number(std::string_view name, std::string_view value, T lo, T hi, const char* expected) {
  T v{};
  const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
  if (value.empty() || ec != std::errc() || end != value.data() + value.size() || !(v >= lo && v <= hi))
    fail(name, value, expected);
  return v;
}

std::string fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

std::string signed_elo(double elo) {
  if (std::isinf(elo)) return elo > 0 ? "+inf" : "-inf";
  elo = std::round(elo);
  if (elo == 0) return "0";  // not "+-0" from a negative zero
  std::string text = elo > 0 ? "+" : "";
  return text.append(fixed(elo, 0));  // appended: GCC 12 warns falsely (-Wrestrict) on "x" + std::string
}

}  // namespace

void set_match_option(MatchOptions& o, std::string_view raw_name, std::string_view value) {
  std::string name(raw_name);
  for (char& c : name)
    if (c == '-') c = '_';
  if (std::find(o.given.begin(), o.given.end(), name) != o.given.end())
    throw std::invalid_argument("option " + name + " is given twice");
  SprtParameters sprt = o.sprt.value_or(SprtParameters{0, 0, 0.05, 0.05});
  if (name == "name") {
    if (value.empty() || value.size() > 200) fail(name, value, "a name of 1 to 200 characters");
    o.name = std::string(value);
  } else if (name == "games") {
    o.games = number<int>(name, value, 1, 1000000, "a whole number from 1 to 1000000");
  } else if (name == "parallel") {
    o.parallel = number<int>(name, value, 1, 4096, "a whole number from 1 to 4096");
  } else if (name == "max_plies") {
    o.max_plies = number<int>(name, value, 1, 10000, "a whole number from 1 to 10000");
  } else if (name == "seed") {
    o.seed = number<std::uint64_t>(name, value, 0, ~std::uint64_t(0), "an unsigned 64-bit integer");
    o.seeded = true;
  } else if (name == "openings") {
    if (value.empty()) fail(name, value, "startpos, eco or a file");
    o.openings = std::string(value);
  } else if (name == "resign_value") {
    o.resign_value = number<float>(name, value, 0.0f, 1.0f, "a number from 0 (off) to 1");
  } else if (name == "resign_plies") {
    o.resign_plies = number<int>(name, value, 1, 100, "a whole number from 1 to 100");
  } else if (name == "sprt_elo0") {
    sprt.elo0 = number<double>(name, value, -1000.0, 1000.0, "an Elo difference from -1000 to 1000");
  } else if (name == "sprt_elo1") {
    sprt.elo1 = number<double>(name, value, -1000.0, 1000.0, "an Elo difference from -1000 to 1000");
  } else if (name == "sprt_alpha") {
    sprt.alpha = number<double>(name, value, 1e-6, 0.5, "a probability from 0.000001 to 0.5");
  } else if (name == "sprt_beta") {
    sprt.beta = number<double>(name, value, 1e-6, 0.5, "a probability from 0.000001 to 0.5");
  } else {
    throw std::invalid_argument("unknown option " + quote_input(raw_name, 40) +
                                " (known: name, games, parallel, max_plies, seed, openings, resign_value, "
                                "resign_plies, sprt_elo0, sprt_elo1, sprt_alpha, sprt_beta)");
  }
  if (name.rfind("sprt_", 0) == 0) o.sprt = sprt;
  o.given.push_back(std::move(name));
}

std::uint64_t seed_of_name(std::string_view name) {
  std::uint64_t h = 0xcbf29ce484222325ULL;  // FNV-1a
  for (const char c : name) h = (h ^ static_cast<unsigned char>(c)) * 0x100000001b3ULL;
  return mcts::mix64(h) >> 16;
}

std::string default_match_name(const PlayerSpec& a, const PlayerSpec& b, std::uint64_t seed) {
  return display_name(a) + " vs " + display_name(b) + " seed " + std::to_string(seed);
}

void set_sprt(MatchOptions& o, std::string_view text) {
  const char* names[] = {"sprt_elo0", "sprt_elo1", "sprt_alpha", "sprt_beta"};
  int n = 0;
  while (!text.empty()) {
    if (n == 4) throw std::invalid_argument("--sprt takes ELO0,ELO1[,ALPHA,BETA], not more");
    const std::size_t comma = text.find(',');
    set_match_option(o, names[n++], text.substr(0, comma));
    text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
  }
  if (n != 2 && n != 4) throw std::invalid_argument("--sprt takes ELO0,ELO1 or ELO0,ELO1,ALPHA,BETA");
}

std::string match_options_json(const MatchOptions& o) {
  std::string out = "{\"parallel\": " + std::to_string(o.parallel) + ", \"max_plies\": " + std::to_string(o.max_plies) +
                    ", \"seed\": " + std::to_string(o.seed) + ", \"openings\": " + json_string(o.openings) +
                    ", \"resign_value\": " + fixed(o.resign_value, 3) + ", \"resign_plies\": " +
                    std::to_string(o.resign_plies);
  if (o.sprt)
    out += ", \"sprt_elo0\": " + fixed(o.sprt->elo0, 2) + ", \"sprt_elo1\": " + fixed(o.sprt->elo1, 2) +
           ", \"sprt_alpha\": " + fixed(o.sprt->alpha, 4) + ", \"sprt_beta\": " + fixed(o.sprt->beta, 4);
  return out + "}";
}

MatchConfig match_config(const MatchOptions& o) {
  if (o.sprt && !(o.sprt->elo1 > o.sprt->elo0))
    throw std::invalid_argument("SPRT needs sprt_elo1 above sprt_elo0");
  MatchConfig c;
  c.parallel = o.parallel;
  c.max_plies = o.max_plies;
  c.seed = o.seed;
  c.resign_value = o.resign_value;
  c.resign_plies = o.resign_plies;
  return c;
}

void MatchTally::add(std::int64_t index, double a_score) {
  if (a_score == 1.0) ++trinomial_.wins;
  else if (a_score == 0.0) ++trinomial_.losses;
  else ++trinomial_.draws;
  const std::int64_t pair = index / 2;
  const auto open = open_pairs_.find(pair);
  if (open == open_pairs_.end()) {
    open_pairs_.emplace(pair, a_score);
    return;
  }
  const double points = open->second + a_score;
  open_pairs_.erase(open);
  if (points == 0) ++pentanomial_.ll;
  else if (points == 0.5) ++pentanomial_.ld;
  else if (points == 1) ++pentanomial_.dd_wl;
  else if (points == 1.5) ++pentanomial_.wd;
  else ++pentanomial_.ww;
}

std::string MatchTally::line() const {
  const MatchSummary s = summarize(trinomial_);
  return "W/D/L " + std::to_string(trinomial_.wins) + "/" + std::to_string(trinomial_.draws) + "/" +
         std::to_string(trinomial_.losses) + ", score " + fixed(s.score, 3) + ", Elo " + signed_elo(s.elo) + " [" +
         signed_elo(s.elo_lower) + ", " + signed_elo(s.elo_upper) + "]";
}

std::string game_arena_json(const MatchGame& g, std::string_view match_name) {
  return "{\"match\": " + json_string(match_name) + ", \"index\": " + std::to_string(g.index) +
         ", \"pair\": " + std::to_string(g.pair) + ", \"a_white\": " + (g.a_white ? "true" : "false") +
         ", \"opening\": " + json_string(g.opening) + ", \"opening_plies\": " + std::to_string(g.opening_plies) +
         ", \"seconds\": " + fixed(g.seconds, 3) + "}";
}

std::vector<std::pair<std::string, std::string>> game_tags(const MatchGame& g, std::string_view match_name,
                                                           const PlayerSpec& a, const PlayerSpec& b) {
  const PlayerSpec& white = g.a_white ? a : b;
  const PlayerSpec& black = g.a_white ? b : a;
  return {{"Event", "pgmate arena " + std::string(match_name)},
          {"Round", std::to_string(g.index + 1)},
          {"White", display_name(white)},
          {"Black", display_name(black)},
          {"Result", g.result},
          {"WhiteSpec", to_json(white)},
          {"BlackSpec", to_json(black)},
          {"Opening", g.opening},
          {"Termination", g.termination}};
}

}  // namespace pgmate::arena
