// CALL pgmate.learn: the learning loop of core/learning (loop.h) over the database. This
// file is its store: every statement the loop needs, each under pgmate's own search path
// (pinned_sql), and the CALLs of pgmate.selfplay, pgmate.train and pgmate.arena, which
// commit as they go and so run in the procedure's non-atomic context. Their arguments are
// typed parameters, never text put together.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "datum.h"
#include "guard.h"
#include "learning/loop.h"
#include "learning_jsonb.h"
#include "procedure.h"
#include "worker_link.h"

extern "C" {
#include "executor/spi.h"
#include "nodes/params.h"
}

using namespace pgmate;

namespace {

using learning::JsonObject;
using learning::JsonValue;

struct Param {
  Oid type;
  Datum value;
  bool null;
};
Param int8_param(std::int64_t x) { return {INT8OID, Int64GetDatum(x), false}; }
Param int4_param(int x) { return {INT4OID, Int32GetDatum(x), false}; }
Param float8_param(std::optional<double> x) { return {FLOAT8OID, Float8GetDatum(x.value_or(0)), !x}; }
Param text_param(const std::string& s) { return {TEXTOID, pg::text_datum(s), false}; }
Param jsonb_param(const std::string& json) { return {JSONBOID, pg::jsonb_of_text(json), false}; }
Param jsonb_param(const JsonObject& o) { return jsonb_param(learning::object_json(o)); }
Param optional_int8_param(std::optional<std::int64_t> x) { return {INT8OID, Int64GetDatum(x.value_or(0)), !x}; }

// A row of text values (nullopt: NULL).
using Row = std::vector<std::optional<std::string>>;

// The rows SPI_tuptable holds, copied out and freed.
std::vector<Row> copied_rows() {
  SPITupleTable* table = SPI_tuptable;
  std::vector<Row> rows;
  if (!table) return rows;
  const std::uint64_t n = SPI_processed;
  const int columns = table->tupdesc->natts;
  for (std::uint64_t i = 0; i < n; ++i) {
    Row row;
    for (int c = 1; c <= columns; ++c) {
      const char* value = pg::pg_call([&] { return SPI_getvalue(table->vals[i], table->tupdesc, c); });
      row.push_back(value ? std::optional<std::string>(value) : std::nullopt);
    }
    rows.push_back(std::move(row));
  }
  pg::pg_call([&] { SPI_freetuptable(table); });
  return rows;
}

// One statement of pgmate's own, under its search path (or the caller's, for the run's
// stored queries); its rows, or for a statement without any the rows it changed.
struct Result {
  std::vector<Row> rows;
  std::uint64_t processed = 0;
};
Result execute(const char* sql, const std::vector<Param>& params, bool pinned = true) {
  std::vector<Oid> types;
  std::vector<Datum> values;
  std::string nulls;
  for (const Param& p : params) {
    types.push_back(p.type);
    values.push_back(p.value);
    nulls.push_back(p.null ? 'n' : ' ');
  }
  std::uint64_t processed = 0;
  const auto run = [&] {
    if (SPI_execute_with_args(sql, int(params.size()), types.data(), values.data(), nulls.c_str(), false, 0) < 0)
      elog(ERROR, "learn: a statement failed: %s", sql);
    processed = SPI_processed;
  };
  if (pinned)
    pg::pinned_sql(run);
  else
    pg::pg_call(run);
  return {copied_rows(), processed};
}

// A CALL of a procedure that may commit (the loop's own context is non-atomic): its output
// row, if any.
std::vector<Row> call(const char* sql, const std::vector<Param>& params) {
  pg::pg_call([&] {
    ParamListInfo list = makeParamList(int(params.size()));
    for (std::size_t i = 0; i < params.size(); ++i) {
      list->params[i].value = params[i].value;
      list->params[i].isnull = params[i].null;
      list->params[i].pflags = PARAM_FLAG_CONST;
      list->params[i].ptype = params[i].type;
    }
    list->numParams = int(params.size());
    SPIExecuteOptions options;
    memset(&options, 0, sizeof options);
    options.params = list;
    options.read_only = false;
    options.allow_nonatomic = true;
    if (SPI_execute_extended(sql, &options) < 0) elog(ERROR, "learn: a call failed: %s", sql);
  });
  return copied_rows();
}

const std::string& cell(const Row& row, std::size_t column) {
  if (!row.at(column)) throw std::logic_error("learn: an unexpected NULL");
  return *row[column];
}
std::int64_t int_cell(const Row& row, std::size_t column) { return std::stoll(cell(row, column)); }
std::optional<std::int64_t> optional_int(const Row& row, std::size_t column) {
  return row.at(column) ? std::optional<std::int64_t>(std::stoll(*row[column])) : std::nullopt;
}
std::optional<double> optional_double(const Row& row, std::size_t column) {
  return row.at(column) ? std::optional<double>(std::stod(*row[column])) : std::nullopt;
}
// The single row of a query that returns one.
Row one_row(const Result& result, const char* what) {
  if (result.rows.size() != 1) throw std::logic_error(std::string("learn: no single row for ") + what);
  return result.rows[0];
}

#define RUN_COLUMNS                                                                                       \
  "lr.id, lr.owner::pg_catalog.text, lr.settings::pg_catalog.text, lr.start_network, lr.best_network, " \
  "lr.current_network, lr.iterations, lr.veto_level, lr.pretrain_mix, lr.lr, lr.current_share"

learning::RunState run_of(const Row& row) {
  learning::RunState r;
  r.id = int_cell(row, 0);
  r.owner = cell(row, 1);
  r.settings = pg::read_jsonb_text(cell(row, 2)).members;
  r.start_network = int_cell(row, 3);
  r.best_network = int_cell(row, 4);
  r.current_network = int_cell(row, 5);
  r.iterations = int(int_cell(row, 6));
  r.veto_level = int(int_cell(row, 7));
  r.pretrain_mix = std::stod(cell(row, 8));
  r.lr = std::stod(cell(row, 9));
  r.current_share = std::stod(cell(row, 10));
  return r;
}

class SpiLearningStore final : public learning::LearningStore {
 public:
  std::optional<learning::RunState> own_run(const std::string& name) override {
    const Result r = execute("SELECT " RUN_COLUMNS " FROM pgmate.learning_runs lr"
                             " WHERE lr.name = $1 AND lr.owner = pgmate.acting_role()",
                             {text_param(name)});
    if (r.rows.empty()) return std::nullopt;
    return run_of(r.rows[0]);
  }

