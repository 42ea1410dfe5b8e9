// Training data as queries. A training query returns rows with, by name:
//   board board                 the position (required)
//   history board[]             up to 3 earlier positions, newest first (NULL or empty allowed)
//   repetitions int             earlier occurrences of board in its game (default 0)
//   played move                 the target move (one-hot), or
//   moves move[] + policy real[]  a target distribution over those moves
//   z real                      the result from the side to move (1, 0, -1), or
//   wdl real[]                  win, draw, loss targets
//   weight real                 the row's weight (default 1)
// A missing column or one of the wrong type is SQLSTATE 42804 naming it, before anything
// is computed. pgmate.network_accuracy measures a network on such rows, on the worker.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "chess/fen.h"
#include "chess/notation.h"
#include "common/text.h"
#include "datum.h"
#include "networks.h"
#include "procedure.h"
#include "worker_link.h"

extern "C" {
#include "access/htup_details.h"
#include "executor/spi.h"
#include "funcapi.h"
}

using namespace pgmate;

namespace {

struct TrainingColumns {
  int board = 0, history = 0, repetitions = 0, played = 0, moves = 0, policy = 0, z = 0, wdl = 0, weight = 0;
};

// The query's columns by role (1-based SPI numbers, 0: absent), their types checked.
TrainingColumns training_columns(TupleDesc desc, const pg::SqlTypes& types, bool need_value) {
  TrainingColumns c;
  const Oid board_array = pg::pg_call([&] { return get_array_type(types.board); });
  struct Role {
    const char* name;
    int* column;
    std::vector<Oid> accepted;
    const char* type;
  };
  const Role roles[] = {
      {"board", &c.board, {types.board}, "board"},
      {"history", &c.history, {board_array}, "board[]"},
      {"repetitions", &c.repetitions, {INT2OID, INT4OID, INT8OID}, "an integer"},
      {"played", &c.played, {types.move}, "move"},
      {"moves", &c.moves, {types.move_array}, "move[]"},
      {"policy", &c.policy, {FLOAT4ARRAYOID, FLOAT8ARRAYOID}, "real[]"},
      {"z", &c.z, {FLOAT4OID, FLOAT8OID, INT2OID, INT4OID, INT8OID}, "a number"},
      {"wdl", &c.wdl, {FLOAT4ARRAYOID, FLOAT8ARRAYOID}, "real[]"},
      {"weight", &c.weight, {FLOAT4OID, FLOAT8OID}, "real"},
  };
  for (int i = 0; i < desc->natts; ++i) {
    const Form_pg_attribute a = TupleDescAttr(desc, i);
    if (a->attisdropped) continue;
    for (const Role& r : roles) {
      if (std::string_view(NameStr(a->attname)) != r.name) continue;
      if (std::find(r.accepted.begin(), r.accepted.end(), a->atttypid) == r.accepted.end())
        throw pg::SqlError(ERRCODE_DATATYPE_MISMATCH,
                           std::string("training data: column ") + r.name + " must be " + r.type + ", not " +
                               pg::pg_call([&] { return std::string(format_type_be(a->atttypid)); }));
      *r.column = i + 1;
    }
  }
  const auto missing = [](const std::string& what) {
    throw pg::SqlError(ERRCODE_DATATYPE_MISMATCH, "training data: the query has no column " + what);
  };
  if (!c.board) missing("board (the position)");
  if (!c.played && !(c.moves && c.policy))
    missing(c.moves ? "policy (the target over moves)" : "played (the target move), nor moves and policy");
  if (need_value && !c.z && !c.wdl) missing("z (the result from the side to move) nor wdl");
  return c;
}

// Evaluates on the worker, handing it the network first when it does not hold it.
worker::EvalReply evaluate_network(std::int64_t network, worker::NetworkKey& key,
                                   const std::vector<worker::EvalInput>& inputs) {
  auto reply = pg::with_worker([&](worker::WorkerClient& c) -> std::optional<worker::EvalReply> {
    try {
      return c.evaluate(inputs, key);
    } catch (const worker::NetworkNotLoaded&) {
      return std::nullopt;
    }
  });
  if (reply) return *reply;
  const pg::NetworkRow row = pg::read_network(network);
  key = row.key;
  return pg::with_worker([&](worker::WorkerClient& c) {
    c.load_network(row.key, row.config, row.weights);
    return c.evaluate(inputs, key);
  });
}

double number(Datum d, Oid type) {
  switch (type) {
    case FLOAT4OID: return DatumGetFloat4(d);
    case FLOAT8OID: return DatumGetFloat8(d);
    case INT2OID: return DatumGetInt16(d);
    case INT4OID: return DatumGetInt32(d);
    default: return double(DatumGetInt64(d));
  }
}

std::vector<double> numbers(Datum array) {
  std::vector<double> out;
  pg::pg_call([&] {
    ArrayType* a = DatumGetArrayTypeP(array);
    const Oid element = ARR_ELEMTYPE(a);
    Datum* values;
    bool* nulls;
    int n;
    deconstruct_array(a, element, element == FLOAT4OID ? 4 : 8, element == FLOAT4OID ? true : FLOAT8PASSBYVAL,
                      element == FLOAT4OID ? 'i' : 'd', &values, &nulls, &n);
    for (int i = 0; i < n; ++i) out.push_back(nulls[i] ? NAN : number(values[i], element));
  });
  return out;
}

std::vector<Datum> datums(Datum array, int element_length, char align, bool by_value) {
  std::vector<Datum> out;
  pg::pg_call([&] {
    ArrayType* a = DatumGetArrayTypeP(array);
    Datum* values;
    bool* nulls;
    int n;
    deconstruct_array(a, ARR_ELEMTYPE(a), element_length, by_value, align, &values, &nulls, &n);
    for (int i = 0; i < n; ++i)
      if (!nulls[i]) out.push_back(values[i]);
  });
  return out;
}

// One row's targets, checked against the legal moves the worker returned.
struct Target {
  std::vector<double> policy;  // per legal move, summing to 1
  std::optional<std::array<double, 3>> wdl;
  double weight = 1;
};

[[noreturn]] void bad_row(std::int64_t row, const std::string& what) {
  throw pg::SqlError(ERRCODE_INVALID_PARAMETER_VALUE, "training data: row " + std::to_string(row) + ": " + what);
}

}  // namespace

