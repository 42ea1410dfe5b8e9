// A match's settings, as the CLI's flags and CALL pgmate.arena's options jsonb spell them
// (one parser for both), and what a stored match keeps of them (pgmate.matches.options):
//
//   games, parallel, max_plies, seed, openings (startpos | eco | a file path),
//   resign_value (0: off), resign_plies, sprt_elo0, sprt_elo1, sprt_alpha, sprt_beta
//   (SPRT on when sprt_elo1 > sprt_elo0), name
//
// Also what both callers do with the games as they finish: count pairs and decide the SPRT.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "arena/match.h"
#include "arena/stats.h"

namespace pgmate::arena {

struct MatchOptions {
  std::string name;                 // "" : the caller makes one
  int games = 0;
  int parallel = 8;
  int max_plies = 512;
  std::uint64_t seed = 0;
  bool seeded = false;              // seed given (else the caller draws one)
  std::string openings = "startpos";
  float resign_value = 0;
  int resign_plies = 4;
  std::optional<SprtParameters> sprt;
  std::vector<std::string> given;   // option names set so far (each once)
};

// Throws std::invalid_argument "option NAME: ..." naming the option and the value.
void set_match_option(MatchOptions& options, std::string_view name, std::string_view value);
// The seed of a named match that was given none, the same on every machine, so the same
// command (or CALL) replays and resumes it: 48 bits of a hash of the name.
std::uint64_t seed_of_name(std::string_view name);
// The name of a match that was given none.
std::string default_match_name(const PlayerSpec& a, const PlayerSpec& b, std::uint64_t seed);
// "elo0,elo1[,alpha,beta]" (the CLI's --sprt).
void set_sprt(MatchOptions& options, std::string_view text);
// What a match stores and a resumed match must match: every setting but name and games.
std::string match_options_json(const MatchOptions& options);
MatchConfig match_config(const MatchOptions& options);

// Results so far, pairs included: a pair counts once both its games are in.
class MatchTally {
 public:
  void add(std::int64_t index, double a_score);
  TrinomialCounts trinomial() const { return trinomial_; }
  PentanomialCounts pentanomial() const { return pentanomial_; }
  std::int64_t games() const { return trinomial_.wins + trinomial_.draws + trinomial_.losses; }
  // "W/D/L 12/5/3, score 0.725, Elo +169 [+84, +311]" from A's side.
  std::string line() const;

 private:
  TrinomialCounts trinomial_;
  PentanomialCounts pentanomial_;
  std::map<std::int64_t, double> open_pairs_;  // pair -> A's score in the game already in
};

// The game's row data shared by every writer: games.arena jsonb and the PGN tags.
std::string game_arena_json(const MatchGame& game, std::string_view match_name);
std::vector<std::pair<std::string, std::string>> game_tags(const MatchGame& game, std::string_view match_name,
                                                           const PlayerSpec& a, const PlayerSpec& b);

}  // namespace pgmate::arena