  std::string other_owners(const std::string& name) override {
    const Row row = one_row(execute("SELECT pg_catalog.string_agg(lr.owner::pg_catalog.text, ', '"
                                    " ORDER BY lr.owner::pg_catalog.text)"
                                    " FROM pgmate.learning_runs lr WHERE lr.name = $1",
                                    {text_param(name)}),
                            "the owners");
    return row[0].value_or("");
  }

  learning::CallerRoles caller_roles() override {
    const Row row = one_row(execute("SELECT pgmate.login_role()::pg_catalog.text, pgmate.acting_role()::pg_catalog.text,"
                                    " CURRENT_USER::pg_catalog.text",
                                    {}),
                            "the roles");
    return {row[0].value_or(""), row[1].value_or(""), row[2].value_or("")};
  }

  learning::SettingsContext settings_context() override { return pg::database_context(); }

  std::string worker_device() override {
    const std::uint32_t database = superuser() ? 0 : std::uint32_t(MyDatabaseId);
    const std::string status = pg::with_worker([&](worker::WorkerClient& c) { return c.status_json(database); });
    const pg::JsonbInput in = pg::read_jsonb_text(status);
    const auto device = in.members.find("device");
    return device == in.members.end() || device->second.type == learning::JsonType::Null ? "cpu" : device->second.text;
  }

  bool network_exists(std::int64_t network) override {
    return !execute("SELECT 1 FROM pgmate.networks n WHERE n.id = $1", {int8_param(network)}).rows.empty();
  }

