// pgmate selfplay: many self-play games at once (mcts::SelfPlayRunner). Each finished game
// goes to PostgreSQL (--db: one transaction per game, see selfplay_store.h; rerunning the
// same command continues the run --run up to --games) or to a PGN file (--pgn: no run
// state, --games N games from --seed, each written whole as it finishes).
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "args.h"
#include "chess/pgn.h"
#include "link/worker_client.h"
#include "link/worker_evaluator.h"
#include "commands.h"
#include "interrupt.h"
#include "common/sha256.h"
#include "common/random.h"
#include "mcts/rollout_evaluator.h"
#include "mcts/selfplay.h"
#include "link/network_config.h"
#include "selfplay_store.h"
#include "worker_connection.h"

namespace pgmate::cli {

const char* const kSelfplayUsage =
    "pgmate selfplay --db CONNINFO|--pgn FILE|- --games N [--parallel P] [--simulations S]\n"
    "             [--network ID | --network-config JSON [--network-seed N]] [--worker ADDRESS]\n"
    "             [--run NAME] [--seed N] [--leaves-per-game K] [--max-plies M]\n"
    "             [--option NAME=VALUE ...] [--quiet]\n"
    "           (exactly one of --db and --pgn; --network ID needs --db, --network-config needs --worker)";

namespace {

using Clock = std::chrono::steady_clock;

// Games counted per result, as stored or written.
struct Tally {
  std::int64_t stored = 0, white = 0, draws = 0, black = 0;
  void add(const std::string& result) {
    ++stored;
    if (result == "1-0") ++white;
    else if (result == "0-1") ++black;
    else ++draws;
  }
  std::string wdl() const {
    return std::to_string(white) + "/" + std::to_string(draws) + "/" + std::to_string(black);
  }
};

// The progress line on stderr (only on a terminal): games, positions/s, mean batch, W/D/L.
class SelfPlayProgress {
 public:
  SelfPlayProgress(bool enabled, std::int64_t total) : enabled_(enabled && isatty(STDERR_FILENO)), total_(total) {}
  ~SelfPlayProgress() { finish(); }
  void update(const mcts::SelfPlayStats& stats, const Tally& tally, bool force = false) {
    if (!enabled_) return;
    const auto now = Clock::now();
    if (!force && shown_ && now - last_draw_ < std::chrono::milliseconds(100)) return;
    last_draw_ = now;
    std::cerr << "\rgames " << tally.stored << "/" << total_ << ", "
              << static_cast<std::int64_t>(stats.positions_per_second()) << " positions/s, mean batch "
              << fixed(stats.mean_batch(), 1) << ", W/D/L " << tally.wdl() << "\x1b[K" << std::flush;
    shown_ = true;
  }
  void finish() {
    if (enabled_ && shown_) std::cerr << "\r\x1b[K" << std::flush;
    shown_ = false;
    enabled_ = false;
  }

 private:
  bool enabled_, shown_ = false;
  std::int64_t total_;
  Clock::time_point last_draw_;
};

// Finished games as PGN, one after another with a blank line between, each written and
// flushed whole as it finishes: a killed run leaves whole games, but for the one being
// written.
class PgnOutput {
 public:
  explicit PgnOutput(const std::string& path) : name_(path == "-" ? "standard output" : path) {
    if (path == "-") {
      file_ = stdout;
    } else {
      file_ = std::fopen(path.c_str(), "w");
      if (!file_) throw UsageError("cannot write --pgn " + path + ": " + std::strerror(errno));
      owned_ = true;
    }
  }
  ~PgnOutput() {
    if (owned_) std::fclose(file_);
  }
  PgnOutput(const PgnOutput&) = delete;
  PgnOutput& operator=(const PgnOutput&) = delete;

  const std::string& name() const { return name_; }
  void write(const std::string& game) {
    const std::string text = (written_ ? "\n" : "") + game;
    if (std::fwrite(text.data(), 1, text.size(), file_) != text.size() || std::fflush(file_) != 0)
      throw std::runtime_error("cannot write the games to " + name_ + ": " + std::strerror(errno));
    ++written_;
  }

