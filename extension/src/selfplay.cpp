// CALL pgmate.selfplay(games, simulations, network, parallel, options): MCTS self-play
// inside the backend. mcts::SelfPlayRunner plays the games (every game in progress adds
// its leaves to one evaluation batch per round); each finished game becomes a row of
// pgmate.games plus one row per ply of pgmate.selfplay_positions. A CALL outside a
// transaction block commits after every game, so an interrupted run keeps the games it
// finished; inside a transaction block the games commit (or roll back) with it.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "link/worker_evaluator.h"
#include "common/text.h"
#include "mcts/rollout_evaluator.h"
#include "mcts/selfplay.h"
#include "datum.h"
#include "link/game_rows.h"
#include "networks.h"
#include "procedure.h"
#include "worker_link.h"

extern "C" {
#include "access/xact.h"
#include "executor/spi.h"
#include "nodes/parsenodes.h"
#include "utils/timestamp.h"
}

using namespace pgmate;

namespace {

// Writes finished games. Datums of one game live in game_memory, reset after each game:
// transaction memory is no place for them once games commit one by one.
class GameWriter {
 public:
  GameWriter(std::optional<std::int64_t> network, std::string player)
      : types_(pg::sql_types()), network_(network), player_(std::move(player)) {
    game_memory_ = pg::pg_call([] {
      return AllocSetContextCreate(CurrentMemoryContext, "pgmate selfplay game", ALLOCSET_DEFAULT_SIZES);
    });
  }

  // Inserts the game and its positions, and records it as a learning iteration's game
  // when `run` is one of the loop's labels; returns the game's id.
  std::int64_t write(const mcts::FinishedGame& game, const std::string& parameters, const std::string& run) {
    const std::int64_t id = insert_game(game, parameters);
    insert_positions(id, game);
    record_learning_game(run, id);
    return id;
  }

  // pgmate.learning_game: the learning loop trusts only the games recorded there, and only
  // a run's owner may record games under its labels (a NULL id checks the label alone).
  static void record_learning_game(const std::string& run, std::optional<std::int64_t> id) {
    pg::pinned_sql([&] {
      Oid types[2] = {TEXTOID, INT8OID};
      Datum values[2] = {pg::text_datum(run), Int64GetDatum(id.value_or(0))};
      const char nulls[2] = {' ', id ? ' ' : 'n'};
      SPI_execute_with_args("SELECT pgmate.learning_game($1, $2)", 2, types, values, nulls, false, 0);
      SPI_freetuptable(SPI_tuptable);
    });
  }

  // Frees the game's datums, committing first when asked. The commit runs with the game's
  // memory current: what committing leaves in the current context (some bytes each time)
  // then goes with the game instead of piling up in SPI's context for the whole call.
  void end_game(bool commit) {
    pg::pg_call([&] {
      MemoryContext previous = MemoryContextSwitchTo(game_memory_);
      if (commit) SPI_commit();
      MemoryContextSwitchTo(previous);
      MemoryContextReset(game_memory_);
    });
  }

 private:
  Datum move_array(const std::vector<chess::Move>& moves) {
    std::vector<Datum> elements;
    elements.reserve(moves.size());
    for (chess::Move m : moves) elements.push_back(pg::move_to_datum(m));
    return pg::make_array(elements, types_.move);
  }