  std::int64_t init_network(const std::string& name, const std::string& preset, std::int64_t seed) override {
    return int_cell(one_row(execute("SELECT pgmate.init_network($1, pg_catalog.jsonb_build_object('preset', $2), $3)",
                                    {text_param(name), text_param(preset), int8_param(seed)}),
                            "a new network"),
                    0);
  }

  learning::RunState insert_run(const std::string& name, const JsonObject& settings, std::int64_t network) override {
    return run_of(one_row(
        execute("INSERT INTO pgmate.learning_runs AS lr"
                " (name, settings, start_network, best_network, current_network, pretrain_mix, lr)"
                " VALUES ($1, $2, $3, $3, $3, ($2 ->> 'pretrain_mix')::pg_catalog.float8, ($2 ->> 'lr')::pg_catalog.float8)"
                " RETURNING " RUN_COLUMNS,
                {text_param(name), jsonb_param(settings), int8_param(network)}),
        "the new run"));
  }

  learning::RunState reload(std::int64_t run) override {
    pg::check_for_interrupts();
    return run_of(one_row(execute("SELECT " RUN_COLUMNS " FROM pgmate.learning_runs lr WHERE lr.id = $1", {int8_param(run)}),
                          "the run"));
  }

  // A lease of this statement (pgmate.session_is_working): free again when it ends.
  bool lease(std::int64_t run) override {
    return execute("UPDATE pgmate.learning_runs lr"
                   " SET holder_pid = pg_backend_pid(),"
                   "     holder_backend_start = (SELECT a.backend_start FROM pg_stat_activity a WHERE a.pid = pg_backend_pid()),"
                   "     holder_since = clock_timestamp(), updated_at = now()"
                   " WHERE lr.id = $1"
                   "   AND (lr.holder_pid = pg_backend_pid() AND lr.holder_since >= statement_timestamp()"
                   "        OR NOT pgmate.session_is_working(lr.holder_pid, lr.holder_backend_start, lr.holder_since))",
                   {int8_param(run)})
               .processed > 0;
  }

  void release(std::int64_t run) override {
    execute("UPDATE pgmate.learning_runs"
            " SET holder_pid = NULL, holder_backend_start = NULL, holder_since = NULL, updated_at = now()"
            " WHERE id = $1",
            {int8_param(run)});
  }

  // Inside a transaction block SPI refuses, as COMMIT does: invalid transaction termination.
  void commit() override { pg::pg_call([] { SPI_commit(); }); }

  void notice(const std::string& message) override {
    pg::pg_call([&] { ereport(NOTICE, (errmsg("%s", message.c_str()))); });
  }
  void warning(const std::string& message) override {
    pg::pg_call([&] { ereport(WARNING, (errmsg("%s", message.c_str()))); });
  }

  std::vector<int> stored_game_indices(std::int64_t run, int iteration) override {
    std::vector<int> indices;
    for (const Row& row : execute("SELECT DISTINCT (g.selfplay ->> 'index')::pg_catalog.int4"
                                  " FROM pgmate.learning_games lg JOIN pgmate.games g ON g.id = lg.game_id"
                                  " WHERE lg.run_id = $1 AND lg.iteration = $2 AND g.selfplay ->> 'index' IS NOT NULL",
                                  {int8_param(run), int4_param(iteration)})
                              .rows)
      indices.push_back(int(int_cell(row, 0)));
    return indices;
  }

  void selfplay(int games, int simulations, std::int64_t network, int parallel, const JsonObject& options) override {
    call("CALL pgmate.selfplay($1, $2, $3, $4, $5)",
         {int4_param(games), int4_param(simulations), int8_param(network), int4_param(parallel), jsonb_param(options)});
  }

