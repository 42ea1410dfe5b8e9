// pgmate analyse: every position of the selected games evaluated once by a UCI engine, one
// process per job on this machine (core/analysis drives them), or by a network of
// pgmate.networks on pgmate-worker (net:ID:S, many searches batched), the evaluations stored in
// pgmate.position_evals as they come (a save every second: a stop loses at most the positions
// in flight and the last second's). Games are planned a chunk at a time by the extension's
// pgmate.analysis_positions, which leaves out what is stored already: a second run, or one
// after a crash, goes on where the first stopped, and a position met in many games (a
// transposition) is evaluated once.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include <pqxx/pqxx>

#include "analysis/analyser.h"
#include "analysis/evaluation.h"
#include "analysis/network_analyser.h"
#include "link/worker_evaluator.h"
#include "arena/player_spec.h"
#include "args.h"
#include "chess/fen.h"
#include "commands.h"
#include "common/text.h"
#include "db.h"
#include "interrupt.h"
#include "selfplay_store.h"
#include "worker_connection.h"

namespace pgmate::cli {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

std::string id_array(const std::vector<std::int64_t>& ids, std::size_t begin, std::size_t end) {
  std::string out = "{";
  for (std::size_t i = begin; i < end; ++i) out += (i > begin ? "," : "") + std::to_string(ids[i]);
  return out + "}";
}

}  // namespace

