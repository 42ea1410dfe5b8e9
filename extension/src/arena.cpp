// The arena in SQL: player specs, match statistics (Elo with intervals, pentanomial, SPRT),
// Bradley-Terry ratings over every stored arena game, and CALL pgmate.arena, a match
// played inside the backend (arena::MatchRunner), each game a row of pgmate.games
// committed on its own when the CALL runs outside a transaction block.
#include <chrono>
#include <cmath>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "arena/match.h"
#include "arena/match_options.h"
#include "arena/openings.h"
#include "arena/player_spec.h"
#include "arena/stats.h"
#include "arena/uci_engine.h"
#include "chess/fen.h"
#include "chess/notation.h"
#include "link/worker_evaluator.h"
#include "common/json.h"
#include "common/text.h"
#include "mcts/selfplay.h"
#include "datum.h"
#include "link/game_rows.h"
#include "networks.h"
#include "procedure.h"
#include "worker_link.h"

extern "C" {
#include "access/htup_details.h"
#include "access/xact.h"
#include "catalog/pg_authid_d.h"
#include "executor/spi.h"
#include "funcapi.h"
#include "storage/ipc.h"
#include "utils/acl.h"
}

using namespace pgmate;

namespace {

std::int64_t count_arg(FunctionCallInfo fcinfo, int n, const char* name) {
  const std::int64_t v = PG_GETARG_INT64(n);
  if (v < 0) throw pg::SqlError(ERRCODE_INVALID_PARAMETER_VALUE, std::string(name) + " must not be negative");
  return v;
}

// A composite result of float8 columns (and a last text column when `text` is given).
Datum float_record(FunctionCallInfo fcinfo, const std::vector<double>& numbers, const std::vector<std::int64_t>& counts,
                   const std::optional<std::string>& text = std::nullopt) {
  return pg::pg_call([&] {
    TupleDesc desc;
    if (get_call_result_type(fcinfo, nullptr, &desc) != TYPEFUNC_COMPOSITE)
      ereport(ERROR, (errcode(ERRCODE_FEATURE_NOT_SUPPORTED), errmsg("a record is returned here")));
    desc = BlessTupleDesc(desc);
    std::vector<Datum> values;
    std::vector<bool> nulls;
    for (std::int64_t c : counts) values.push_back(Int64GetDatum(c)), nulls.push_back(false);
    for (double x : numbers) values.push_back(Float8GetDatum(x)), nulls.push_back(std::isnan(x));
    if (text) values.push_back(CStringGetTextDatum(text->c_str())), nulls.push_back(false);
    bool null_flags[16];
    for (size_t i = 0; i < nulls.size(); ++i) null_flags[i] = nulls[i];
    return HeapTupleGetDatum(heap_form_tuple(desc, values.data(), null_flags));
  });
}

Datum jsonb_datum(const std::string& json) {
  return pg::pg_call([&] { return DirectFunctionCall1(jsonb_in, CStringGetDatum(json.c_str())); });
}

// The canonical text of a jsonb value (keys in jsonb's order), so specs compare as text.
std::string jsonb_text(const std::string& json) {
  return pg::pinned_sql([&] {
    Oid types[1] = {TEXTOID};
    Datum values[1] = {CStringGetTextDatum(json.c_str())};
    SPI_execute_with_args("SELECT $1::jsonb::text", 1, types, values, nullptr, false, 0);
    return std::string(SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1));
  });
}

std::string verdict_name(arena::SprtVerdict v) {
  return v == arena::SprtVerdict::kAcceptH1 ? "H1" : v == arena::SprtVerdict::kAcceptH0 ? "H0" : "continue";
}

}  // namespace

// pgmate.player_spec(spec text) -> jsonb: the spec as a match stores it, every setting
// resolved. 22023 naming what is wrong.
PGMATE_FUNCTION(arena_player_spec) {
  try {
    return jsonb_datum(arena::to_json(arena::parse_player_spec(pg::text_arg(fcinfo, 0))));
  } catch (const std::invalid_argument& e) {
    throw pg::SqlError(ERRCODE_INVALID_PARAMETER_VALUE, e.what());
  }
}