// pgmate.network_accuracy(network bigint, data text)
//   -> (positions bigint, top1 float8, policy_cross_entropy float8, wdl_cross_entropy float8)
// The rows of the query `data` (the training-data columns above), evaluated by the network
// on the worker: the share of rows whose most likely move is the target's, and the mean
// cross-entropies of the policy (over the legal moves) and of the win/draw/loss head.
PGMATE_FUNCTION(network_accuracy) {
  const std::int64_t network = PG_GETARG_INT64(0);
  const std::string query = pg::text_arg(fcinfo, 1);
  pg::pg_call([] { SPI_connect(); });
  worker::NetworkKey key = pg::network_key(network);
  const pg::SqlTypes types = pg::sql_types();
  Portal portal = pg::pg_call([&] {
    SPIPlanPtr plan = SPI_prepare(query.c_str(), 0, nullptr);
    if (!plan)
      ereport(ERROR, (errcode(ERRCODE_SYNTAX_ERROR), errmsg("training data: the query cannot be prepared: %s",
                                                             SPI_result_code_string(SPI_result))));
    if (!SPI_is_cursor_plan(plan))
      ereport(ERROR, (errcode(ERRCODE_WRONG_OBJECT_TYPE), errmsg("training data must be a query that returns rows")));
    return SPI_cursor_open(nullptr, plan, nullptr, nullptr, true);
  });

  constexpr long kChunk = 1024;
  std::optional<TrainingColumns> columns;
  double positions = 0, weight_sum = 0, top1 = 0, policy_ce = 0, wdl_ce = 0, wdl_weight = 0;
  std::int64_t row_number = 0;
  for (;;) {
    pg::check_for_interrupts();
    pg::pg_call([&] { SPI_cursor_fetch(portal, true, kChunk); });
    const uint64 n = SPI_processed;
    SPITupleTable* table = SPI_tuptable;
    if (!columns) columns = training_columns(table->tupdesc, types, false);
    if (n == 0) break;
    const TrainingColumns& c = *columns;
    std::vector<worker::EvalInput> inputs;
    std::vector<std::vector<chess::Move>> target_moves;
    std::vector<std::vector<double>> target_probs;
    std::vector<Target> targets;
    for (uint64 i = 0; i < n; ++i) {
      ++row_number;
      HeapTuple tuple = table->vals[i];
      TupleDesc desc = table->tupdesc;
      const auto get = [&](int column, bool& is_null) {
        return pg::pg_call([&] { return SPI_getbinval(tuple, desc, column, &is_null); });
      };
      bool is_null = false;
      const Datum board = get(c.board, is_null);
      if (is_null) bad_row(row_number, "board is NULL");
      worker::EvalInput input;
      input.history.push_back(pg::board_from_datum(board));
      if (c.history) {
        const Datum h = get(c.history, is_null);
        if (!is_null)
          for (Datum b : datums(h, pg::kBoardSize, 'c', false))
            if (input.history.size() < 4) input.history.push_back(pg::board_from_datum(b));
      }
      if (c.repetitions) {
        const Datum r = get(c.repetitions, is_null);
        if (!is_null) input.repetitions = std::clamp(int(number(r, SPI_gettypeid(desc, c.repetitions))), 0, 2);
      }
      Target t;
      std::vector<chess::Move> moves;
      std::vector<double> probs;
      if (c.played) {
        const Datum m = get(c.played, is_null);
        if (!is_null) {
          moves.push_back(pg::move_from_datum(m));
          probs.push_back(1);
        }
      }
      if (moves.empty() && c.moves && c.policy) {
        bool moves_null = false, policy_null = false;
        const Datum ms = get(c.moves, moves_null);
        const Datum ps = get(c.policy, policy_null);
        if (!moves_null && !policy_null) {
          for (Datum d : datums(ms, 2, 's', true)) moves.push_back(pg::move_from_datum(d));
          probs = numbers(ps);
          if (probs.size() != moves.size())
            bad_row(row_number, "policy has " + std::to_string(probs.size()) + " values for " +
                                    std::to_string(moves.size()) + " moves");
        }
      }
      if (moves.empty()) bad_row(row_number, "no target move (played, or moves and policy, are NULL)");
      if (c.wdl) {
        const Datum w = get(c.wdl, is_null);
        if (!is_null) {
          const std::vector<double> v = numbers(w);
          if (v.size() != 3) bad_row(row_number, "wdl must have 3 values (win, draw, loss)");
          t.wdl = std::array<double, 3>{v[0], v[1], v[2]};
        }
      } else if (c.z) {
        const Datum z = get(c.z, is_null);
        if (!is_null) {
          const double zv = number(z, SPI_gettypeid(desc, c.z));
          t.wdl = zv > 0.5 ? std::array<double, 3>{1, 0, 0} : zv < -0.5 ? std::array<double, 3>{0, 0, 1}
                                                                        : std::array<double, 3>{0, 1, 0};
        }
      }
      if (c.weight) {
        const Datum w = get(c.weight, is_null);
        if (!is_null) t.weight = number(w, SPI_gettypeid(desc, c.weight));
        if (!(t.weight >= 0) || !std::isfinite(t.weight)) bad_row(row_number, "weight must be a number >= 0");
      }
      inputs.push_back(std::move(input));
      target_moves.push_back(std::move(moves));
      target_probs.push_back(std::move(probs));
      targets.push_back(std::move(t));
    }
    pg::pg_call([&] { SPI_freetuptable(table); });

    const worker::EvalReply reply = evaluate_network(network, key, inputs);
    const std::int64_t first_row = row_number - std::int64_t(n);
    for (std::size_t i = 0; i < reply.outputs.size(); ++i) {
      const worker::EvalOutput& o = reply.outputs[i];
      Target& t = targets[i];
      t.policy.assign(o.moves.size(), 0.0);
      double total = 0;
      for (std::size_t k = 0; k < target_moves[i].size(); ++k) {
        const chess::Move want = chess::board_free(target_moves[i][k]);
        const auto at = std::find_if(o.moves.begin(), o.moves.end(),
                                     [&](chess::Move m) { return chess::board_free(m) == want; });
        if (at == o.moves.end())
          bad_row(first_row + std::int64_t(i) + 1, "the target move " + chess::to_uci(want) + " is not legal in " +
                                                       chess::to_fen(inputs[i].history.front()));
        t.policy[std::size_t(at - o.moves.begin())] += target_probs[i][k];
        total += target_probs[i][k];
      }
      if (!(total > 0)) bad_row(first_row + std::int64_t(i) + 1, "the policy target sums to " + std::to_string(total));
      for (double& p : t.policy) p /= total;
      const auto best_prior = std::max_element(o.priors.begin(), o.priors.end()) - o.priors.begin();
      const auto best_target = std::max_element(t.policy.begin(), t.policy.end()) - t.policy.begin();
      double ce = 0;
      for (std::size_t k = 0; k < t.policy.size(); ++k)
        if (t.policy[k] > 0) ce -= t.policy[k] * std::log(std::max(double(o.priors[k]), 1e-12));
      positions += 1;
      weight_sum += t.weight;
      top1 += t.weight * (best_prior == best_target ? 1.0 : 0.0);
      policy_ce += t.weight * ce;
      if (t.wdl) {
        const double p[3] = {o.win, o.draw, o.loss};
        double v = 0;
        for (int k = 0; k < 3; ++k)
          if ((*t.wdl)[k] > 0) v -= (*t.wdl)[k] * std::log(std::max(p[k], 1e-12));
        wdl_ce += t.weight * v;
        wdl_weight += t.weight;
      }
    }
  }
  pg::pg_call([&] { SPI_cursor_close(portal); });
  const auto mean = [](double sum, double w) { return w > 0 ? sum / w : NAN; };
  const double out[3] = {mean(top1, weight_sum), mean(policy_ce, weight_sum), mean(wdl_ce, wdl_weight)};
  pg::pg_call([] { SPI_finish(); });  // the result is made after: SPI's memory is gone now
  return pg::pg_call([&] {
    TupleDesc desc;
    if (get_call_result_type(fcinfo, nullptr, &desc) != TYPEFUNC_COMPOSITE)
      ereport(ERROR, (errcode(ERRCODE_FEATURE_NOT_SUPPORTED), errmsg("a record is returned here")));
    desc = BlessTupleDesc(desc);
    Datum values[4] = {Int64GetDatum(std::int64_t(positions)), Float8GetDatum(out[0]), Float8GetDatum(out[1]),
                       Float8GetDatum(out[2])};
    bool nulls[4] = {false, std::isnan(out[0]), std::isnan(out[1]), std::isnan(out[2])};
    return HeapTupleGetDatum(heap_form_tuple(desc, values, nulls));
  });
}
