// Engine analysis in SQL: the formulas of core/analysis (lichess's win%, accuracy, move
// classes) as functions for the views, and CALL pgmate.analyse, which evaluates every
// position of a set of games with UCI engines run by this backend.
#include <chrono>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "analysis/accuracy.h"
#include "analysis/analyser.h"
#include "analysis/evaluation.h"
#include "analysis/network_analyser.h"
#include "mcts/selfplay.h"
#include "arena/uci_engine.h"
#include "link/worker_evaluator.h"
#include "chess/fen.h"
#include "common/text.h"
#include "datum.h"
#include "networks.h"
#include "procedure.h"
#include "worker_link.h"

extern "C" {
#include "access/genam.h"
#include "access/table.h"
#include "access/xact.h"
#include "catalog/indexing.h"
#include "catalog/pg_extension.h"
#include "commands/extension.h"
#include "storage/proc.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/jsonb.h"
#include "utils/varlena.h"
#include "catalog/pg_authid_d.h"
#include "commands/trigger.h"
#include "executor/spi.h"
#include "utils/acl.h"
}

using namespace pgmate;

// without_clocks(board) -> board: the position with halfmove 0 and fullmove 1.
PGMATE_FUNCTION(board_without_clocks) {
  return pg::board_to_datum(analysis::without_clocks(pg::board_arg(fcinfo, 0)));
}

namespace {

// Why the evaluation given as (position board, score_cp int, mate int, best_move move,
// pv move[], lines jsonb) cannot be stored; "" when it can.
std::string eval_row_problem_of(FunctionCallInfo fcinfo) {
  const chess::Board position = pg::board_arg(fcinfo, 0);
  std::optional<analysis::Score> score;
  if (!PG_ARGISNULL(2)) score = analysis::Score{true, PG_GETARG_INT32(2)};
  else if (!PG_ARGISNULL(1)) score = analysis::Score{false, PG_GETARG_INT32(1)};
  const chess::Move best = PG_ARGISNULL(3) ? chess::Move() : pg::move_arg(fcinfo, 3);
  std::vector<chess::Move> pv;
  if (!PG_ARGISNULL(4)) {
    const pg::MoveValues v = pg::move_values_arg(fcinfo, 4);
    if (v.first_null >= 0) return "pv has a NULL move at " + std::to_string(v.first_null + 1);
    if (v.dimensions > 1) return "pv has more than one dimension";
    for (std::uint16_t bits : v.present) pv.push_back(chess::Move(bits));
  }
  std::optional<std::string> lines;
  if (!PG_ARGISNULL(5))
    lines = pg::pg_call([&] { return std::string(DatumGetCString(DirectFunctionCall1(jsonb_out, PG_GETARG_DATUM(5)))); });
  return analysis::stored_eval_problem(position, score, best, pv, lines);
}

}  // namespace

// pgmate.eval_row_problem(position board, score_cp int, mate int, best_move move, pv move[],
// lines jsonb) -> text: why pgmate.position_evals cannot take a row, NULL when it can.
PGMATE_FUNCTION(eval_row_problem) {
  if (PG_ARGISNULL(0)) PG_RETURN_NULL();
  const std::string problem = eval_row_problem_of(fcinfo);
  if (problem.empty()) PG_RETURN_NULL();
  return pg::text_datum(problem);
}

// pgmate.eval_row_believable(the same arguments) -> bool: true, or 22023 naming the
// position and the reason (pgmate.position_evals' check constraint: one check per row, with
// the reason in its message).
PGMATE_FUNCTION(eval_row_believable) {
  if (PG_ARGISNULL(0)) PG_RETURN_NULL();
  const std::string problem = eval_row_problem_of(fcinfo);
  if (problem.empty()) PG_RETURN_BOOL(true);
  throw pg::SqlError(ERRCODE_INVALID_PARAMETER_VALUE,
                     "evaluation of " + chess::to_fen(pg::board_arg(fcinfo, 0)) + " refused: " + problem);
}

namespace pgmate::pg {
char* eval_writers_setting = nullptr;
}

