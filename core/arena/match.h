// A match between two players: games in pairs (each opening twice, colours swapped), many
// games at once, the network leaves of every game in progress evaluated in one batch per
// evaluator (as self-play does). Single-threaded; UCI engines think in their own processes
// meanwhile.
//
// Game i belongs to pair i / 2 and plays opening (i / 2) of the list; A has White in even
// games. A game ends by the rules (checkmate, stalemate, fifty moves, threefold repetition,
// insufficient material), at max_plies (a draw, "max_plies"), by resignation (when enabled:
// a search player whose root value stays at or below -resign_value for resign_plies of its
// moves), or by forfeit: a UCI engine that dies, hangs past its deadline or sends an
// illegal move loses the game ("forfeit: ..."), and is replaced by a fresh process for the
// next game (a hung one could still answer the old position).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "arena/player_spec.h"
#include "chess/board.h"
#include "mcts/evaluator.h"

namespace pgmate::arena {

struct Opening {
  std::string name;                 // e.g. "B90 Sicilian: Najdorf", "startpos", an EPD id
  chess::Board start;
  std::vector<chess::Move> moves;   // played from start before the players take over
};

struct MatchConfig {
  int parallel = 8;                 // games in progress at once
  int max_plies = 512;              // counted from the opening's start, opening moves included
  std::uint64_t seed = 0;           // game i's players draw from mix64(seed, i)
  float resign_value = 0;           // 0: never resign
  int resign_plies = 4;
  // Deadline of a UCI move beyond its limits; 0: UciEngine::move_deadline.
  std::chrono::milliseconds uci_move_deadline{0};
  std::chrono::milliseconds uci_start_timeout{10000};  // the handshake of a starting engine
  // The caller's cancellation check, called at least every 100 ms while a UCI engine is
  // waited on (starting, reading, writing); it stops the match by throwing.
  std::function<void()> interrupt_check;
};

struct MatchGame {
  std::int64_t index = 0;
  std::int64_t pair = 0;
  bool a_white = true;
  std::string opening;              // the opening's name
  chess::Board start;               // the opening's start
  std::vector<chess::Move> moves;   // every move from start, the opening's first
  int opening_plies = 0;
  std::string result;               // "1-0", "0-1", "1/2-1/2"
  std::string termination;          // chess::status_name(), "max_plies", "resignation", "forfeit: ..."
  double seconds = 0;
  // A's score in this game: 1, 0.5 or 0.
  double a_score() const {
    if (result == "1/2-1/2") return 0.5;
    return (result == "1-0") == a_white ? 1.0 : 0.0;
  }
};

struct MatchStats {
  std::int64_t games_done = 0;
  std::int64_t a_wins = 0, draws = 0, a_losses = 0;
  std::int64_t plies = 0;
  std::int64_t evaluations = 0, batches = 0;  // positions sent to evaluators, evaluator calls
  double seconds = 0;
  double mean_batch() const { return batches ? double(evaluations) / double(batches) : 0; }
};

// The evaluator of a net player (the worker client, made by the caller: core knows no
// worker). Called once per net player when the match starts.
using EvaluatorFor = std::function<mcts::Evaluator&(const PlayerSpec&)>;

class MatchRunner {
 public:
  // `openings` must not be empty. Throws std::invalid_argument for a net player when
  // evaluator_for is empty, and UciError when a UCI engine cannot be started: each UCI
  // side's first engine starts here, so a match that cannot be played fails before
  // anything of it is stored.
  MatchRunner(MatchConfig config, PlayerSpec a, PlayerSpec b, std::vector<Opening> openings,
              EvaluatorFor evaluator_for = {});
  ~MatchRunner();

  // Plays the games with these indexes (any order; a resumed match passes those it lacks).
  // on_game receives each finished game; on_round runs after every round (progress,
  // cancellation). Either may throw to stop the match: unfinished games are dropped.
  void run(const std::vector<std::int64_t>& indexes, const std::function<void(MatchGame&)>& on_game,
           const std::function<void(const MatchStats&)>& on_round = {});
  const MatchStats& stats() const { return stats_; }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  MatchStats stats_;
};

}  // namespace pgmate::arena
