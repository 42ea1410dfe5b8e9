// Positions evaluated by UCI engines, one process per job, all driven from one thread (as
// the arena drives its engines): each engine gets a position, the answers are read as they
// come, and a free engine takes the next position.
//
// An engine that dies, hangs past its deadline, floods, or answers what cannot be believed
// (an illegal best move, no score, a score out of range, two lines that begin with the same
// move) is stopped and replaced by a fresh process, and its position tried again on another
// start; a position that fails `attempts` times is given up and reported, never waited on
// for ever. The engines run with Threads=1 and a fixed hash, so J jobs use J cores and each
// evaluation costs what its limits say; positions are sent without ucinewgame, as an
// analysing GUI does, so an engine's hash may still hold what it searched before.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "analysis/evaluation.h"
#include "arena/player_spec.h"
#include "arena/uci_engine.h"

namespace pgmate::analysis {

struct AnalyserConfig {
  std::string command;                                          // the engine program and its arguments
  std::vector<std::pair<std::string, std::string>> uci_options;  // the spec's, after the analysis defaults
  arena::UciLimits limits;                                      // at least one of nodes, depth, movetime
  int multipv = 1;
  int jobs = 1;
  int hash_mb = 16;
  int attempts = 2;                                             // starts per position before it is given up
  std::chrono::milliseconds start_timeout{10000};
  std::chrono::milliseconds move_deadline{0};                   // 0: UciEngine::move_deadline(limits)
  // Positions given up one after another, none evaluated between, that end the run (an
  // engine that hangs or lies on every position costs this many, not every position); 0: never.
  int max_failures_in_a_row = 3;
  // Every position is searched from a fresh engine state (ucinewgame): an evaluation is
  // keyed by position, engine and limits, so it may not depend on what the engine searched
  // before. Warm leaves the state as the last search left it (the positions come in game
  // order): faster at low limits, and its limits say so (",warm"), so its rows never pass
  // for fresh ones.
  bool warm = false;
  arena::InterruptCheck interrupt_check;                        // at least every 100 ms
};

// "nodes=1000", "depth=12,multipv=3": the limits an evaluation was made with, part of its
// identity (with the engine's name).
std::string limits_text(const arena::UciLimits& limits, int multipv, bool warm = false);

// The configuration of a "uci:COMMAND:KEY=VALUE,..." player spec (or its JSON): its limits
// (default nodes=100000 when it gives none) and options. Throws std::invalid_argument for
// a spec that is not a UCI engine.
AnalyserConfig analyser_config(const arena::PlayerSpec& spec);

struct AnalyserStats {
  std::int64_t evaluated = 0, failed = 0, restarts = 0;
  std::int64_t nodes = 0;
};

class Analyser {
 public:
  // Starts the first engine (the others as work arrives): throws arena::UciError when it
  // cannot be started, so a bad command fails before anything is planned.
  explicit Analyser(AnalyserConfig config);
  ~Analyser();
  Analyser(const Analyser&) = delete;
  Analyser& operator=(const Analyser&) = delete;

  // The engine's "id name" (its identity in stored evaluations).
  const std::string& engine_name() const { return engine_name_; }
  std::string limits() const { return limits_text(config_.limits, config_.multipv, config_.warm); }
  const AnalyserStats& stats() const { return stats_; }

  using Done = std::function<void(std::size_t index, PositionEval&& eval)>;
  using Failed = std::function<void(std::size_t index, const std::string& message)>;
  // Evaluates positions[i] for every i; each ends in done or failed (in the order they
  // finish); tick runs at least every 100 ms (saving, progress, interrupts). A position
  // with no legal moves, or a dead draw, is evaluated without an engine. Throws
  // arena::UciError when no engine can be started any more, or when
  // max_failures_in_a_row positions are given up in a row (counted across runs).
  void run(const std::vector<chess::Board>& positions, const Done& done, const Failed& failed,
           const std::function<void()>& tick);

 private:
  struct Slot;
  std::unique_ptr<arena::UciEngine> start_engine();

  AnalyserConfig config_;
  std::string engine_name_;
  std::vector<std::unique_ptr<Slot>> slots_;
  AnalyserStats stats_;
  int failures_in_a_row_ = 0;  // positions given up since the last one an engine evaluated
};

}  // namespace pgmate::analysis