namespace {

// The extension's owner, looked up once: the role that installed pgmate, whose evaluations
// every session reads.
Oid extension_owner() {
  static Oid owner = InvalidOid;
  if (OidIsValid(owner)) return owner;
  pg::pg_call([&] {
    const Oid ext = get_extension_oid("pgmate", false);
    Relation rel = table_open(ExtensionRelationId, AccessShareLock);
    ScanKeyData key;
    ScanKeyInit(&key, Anum_pg_extension_oid, BTEqualStrategyNumber, F_OIDEQ, ObjectIdGetDatum(ext));
    SysScanDesc scan = systable_beginscan(rel, ExtensionOidIndexId, true, nullptr, 1, &key);
    if (HeapTuple tuple = systable_getnext(scan); HeapTupleIsValid(tuple))
      owner = reinterpret_cast<Form_pg_extension>(GETSTRUCT(tuple))->extowner;
    systable_endscan(scan);
    table_close(rel, AccessShareLock);
  });
  return owner;
}

// pgmate.eval_writers as role oids (InvalidOid for '*': any role), resolved again in each
// transaction (a role may be made or dropped between them) and when the setting changes.
const std::vector<Oid>& eval_writers() {
  static std::vector<Oid> oids;
  static std::string setting;
  static LocalTransactionId resolved_in = InvalidLocalTransactionId;
  const char* now = pg::eval_writers_setting ? pg::eval_writers_setting : "";
  if (resolved_in == MyProc->lxid && setting == now) return oids;
  // The names (as SplitIdentifierString reads them: unquoted ones folded to lower case),
  // then each looked up; PostgreSQL's calls hold no C++ object across them.
  std::vector<std::string> names;
  pg::pg_call([&] {
    char* copy = pstrdup(now);
    List* list = nullptr;
    if (SplitIdentifierString(copy, ',', &list)) {
      ListCell* cell;
      foreach (cell, list) names.emplace_back(static_cast<const char*>(lfirst(cell)));
    }
    list_free(list);
    pfree(copy);
  });
  std::vector<Oid> fresh;
  for (const std::string& name : names) {
    if (name == "*") {
      fresh.push_back(InvalidOid);
    } else if (const Oid role = pg::pg_call([&] { return get_role_oid(name.c_str(), true); }); OidIsValid(role)) {
      fresh.push_back(role);
    }
  }
  oids = std::move(fresh);
  setting = now;
  resolved_in = MyProc->lxid;
  return oids;
}

}  // namespace

// pgmate.eval_writer_rank(writer regrole) -> int: whether this session reads a row of
// pgmate.position_evals its writer stored, and in which preference: 0 its own (the current
// role's), then pgmate.eval_writers in order, then the extension's owner; NULL for a writer
// it does not read.
PGMATE_FUNCTION(eval_writer_rank) {
  const Oid writer = PG_GETARG_OID(0);
  if (writer == GetUserId()) PG_RETURN_INT32(0);
  const std::vector<Oid>& listed = eval_writers();
  for (std::size_t i = 0; i < listed.size(); ++i)
    if (listed[i] == writer) PG_RETURN_INT32(int(i) + 1);
  if (writer == extension_owner()) PG_RETURN_INT32(1000);
  for (std::size_t i = 0; i < listed.size(); ++i)
    if (!OidIsValid(listed[i]) && OidIsValid(writer)) PG_RETURN_INT32(1001 + int(i));
  PG_RETURN_NULL();
}

// pgmate.position_evals_writer(): pgmate.position_evals' row trigger (BEFORE INSERT OR
// UPDATE). A row's writer is the role that stores it, whatever the statement says: only a
// role with the table owner's rights (a restore) names another. In C: an import stores a
// row for each [%eval] comment, and the PL/pgSQL version cost half of storing one.
PGMATE_FUNCTION(position_evals_writer) {
  if (!CALLED_AS_TRIGGER(fcinfo)) throw pg::SqlError(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED, "not called as a trigger");
  TriggerData* td = reinterpret_cast<TriggerData*>(fcinfo->context);
  const TriggerEvent event = td->tg_event;
  if (!TRIGGER_FIRED_BEFORE(event) || !TRIGGER_FIRED_FOR_ROW(event) ||
      !(TRIGGER_FIRED_BY_INSERT(event) || TRIGGER_FIRED_BY_UPDATE(event)))
    throw pg::SqlError(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED,
                       "position_evals_writer: a row trigger before INSERT or UPDATE only");
  return pg::pg_call([&] {
    HeapTuple row = TRIGGER_FIRED_BY_UPDATE(event) ? td->tg_newtuple : td->tg_trigtuple;
    const TupleDesc desc = RelationGetDescr(td->tg_relation);
    const int column = SPI_fnumber(desc, "writer");
    if (column <= 0) elog(ERROR, "position_evals_writer: the table has no column writer");
    bool is_null;
    const Datum named = heap_getattr(row, column, desc, &is_null);
    const Oid user = GetUserId();
    if (!is_null && (DatumGetObjectId(named) == user || has_privs_of_role(user, td->tg_relation->rd_rel->relowner)))
      return PointerGetDatum(row);
    int columns[1] = {column};
    Datum values[1] = {ObjectIdGetDatum(user)};
    bool nulls[1] = {false};
    return PointerGetDatum(heap_modify_tuple_by_cols(row, desc, 1, columns, values, nulls));
  });
}