int analyse_command(const std::vector<std::string>& args) {
  std::string conninfo, where = "true", engine_spec, worker_address;
  int jobs = 1, multipv = 1, hash = 16, chunk = 1000, parallel = 64;
  bool warm = false;
  arena::UciLimits limits;
  bool limit_given = false;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto value = [&]() -> const std::string& {
      if (i + 1 >= args.size()) throw UsageError(a + " needs a value");
      return args[++i];
    };
    if (a == "--db") conninfo = value();
    else if (a == "--where") where = value();
    else if (a == "--engine") engine_spec = value();
    else if (a == "--jobs") jobs = parse_count(value(), a, 1, 256);
    else if (a == "--multipv") multipv = parse_count(value(), a, 1, 64);
    else if (a == "--hash") hash = parse_count(value(), a, 1, 65536);
    else if (a == "--chunk") chunk = parse_count(value(), a, 1, 1000000);
    else if (a == "--parallel") parallel = parse_count(value(), a, 1, 4096);
    else if (a == "--worker") worker_address = value();
    else if (a == "--warm") warm = true;
    else if (a == "--nodes") limits.nodes = parse_count(value(), a, 1, 2000000000), limit_given = true;
    else if (a == "--depth") limits.depth = parse_count(value(), a, 1, 255), limit_given = true;
    else if (a == "--movetime") limits.movetime_ms = parse_count(value(), a, 1, 3600000), limit_given = true;
    else throw UsageError("unknown argument \"" + a + "\"");
  }
  if (engine_spec.empty()) throw UsageError("--engine is required, e.g. --engine uci:/usr/games/stockfish");
  if (where.empty()) throw UsageError("--where needs a condition, e.g. \"event = 'London'\"");
  arena::PlayerSpec spec;
  try {
    spec = arena::parse_player_spec(engine_spec);
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  const bool network = spec.type == arena::PlayerType::kNetwork;
  if (!network && spec.type != arena::PlayerType::kUci)
    throw UsageError("--engine: analysis takes a UCI engine (uci:COMMAND[:KEY=VALUE,...]) or a network (net:ID:S)");
  if (network && (limit_given || multipv > 1 || warm))
    throw UsageError("--nodes, --depth, --movetime, --multipv and --warm are for UCI engines: a network searches the "
                     "simulations of its spec (net:ID:S)");

  auto conn = connect_db(conninfo);
  require_table(*conn, "pgmate.position_evals");
  InterruptScope interrupt_scope;
  // The engine: UCI processes, or a network on the worker.
  std::unique_ptr<analysis::Analyser> analyser;
  std::unique_ptr<worker::WorkerClient> worker_client;
  std::unique_ptr<worker::WorkerEvaluator> evaluator;
  std::unique_ptr<analysis::NetworkAnalyser> network_analyser;
  std::string engine, limits_text;
  if (network) {
    const worker::NetworkKey key = db_network_key(*conn, spec.network);
    if (worker_address.empty()) worker_address = db_worker_address(*conn, kWorkerHint);
    worker_client = connect_worker(worker_address);
    worker::WorkerClient& c = *worker_client;
    pqxx::connection& db = *conn;
    evaluator = std::make_unique<worker::WorkerEvaluator>(
        c, key, [&db, &c](const worker::NetworkKey& k) { db_load_network(db, c, k); });
    analysis::NetworkAnalyserConfig nc;
    nc.search = spec.search;
    nc.parallel = parallel;
    network_analyser = std::make_unique<analysis::NetworkAnalyser>(*evaluator, nc);
    engine = analysis::network_engine_name(spec.network, key.sha256_hex());
    limits_text = analysis::network_limits_text(spec);
  } else {
    analysis::AnalyserConfig config = analysis::analyser_config(spec);
    if (limit_given) config.limits = limits;
    config.jobs = jobs;
    config.multipv = multipv;
    config.hash_mb = hash;
    config.warm = warm;
    config.interrupt_check = [] { stop_if_interrupted(); };
    try {
      analyser = std::make_unique<analysis::Analyser>(config);
    } catch (const arena::UciError& e) {
      std::cerr << "pgmate analyse: " << e.what() << '\n';
      return 1;
    } catch (const std::invalid_argument& e) {
      throw UsageError(e.what());
    }
    engine = analyser->engine_name();
    limits_text = analyser->limits();
  }
  const bool with_lines = multipv > 1;

  std::vector<std::int64_t> ids;
  with_db_errors([&] {
    pqxx::nontransaction tx(*conn);
    for (const auto& row : tx.exec("SELECT id FROM pgmate.games g WHERE (" + where + ") ORDER BY id"))
      ids.push_back(row[0].as<std::int64_t>());
  });
  std::cerr << "pgmate analyse: " << ids.size() << " games, " << engine << " at " << limits_text << ", "
            << (network ? std::to_string(parallel) + " searches at once" : std::to_string(jobs) + (jobs == 1 ? " job" : " jobs"))
            << '\n';

  const bool tty = isatty(STDERR_FILENO);
  analysis::PendingEvals pending;
  std::int64_t saved = 0, failed = 0, positions_seen = 0, planned = 0;
  const auto started = Clock::now();
  auto last_line = started;
  const auto save = [&] {
    if (!pending.size()) return;
    const std::int64_t rows = pending.size();
    const std::string json = pending.take();
    with_db_errors([&] {
      pqxx::work tx(*conn, "pgmate_analyse");
      tx.exec_params("SELECT pgmate.save_position_evals($1, $2, $3::jsonb)", engine, limits_text, json);
      tx.commit();
    });
    saved += rows;
  };
  int status = 0;
  std::size_t games_done = 0;
  try {
    for (std::size_t begin = 0; begin < ids.size(); begin += std::size_t(chunk)) {
      const std::size_t end = std::min(ids.size(), begin + std::size_t(chunk));
      std::vector<chess::Board> positions;
      with_db_errors([&] {
        pqxx::nontransaction tx(*conn);
        const std::string games = id_array(ids, begin, end);
        positions_seen += tx.exec_params1("SELECT coalesce(sum(ply_count + 1), 0) FROM pgmate.games WHERE id = ANY ($1::bigint[])",
                                          games)[0]
                              .as<std::int64_t>();
        for (const auto& row : tx.exec_params("SELECT p::text FROM pgmate.analysis_positions($1::bigint[], $2, $3) p",
                                              games, engine, limits_text))
          positions.push_back(chess::parse_fen(row[0].as<std::string>()));
      });
      planned += std::int64_t(positions.size());
      std::int64_t chunk_done = 0;
      const auto done = [&](std::size_t i, analysis::PositionEval&& e) {
        ++chunk_done;
        pending.add(positions[i], e, with_lines);
      };
      const auto give_up = [&](std::size_t i, const std::string& message) {
        ++chunk_done;
        if (++failed <= 20) {
          if (tty) std::cerr << "\r\x1b[K";
          std::cerr << "pgmate analyse: gave up on " << chess::to_fen(positions[i]) << ": " << message << '\n';
        }
      };
      const auto tick = [&] {
        if (pending.due()) save();
        if (seconds_since(last_line) >= (tty ? 0.5 : 10.0)) {
          const double elapsed = seconds_since(started);
          const double share = analysis::analysis_progress(begin, end, ids.size(), chunk_done, positions.size());
          const double rate = double(saved + pending.size()) / std::max(1e-9, elapsed);
          std::cerr << (tty ? "\r" : "") << saved + pending.size() << " positions, " << fixed(rate, 1) << "/s, "
                    << fixed(100 * share, 1) << "% of the games, about "
                    << duration_text(share > 0 ? elapsed / share - elapsed : 0) << " left"
                    << (tty ? "\x1b[K" : "\n") << std::flush;
          last_line = Clock::now();
        }
        stop_if_interrupted();
      };
      if (network)
        network_analyser->run(positions, done, tick);
      else
        analyser->run(positions, done, give_up, tick);
      save();
      games_done = end;
    }
  } catch (const Interrupted&) {
    status = 130;
  } catch (const arena::UciError& e) {
    if (tty) std::cerr << "\r\x1b[K";
    std::cerr << "pgmate analyse: " << e.what() << '\n';
    status = 1;
  }
  save();  // what was evaluated before a stop is kept
  if (tty) std::cerr << "\r\x1b[K";
  const double elapsed = seconds_since(started);
  std::cout << "analysed " << saved << " positions of " << (status ? games_done : ids.size()) << " games with "
            << engine << " at " << limits_text << " in " << duration_text(elapsed) << " ("
            << fixed(double(saved) / std::max(1e-9, elapsed), 1) << " positions/s)";
  if (failed) std::cout << ", " << failed << " given up";
  if (const std::int64_t restarts = analyser ? analyser->stats().restarts : 0)
    std::cout << ", " << restarts << (restarts == 1 ? " engine" : " engines") << " replaced";
  std::cout << '\n';
  if (positions_seen)
    std::cout << "the games have " << positions_seen << " positions: " << planned
              << " were new to this engine and limits; the others were evaluated before or repeat a position "
              << "(transpositions: " << fixed(100.0 * double(positions_seen - planned) / double(positions_seen), 1)
              << "% saved)\n";
  if (status == 130) std::cerr << "pgmate analyse: interrupted; run it again to go on\n";
  // Positions given up are not stored: a second run tries them again.
  if (!status && failed) status = 1;
  return status;
}

}  // namespace pgmate::cli