  std::optional<std::pair<std::int64_t, std::int64_t>> finished_training(std::int64_t network,
                                                                         const std::string& data_query,
                                                                         const std::string& owner) override {
    const Result r = execute("SELECT tr.new_network, tr.id FROM pgmate.training_runs tr"
                             " WHERE tr.network_id = $1 AND tr.data = $2 AND tr.status = 'finished'"
                             "   AND tr.owner = pg_catalog.to_regrole($3) AND tr.new_network IS NOT NULL"
                             " ORDER BY tr.id DESC LIMIT 1",
                             {int8_param(network), text_param(data_query), text_param(owner)});
    if (r.rows.empty()) return std::nullopt;
    return std::pair{int_cell(r.rows[0], 0), int_cell(r.rows[0], 1)};
  }

  std::int64_t new_full_search_positions(std::int64_t run, int iteration) override {
    return int_cell(one_row(execute("SELECT pg_catalog.count(*) FROM pgmate.learning_games lg"
                                    " JOIN pgmate.selfplay_positions p ON p.game_id = lg.game_id"
                                    " WHERE lg.run_id = $1 AND lg.iteration = $2 AND p.full_search",
                                    {int8_param(run), int4_param(iteration)}),
                            "the new positions"),
                    0);
  }

  std::optional<std::int64_t> carried_training(std::int64_t run, int iteration, std::int64_t candidate) override {
    const Result r = execute("SELECT i.training_run FROM pgmate.learning_iterations i"
                             " WHERE i.run_id = $1 AND i.iteration = $2 AND i.decision <> 'vetoed' AND i.candidate = $3",
                             {int8_param(run), int4_param(iteration), int8_param(candidate)});
    return r.rows.empty() ? std::nullopt : optional_int(r.rows[0], 0);
  }

  // The holdout and pretrain_data queries are the owner's own: CALL pgmate.train runs under
  // the caller's search path, as the queries it types do.
  std::int64_t train(std::int64_t network, const std::string& data_query, int steps, const JsonObject& options) override {
    const std::vector<Row> out = call("CALL pgmate.train($1, $2, $3, $4, NULL)",
                                      {int8_param(network), text_param(data_query), int8_param(steps), jsonb_param(options)});
    if (out.size() != 1 || !out[0].at(0)) throw std::logic_error("learn: pgmate.train returned no network");
    return std::stoll(*out[0][0]);
  }

  std::int64_t training_run_of(std::int64_t network, const std::string& owner) override {
    return int_cell(one_row(execute("SELECT tr.id FROM pgmate.training_runs tr"
                                    " WHERE tr.new_network = $1 AND tr.owner = pg_catalog.to_regrole($2)"
                                    " ORDER BY tr.id DESC LIMIT 1",
                                    {int8_param(network), text_param(owner)}),
                            "the training run"),
                    0);
  }

  learning::TrainingLog last_log(std::int64_t training_run) override {
    const Result r = execute("SELECT p.policy_loss, p.value_loss, p.kl, p.holdout_top1 FROM pgmate.training_progress p"
                             " WHERE p.run_id = $1 ORDER BY p.step DESC LIMIT 1",
                             {int8_param(training_run)});
    if (r.rows.empty()) return {};
    const Row& row = r.rows[0];
    return {optional_double(row, 0), optional_double(row, 1), optional_double(row, 2), optional_double(row, 3)};
  }

  // Only the caller's own match of that name counts (pgmate.arena plays and resumes the
  // caller's own matches too).
  JsonObject match(const learning::MatchRequest& m) override {
    const bool finished =
        !execute("SELECT 1 FROM pgmate.matches m WHERE m.name = $1 AND m.status <> 'running'"
                 " AND m.owner = pgmate.acting_role()",
                 {text_param(m.name)})
             .rows.empty();
    if (!finished) {
      JsonObject options{{"name", JsonValue::string(m.name)},
                         {"seed", JsonValue::number(std::to_string(m.seed))},
                         {"openings", JsonValue::string(m.openings)},
                         {"max_plies", JsonValue::number(std::to_string(m.max_plies))},
                         {"parallel", JsonValue::number(std::to_string(std::min(m.parallel, m.games)))}};
      for (const auto& [key, value] : m.extra) options[key] = value;
      call("CALL pgmate.arena($1, $2, $3, $4)",
           {jsonb_param(m.candidate.json), jsonb_param(m.opponent.json), int4_param(m.games), jsonb_param(options)});
    }
    const std::int64_t id = int_cell(
        one_row(execute("SELECT m.id FROM pgmate.matches m WHERE m.name = $1 AND m.owner = pgmate.acting_role()",
                        {text_param(m.name)}),
                "the match"),
        0);
    const Row row = one_row(
        execute("SELECT pg_catalog.jsonb_strip_nulls(pg_catalog.jsonb_build_object("
                "'match', r.name, 'match_id', r.match_id, 'opponent', $2, 'games', r.games, 'wins', r.wins,"
                " 'draws', r.draws, 'losses', r.losses, 'score', r.score, 'elo', r.elo, 'elo_lower', r.elo_lower,"
                " 'elo_upper', r.elo_upper, 'los', r.los, 'sprt', r.sprt_verdict))::pg_catalog.text"
                " FROM pgmate.match_results r WHERE r.match_id = $1",
                {int8_param(id), jsonb_param(m.opponent.json)}),
        "the match's result");
    return pg::read_jsonb_text(cell(row, 0)).members;
  }