// pgmate.win_percent(cp int) -> float8: lichess's winning chances, 0 to 100.
PGMATE_FUNCTION(analysis_win_percent) { return Float8GetDatum(analysis::win_percent(PG_GETARG_INT32(0))); }

// pgmate.move_accuracy(win_before float8, win_after float8) -> float8, 0 to 100.
PGMATE_FUNCTION(analysis_move_accuracy) {
  return Float8GetDatum(analysis::move_accuracy(PG_GETARG_FLOAT8(0), PG_GETARG_FLOAT8(1)));
}

// pgmate.move_class(chances_lost float8) -> text: blunder, mistake, inaccuracy or NULL.
PGMATE_FUNCTION(analysis_move_class) {
  const std::string_view c = analysis::move_class(PG_GETARG_FLOAT8(0));
  if (c.empty()) PG_RETURN_NULL();
  return pg::text_datum(c);
}

// pgmate.move_judgement(cp_before int, mate_before int, cp_after int, mate_after int) -> text:
// the class of a move from its scores (mover's view; one of cp and mate given on each side).
PGMATE_FUNCTION(analysis_move_judgement) {
  const auto score = [&](int cp_arg, int mate_arg) -> std::optional<analysis::Score> {
    if (!PG_ARGISNULL(mate_arg)) return analysis::Score{true, PG_GETARG_INT32(mate_arg)};
    if (!PG_ARGISNULL(cp_arg)) return analysis::Score{false, PG_GETARG_INT32(cp_arg)};
    return std::nullopt;
  };
  const auto before = score(0, 1), after = score(2, 3);
  if (!before || !after) PG_RETURN_NULL();
  const std::string_view c = analysis::move_class(*before, *after);
  if (c.empty()) PG_RETURN_NULL();
  return pg::text_datum(c);
}

// pgmate.accuracy_of_game(cps int[], white_first bool)
//   -> SETOF (side text, accuracy float8, acpl float8, moves int)
PGMATE_FUNCTION(analysis_accuracy_of_game) {
  std::vector<int> cps;
  for (Datum d : pg::array_elements(fcinfo, 0, "cps")) cps.push_back(DatumGetInt32(d));
  const analysis::GameAccuracy a = analysis::game_accuracy(cps, PG_GETARG_BOOL(1));
  pg::pg_call([&] {
    InitMaterializedSRF(fcinfo, 0);
    ReturnSetInfo* rsinfo = reinterpret_cast<ReturnSetInfo*>(fcinfo->resultinfo);
    const auto put = [&](const char* side, const std::optional<analysis::SideAccuracy>& s) {
      if (!s) return;
      Datum values[4] = {CStringGetTextDatum(side), Float8GetDatum(s->accuracy), Float8GetDatum(s->acpl),
                         Int32GetDatum(s->moves)};
      bool nulls[4] = {false, false, false, false};
      tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
    };
    put("white", a.white);
    put("black", a.black);
  });
  return Datum(0);
}

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

void notice(const std::string& text) { pg::pg_call([&] { ereport(NOTICE, (errmsg("%s", text.c_str()))); }); }

// The most game ids one analysis reads: a vector of 8 bytes each (80 MB), however large the
// games query. More is refused with a hint to analyse in parts.
constexpr std::size_t kMaxGames = 10000000;
constexpr long kIdsPerFetch = 10000;

