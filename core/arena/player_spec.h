// Who plays in an arena match, in one format for SQL (a flat JSON object) and the command
// line (the same JSON, or a shorthand):
//
//   random                              a uniformly random legal move
//   mcts:S[:KEY=VALUE,...]              pure MCTS (uniform priors, random playouts), S simulations a move
//   net:ID:S[:KEY=VALUE,...]            network ID of pgmate.networks, S simulations (net:ID:1: the
//                                       policy's top move, one evaluation)
//   uci:COMMAND[:KEY=VALUE,...]         an external UCI engine; nodes, movetime (ms) and depth are
//                                       limits (default movetime=100), other keys UCI options
//
//   {"type": "mcts", "simulations": 200, "c_puct": 2}
//   {"type": "net", "network": 3, "simulations": 100}
//   {"type": "uci", "command": "/usr/games/stockfish", "nodes": 1000, "Skill Level": 0}
//
// Search options of mcts and net players: c_puct, fpu_reduction, fpu_reduction_root, noise,
// dirichlet_alpha, dirichlet_weight, search (puct or gumbel: the Gumbel root of
// Danihelka et al., which plays the candidate sequential halving leaves), gumbel_considered,
// c_visit, c_scale (mcts::set_option's meanings), and the move choice:
// temperature for the first temperature_plies plies after the opening, then the most
// visited move. Defaults for matches: no noise, temperature 0. A spec is stored as
// to_json() gives it: every setting resolved, so two equal players have equal specs.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "mcts/search.h"

namespace pgmate::arena {

enum class PlayerType { kRandom, kMcts, kNetwork, kUci };

struct UciLimits {
  std::int64_t nodes = 0;        // 0: not set
  std::int64_t movetime_ms = 0;
  int depth = 0;
};

struct PlayerSpec {
  PlayerType type = PlayerType::kRandom;
  // mcts, net
  std::int64_t network = 0;
  mcts::SearchParams search{.simulations = 100, .root_noise = false};
  float temperature = 0;
  int temperature_plies = 0;
  // uci
  std::string command;
  UciLimits limits;
  std::vector<std::pair<std::string, std::string>> uci_options;  // in the order given
};

// Parses a shorthand or a JSON object; throws std::invalid_argument naming the part that
// is wrong ("player spec mcts:x: simulations must be ...").
PlayerSpec parse_player_spec(std::string_view text);
// The same from the fields of a JSON object (as PostgreSQL's jsonb_each_text gives them).
PlayerSpec player_spec_from_fields(const std::vector<std::pair<std::string, std::string>>& fields);

// Every setting, as a flat JSON object in a fixed order.
std::string to_json(const PlayerSpec& spec);
// Short display name for PGN tags and progress lines: random, mcts:200, net:3:100,
// uci:stockfish:nodes=1000 (search options that differ from the defaults appended).
std::string display_name(const PlayerSpec& spec);

// The command's words (the program, then its arguments), split at blanks: no shell.
std::vector<std::string> command_words(const std::string& command);

}  // namespace pgmate::arena
