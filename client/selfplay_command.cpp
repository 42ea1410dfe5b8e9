// pgmate selfplay: many self-play games at once (mcts::SelfPlayRunner), each finished game
// stored in one transaction: its pgmate.games row, then one pgmate.selfplay_positions row
// per searched position, then COMMIT. A client killed at any moment leaves whole games
// only; rerunning the same command continues the run (--run) up to --games.
#include <unistd.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <iostream>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "args.h"
#include "chess/fen.h"
#include "chess/notation.h"
#include "client/worker_client.h"
#include "client/worker_evaluator.h"
#include "commands.h"
#include "db.h"
#include "mcts/random.h"
#include "mcts/rollout_evaluator.h"
#include "mcts/selfplay.h"

namespace pgmate::cli {

const char* const kSelfplayUsage =
    "pgmate selfplay [--db CONNINFO] --games N [--parallel P] [--simulations S] [--network ID]\n"
    "             [--worker ADDRESS] [--run NAME] [--seed N] [--leaves-per-game K] [--max-plies M]\n"
    "             [--option NAME=VALUE ...] [--quiet]";

namespace {

using Clock = std::chrono::steady_clock;

// Ctrl-C: the first one stops at the next evaluation round with a summary (the game being
// stored is either committed or rolled back by the server); a second one kills.
volatile std::sig_atomic_t g_interrupted = 0;
extern "C" void on_sigint(int) {
  g_interrupted = 1;
  std::signal(SIGINT, SIG_DFL);
}
struct Interrupted {};
void stop_if_interrupted() {
  if (g_interrupted) throw Interrupted{};
}

std::string today_pgn_date() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  localtime_r(&now, &tm);
  char buf[16];
  std::strftime(buf, sizeof buf, "%Y.%m.%d", &tm);
  return buf;
}

std::string fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

// Test hook: PGMATE_SELFPLAY_STALL_MS=N sleeps N ms after a game's row is inserted and
// before its positions and the commit, so tests can kill the client inside the
// transaction (it shows as 'idle in transaction' in pg_stat_activity meanwhile).
int stall_ms() {
  const char* s = std::getenv("PGMATE_SELFPLAY_STALL_MS");
  return s && *s ? parse_count(s, "PGMATE_SELFPLAY_STALL_MS", 0, 3600000) : 0;
}

// Games counted per result, as stored.
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

// The network's key (database, id, SHA-256 of the weights): read at start, and the run
// uses that version throughout. Its weights (tens of MB) are read only when the worker
// does not hold the network.
worker::NetworkKey network_key(pqxx::connection& conn, std::int64_t id) {
  require_table(conn, "pgmate.networks");
  pqxx::nontransaction tx(conn);
  const pqxx::result r = tx.exec_params(
      "SELECT (SELECT oid FROM pg_database WHERE datname = current_database())::bigint, weights_sha256 "
      "FROM pgmate.networks WHERE id = $1",
      id);
  if (r.empty())
    throw UsageError("no network with id " + std::to_string(id) +
                     " in pgmate.networks (SELECT id, name FROM pgmate.networks lists them)");
  worker::NetworkKey key;
  key.database = static_cast<std::uint32_t>(r[0][0].as<std::int64_t>());
  key.id = id;
  const pqxx::binarystring sha256(r[0][1]);
  if (sha256.size() != key.sha256.size()) throw std::runtime_error("network " + std::to_string(id) + " has no weights_sha256");
  std::copy(sha256.begin(), sha256.end(), key.sha256.begin());
  return key;
}

void load_network(pqxx::connection& conn, worker::WorkerClient& client, const worker::NetworkKey& key) {
  pqxx::nontransaction tx(conn);
  const pqxx::result r =
      tx.exec_params("SELECT config::text, weights, weights_sha256 FROM pgmate.networks WHERE id = $1", key.id);
  if (r.empty()) throw std::runtime_error("network " + std::to_string(key.id) + " was deleted from pgmate.networks");
  const pqxx::binarystring weights(r[0][1]), sha256(r[0][2]);
  if (sha256.str() != std::string(key.sha256.begin(), key.sha256.end()))
    throw std::runtime_error("network " + std::to_string(key.id) + " changed while in use (its weights were updated)");
  client.load_network(key, r[0][0].as<std::string>(), weights.str());
}

constexpr const char* kWorkerHint =
    "pass --worker with the worker's Unix socket (e.g. --worker /path/to/pgdata/pgmate_worker.sock) "
    "or tcp://HOST:PORT";

// The worker's address as the server knows it: pgmate.worker_socket, else the socket in
// the data directory (readable by superusers and pg_read_all_settings members only).
std::string server_worker_address(pqxx::connection& conn) {
  pqxx::nontransaction tx(conn);
  const pqxx::result r = tx.exec("SELECT current_setting('pgmate.worker_socket', true)");
  if (!r[0][0].is_null() && !r[0][0].as<std::string>().empty()) return r[0][0].as<std::string>();
  try {
    return tx.exec("SELECT current_setting('data_directory') || '/pgmate_worker.sock'")[0][0].as<std::string>();
  } catch (const pqxx::sql_error& e) {
    throw std::runtime_error("cannot find the worker's socket: pgmate.worker_socket is not set and the server's "
                             "data_directory cannot be read (" + db_message(e) + "); " + kWorkerHint);
  }
}

// Games already stored for the run, and the index the next game gets. Games finish out of
// order, so an interrupted run may have stored indexes 0 and 2 but not 1: going on from
// the highest stored index + 1 (not from the count) never plays a seed twice.
struct RunState {
  std::int64_t stored = 0;
  std::int64_t next_index = 0;
};

// Two clients on one run would both take the next indexes and play the same seeds: the
// first holds a session advisory lock on the run name (the server drops it when the
// client exits or is killed), a second one stops. It waits a few seconds first, so a
// restart right after a kill does not race the server noticing the dead connection.
void lock_run(pqxx::connection& conn, const std::string& run) {
  pqxx::nontransaction tx(conn);
  const auto deadline = Clock::now() + std::chrono::seconds(5);
  while (!tx.exec_params("SELECT pg_try_advisory_lock(hashtextextended('pgmate selfplay ' || $1, 0))", run)[0][0]
              .as<bool>()) {
    if (Clock::now() > deadline)
      throw std::runtime_error("run " + run + " is being played by another pgmate selfplay client; wait for it, or "
                               "choose another --run");
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

RunState run_state(pqxx::connection& conn, const std::string& run) {
  pqxx::nontransaction tx(conn);
  const pqxx::result r = tx.exec_params(
      "SELECT count(*), coalesce(max((selfplay->>'index')::bigint) + 1, 0) FROM pgmate.games "
      "WHERE source = 'selfplay' AND selfplay->>'run' = $1",
      run);
  RunState s;
  s.stored = r[0][0].as<std::int64_t>();
  s.next_index = std::max(s.stored, r[0][1].as<std::int64_t>());
  return s;
}

const std::vector<std::string> kPositionColumns = {"game_id", "ply",    "board",  "moves",  "visits",
                                                   "priors",  "value",  "played", "policy", "repetitions"};

// One game in one transaction: a kill or a failure at any point leaves nothing of it.
void store_game(pqxx::connection& conn, const mcts::FinishedGame& game, const mcts::SelfPlayConfig& config,
                const std::string& evaluator, std::int64_t network_id, const std::string& run,
                const std::string& date, int stall) {
  pqxx::work tx(conn, "pgmate_selfplay");
  const std::string player = "pgmate " + evaluator;
  const pqxx::result r = tx.exec_params(
      "INSERT INTO pgmate.games (source, event, date, round, white, black, result, termination, start, moves, "
      "network_id, selfplay) "
      "VALUES ('selfplay', 'pgmate self-play', $1, $2, $3, $3, $4, $5, $6, $7, NULLIF($8::bigint, 0), $9) "
      "RETURNING id",
      date, std::to_string(game.index + 1), player, game.result, game.termination, chess::to_fen(game.start),
      uci_array(game.moves), network_id, mcts::game_parameters_json(config, game, evaluator, run));
  const std::string game_id = r[0][0].as<std::string>();
  if (stall > 0) std::this_thread::sleep_for(std::chrono::milliseconds(stall));
  {
    pqxx::stream_to copy(tx, "pgmate.selfplay_positions", kPositionColumns);
    for (size_t ply = 0; ply < game.plies.size(); ++ply) {
      const mcts::PlyRecord& p = game.plies[ply];
      copy << std::array<std::string, 10>{game_id,
                                         std::to_string(ply),
                                         chess::to_fen(p.board),
                                         uci_array(p.moves),
                                         int_array(p.visits),
                                         real_array(p.priors),
                                         float_text(p.value),
                                         chess::to_uci(p.played),
                                         real_array(p.policy),
                                         std::to_string(p.repetitions)};
    }
    copy.complete();
  }
  tx.commit();
}

struct Options {
  std::string conninfo, worker_address, run = "selfplay";
  std::int64_t games = -1;
  std::int64_t network_id = 0;  // 0: pure MCTS
  bool quiet = false;
  mcts::SelfPlayConfig config;
};

std::int64_t parse_id(const std::string& text, const std::string& option) {
  std::int64_t value = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || ptr != text.data() + text.size() || value < 1)
    throw UsageError(option + " must be a network id (a whole number from 1), not \"" + text + "\"");
  return value;
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
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto value = [&]() -> const std::string& {
      if (i + 1 >= args.size()) throw UsageError(a + " needs a value");
      return args[++i];
    };
    if (a == "--db") o.conninfo = value();
    else if (a == "--games") o.games = parse_count(value(), "--games", 1, 1000000000);
    else if (a == "--parallel") set("parallel", value());
    else if (a == "--simulations") set("simulations", value());
    else if (a == "--seed") set("seed", value());
    else if (a == "--leaves-per-game") set("leaves_per_game", value());
    else if (a == "--max-plies") set("max_plies", value());
    else if (a == "--network") o.network_id = parse_id(value(), "--network");
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
  if (o.games < 0) throw UsageError("--games N is required (the number of games the run should have)");
  if (o.run.empty()) throw UsageError("--run needs a non-empty name");
  if (!o.worker_address.empty() && o.network_id == 0)
    throw UsageError("--worker is for --network evaluation (pure MCTS needs no worker)");
  return o;
}

int run_selfplay(Options o) {
  auto conn = connect_db(o.conninfo);
  require_table(*conn, "pgmate.games");
  require_table(*conn, "pgmate.selfplay_positions");
  worker::NetworkKey network;  // checked before anything is played
  if (o.network_id) network = network_key(*conn, o.network_id);

  lock_run(*conn, o.run);
  const RunState state = run_state(*conn, o.run);
  const std::int64_t to_play = std::max<std::int64_t>(0, o.games - state.stored);
  std::cout << "run " << o.run << ": " << state.stored << " of " << o.games << " games stored, playing " << to_play
            << std::endl;
  if (to_play == 0) return 0;
  o.config.first_game = state.next_index;
  o.config.games = static_cast<int>(to_play);

  // The evaluator: pure MCTS, or the network on pgmate-worker.
  std::unique_ptr<worker::WorkerClient> client;
  std::unique_ptr<mcts::Evaluator> evaluator;
  if (o.network_id) {
    if (o.worker_address.empty()) o.worker_address = server_worker_address(*conn);
    worker::ClientOptions co;
    co.address = o.worker_address;
    if (const char* token = std::getenv("PGMATE_WORKER_TOKEN")) co.token = token;  // TCP workers need it
    co.poll = [] { stop_if_interrupted(); };
    try {
      client = std::make_unique<worker::WorkerClient>(co);
    } catch (const worker::WorkerUnavailable& e) {
      throw std::runtime_error("cannot reach pgmate-worker at " + o.worker_address + ": " + e.what() + "; " +
                               kWorkerHint);
    }
    worker::WorkerClient& c = *client;
    pqxx::connection& db = *conn;
    evaluator = std::make_unique<worker::WorkerEvaluator>(
        c, network, [&c, &db](const worker::NetworkKey& key) { load_network(db, c, key); });
  } else {
    // Seeded from the run's seed and first game, so a continued run does new playouts.
    evaluator = std::make_unique<mcts::RolloutEvaluator>(
        mcts::mix64(o.config.seed ^ mcts::mix64(static_cast<std::uint64_t>(o.config.first_game))));
  }
  const std::string evaluator_name = evaluator->name();

  const std::string date = today_pgn_date();
  const int stall = stall_ms();
  Tally tally;
  SelfPlayProgress progress(!o.quiet, to_play);
  mcts::SelfPlayRunner runner(o.config, *evaluator);
  const auto t0 = Clock::now();
  const auto stopped_note = [&]() {
    return std::to_string(tally.stored) + " games stored this time; run " + o.run + " has " +
           std::to_string(state.stored + tally.stored) + " of " + std::to_string(o.games) +
           " (the same command goes on from there)";
  };

  g_interrupted = 0;
  std::signal(SIGINT, on_sigint);
  try {
    runner.run(
        [&](mcts::FinishedGame& game) {
          store_game(*conn, game, o.config, evaluator_name, o.network_id, o.run, date, stall);
          tally.add(game.result);
          progress.update(runner.stats(), tally, true);
          stop_if_interrupted();
        },
        [&](const mcts::SelfPlayStats& stats) {
          progress.update(stats, tally);
          stop_if_interrupted();
        });
  } catch (const Interrupted&) {
    std::signal(SIGINT, SIG_DFL);
    progress.finish();
    std::cerr << "pgmate selfplay: interrupted: " << stopped_note() << '\n';
    return 130;
  } catch (const worker::WorkerUnavailable& e) {
    std::signal(SIGINT, SIG_DFL);
    progress.finish();
    std::cerr << "pgmate selfplay: pgmate-worker at " << o.worker_address << " failed: " << e.what() << '\n'
              << "pgmate selfplay: stopped: " << stopped_note() << '\n';
    return 1;
  } catch (const std::exception& e) {
    std::signal(SIGINT, SIG_DFL);
    progress.finish();
    std::cerr << "pgmate selfplay: " << db_message(e) << '\n'
              << "pgmate selfplay: stopped: " << stopped_note() << '\n';
    return 1;
  }
  std::signal(SIGINT, SIG_DFL);
  progress.finish();

  const mcts::SelfPlayStats& stats = runner.stats();
  const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  std::cout << "played " << tally.stored << " games (W/D/L " << tally.wdl() << ", " << stats.plies << " moves) in "
            << fixed(seconds, 2) << " s: " << static_cast<std::int64_t>(stats.positions_per_second())
            << " positions/s, mean batch " << fixed(stats.mean_batch(), 1) << ", evaluator " << evaluator_name
            << "; run " << o.run << " has " << state.stored + tally.stored << " of " << o.games << " games\n";
  return 0;
}

}  // namespace

int selfplay_command(const std::vector<std::string>& args) {
  Options options = parse_options(args);
  try {
    return run_selfplay(std::move(options));
  } catch (const pqxx::sql_error& e) {
    throw std::runtime_error(db_message(e));
  } catch (const pqxx::broken_connection& e) {
    throw std::runtime_error("lost the database connection: " + db_message(e));
  }
}

}  // namespace pgmate::cli
