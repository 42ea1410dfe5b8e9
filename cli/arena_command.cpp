// pgmate arena: a match between two players (arena::MatchRunner), games stored one
// transaction each in pgmate.games (--db, with the match row in pgmate.matches, resumed
// by --name) or written to a PGN file (--pgn). Last line: W/D/L, score and Elo with its
// 95% interval from A's side.
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "arena/match.h"
#include "arena/match_options.h"
#include "arena/openings.h"
#include "arena/player_spec.h"
#include "arena/stats.h"
#include "arena/uci_engine.h"
#include "arena_store.h"
#include "selfplay_store.h"
#include "args.h"
#include "chess/pgn.h"
#include "link/worker_client.h"
#include "link/worker_evaluator.h"
#include "commands.h"
#include "worker_connection.h"
#include "interrupt.h"
#include "common/random.h"

namespace pgmate::cli {

const char* const kArenaUsage =
    "pgmate arena --db CONNINFO|--pgn FILE|- --games N [--openings startpos|eco|FILE] [--parallel P]\n"
    "             [--max-plies M] [--seed S] [--sprt ELO0,ELO1[,ALPHA,BETA]] [--name NAME] [--worker ADDRESS]\n"
    "             [--resign VALUE] [--quiet] SPEC_A SPEC_B\n"
    "           (specs: random, mcts:S, net:ID:S, uci:COMMAND[:KEY=VALUE,...] or a JSON object)";

namespace {

using Clock = std::chrono::steady_clock;

struct Decided {};  // the SPRT has decided

// UCI engines run in process groups of their own, so a signal that ends this program does
// not reach them: their groups are killed first, then the signal does what it would have.
extern "C" void kill_engines_and_end(int sig) {
  arena::kill_live_engine_groups();
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

using SignalHandler = void (*)(int);
SignalHandler g_first_interrupt = nullptr;  // InterruptScope's: the first Ctrl-C stops the match

extern "C" void interrupt_or_kill_engines_and_end(int sig) {
  if (!interrupted() && g_first_interrupt) {
    g_first_interrupt(sig);
    std::signal(SIGINT, interrupt_or_kill_engines_and_end);  // it reset SIGINT to the default
    return;
  }
  kill_engines_and_end(sig);
}

// While alive: a signal that ends the program kills the engines' process groups first.
class EngineReaper {
 public:
  EngineReaper() {
    for (std::size_t i = 0; i < std::size(kSignals); ++i) previous_[i] = std::signal(kSignals[i], kill_engines_and_end);
  }
  ~EngineReaper() {
    for (std::size_t i = 0; i < std::size(kSignals); ++i) std::signal(kSignals[i], previous_[i]);
    g_first_interrupt = nullptr;
  }
  EngineReaper(const EngineReaper&) = delete;
  EngineReaper& operator=(const EngineReaper&) = delete;
  // Once an InterruptScope catches Ctrl-C: the first still asks the match to stop, the
  // second (which would end the program) kills the engines first.
  void keep_interrupt_scope() {
    const SignalHandler scope = std::signal(SIGINT, interrupt_or_kill_engines_and_end);
    g_first_interrupt = scope == SIG_DFL || scope == SIG_IGN || scope == SIG_ERR ? nullptr : scope;
  }

 private:
  static constexpr int kSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE};
  SignalHandler previous_[std::size(kSignals)] = {};
};

struct Options {
  std::string conninfo, pgn_path, worker_address;
  bool db = false, pgn = false, quiet = false;
  arena::MatchOptions match;
  std::string spec_text[2];
};

Options parse_options(const std::vector<std::string>& args) {
  Options o;
  std::vector<std::string> specs;
  const auto set = [&](const char* name, const std::string& value) {
    try {
      arena::set_match_option(o.match, name, value);
    } catch (const std::invalid_argument& e) {
      throw UsageError(e.what());
    }
  };
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto value = [&]() -> const std::string& {
      if (i + 1 >= args.size()) throw UsageError(a + " needs a value");
      return args[++i];
    };
    if (a == "--db") o.conninfo = value(), o.db = true;
    else if (a == "--pgn") o.pgn_path = value(), o.pgn = true;
    else if (a == "--games") set("games", value());
    else if (a == "--openings") set("openings", value());
    else if (a == "--parallel") set("parallel", value());
    else if (a == "--max-plies") set("max_plies", value());
    else if (a == "--seed") set("seed", value());
    else if (a == "--name") set("name", value());
    else if (a == "--resign") set("resign_value", value());
    else if (a == "--worker") o.worker_address = value();
    else if (a == "--quiet") o.quiet = true;
    else if (a == "--sprt") {
      try {
        arena::set_sprt(o.match, value());
      } catch (const std::invalid_argument& e) {
        throw UsageError(e.what());
      }
    } else if (a.size() > 1 && a[0] == '-' && a[1] == '-') throw UsageError("unknown option " + a);
    else specs.push_back(a);
  }
  if (specs.size() != 2) throw UsageError("two players are needed, SPEC_A and SPEC_B (got " + std::to_string(specs.size()) + ")");
  o.spec_text[0] = specs[0];
  o.spec_text[1] = specs[1];
  if (o.match.games == 0) throw UsageError("--games N is required");
  if (o.db == o.pgn)
    throw UsageError(o.db ? "--db and --pgn are alternatives: the games go to the database or to a PGN file"
                          : "--db CONNINFO or --pgn FILE is required: where the games go");
  if (o.pgn && o.pgn_path.empty()) throw UsageError("--pgn needs a file name (- for standard output)");
  return o;
}

// The progress line on stderr (only on a terminal).
class Progress {
 public:
  Progress(bool enabled, int total) : enabled_(enabled && isatty(STDERR_FILENO)), total_(total) {}
  ~Progress() { finish(); }
  void update(const arena::MatchTally& tally, double games_per_second, bool force = false) {
    if (!enabled_) return;
    const auto now = Clock::now();
    if (!force && shown_ && now - last_ < std::chrono::milliseconds(200)) return;
    last_ = now;
    std::cerr << "\rgames " << tally.games() << "/" << total_ << ", " << tally.line() << ", "
              << fixed(games_per_second * 60, 1) << " games/min\x1b[K" << std::flush;
    shown_ = true;
  }
  void finish() {
    if (enabled_ && shown_) std::cerr << "\r\x1b[K" << std::flush;
    shown_ = false;
  }