// The game ids the caller's query returns (its first column, bigint or int), read through a
// cursor a few thousand at a time (never the whole result in SPI's memory). The query is
// prepared, so it is one SELECT (or VALUES ...), never several statements, and it runs
// read-only with the caller's rights and search path.
std::vector<std::int64_t> game_ids(const std::string& query) {
  std::string q = query;
  while (!q.empty() && (q.back() == ';' || q.back() == ' ' || q.back() == '\n' || q.back() == '\t')) q.pop_back();
  const std::string sql = "SELECT q.* FROM (" + q + "\n) q";
  Portal portal = pg::pg_call([&] {
    SPIPlanPtr plan = SPI_prepare(sql.c_str(), 0, nullptr);
    if (!plan)
      ereport(ERROR, (errcode(ERRCODE_SYNTAX_ERROR),
                      errmsg("the games query must be one SELECT: %s", SPI_result_code_string(SPI_result))));
    if (!SPI_is_cursor_plan(plan))
      ereport(ERROR, (errcode(ERRCODE_SYNTAX_ERROR), errmsg("the games query must be one SELECT, not several statements")));
    return SPI_cursor_open(nullptr, plan, nullptr, nullptr, true);
  });
  std::vector<std::int64_t> ids;
  for (;;) {
    pg::check_for_interrupts();
    const bool more = pg::pg_call([&] {
      SPI_cursor_fetch(portal, true, kIdsPerFetch);
      TupleDesc desc = SPI_tuptable->tupdesc;
      const Oid type = SPI_gettypeid(desc, 1);
      if (type != INT8OID && type != INT4OID)
        ereport(ERROR, (errcode(ERRCODE_DATATYPE_MISMATCH),
                        errmsg("the games query must return game ids (bigint) in its first column, not %s",
                               format_type_be(type))));
      for (uint64 i = 0; i < SPI_processed; ++i) {
        bool null = false;
        const Datum d = SPI_getbinval(SPI_tuptable->vals[i], desc, 1, &null);
        if (!null) ids.push_back(type == INT8OID ? DatumGetInt64(d) : DatumGetInt32(d));
      }
      const bool got = SPI_processed > 0;
      SPI_freetuptable(SPI_tuptable);
      return got;
    });
    if (ids.size() > kMaxGames)
      throw pg::SqlError(ERRCODE_PROGRAM_LIMIT_EXCEEDED,
                         "the games query returns more than " + std::to_string(kMaxGames) +
                             " games: analyse them in parts (WHERE id BETWEEN ...)");
    if (!more) break;
  }
  pg::pg_call([&] { SPI_cursor_close(portal); });
  return ids;
}

Datum int8_array(const std::vector<std::int64_t>& ids, std::size_t begin, std::size_t end) {
  std::vector<Datum> values;
  for (std::size_t i = begin; i < end; ++i) values.push_back(Int64GetDatum(ids[i]));
  return pg::make_array(values, INT8OID);
}

}  // namespace