 private:
  std::string name_;
  std::FILE* file_ = nullptr;
  bool owned_ = false;
  std::int64_t written_ = 0;
};

std::string host_name() {
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0 || !buf[0]) return "?";
  return buf;
}

// A game as --pgn writes it. The players are named as in pgmate.games; PgmateSelfplay holds
// the games.selfplay jsonb less the seconds taken, so a seed gives the same text every time.
std::string game_pgn(const mcts::FinishedGame& game, const mcts::SelfPlayConfig& config, const std::string& evaluator,
                     const std::string& run, const std::string& site, const std::string& date) {
  const std::string player = "pgmate " + evaluator;
  const chess::PgnTags tags = {
      {"Event", "pgmate self-play"},
      {"Site", site},
      {"Date", date},
      {"Round", std::to_string(game.index + 1)},
      {"White", player},
      {"Black", player},
      {"Termination", game.termination},
      {"PgmateSelfplay", mcts::game_parameters_json(config, game, evaluator, run, mcts::GameSeconds::kOmit)}};
  return chess::to_pgn(tags, game.start, game.moves, game.result);
}

// A network with no pgmate.networks row (--network-config) is keyed like a row: database 0
// (no database has oid 0, so the key never meets a stored network's on a shared worker),
// id 1, and the SHA-256 of its weights.
worker::NetworkKey unstored_network_key(const std::string& weights) {
  worker::NetworkKey key;
  key.database = 0;
  key.id = 1;
  key.sha256 = sha256(weights);
  return key;
}

struct Options {
  std::string conninfo, pgn_path, worker_address, run = "selfplay";
  bool use_db = false;  // --db given (an empty conninfo is libpq's environment)
  std::int64_t games = -1;
  std::int64_t network_id = 0;                // a pgmate.networks row (--db); 0: none
  std::optional<std::string> network_config;  // random weights (no database), as nn::to_json writes it
  std::optional<std::uint64_t> network_seed;
  bool quiet = false;
  mcts::SelfPlayConfig config;

  bool uses_network() const { return network_id != 0 || network_config.has_value(); }
};

std::int64_t parse_id(const std::string& text, const std::string& option) {
  std::int64_t value = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || ptr != text.data() + text.size() || value < 1)
    throw UsageError(option + " must be a network id (a whole number from 1), not \"" + text + "\"");
  return value;
}

std::uint64_t parse_seed(const std::string& text, const std::string& option) {
  std::uint64_t value = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || ptr != text.data() + text.size())
    throw UsageError(option + " must be an unsigned 64-bit integer, not \"" + text + "\"");
  return value;
}

// Checked here, before the worker is asked for weights, and written the one way (the
// worker keeps what it is given as the network's config).
std::string checked_network_config(const std::string& text) {
  try {
    return worker::nn::to_json(worker::nn::parse_network_config(text));
  } catch (const std::invalid_argument& e) {
    throw UsageError(std::string("--network-config: ") + e.what() +
                     " (a JSON object such as '{\"filters\":128,\"blocks\":8}')");
  }
}