// pgmate.elo(wins, draws, losses) -> (games, score, draw_ratio, elo, elo_lower, elo_upper, los)
PGMATE_FUNCTION(arena_elo) {
  const arena::TrinomialCounts c{count_arg(fcinfo, 0, "wins"), count_arg(fcinfo, 1, "draws"),
                                 count_arg(fcinfo, 2, "losses")};
  const arena::MatchSummary s = arena::summarize(c);
  return float_record(fcinfo, {s.score, s.draw_ratio, s.elo, s.elo_lower, s.elo_upper, s.los}, {s.games});
}

// pgmate.pentanomial_elo(ll, ld, dd_wl, wd, ww) -> the same from game pairs
PGMATE_FUNCTION(arena_pentanomial_elo) {
  const arena::PentanomialCounts c{count_arg(fcinfo, 0, "ll"), count_arg(fcinfo, 1, "ld"),
                                   count_arg(fcinfo, 2, "dd_wl"), count_arg(fcinfo, 3, "wd"), count_arg(fcinfo, 4, "ww")};
  const arena::MatchSummary s = arena::summarize(c);
  return float_record(fcinfo, {s.score, s.draw_ratio, s.elo, s.elo_lower, s.elo_upper, s.los}, {s.games});
}

// pgmate.sprt(ll, ld, dd_wl, wd, ww, elo0, elo1, alpha, beta) -> (llr, lower_bound, upper_bound, verdict)
PGMATE_FUNCTION(arena_sprt) {
  const arena::PentanomialCounts c{count_arg(fcinfo, 0, "ll"), count_arg(fcinfo, 1, "ld"),
                                   count_arg(fcinfo, 2, "dd_wl"), count_arg(fcinfo, 3, "wd"), count_arg(fcinfo, 4, "ww")};
  arena::SprtParameters p{PG_GETARG_FLOAT8(5), PG_GETARG_FLOAT8(6), PG_GETARG_FLOAT8(7), PG_GETARG_FLOAT8(8)};
  if (!(p.elo1 > p.elo0)) throw pg::SqlError(ERRCODE_INVALID_PARAMETER_VALUE, "elo1 must be above elo0");
  if (!(p.alpha > 0 && p.alpha < 0.5 && p.beta > 0 && p.beta < 0.5))
    throw pg::SqlError(ERRCODE_INVALID_PARAMETER_VALUE, "alpha and beta must be between 0 and 0.5");
  const arena::SprtResult r = arena::sprt(c, p);
  return float_record(fcinfo, {r.llr, r.lower_bound, r.upper_bound}, {}, verdict_name(r.verdict));
}

// pgmate.ratings(anchor jsonb, anchor_elo float8)
//   -> SETOF (player jsonb, name text, elo float8, elo_stderr float8, games bigint, points float8)
// Bradley-Terry over every game of pgmate.matches, players told apart by their stored spec.
PGMATE_FUNCTION(arena_ratings) {
  const double anchor_elo = PG_GETARG_FLOAT8(1);
  pg::pg_call([] { SPI_connect(); });
  const arena::PlayerSpec anchor_spec = pg::player_spec_of_jsonb(PG_GETARG_DATUM(0), "anchor");
  const std::string anchor = jsonb_text(arena::to_json(anchor_spec));
  std::map<std::string, int> ids;
  std::vector<std::string> players;
  const auto id_of = [&](const std::string& spec) {
    const auto [it, added] = ids.emplace(spec, int(players.size()));
    if (added) players.push_back(spec);
    return it->second;
  };
  std::vector<arena::GameScore> games;
  pg::pinned_sql([] {
    SPI_execute(
        "SELECT m.a::text, m.b::text, (g.arena->>'a_white')::bool, g.result FROM pgmate.games g "
        "JOIN pgmate.matches m ON m.id = g.match_id WHERE g.result <> '*'",
        true, 0);
  });
  for (uint64 i = 0; i < SPI_processed; ++i) {
    HeapTuple row = SPI_tuptable->vals[i];
    TupleDesc desc = SPI_tuptable->tupdesc;
    const std::string a = pg::pg_call([&] { return std::string(SPI_getvalue(row, desc, 1)); });
    const std::string b = pg::pg_call([&] { return std::string(SPI_getvalue(row, desc, 2)); });
    const bool a_white = std::string(pg::pg_call([&] { return SPI_getvalue(row, desc, 3); })) == "t";
    const std::string result = pg::pg_call([&] { return std::string(SPI_getvalue(row, desc, 4)); });
    if (a == b) continue;  // a player against itself says nothing about its rating
    const double score = result == "1/2-1/2" ? 0.5 : (result == "1-0") == a_white ? 1.0 : 0.0;
    games.push_back({id_of(a), id_of(b), score});
  }
  const auto anchor_at = ids.find(anchor);
  if (anchor_at == ids.end())
    throw pg::SqlError(ERRCODE_INVALID_PARAMETER_VALUE,
                       "the anchor " + anchor + " has played no arena game; anchor the ratings to a player that has");
  const arena::RatingResult ratings = arena::bradley_terry(int(players.size()), games, anchor_at->second, anchor_elo);

  pg::pg_call([&] { InitMaterializedSRF(fcinfo, 0); });
  ReturnSetInfo* rsinfo = reinterpret_cast<ReturnSetInfo*>(fcinfo->resultinfo);
  for (std::size_t p = 0; p < players.size(); ++p) {
    const arena::PlayerRating& r = ratings.players[p];
    std::string name;
    try {
      name = arena::display_name(arena::parse_player_spec(players[p]));
    } catch (const std::invalid_argument&) {
      name = players[p];  // a spec edited by hand: shown as stored
    }
    const Datum spec = jsonb_datum(players[p]);
    pg::pg_call([&] {
      Datum values[6] = {spec, CStringGetTextDatum(name.c_str()), Float8GetDatum(r.elo), Float8GetDatum(r.elo_stderr),
                         Int64GetDatum(r.games), Float8GetDatum(r.points)};
      bool nulls[6] = {false, false, std::isnan(r.elo), std::isnan(r.elo_stderr), false, false};
      tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
    });
  }
  pg::pg_call([] { SPI_finish(); });
  return Datum(0);
}

