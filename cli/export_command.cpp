// pgmate export: games of pgmate.games as PGN, streamed (a server-side cursor, a thousand
// games a fetch), so memory stays flat whatever the number of games. The PGN of each game
// is the extension's to_pgn(game): what `pgmate import` reads back as the same game. With
// --evals it is pgmate.to_pgn_with_evals(game): the evaluations of pgmate.position_evals as
// [%eval] comments and ?!, ?, ?? marks, as lichess exports an analysed game. On a
// coordinator of shards (pgmate_cluster) the condition picks games of pgmate_cluster.games
// and each shard writes the PGN of its own, with its own evaluations.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include <pqxx/pqxx>

#include "args.h"
#include "commands.h"
#include "db.h"
#include "progress.h"

namespace pgmate::cli {

namespace {

constexpr int kFetch = 1000;

// Whether the database is a coordinator whose shards are set (pgmate_cluster).
bool is_coordinator(pqxx::connection& conn) {
  pqxx::nontransaction tx(conn);
  if (!tx.exec1("SELECT to_regprocedure('pgmate_cluster.games_pgn(bigint[], boolean, text, text)') IS NOT NULL")[0]
           .as<bool>())
    return false;
  return !tx.exec1("SELECT shards FROM pgmate_cluster.settings")[0].is_null();
}

}  // namespace

int export_command(const std::vector<std::string>& args) {
  std::string conninfo, where = "true", out = "-", engine, limits;
  bool evals = false;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto value = [&]() -> const std::string& {
      if (i + 1 >= args.size()) throw UsageError(a + " needs a value");
      return args[++i];
    };
    if (a == "--db") conninfo = value();
    else if (a == "--where") where = value();
    else if (a == "--out") out = value();
    else if (a == "--evals") evals = true;
    else if (a == "--engine") engine = value();
    else if (a == "--limits") limits = value();
    else throw UsageError("unknown argument \"" + a + "\"");
  }
  if (where.empty()) throw UsageError("--where needs a condition, e.g. \"white = 'Carlsen, Magnus'\"");
  if (!evals && (!engine.empty() || !limits.empty())) throw UsageError("--engine and --limits go with --evals");

  // A file is written under a temporary name and renamed when complete: an export that
  // stops half way leaves no half file behind.
  const bool to_stdout = out == "-";
  const std::string partial = out + ".partial";
  std::ofstream file;
  if (!to_stdout) {
    file.open(partial, std::ios::binary | std::ios::trunc);
    if (!file) throw UsageError("cannot write " + partial);
  }
  std::ostream& sink = to_stdout ? std::cout : file;
  auto conn = connect_db(conninfo);
  require_table(*conn, "pgmate.games");
  const bool cluster = is_coordinator(*conn);
  std::uint64_t games = 0, gone = 0;
  Progress progress(0, "games");
  try {
    with_db_errors([&] {
      // One snapshot for the whole export, and nothing the condition could change.
      pqxx::work tx(*conn, "pgmate_export");
      tx.exec0("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY");
      const std::string engine_sql = engine.empty() ? std::string("NULL") : tx.quote(engine);
      const std::string limits_sql = limits.empty() ? std::string("NULL") : tx.quote(limits);
      const std::string pgn = evals ? "pgmate.to_pgn_with_evals(g, " + engine_sql + ", " + limits_sql + ")"
                                    : std::string("to_pgn(g)");
      // A coordinator's cursor gives the games' ids; their PGN comes from their shards.
      tx.exec0("DECLARE pgmate_export NO SCROLL CURSOR FOR SELECT " + (cluster ? std::string("g.id") : pgn) +
               " FROM " + (cluster ? "pgmate_cluster" : "pgmate") + ".games g WHERE (" + where + ") ORDER BY g.id");
      for (;;) {
        pqxx::result rows = tx.exec("FETCH " + std::to_string(kFetch) + " FROM pgmate_export");
        const std::size_t fetched = rows.size();
        if (cluster && fetched > 0) {
          std::string ids = "{";
          for (const auto& row : rows) ids += (ids.size() > 1 ? "," : "") + row[0].as<std::string>();
          ids += "}";
          rows = tx.exec_params("SELECT pgn FROM pgmate_cluster.games_pgn($1::bigint[], $2, " + engine_sql + ", " +
                                    limits_sql + ")",
                                ids, evals);
          gone += fetched - rows.size();  // deleted on their shard since the coordinator listed them
        }
        for (const auto& row : rows) {
          if (games > 0) sink << '\n';
          sink << row[0].as<std::string>();
          ++games;
        }
        progress.update(0, games);
        if (fetched < static_cast<std::size_t>(kFetch)) break;
      }
      tx.commit();
    });
  } catch (...) {
    progress.finish();
    if (!to_stdout) {
      file.close();
      std::remove(partial.c_str());
    }
    throw;
  }
  progress.finish();
  sink.flush();
  if (!to_stdout) {
    file.close();
    if (!file) throw std::runtime_error("cannot write " + partial);
    std::filesystem::rename(partial, out);
  }
  if (gone > 0)
    std::cerr << "pgmate export: " << gone << (gone == 1 ? " game was" : " games were")
              << " deleted on its shard while the export ran, and left out\n";
  if (!to_stdout) std::cout << "exported " << games << " games to " << out << "\n";
  else std::cerr << "pgmate export: " << games << " games\n";
  return 0;
}

}  // namespace pgmate::cli