Options parse_options(const std::vector<std::string>& args) {
  Options o;
  // Every search and self-play setting goes through mcts::set_option, like the
  // procedure's options jsonb, so both spell and check them the same way.
  const auto set = [&](const std::string& name, const std::string& value) {
    try {
      mcts::set_option(o.config, name, value);
    } catch (const std::invalid_argument& e) {
      throw UsageError(e.what());
    }
  };
  bool pgn = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto value = [&]() -> const std::string& {
      if (i + 1 >= args.size()) throw UsageError(a + " needs a value");
      return args[++i];
    };
    if (a == "--db") o.conninfo = value(), o.use_db = true;
    else if (a == "--pgn") o.pgn_path = value(), pgn = true;
    else if (a == "--games") o.games = parse_count(value(), "--games", 1, 1000000000);
    else if (a == "--parallel") set("parallel", value());
    else if (a == "--simulations") set("simulations", value());
    else if (a == "--seed") set("seed", value());
    else if (a == "--leaves-per-game") set("leaves_per_game", value());
    else if (a == "--max-plies") set("max_plies", value());
    else if (a == "--network") o.network_id = parse_id(value(), "--network");
    else if (a == "--network-config") o.network_config = checked_network_config(value());
    else if (a == "--network-seed") o.network_seed = parse_seed(value(), "--network-seed");
    else if (a == "--worker") o.worker_address = value();
    else if (a == "--run") o.run = value();
    else if (a == "--quiet") o.quiet = true;
    else if (a == "--option") {
      const std::string& nv = value();
      const size_t eq = nv.find('=');
      if (eq == std::string::npos || eq == 0) throw UsageError("--option needs NAME=VALUE, not \"" + nv + "\"");
      set(nv.substr(0, eq), nv.substr(eq + 1));
    } else if (a.size() > 1 && a[0] == '-') throw UsageError("unknown option " + a);
    else throw UsageError("unexpected argument \"" + a + "\"");
  }
  if (o.use_db == pgn)
    throw UsageError(pgn ? "--db and --pgn are alternatives: the games go to the database or to a PGN file"
                         : "--db CONNINFO or --pgn FILE is required: where the finished games go");
  if (pgn && o.pgn_path.empty()) throw UsageError("--pgn needs a file name (- for standard output)");
  if (o.games < 0) throw UsageError("--games N is required (the number of games the run should have)");
  if (o.run.empty()) throw UsageError("--run needs a non-empty name");
  if (o.network_id && o.network_config)
    throw UsageError("--network ID (a stored network) and --network-config (random weights) are alternatives");
  if (o.network_id && !o.use_db)
    throw UsageError("--network ID reads pgmate.networks and needs --db; without a database, --network-config JSON "
                     "plays with random weights of that configuration");
  if (o.network_config && o.use_db)
    throw UsageError("--network-config is for runs without a database (--pgn); with --db, give --network ID");
  if (o.network_config && o.worker_address.empty())
    throw UsageError("--network-config needs --worker ADDRESS (pgmate-worker's Unix socket or tcp://HOST:PORT): "
                     "without a database there is no server to ask for it");
  if (o.network_seed && !o.network_config) throw UsageError("--network-seed is for --network-config");
  if (!o.worker_address.empty() && !o.uses_network())
    throw UsageError("--worker is for network evaluation, --network or --network-config (pure MCTS needs no worker)");
  return o;
}