namespace {

// The match row: created, or taken up when the players and options are the same.
struct MatchRow {
  std::int64_t id = 0;
  std::vector<std::pair<std::int64_t, double>> games;  // stored: (index, A's score)
};

MatchRow claim_match(const std::string& name, const std::string& a, const std::string& b, const std::string& options,
                     int games) {
  MatchRow m;
  pg::pinned_sql([&] {
    Oid types[4] = {TEXTOID, TEXTOID, TEXTOID, TEXTOID};
    Datum values[4] = {CStringGetTextDatum(name.c_str()), CStringGetTextDatum(a.c_str()), CStringGetTextDatum(b.c_str()),
                       CStringGetTextDatum(options.c_str())};
    SPI_execute_with_args(
        "SELECT id, a = $2::jsonb, b = $3::jsonb, options = $4::jsonb, a::text, b::text, options::text "
        "FROM pgmate.matches WHERE name = $1 AND owner = pgmate.acting_role() FOR UPDATE",
        4, types, values, nullptr, false, 0);
  });
  if (SPI_processed == 0) {
    m.id = pg::pinned_sql([&] {
      Oid types[5] = {TEXTOID, TEXTOID, TEXTOID, TEXTOID, INT4OID};
      Datum values[5] = {CStringGetTextDatum(name.c_str()), CStringGetTextDatum(a.c_str()),
                         CStringGetTextDatum(b.c_str()), CStringGetTextDatum(options.c_str()), Int32GetDatum(games)};
      SPI_execute_with_args(rows::kInsertMatch, 5, types, values, nullptr, false, 0);
      bool is_null;
      return DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &is_null));
    });
    return m;
  }
  HeapTuple row = SPI_tuptable->vals[0];
  TupleDesc desc = SPI_tuptable->tupdesc;
  m.id = std::stoll(pg::pg_call([&] { return SPI_getvalue(row, desc, 1); }));
  const char* what[3] = {"player A", "player B", "set of options"};
  for (int k = 0; k < 3; ++k) {
    if (std::string(pg::pg_call([&] { return SPI_getvalue(row, desc, 2 + k); })) != "t")
      throw pg::SqlError(ERRCODE_INVALID_PARAMETER_VALUE,
                         "match " + quote_input(name, 100) + " exists with another " + what[k] + " (" +
                             pg::pg_call([&] { return std::string(SPI_getvalue(row, desc, 5 + k)); }) +
                             "): resume it with the same settings, or choose another name");
  }
  pg::pinned_sql([&] {
    Oid types[2] = {INT8OID, INT4OID};
    Datum values[2] = {Int64GetDatum(m.id), Int32GetDatum(games)};
    SPI_execute_with_args(
        "UPDATE pgmate.matches SET games = greatest(games, $2), status = 'running', finished_at = NULL WHERE id = $1", 2,
        types, values, nullptr, false, 0);
    SPI_execute_with_args(
        "SELECT (arena->>'index')::bigint, result, (arena->>'a_white')::bool FROM pgmate.games WHERE match_id = $1", 1,
        types, values, nullptr, true, 0);
  });
  for (uint64 i = 0; i < SPI_processed; ++i) {
    HeapTuple r = SPI_tuptable->vals[i];
    TupleDesc d = SPI_tuptable->tupdesc;
    const std::int64_t index = std::stoll(pg::pg_call([&] { return SPI_getvalue(r, d, 1); }));
    const std::string result = pg::pg_call([&] { return std::string(SPI_getvalue(r, d, 2)); });
    const bool a_white = std::string(pg::pg_call([&] { return SPI_getvalue(r, d, 3); })) == "t";
    m.games.emplace_back(index, result == "1/2-1/2" ? 0.5 : (result == "1-0") == a_white ? 1.0 : 0.0);
  }
  return m;
}