  std::int64_t insert_game(const mcts::FinishedGame& game, const std::string& parameters) {
    MemoryContextSwitchTo(game_memory_);
    Datum values[8] = {
        pg::text_datum(std::to_string(game.index + 1)),
        pg::text_datum(player_),
        pg::text_datum(game.result),
        pg::text_datum(game.termination),
        pg::board_to_datum(game.start),
        move_array(game.moves),
        Int64GetDatum(network_.value_or(0)),
        pg::pg_call([&] { return DirectFunctionCall1(jsonb_in, CStringGetDatum(parameters.c_str())); }),
    };
    const std::int64_t id = pg::pinned_sql([&] {
      Oid types[8] = {TEXTOID, TEXTOID, TEXTOID, TEXTOID, types_.board, types_.move_array, INT8OID, JSONBOID};
      SPI_execute_with_args(rows::kInsertSelfplayGame, 8, types, values, nullptr, false, 0);
      bool is_null = false;
      const std::int64_t id =
          SPI_processed == 1 ? DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &is_null)) : 0;
      SPI_freetuptable(SPI_tuptable);
      return id;
    });
    if (id == 0) throw pg::SqlError(ERRCODE_TRIGGERED_ACTION_EXCEPTION, "pgmate.games refused a self-play game (a trigger?)");
    return id;
  }

  void insert_positions(std::int64_t game_id, const mcts::FinishedGame& game) {
    // Prepared per game: the plan then never outlives the transaction it was made in.
    SPIPlanPtr plan = pg::pinned_sql([&] {
      Oid types[12] = {INT8OID,        INT4OID,   types_.board, types_.move_array, INT4ARRAYOID,
                       FLOAT4ARRAYOID, FLOAT4OID, types_.move,  FLOAT4ARRAYOID,    INT4OID, BOOLOID, FLOAT4OID};
      return SPI_prepare(
          "INSERT INTO pgmate.selfplay_positions"
          " (game_id, ply, board, moves, visits, priors, value, played, policy, repetitions, full_search, draw)"
          " VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)",
          12, types);
    });
    if (!plan) throw pg::SqlError(ERRCODE_INTERNAL_ERROR, "could not prepare the selfplay_positions insert");
    std::vector<Datum> visits, priors, policy;
    for (size_t ply = 0; ply < game.plies.size(); ++ply) {
      const mcts::PlyRecord& record = game.plies[ply];
      // SPI calls return in the SPI procedure context: come back for every position.
      MemoryContextSwitchTo(game_memory_);
      visits.clear();
      priors.clear();
      policy.clear();
      for (std::uint32_t v : record.visits)
        visits.push_back(Int32GetDatum(int32(std::min<std::uint32_t>(v, std::numeric_limits<int32>::max()))));
      for (float p : record.priors) priors.push_back(Float4GetDatum(p));
      for (float p : record.policy) policy.push_back(Float4GetDatum(p));
      Datum values[12] = {
          Int64GetDatum(game_id),
          Int32GetDatum(int32(ply)),
          pg::board_to_datum(record.board),
          move_array(record.moves),
          pg::make_array(visits, INT4OID),
          pg::make_array(priors, FLOAT4OID),
          Float4GetDatum(record.value),
          pg::move_to_datum(record.played),
          pg::make_array(policy, FLOAT4OID),
          Int32GetDatum(record.repetitions),
          BoolGetDatum(record.full_search),
          Float4GetDatum(record.draw),
      };
      pg::pinned_sql([&] { SPI_execute_plan(plan, values, nullptr, false, 0); });
    }
    pg::pg_call([&] { SPI_freeplan(plan); });
  }

  pg::SqlTypes types_;
  std::optional<std::int64_t> network_;
  std::string player_;
  MemoryContext game_memory_ = nullptr;
};

std::string one_decimal(double x) {
  char text[32];
  snprintf(text, sizeof text, "%.1f", x);
  return text;
}

}  // namespace

// pgmate.search_wdl(q real, d real) -> real[]: {win, draw, loss} of a search (mcts::search_wdl;
// d NULL for positions stored without it).
PGMATE_FUNCTION(search_wdl) {
  if (PG_ARGISNULL(0)) PG_RETURN_NULL();
  const mcts::SearchWdl w =
      mcts::search_wdl(PG_GETARG_FLOAT4(0), PG_ARGISNULL(1) ? std::numeric_limits<double>::quiet_NaN() : PG_GETARG_FLOAT4(1));
  return pg::make_array({Float4GetDatum(float(w.win)), Float4GetDatum(float(w.draw)), Float4GetDatum(float(w.loss))}, FLOAT4OID);
}