 private:
  bool enabled_, shown_ = false;
  int total_;
  Clock::time_point last_;
};

int run_arena(Options o) {
  arena::PlayerSpec specs[2];
  for (int p = 0; p < 2; ++p) {
    try {
      specs[p] = arena::parse_player_spec(o.spec_text[p]);
    } catch (const std::invalid_argument& e) {
      throw UsageError(e.what());
    }
    if (specs[p].type == arena::PlayerType::kNetwork && !o.db)
      throw UsageError("net players need --db (their networks are rows of pgmate.networks)");
  }
  // A named match replays from a seed of its name, so the same command resumes it.
  if (!o.match.seeded)
    o.match.seed = o.match.name.empty() ? mcts::mix64(std::random_device{}()) >> 16 : arena::seed_of_name(o.match.name);
  const std::string name =
      o.match.name.empty() ? arena::default_match_name(specs[0], specs[1], o.match.seed) : o.match.name;
  arena::MatchConfig config;
  try {
    config = arena::match_config(o.match);
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  config.interrupt_check = [] { stop_if_interrupted(); };

  std::unique_ptr<ArenaStore> store;
  if (o.db) store = open_arena_store(o.conninfo);

  // Openings, in the order the match plays them.
  std::vector<arena::Opening> openings;
  if (o.match.openings == "startpos") {
    openings = arena::start_position_opening();
  } else if (o.match.openings == "eco") {
    if (!store) throw UsageError("--openings eco reads pgmate.openings: it needs --db");
    openings = store->eco_openings();
    arena::shuffle_openings(openings, o.match.seed);
  } else {
    try {
      openings = arena::read_openings_file(o.match.openings);
    } catch (const std::exception& e) {
      throw UsageError(e.what());
    }
    arena::shuffle_openings(openings, o.match.seed);
  }

  // Networks on pgmate-worker.
  std::unique_ptr<worker::WorkerClient> client;
  std::vector<std::unique_ptr<worker::WorkerEvaluator>> evaluators;
  auto evaluator_for = [&](const arena::PlayerSpec& spec) -> mcts::Evaluator& {
    if (!client) {
      if (o.worker_address.empty()) o.worker_address = store->worker_address();
      client = connect_worker(o.worker_address);
    }
    worker::WorkerClient& c = *client;
    ArenaStore& s = *store;
    evaluators.push_back(std::make_unique<worker::WorkerEvaluator>(
        c, s.network_key(spec.network), [&c, &s](const worker::NetworkKey& key) { s.load_network(c, key); }));
    return *evaluators.back();
  };
  // Made before the match row: an engine that cannot start or an unknown network fails
  // the command with nothing stored.
  EngineReaper reaper;
  std::unique_ptr<arena::MatchRunner> runner;
  try {
    runner = std::make_unique<arena::MatchRunner>(config, specs[0], specs[1], openings, evaluator_for);
  } catch (const arena::UciError& e) {
    throw std::runtime_error(e.what());
  }

  arena::MatchTally tally;
  StoredMatch stored;
  if (store) {
    stored = store->claim_match(name, arena::to_json(specs[0]), arena::to_json(specs[1]),
                                arena::match_options_json(o.match), o.match.games);
    for (const auto& [index, score] : stored.games) tally.add(index, score);
  }
  std::set<std::int64_t> done;
  for (const auto& [index, score] : stored.games) done.insert(index);
  std::vector<std::int64_t> indexes;
  for (std::int64_t i = 0; i < o.match.games; ++i)
    if (!done.count(i)) indexes.push_back(i);
  std::cout << "match " << name << ": " << arena::display_name(specs[0]) << " vs " << arena::display_name(specs[1])
            << ", " << done.size() << " of " << o.match.games << " games stored, playing " << indexes.size() << std::endl;

  const auto sprt_verdict = [&]() {
    if (!o.match.sprt) return arena::SprtVerdict::kContinue;
    return arena::sprt(tally.pentanomial(), *o.match.sprt).verdict;
  };

  std::ofstream pgn_file;
  std::ostream* pgn = nullptr;
  if (o.pgn) {
    if (o.pgn_path == "-") {
      pgn = &std::cout;
    } else {
      pgn_file.open(o.pgn_path, std::ios::binary | std::ios::trunc);
      if (!pgn_file) throw UsageError("cannot write --pgn " + o.pgn_path + ": " + std::strerror(errno));
      pgn = &pgn_file;
    }
  }
  std::ostream& out = o.pgn && o.pgn_path == "-" ? std::cerr : std::cout;

  const std::string date = today_pgn_date();
  Progress progress(!o.quiet, o.match.games);
  const auto t0 = Clock::now();
  std::string status = "finished";
  const InterruptScope interrupt;  // Ctrl-C stops at the next check
  reaper.keep_interrupt_scope();
  int exit_code = 0;
  std::int64_t played = 0;
  try {
    if (sprt_verdict() != arena::SprtVerdict::kContinue) throw Decided{};
    runner->run(
        indexes,
        [&](arena::MatchGame& game) {
          const auto tags = arena::game_tags(game, name, specs[0], specs[1]);
          if (store) store->store_game(stored.id, game, tags, arena::game_arena_json(game, name));
          if (pgn) {
            chess::PgnTags pgn_tags;
            pgn_tags.emplace_back("Date", date);
            for (const auto& [k, v] : tags)
              if (k != "Result") pgn_tags.emplace_back(k, v);
            *pgn << chess::to_pgn(pgn_tags, game.start, game.moves, game.result) << "\n" << std::flush;
          }
          tally.add(game.index, game.a_score());
          ++played;
          const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
          progress.update(tally, seconds > 0 ? double(played) / seconds : 0, true);
          stop_if_interrupted();
          if (sprt_verdict() != arena::SprtVerdict::kContinue) throw Decided{};
        },
        [&](const arena::MatchStats&) {
          stop_if_interrupted();
          const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
          progress.update(tally, seconds > 0 ? double(played) / seconds : 0);
        });
  } catch (const Interrupted&) {
    status = "running";
    exit_code = 130;
  } catch (const Decided&) {
    status = sprt_verdict() == arena::SprtVerdict::kAcceptH1 ? "sprt_h1" : "sprt_h0";
  } catch (const arena::UciError& e) {
    progress.finish();
    if (store) store->end_match(stored.id, "running", 0);
    throw std::runtime_error(e.what());
  } catch (...) {
    progress.finish();
    if (store) {
      try {
        store->end_match(stored.id, "running", std::chrono::duration<double>(Clock::now() - t0).count());
      } catch (...) {
      }
    }
    throw;
  }
  progress.finish();
  const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  if (store) store->end_match(stored.id, status, seconds);

  out << "played " << played << " games in " << fixed(seconds, 1) << " s (" << fixed(seconds > 0 ? played * 60 / seconds : 0, 1)
      << " games/min)";
  if (status == "running")
    out << (store ? "; stopped: the same command resumes match " + name : std::string("; stopped"));
  out << "\n";
  if (o.match.sprt) {
    const arena::SprtResult s = arena::sprt(tally.pentanomial(), *o.match.sprt);
    out << "SPRT [" << fixed(o.match.sprt->elo0, 1) << ", " << fixed(o.match.sprt->elo1, 1) << "]: LLR "
        << fixed(s.llr, 2) << " (" << fixed(s.lower_bound, 2) << ", " << fixed(s.upper_bound, 2) << "): "
        << (s.verdict == arena::SprtVerdict::kAcceptH1   ? "H1 accepted"
            : s.verdict == arena::SprtVerdict::kAcceptH0 ? "H0 accepted"
                                                         : "undecided")
        << "\n";
  }
  out << arena::display_name(specs[0]) << " vs " << arena::display_name(specs[1]) << ": " << tally.line() << std::endl;
  return exit_code;
}

}  // namespace

int arena_command(const std::vector<std::string>& args) { return run_arena(parse_options(args)); }

}  // namespace pgmate::cli