std::vector<arena::Opening> eco_openings() {
  std::vector<arena::Opening> out;
  const chess::Board start = chess::parse_fen("startpos");
  pg::pinned_sql([] {
    SPI_execute("SELECT eco || ' ' || name || coalesce(': ' || variation, ''), moves::text FROM pgmate.openings ORDER BY id",
                true, 0);
  });
  for (uint64 i = 0; i < SPI_processed; ++i) {
    HeapTuple r = SPI_tuptable->vals[i];
    TupleDesc d = SPI_tuptable->tupdesc;
    arena::Opening o;
    o.name = pg::pg_call([&] { return std::string(SPI_getvalue(r, d, 1)); });
    o.start = start;
    const std::string moves = pg::pg_call([&] { return std::string(SPI_getvalue(r, d, 2)); });
    chess::Board b = start;
    std::string word;
    for (char c : moves) {
      if (c == '{' || c == '}' || c == ',') {
        if (!word.empty()) {
          const chess::Move m = chess::resolve_move(b, chess::parse_uci_syntax(word));
          b.play(m);
          o.moves.push_back(m);
        }
        word.clear();
      } else {
        word += c;
      }
    }
    out.push_back(std::move(o));
  }
  if (out.empty())
    throw pg::SqlError(ERRCODE_INVALID_PARAMETER_VALUE,
                       "pgmate.openings is empty: load the ECO lines (pgmate import --openings), or use openings "
                       "'startpos'");
  return out;
}

class ArenaWriter {
 public:
  ArenaWriter() : types_(pg::sql_types()) {
    memory_ = pg::pg_call([] { return AllocSetContextCreate(CurrentMemoryContext, "pgmate arena game", ALLOCSET_DEFAULT_SIZES); });
  }
  void write(std::int64_t match_id, const arena::MatchGame& game,
             const std::vector<std::pair<std::string, std::string>>& tags, const std::string& arena_json) {
    MemoryContextSwitchTo(memory_);
    const rows::ArenaGameTags t = rows::arena_game_tags(tags);
    std::vector<Datum> moves;
    for (chess::Move m : game.moves) moves.push_back(pg::move_to_datum(m));
    Datum values[11] = {pg::text_datum(t.event),      pg::text_datum(t.round),
                        pg::text_datum(t.white),      pg::text_datum(t.black),
                        pg::text_datum(game.result),  pg::text_datum(game.termination),
                        pg::board_to_datum(game.start), pg::make_array(moves, types_.move),
                        jsonb_datum(t.json),          Int64GetDatum(match_id),
                        jsonb_datum(arena_json)};
    pg::pinned_sql([&] {
      Oid types[11] = {TEXTOID, TEXTOID, TEXTOID,           TEXTOID,   TEXTOID, TEXTOID,
                       types_.board, types_.move_array, JSONBOID, INT8OID, JSONBOID};
      SPI_execute_with_args(rows::kInsertArenaGame, 11, types, values, nullptr, false, 0);
    });
  }
  void end_game(bool commit) {
    pg::pg_call([&] {
      MemoryContext previous = MemoryContextSwitchTo(memory_);
      if (commit) SPI_commit();
      MemoryContextSwitchTo(previous);
      MemoryContextReset(memory_);
    });
  }

