#include "chess/lichess_format.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>

#include "chess/fen.h"
#include "chess/game.h"
#include "chess/pgn.h"
#include "common/random.h"

namespace pgmate::chess {

namespace {

struct TimeControl {
  const char* text;  // as the TimeControl tag
  int base, increment;
  const char* event;  // lichess's Event for a rated game of that speed
  int weight;         // how often, in thousandths (lichess's mix of a month, roughly)
};
constexpr std::array<TimeControl, 10> kTimeControls = {{
    {"15+0", 15, 0, "Rated UltraBullet game", 10},
    {"60+0", 60, 0, "Rated Bullet game", 200},
    {"120+1", 120, 1, "Rated Bullet game", 90},
    {"180+0", 180, 0, "Rated Blitz game", 220},
    {"180+2", 180, 2, "Rated Blitz game", 150},
    {"300+0", 300, 0, "Rated Blitz game", 120},
    {"300+3", 300, 3, "Rated Blitz game", 60},
    {"600+0", 600, 0, "Rated Rapid game", 100},
    {"900+10", 900, 10, "Rated Rapid game", 35},
    {"1800+0", 1800, 0, "Rated Classical game", 15},
}};

// h:mm:ss, as lichess writes [%clk].
std::string clock_text(int seconds) {
  char out[32];
  std::snprintf(out, sizeof out, "%d:%02d:%02d", seconds / 3600, seconds / 60 % 60, seconds % 60);
  return out;
}

// A lichess-like username from a "Surname, Given" name.
std::string username(const std::string& name) {
  std::string out;
  for (char c : name)
    if (c != ' ' && c != ',' && c != '.' && c != '\'') out += c;
  return out;
}

}  // namespace

std::string lichess_pgn(const GeneratedGame& game, std::uint64_t seed, std::uint64_t index) {
  mcts::Rng rng(mcts::mix64(seed * 0x9E3779B97F4A7C15ull + index + 0x6C69636865737300ull));
  int pick = int(rng.below(1000));
  const TimeControl* tc = &kTimeControls.back();
  for (const TimeControl& t : kTimeControls)
    if ((pick -= t.weight) < 0) {
      tc = &t;
      break;
    }
  auto tag = [&](const char* name) -> std::string {
    for (const auto& [k, v] : game.tags)
      if (k == name) return v;
    return "";
  };
  static constexpr char kIdChars[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
  std::string id;
  for (int i = 0; i < 8; ++i) id += kIdChars[rng.below(62)];
  const std::string date = tag("Date");
  char utc_time[16];
  std::snprintf(utc_time, sizeof utc_time, "%02d:%02d:%02d", int(rng.below(24)), int(rng.below(60)), int(rng.below(60)));
  const int white_diff = game.result == "1-0" ? 4 + int(rng.below(8)) : game.result == "0-1" ? -(4 + int(rng.below(8))) : int(rng.below(5)) - 2;
  const auto signed_text = [](int v) { return (v > 0 ? "+" : "") + std::to_string(v); };
  // A game cut at its target length ends on time, as most unfinished online games do.
  const bool on_time = game.status == GameStatus::kOngoing;
  PgnTags tags = {{"Event", tc->event},
                  {"Site", "https://lichess.org/" + id},
                  {"Date", date},
                  {"Round", "-"},
                  {"White", username(tag("White"))},
                  {"Black", username(tag("Black"))},
                  {"Result", game.result},
                  {"UTCDate", date},
                  {"UTCTime", utc_time},
                  {"WhiteElo", tag("WhiteElo")},
                  {"BlackElo", tag("BlackElo")},
                  {"WhiteRatingDiff", signed_text(white_diff)},
                  {"BlackRatingDiff", signed_text(-white_diff)},
                  {"TimeControl", tc->text},
                  {"Termination", on_time ? "Time forfeit" : "Normal"}};

  // Clocks: each move takes a share of what is left (more in the middlegame), then the
  // increment; an evaluation walks from the opening's small edge, sometimes by a blunder.
  const bool analysed = rng.below(16) == 0;
  PgnMoveNotes notes;
  notes.comments.resize(game.moves.size());
  std::array<double, 2> left = {double(tc->base), double(tc->base)};
  double cp = 20;
  const Board start = parse_fen(kStartFen);
  for (std::size_t i = 0; i < game.moves.size(); ++i) {
    const int side = int(i % 2);
    const double share = i < 16 ? 0.01 : i < 60 ? 0.035 : 0.05;
    left[side] = std::max(0.0, left[side] - left[side] * share * (0.3 + 1.4 * rng.uniform())) + tc->increment;
    std::string comment;
    if (analysed) {
      cp += rng.normal() * 25 + (rng.below(40) == 0 ? (rng.below(2) ? 300 : -300) : 0);
      cp = std::clamp(cp, -2500.0, 2500.0);
      char eval[32];
      if (std::abs(cp) > 2000) std::snprintf(eval, sizeof eval, "#%d", cp > 0 ? 1 + int(rng.below(9)) : -1 - int(rng.below(9)));
      else std::snprintf(eval, sizeof eval, "%.2f", cp / 100);
      comment = std::string("[%eval ") + eval + "] ";
    }
    comment += "[%clk " + clock_text(int(left[side])) + "]";
    notes.comments[i] = comment;
  }
  return to_pgn(tags, start, game.moves, game.result, notes);
}

}  // namespace pgmate::chess