int run_selfplay(Options o) {
  // The client numbers the games itself: a run resumes after its stored games.
  for (const auto& given : o.config.options_given)
    if (given.first == "first_game")
      throw UsageError("--option first_game: pgmate selfplay numbers a run's games itself (a resumed run goes on "
                       "after its stored games)");
  // Where the games go, and which of them: the run's missing games (--db), or --games N
  // from the seed (--pgn).
  std::unique_ptr<SelfplayStore> store;
  worker::NetworkKey network;  // checked before anything is played
  RunState state;
  if (o.use_db) {
    store = open_selfplay_store(o.conninfo);
    if (o.network_id) network = store->network_key(o.network_id);
    state = store->claim_run(o.run);
    const std::int64_t to_play = std::max<std::int64_t>(0, o.games - state.stored);
    std::cout << "run " << o.run << ": " << state.stored << " of " << o.games << " games stored, playing " << to_play
              << std::endl;
    if (to_play == 0) return 0;
    o.config.first_game = state.next_index;
    o.config.games = static_cast<int>(to_play);
  } else {
    o.config.first_game = 0;
    o.config.games = static_cast<int>(o.games);
  }

  // The evaluator: pure MCTS, or a network on pgmate-worker.
  std::unique_ptr<worker::WorkerClient> client;
  std::unique_ptr<mcts::Evaluator> evaluator;
  std::string unstored_weights;  // --network-config's, sent again when the worker drops them
  if (o.uses_network()) {
    if (o.worker_address.empty()) o.worker_address = store->worker_address();  // --network: --db is given
    client = connect_worker(o.worker_address);
    worker::WorkerClient& c = *client;
    std::function<void(const worker::NetworkKey&)> load;
    if (store) {
      SelfplayStore& s = *store;
      load = [&s, &c](const worker::NetworkKey& key) { s.load_network(c, key); };
    } else {
      const std::string& config = *o.network_config;
      try {
        unstored_weights = c.init_network_weights(config, o.network_seed.value_or(1));
      } catch (const worker::WorkerError& e) {
        throw std::runtime_error("pgmate-worker at " + o.worker_address + " made no weights for --network-config " +
                                 config + ": " + e.what());
      }
      network = unstored_network_key(unstored_weights);
      load = [&c, &config, &weights = unstored_weights](const worker::NetworkKey& key) {
        c.load_network(key, config, weights);
      };
    }
    evaluator = std::make_unique<worker::WorkerEvaluator>(c, network, std::move(load));
  } else {
    // Seeded from the run's seed and first game, so a continued run does new playouts.
    evaluator = std::make_unique<mcts::RolloutEvaluator>(
        mcts::mix64(o.config.seed ^ mcts::mix64(static_cast<std::uint64_t>(o.config.first_game))));
  }
  const std::string evaluator_name = evaluator->name();

  // Opened once everything else is ready, so a run that cannot start leaves an existing
  // file as it was.
  std::unique_ptr<PgnOutput> pgn;
  if (!store) pgn = std::make_unique<PgnOutput>(o.pgn_path);
  const std::string site = host_name();

  const std::string date = today_pgn_date();
  Tally tally;
  SelfPlayProgress progress(!o.quiet, o.config.games);
  mcts::SelfPlayRunner runner(o.config, *evaluator);
  const auto t0 = Clock::now();
  const auto stopped_note = [&]() {
    if (!store) return std::to_string(tally.stored) + " games written to " + pgn->name();
    return std::to_string(tally.stored) + " games stored this time; run " + o.run + " has " +
           std::to_string(state.stored + tally.stored) + " of " + std::to_string(o.games) +
           " (the same command goes on from there)";
  };

  const InterruptScope interrupt;  // Ctrl-C stops at the next check
  try {
    runner.run(
        [&](mcts::FinishedGame& game) {
          if (store) store->store_game(game, o.config, evaluator_name, o.network_id, o.run);
          else pgn->write(game_pgn(game, o.config, evaluator_name, o.run, site, date));
          tally.add(game.result);
          progress.update(runner.stats(), tally, true);
          stop_if_interrupted();
        },
        [&](const mcts::SelfPlayStats& stats) {
          progress.update(stats, tally);
          stop_if_interrupted();
        });
  } catch (const Interrupted&) {
    progress.finish();
    std::cerr << "pgmate selfplay: interrupted: " << stopped_note() << '\n';
    return 130;
  } catch (const worker::WorkerUnavailable& e) {
    progress.finish();
    std::cerr << "pgmate selfplay: pgmate-worker at " << o.worker_address << " failed: " << e.what() << '\n'
              << "pgmate selfplay: stopped: " << stopped_note() << '\n';
    return 1;
  } catch (const std::exception& e) {
    progress.finish();
    std::cerr << "pgmate selfplay: " << e.what() << '\n' << "pgmate selfplay: stopped: " << stopped_note() << '\n';
    return 1;
  }
  progress.finish();

  // The summary, one line that benchmarks parse (keep its shape):
  //   played G games (W/D/L w/d/l, M moves) in S.SS s: P positions/s, mean batch B.B, evaluator NAME; ...
  // P is a whole number (positions sent to the evaluator per second of play), B has one
  // decimal; after the ';' comes "run R has X of N games" (--db) or "games in FILE"
  // (--pgn). It goes to standard output, or to standard error when the games do (--pgn -).
  const mcts::SelfPlayStats& stats = runner.stats();
  const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  std::ostream& out = pgn && o.pgn_path == "-" ? std::cerr : std::cout;
  out << "played " << tally.stored << " games (W/D/L " << tally.wdl() << ", " << stats.plies << " moves) in "
      << fixed(seconds, 2) << " s: " << static_cast<std::int64_t>(stats.positions_per_second())
      << " positions/s, mean batch " << fixed(stats.mean_batch(), 1) << ", evaluator " << evaluator_name << "; ";
  if (store) out << "run " << o.run << " has " << state.stored + tally.stored << " of " << o.games << " games\n";
  else out << "games in " << pgn->name() << "\n";
  return 0;
}

}  // namespace

int selfplay_command(const std::vector<std::string>& args) { return run_selfplay(parse_options(args)); }

}  // namespace pgmate::cli