 private:
  pg::SqlTypes types_;
  MemoryContext memory_ = nullptr;
};

void end_match(std::int64_t id, const std::string& status, double seconds) {
  pg::pinned_sql([&] {
    Oid types[3] = {INT8OID, TEXTOID, FLOAT8OID};
    Datum values[3] = {Int64GetDatum(id), CStringGetTextDatum(status.c_str()), Float8GetDatum(seconds)};
    SPI_execute_with_args(
        "UPDATE pgmate.matches SET status = $2, seconds = seconds + $3,"
        " finished_at = CASE WHEN $2 = 'running' THEN NULL ELSE now() END WHERE id = $1",
        3, types, values, nullptr, false, 0);
  });
}

struct Decided {};

}  // namespace

// CALL pgmate.arena(a jsonb, b jsonb, games int, options jsonb DEFAULT '{}')
PGMATE_FUNCTION(arena_procedure) {
  const int games = pg::int_arg(fcinfo, 2, "games");
  if (PG_ARGISNULL(0) || PG_ARGISNULL(1))
    throw pg::SqlError(ERRCODE_NULL_VALUE_NOT_ALLOWED, "the players a and b must not be NULL");
  const bool nonatomic = pg::nonatomic_call(fcinfo);
  pg::pg_call([&] { SPI_connect_ext(nonatomic ? SPI_OPT_NONATOMIC : 0); });
  const bool commit_each_game = nonatomic && !IsSubTransaction();

  arena::PlayerSpec specs[2] = {pg::player_spec_of_jsonb(PG_GETARG_DATUM(0), "player a"), pg::player_spec_of_jsonb(PG_GETARG_DATUM(1), "player b")};
  // A UCI player runs a program on the server, as COPY ... PROGRAM does.
  for (const auto& spec : specs)
    if (spec.type == arena::PlayerType::kUci &&
        !pg::pg_call([] { return has_privs_of_role(GetUserId(), ROLE_PG_EXECUTE_SERVER_PROGRAM); }))
      throw pg::SqlError(ERRCODE_INSUFFICIENT_PRIVILEGE,
                         "a uci player runs a program on the server: only superusers and members of "
                         "pg_execute_server_program may use one");

  arena::MatchOptions options;
  try {
    arena::set_match_option(options, "games", std::to_string(games));
  } catch (const std::invalid_argument& e) {
    throw pg::SqlError(ERRCODE_INVALID_PARAMETER_VALUE, std::string("argument games: ") + e.what());
  }
  if (!PG_ARGISNULL(3)) {
    for (const pg::Option& option : pg::read_options(PG_GETARG_DATUM(3))) {
      if (!option.value)
        throw pg::SqlError(ERRCODE_INVALID_PARAMETER_VALUE, "option " + quote_input(option.key, 64) + " must not be null");
      if (option.key == "games")
        throw pg::SqlError(ERRCODE_INVALID_PARAMETER_VALUE, "option games is an argument of pgmate.arena: pass it there");
      try {
        arena::set_match_option(options, option.key, *option.value);
      } catch (const std::invalid_argument& e) {
        throw pg::SqlError(ERRCODE_INVALID_PARAMETER_VALUE, e.what());
      }
    }
  }
  if (options.openings != "startpos" && options.openings != "eco")
    throw pg::SqlError(ERRCODE_INVALID_PARAMETER_VALUE,
                       "option openings must be startpos or eco here (the pgmate arena client reads files)");
  if (!options.seeded) options.seed = options.name.empty() ? pg::fresh_seed() : arena::seed_of_name(options.name);
  const std::string name = options.name.empty() ? arena::default_match_name(specs[0], specs[1], options.seed) : options.name;
  arena::MatchConfig config;
  try {
    config = arena::match_config(options);
  } catch (const std::invalid_argument& e) {
    throw pg::SqlError(ERRCODE_INVALID_PARAMETER_VALUE, e.what());
  }
  // The search trees live in this backend: refuse what would not fit before building anything.
  std::size_t need = 0;
  for (const auto& spec : specs) {
    if (spec.type != arena::PlayerType::kMcts && spec.type != arena::PlayerType::kNetwork) continue;
    mcts::SelfPlayConfig trees;
    trees.search = spec.search;
    trees.parallel = std::min(options.parallel, games);
    trees.games = games;
    trees.cache_entries = 0;
    need += mcts::estimated_memory_bytes(trees);
  }
  pg::check_tree_memory(need, "this match's search trees need", "lower parallel or the simulations");

  std::vector<arena::Opening> openings =
      options.openings == "eco" ? eco_openings() : arena::start_position_opening();
  if (options.openings == "eco") arena::shuffle_openings(openings, options.seed);

  std::vector<std::unique_ptr<worker::WorkerEvaluator>> evaluators;
  const auto evaluator_for = [&](const arena::PlayerSpec& spec) -> mcts::Evaluator& {
    evaluators.push_back(pg::network_evaluator(spec.network));  // checks the caller may read it
    return *evaluators.back();
  };
  const bool has_network = specs[0].type == arena::PlayerType::kNetwork || specs[1].type == arena::PlayerType::kNetwork;
  // Cancel, statement_timeout and terminate reach a match however its engines behave.
  config.interrupt_check = [] { pg::check_for_interrupts(); };
  if (specs[0].type == arena::PlayerType::kUci || specs[1].type == arena::PlayerType::kUci)
    pg::kill_engines_when_the_backend_exits();
  // Made before the match row: an engine that cannot start or a network that cannot be
  // read fails the call with nothing stored.
  std::unique_ptr<arena::MatchRunner> runner;
  try {
    runner = std::make_unique<arena::MatchRunner>(config, specs[0], specs[1], openings, evaluator_for);
  } catch (const arena::UciError& e) {
    throw pg::SqlError(ERRCODE_EXTERNAL_ROUTINE_EXCEPTION, e.what());
  }

  const MatchRow match = claim_match(name, arena::to_json(specs[0]), arena::to_json(specs[1]),
                                     arena::match_options_json(options), games);
  arena::MatchTally tally;
  std::set<std::int64_t> done;
  for (const auto& [index, score] : match.games) {
    tally.add(index, score);
    done.insert(index);
  }
  std::vector<std::int64_t> indexes;
  for (std::int64_t i = 0; i < games; ++i)
    if (!done.count(i)) indexes.push_back(i);
  if (commit_each_game) pg::pg_call([] { SPI_commit(); });  // the match row, before any game

  const auto verdict = [&] {
    return options.sprt ? arena::sprt(tally.pentanomial(), *options.sprt).verdict : arena::SprtVerdict::kContinue;
  };

  ArenaWriter writer;
  const auto started = std::chrono::steady_clock::now();
  const auto seconds = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count(); };
  std::string status = "finished";
  try {
    if (verdict() != arena::SprtVerdict::kContinue) throw Decided{};
    runner->run(
        indexes,
        [&](arena::MatchGame& game) {
          writer.write(match.id, game, arena::game_tags(game, name, specs[0], specs[1]), arena::game_arena_json(game, name));
          writer.end_game(commit_each_game);
          tally.add(game.index, game.a_score());
          const std::string message = "arena: game " + std::to_string(game.index + 1) + "/" + std::to_string(games) +
                                      " " + game.result + " (" + game.termination + "), " + tally.line();
          pg::pg_call([&] { ereport(NOTICE, (errmsg("%s", message.c_str()))); });
          if (verdict() != arena::SprtVerdict::kContinue) throw Decided{};
        },
        [](const arena::MatchStats&) { pg::check_for_interrupts(); });
  } catch (const Decided&) {
    status = verdict() == arena::SprtVerdict::kAcceptH1 ? "sprt_h1" : "sprt_h0";
  } catch (const arena::UciError& e) {
    throw pg::SqlError(ERRCODE_EXTERNAL_ROUTINE_EXCEPTION, e.what());
  } catch (...) {
    if (has_network) pg::rethrow_worker_failure();  // worker failures -> 08006; others unchanged
    throw;
  }
  end_match(match.id, status, seconds());
  const std::string summary = "arena: " + name + ": " + tally.line() + (status == "finished" ? "" : " (" + status + ")");
  pg::pg_call([&] { ereport(NOTICE, (errmsg("%s", summary.c_str()))); });
  pg::pg_call([] { SPI_finish(); });
  PG_RETURN_VOID();
}