// CALL pgmate.selfplay(games int, simulations int, network bigint DEFAULT NULL,
//                      parallel int DEFAULT 8, options jsonb DEFAULT '{}')
// network NULL: pure MCTS (uniform priors, random playouts) in this backend; otherwise
// the network of pgmate.networks served by pgmate-worker.
PGMATE_FUNCTION(selfplay_procedure) {
  const int games = pg::int_arg(fcinfo, 0, "games");
  const int simulations = pg::int_arg(fcinfo, 1, "simulations");
  const std::optional<std::int64_t> network =
      PG_ARGISNULL(2) ? std::nullopt : std::optional<std::int64_t>(PG_GETARG_INT64(2));
  const int parallel = pg::int_arg(fcinfo, 3, "parallel");

  // CALL outside a transaction block: each game commits on its own. Inside one (or a
  // subtransaction, such as a PL/pgSQL block with an exception handler) the caller's
  // transaction keeps them.
  const bool nonatomic = pg::nonatomic_call(fcinfo);
  pg::pg_call([&] { SPI_connect_ext(nonatomic ? SPI_OPT_NONATOMIC : 0); });
  const bool commit_each_game = nonatomic && !IsSubTransaction();

  mcts::SelfPlayConfig config;
  // The arguments take the options' bounds (set_option is their one parser).
  for (const auto& [name, value] : {std::pair{"games", games}, {"simulations", simulations}, {"parallel", parallel}}) {
    try {
      mcts::set_option(config, name, std::to_string(value));
    } catch (const std::invalid_argument& e) {
      std::string message = e.what();  // "option games: ..." -> "argument games: ..."
      if (message.rfind("option ", 0) == 0) message.replace(0, 6, "argument");
      throw pg::SqlError(ERRCODE_INVALID_PARAMETER_VALUE, message);
    }
  }
  std::string run = "sql";
  bool seeded = false;
  if (!PG_ARGISNULL(4)) {
    for (const pg::Option& option : pg::read_options(PG_GETARG_DATUM(4))) {
      const std::string key = quote_input(option.key, 64);
      if (!option.value) throw pg::SqlError(ERRCODE_INVALID_PARAMETER_VALUE, "option " + key + " must not be null");
      if (option.key == "run") {
        run = *option.value;
        continue;
      }
      if (option.key == "games" || option.key == "simulations" || option.key == "parallel")
        throw pg::SqlError(ERRCODE_INVALID_PARAMETER_VALUE,
                           "option " + key + " is an argument of pgmate.selfplay: pass it there, not in options");
      try {
        mcts::set_option(config, option.key, *option.value);
      } catch (const std::invalid_argument& e) {
        throw pg::SqlError(ERRCODE_INVALID_PARAMETER_VALUE, e.what());
      }
      if (option.key == "seed") seeded = true;
    }
  }
  if (!seeded) config.seed = pg::fresh_seed();
  // The trees live in this backend: refuse what would not fit before building anything.
  pg::check_tree_memory(mcts::estimated_memory_bytes(config),
                        "self-play with " + std::to_string(std::min(config.parallel, config.games)) +
                            " games at once, " + std::to_string(config.search.simulations) +
                            " simulations and a cache of " + std::to_string(mcts::cache_entries_of(config)) +
                            " entries needs",
                        "lower parallel, simulations or cache_entries");

  std::unique_ptr<mcts::Evaluator> evaluator;
  if (network) {
    // The run uses this version of the network throughout.
    evaluator = pg::network_evaluator(*network);
  } else {
    // Its own stream: Rng(seed) would overlap the games' streams mix64(seed + i).
    evaluator = std::make_unique<mcts::RolloutEvaluator>(mcts::mix64(config.seed ^ 0x726f6c6c6f757473ULL));
  }

  GameWriter writer(network, "pgmate " + evaluator->name());
  GameWriter::record_learning_game(run, std::nullopt);  // a label the caller may not use fails before any game
  mcts::SelfPlayRunner runner(config, *evaluator);
  const auto started = std::chrono::steady_clock::now();
  int finished = 0;
  const auto on_game = [&](mcts::FinishedGame& game) {
    writer.write(game, mcts::game_parameters_json(config, game, evaluator->name(), run), run);
    writer.end_game(commit_each_game);
    ++finished;
    const mcts::SelfPlayStats& stats = runner.stats();
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    // The message is the same on every run with the same seed; the rates go to the detail.
    const std::string message = "selfplay: game " + std::to_string(finished) + "/" + std::to_string(games) + " " +
                                game.result + " (" + game.termination + "), " + std::to_string(game.moves.size()) +
                                " plies";
    const std::string detail = std::to_string(std::int64_t(seconds > 0 ? double(stats.evaluations) / seconds : 0)) +
                               " positions/s, mean batch " + one_decimal(stats.mean_batch());
    pg::pg_call([&] { ereport(NOTICE, (errmsg("%s", message.c_str()), errdetail("%s", detail.c_str()))); });
  };
  // Query cancel and statement_timeout stop the run between rounds; committed games stay.
  const auto on_round = [](const mcts::SelfPlayStats&) { pg::check_for_interrupts(); };
  try {
    runner.run(on_game, on_round);
  } catch (...) {
    if (network) pg::rethrow_worker_failure();  // worker failures -> 08006; others unchanged
    throw;
  }
  pg::pg_call([] { SPI_finish(); });
  PG_RETURN_VOID();
}