// CALL pgmate.analyse(games text, engine jsonb, options jsonb DEFAULT '{}')
PGMATE_FUNCTION(analyse_procedure) {
  if (PG_ARGISNULL(0) || PG_ARGISNULL(1))
    throw pg::SqlError(ERRCODE_NULL_VALUE_NOT_ALLOWED, "games and engine must not be NULL");
  const std::string games_query = pg::text_arg(fcinfo, 0);
  const bool nonatomic = pg::nonatomic_call(fcinfo);
  pg::pg_call([&] { SPI_connect_ext(nonatomic ? SPI_OPT_NONATOMIC : 0); });
  const bool commit_as_we_go = nonatomic && !IsSubTransaction();

  const arena::PlayerSpec spec = pg::player_spec_of_jsonb(PG_GETARG_DATUM(1), "engine");
  const bool network = spec.type == arena::PlayerType::kNetwork;
  if (!network && spec.type != arena::PlayerType::kUci)
    throw pg::SqlError(ERRCODE_INVALID_PARAMETER_VALUE,
                       "engine: analysis takes a UCI engine, such as '\"uci:/usr/games/stockfish\"', or a network, "
                       "such as '\"net:3:64\"'");
  // A UCI engine is a program run on the server, as COPY ... PROGRAM runs one.
  if (!network && !pg::pg_call([] { return has_privs_of_role(GetUserId(), ROLE_PG_EXECUTE_SERVER_PROGRAM); }))
    throw pg::SqlError(ERRCODE_INSUFFICIENT_PRIVILEGE,
                       "an analysis runs a program on the server: only superusers and members of "
                       "pg_execute_server_program may run one");
  analysis::AnalyserConfig config;
  if (!network) config = analysis::analyser_config(spec);
  int chunk = 1000, parallel = 64;
  bool limit_given = false;
  arena::UciLimits limits;
  if (!PG_ARGISNULL(2)) {
    for (const pg::Option& o : pg::read_options(PG_GETARG_DATUM(2))) {
      const auto number = [&](long lo, long hi) {
        long v = 0;
        std::size_t used = 0;
        try {
          if (o.value) v = std::stol(*o.value, &used);
        } catch (const std::exception&) {
          used = 0;
        }
        if (!o.value || used != o.value->size() || v < lo || v > hi)
          throw pg::SqlError(ERRCODE_INVALID_PARAMETER_VALUE, "option " + o.key + " must be a whole number from " +
                                                                  std::to_string(lo) + " to " + std::to_string(hi));
        return v;
      };
      if (o.key == "nodes") {
        limits.nodes = number(1, 1000000000000L);
        limit_given = true;
      } else if (o.key == "depth") {
        limits.depth = int(number(1, 255));
        limit_given = true;
      } else if (o.key == "movetime") {
        limits.movetime_ms = number(1, 3600000);
        limit_given = true;
      } else if (o.key == "multipv") {
        config.multipv = int(number(1, 64));
      } else if (o.key == "jobs") {
        config.jobs = int(number(1, 256));
      } else if (o.key == "hash") {
        config.hash_mb = int(number(1, 65536));
      } else if (o.key == "chunk") {
        chunk = int(number(1, 1000000));
      } else if (o.key == "parallel") {
        parallel = int(number(1, 4096));
      } else if (o.key == "move_timeout") {
        config.move_deadline = std::chrono::milliseconds(number(1, 86400000));
      } else if (o.key == "max_failures") {
        config.max_failures_in_a_row = int(number(0, 1000000));
      } else if (o.key == "warm") {
        if (!o.value || (*o.value != "true" && *o.value != "false"))
          throw pg::SqlError(ERRCODE_INVALID_PARAMETER_VALUE, "option warm must be true or false");
        config.warm = *o.value == "true";
      } else {
        throw pg::SqlError(ERRCODE_INVALID_PARAMETER_VALUE,
                           "unknown option " + quote_input(o.key, 64) +
                               " (options: nodes, depth, movetime, multipv, jobs, hash, chunk, move_timeout, "
                               "max_failures, warm; parallel for a network)");
      }
    }
  }
  if (network && (limit_given || config.multipv > 1 || config.warm))
    throw pg::SqlError(ERRCODE_INVALID_PARAMETER_VALUE,
                       "options nodes, depth, movetime, multipv and warm are for UCI engines: a network searches the "
                       "simulations of its spec (net:ID:S), each position afresh");
  if (limit_given) config.limits = limits;
  config.interrupt_check = [] { pg::check_for_interrupts(); };

  // The engine: UCI processes run by this backend, or the network on the worker. Both are
  // checked (the program starts, the caller may read the network) before the games query
  // runs, so a call that cannot work reads nothing.
  std::unique_ptr<analysis::Analyser> analyser;
  std::unique_ptr<worker::WorkerEvaluator> evaluator;
  std::unique_ptr<analysis::NetworkAnalyser> network_analyser;
  std::string engine, limits_text;
  if (network) {
    worker::NetworkKey key;
    evaluator = pg::network_evaluator(spec.network, &key);  // checks the caller may read it
    analysis::NetworkAnalyserConfig nc;
    nc.search = spec.search;
    nc.parallel = parallel;
    // The search trees live in this backend: the same bound as self-play's, before any work.
    mcts::SelfPlayConfig trees;
    trees.search = spec.search;
    trees.parallel = parallel;
    trees.games = parallel;
    trees.cache_entries = 0;
    pg::check_tree_memory(mcts::estimated_memory_bytes(trees),
                          "a network analysis with " + std::to_string(parallel) + " searches at once of " +
                              std::to_string(spec.search.simulations) + " simulations needs",
                          "lower parallel or the simulations");
    network_analyser = std::make_unique<analysis::NetworkAnalyser>(*evaluator, nc);
    engine = analysis::network_engine_name(spec.network, key.sha256_hex());
    limits_text = analysis::network_limits_text(spec);
  } else {
    pg::kill_engines_when_the_backend_exits();
    try {
      analyser = std::make_unique<analysis::Analyser>(config);
    } catch (const arena::UciError& e) {
      throw pg::SqlError(ERRCODE_EXTERNAL_ROUTINE_EXCEPTION, e.what());
    } catch (const std::invalid_argument& e) {
      throw pg::SqlError(ERRCODE_INVALID_PARAMETER_VALUE, e.what());
    }
    engine = analyser->engine_name();
    limits_text = analyser->limits();
  }
  const std::vector<std::int64_t> ids = game_ids(games_query);
  const bool with_lines = config.multipv > 1;

  analysis::PendingEvals pending;
  std::int64_t saved = 0, failed = 0;
  auto last_notice = Clock::now();
  const auto started = Clock::now();
  const auto save = [&] {
    if (!pending.size()) return;
    const std::int64_t rows = pending.size();
    const std::string json = pending.take();
    pg::pinned_sql([&] {
      Oid types[3] = {TEXTOID, TEXTOID, JSONBOID};
      Datum values[3] = {CStringGetTextDatum(engine.c_str()), CStringGetTextDatum(limits_text.c_str()),
                         DirectFunctionCall1(jsonb_in, CStringGetDatum(json.c_str()))};
      SPI_execute_with_args("SELECT pgmate.save_position_evals($1, $2, $3)", 3, types, values, nullptr, false, 0);
    });
    if (commit_as_we_go) pg::pg_call([] { SPI_commit(); });
    saved += rows;
  };

  for (std::size_t begin = 0; begin < ids.size(); begin += std::size_t(chunk)) {
    const std::size_t end = std::min(ids.size(), begin + std::size_t(chunk));
    // The positions of these games not yet evaluated by this engine at these limits, each
    // once, in the order the games reach them.
    std::vector<chess::Board> positions;
    pg::pinned_sql([&] {
      Oid types[3] = {INT8ARRAYOID, TEXTOID, TEXTOID};
      Datum values[3] = {int8_array(ids, begin, end), CStringGetTextDatum(engine.c_str()),
                         CStringGetTextDatum(limits_text.c_str())};
      SPI_execute_with_args("SELECT p FROM pgmate.analysis_positions($1, $2, $3) p", 3, types, values, nullptr, true, 0);
    });
    for (uint64 i = 0; i < SPI_processed; ++i) {
      bool null = false;
      positions.push_back(pg::board_from_datum(SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1, &null)));
    }
    if (positions.empty()) continue;
    std::int64_t chunk_done = 0;
    const auto done = [&](std::size_t i, analysis::PositionEval&& e) {
      ++chunk_done;
      pending.add(positions[i], e, with_lines);
    };
    const auto give_up = [&](std::size_t i, const std::string& message) {
      ++chunk_done;
      if (++failed <= 5) notice("analyse: gave up on " + chess::to_fen(positions[i]) + ": " + message);
    };
    try {
      const auto tick = [&] {
            if (pending.due()) save();
            if (seconds_since(last_notice) >= 10) {
              const double elapsed = seconds_since(started);
              const double rate = double(saved + pending.size()) / std::max(1e-9, elapsed);
              const double share = analysis::analysis_progress(begin, end, ids.size(), chunk_done, positions.size());
              notice("analyse: " + std::to_string(saved + pending.size()) + " positions evaluated, " +
                     std::to_string(int(rate)) + "/s, " + std::to_string(int(share * 100)) + "% of " +
                     std::to_string(ids.size()) + " games, about " +
                     duration_text(share > 0 ? elapsed / share - elapsed : 0) + " left");
              last_notice = Clock::now();
            }
            pg::check_for_interrupts();
          };
      if (network)
        network_analyser->run(positions, done, tick);
      else
        analyser->run(positions, done, give_up, tick);
    } catch (const arena::UciError& e) {
      save();
      throw pg::SqlError(ERRCODE_EXTERNAL_ROUTINE_EXCEPTION, e.what());
    } catch (...) {
      if (network) pg::rethrow_worker_failure();  // worker failures -> 08006; others unchanged
      throw;
    }
    save();
  }
  save();
  notice("analyse: " + std::to_string(saved) + " positions of " + std::to_string(ids.size()) + " games evaluated by " +
         engine + " at " + limits_text + (failed ? ", " + std::to_string(failed) + " given up" : "") + " in " +
         duration_text(seconds_since(started)));
  pg::pg_call([] { SPI_finish(); });
  PG_RETURN_VOID();
}