  std::optional<std::int64_t> older_best(std::int64_t run, std::int64_t best, std::int64_t start,
                                         std::int64_t draw) override {
    const Result r = execute("SELECT o.x FROM (SELECT DISTINCT i.best_network AS x FROM pgmate.learning_iterations i"
                             "                WHERE i.run_id = $1) o"
                             " WHERE o.x NOT IN ($2, $3) ORDER BY pg_catalog.hashint8(o.x + $4) LIMIT 1",
                             {int8_param(run), int8_param(best), int8_param(start), int8_param(draw)});
    return r.rows.empty() ? std::nullopt : optional_int(r.rows[0], 0);
  }

  PlayedGames played_games(std::int64_t run, int iteration) override {
    const Row row = one_row(execute("SELECT pg_catalog.count(*), COALESCE(pg_catalog.sum(g.ply_count), 0)"
                                    " FROM pgmate.learning_games lg JOIN pgmate.games g ON g.id = lg.game_id"
                                    " WHERE lg.run_id = $1 AND lg.iteration = $2",
                                    {int8_param(run), int4_param(iteration)}),
                            "the games played");
    return {int(int_cell(row, 0)), int_cell(row, 1)};
  }

  std::optional<std::int64_t> training_samples(std::int64_t training_run) override {
    const Result r = execute("SELECT tr.samples FROM pgmate.training_runs tr WHERE tr.id = $1", {int8_param(training_run)});
    return r.rows.empty() ? std::nullopt : optional_int(r.rows[0], 0);
  }

  // pretrain_data is the owner's query: under the owner's search path.
  std::int64_t pretrain_rows(std::int64_t run, int iteration) override {
    return int_cell(one_row(execute("SELECT pg_catalog.count(*) FROM pgmate.learning_data($1, $2) d"
                                    " WHERE d.played IS NOT NULL",
                                    {int8_param(run), int4_param(iteration)}, false),
                            "the pretraining rows"),
                    0);
  }

  // The newest share of the games of the window this iteration trained on.
  int exclude_newest(std::int64_t run, int iteration, double share) override {
    return int(execute("WITH open_games AS (SELECT DISTINCT w.game_id AS id FROM pgmate.learning_window($1, $2) w)"
                       " INSERT INTO pgmate.learning_exclusions (run_id, game_id, iteration)"
                       " SELECT $1, o.id, $2 FROM open_games o ORDER BY o.id DESC"
                       " LIMIT pg_catalog.ceil($3 * (SELECT pg_catalog.count(*) FROM open_games))",
                       {int8_param(run), int4_param(iteration), float8_param(share)})
                   .processed);
  }

  void finish_iteration(const learning::RunState& r, const learning::IterationRow& i) override {
    execute("UPDATE pgmate.learning_runs"
            " SET iterations = $2, current_network = $3, best_network = $4, veto_level = $5, pretrain_mix = $6,"
            "     lr = $7, current_share = $8, updated_at = now()"
            " WHERE id = $1",
            {int8_param(r.id), int4_param(r.iterations), int8_param(r.current_network), int8_param(r.best_network),
             int4_param(r.veto_level), float8_param(r.pretrain_mix), float8_param(r.lr), float8_param(r.current_share)});
    JsonObject best;  // the match against the best network, read once
    if (i.arena && i.arena->count("best")) best = pg::read_jsonb_text(i.arena->at("best").json).members;
    const auto best_number = [&](const char* key) -> std::optional<double> {
      const JsonObject& m = best;
      const auto v = m.find(key);
      if (v == m.end() || v->second.type == learning::JsonType::Null) return std::nullopt;
      return std::stod(v->second.text);
    };
    execute("INSERT INTO pgmate.learning_iterations"
            " (run_id, iteration, best_network, candidate, training_run, games, positions, window_positions,"
            "  pretrain_positions, policy_loss, value_loss, kl, holdout_top1, arena, promotion_score, promotion_elo,"
            "  promotion_elo_lower, promotion_elo_upper, decision, reason, veto_level, pretrain_mix, lr, excluded_games,"
            "  selfplay_seconds, training_seconds, arena_seconds)"
            " VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21,"
            "         $22, $23, $24, $25, $26, $27)",
            {int8_param(i.run_id), int4_param(i.iteration), int8_param(i.best_network), int8_param(i.candidate),
             int8_param(i.training_run), int4_param(i.games), int8_param(i.positions),
             optional_int8_param(i.window_positions), int8_param(i.pretrain_positions), float8_param(i.log.policy_loss),
             float8_param(i.log.value_loss), float8_param(i.log.kl), float8_param(i.log.holdout_top1),
             i.arena ? jsonb_param(*i.arena) : Param{JSONBOID, Datum(0), true}, float8_param(best_number("score")),
             float8_param(best_number("elo")), float8_param(best_number("elo_lower")),
             float8_param(best_number("elo_upper")), text_param(i.decision), text_param(i.reason),
             int4_param(i.veto_level), float8_param(i.pretrain_mix), float8_param(i.lr), int4_param(i.excluded_games),
             float8_param(i.selfplay_seconds), float8_param(i.training_seconds), float8_param(i.arena_seconds)});
  }
};

int sqlstate_of(learning::LearnError::Kind kind) {
  switch (kind) {
    case learning::LearnError::Kind::InsufficientPrivilege: return ERRCODE_INSUFFICIENT_PRIVILEGE;
    case learning::LearnError::Kind::LockNotAvailable: return ERRCODE_LOCK_NOT_AVAILABLE;
    default: return ERRCODE_INVALID_PARAMETER_VALUE;
  }
}

}  // namespace

// CALL pgmate.learn(run text, iterations int, options jsonb DEFAULT '{}'): see 99_learn.sql.
PGMATE_FUNCTION(learn_procedure) {
  learning::LearnCall request;
  if (!PG_ARGISNULL(0)) request.run = pg::text_arg(fcinfo, 0);
  if (!PG_ARGISNULL(1)) request.iterations = PG_GETARG_INT32(1);
  if (PG_ARGISNULL(2)) {
    request.options_type = learning::JsonType::Null;
    request.options_json = "null";
  } else {
    pg::JsonbInput options = pg::read_jsonb(PG_GETARG_DATUM(2));
    request.options_type = options.type;
    request.options_json = std::move(options.json);
    request.options = std::move(options.members);
  }
  // Outside a transaction block the loop commits as it goes; inside one its first commit
  // is refused (invalid transaction termination), after the options were checked.
  pg::pg_call([&] { SPI_connect_ext(pg::nonatomic_call(fcinfo) ? SPI_OPT_NONATOMIC : 0); });
  SpiLearningStore store;
  try {
    learning::learn(store, request);
  } catch (const learning::OptionError& e) {
    pg::raise(e);
  } catch (const learning::LearnError& e) {
    pg::raise_error(sqlstate_of(e.kind()), e.what(), e.hint());
  }
  pg::pg_call([] { SPI_finish(); });
  PG_RETURN_VOID();
}
