// Training data as queries (the columns: training_rows.h). pgmate.network_accuracy
// measures a network on such rows, on the worker; pgmate.training_samples encodes them for
// `pgmate train`.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "chess/notation.h"
#include "datum.h"
#include "networks.h"
#include "procedure.h"
#include "training_rows.h"
#include "worker_link.h"

extern "C" {
#include "access/htup_details.h"
#include "executor/spi.h"
#include "funcapi.h"
}

using namespace pgmate;

namespace {

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
  constexpr std::size_t kChunk = 1024;
  double positions = 0, weight_sum = 0, top1 = 0, policy_ce = 0, wdl_ce = 0, wdl_weight = 0;
  pg::TrainingRows rows(query, false);
  for (bool more = true; more;) {
    std::vector<pg::TrainingRow> chunk;
    pg::TrainingRow row;
    while (chunk.size() < kChunk && (more = rows.next(row))) chunk.push_back(std::move(row));
    if (chunk.empty()) break;
    std::vector<worker::EvalInput> inputs;
    for (const pg::TrainingRow& r : chunk) inputs.push_back({r.sample.history, r.sample.repetitions});
    const worker::EvalReply reply = evaluate_network(network, key, inputs);
    for (std::size_t i = 0; i < reply.outputs.size(); ++i) {
      const worker::EvalOutput& o = reply.outputs[i];
      const pg::TrainingRow& r = chunk[i];
      // The target over the worker's legal moves (the rows' moves are legal: checked on reading).
      std::vector<double> target(o.moves.size(), 0.0);
      double total = 0;
      for (std::size_t k = 0; k < r.sample.moves.size(); ++k) {
        const chess::Move want = chess::board_free(r.sample.moves[k]);
        const auto at = std::find_if(o.moves.begin(), o.moves.end(),
                                     [&](chess::Move m) { return chess::board_free(m) == want; });
        if (at == o.moves.end()) continue;
        target[std::size_t(at - o.moves.begin())] += r.sample.policy[k];
        total += r.sample.policy[k];
      }
      for (double& p : target) p /= total;
      const auto best_prior = std::max_element(o.priors.begin(), o.priors.end()) - o.priors.begin();
      const auto best_target = std::max_element(target.begin(), target.end()) - target.begin();
      double ce = 0;
      for (std::size_t k = 0; k < target.size(); ++k)
        if (target[k] > 0) ce -= target[k] * std::log(std::max(double(o.priors[k]), 1e-12));
      const double w = r.sample.weight;
      positions += 1;
      weight_sum += w;
      top1 += w * (best_prior == best_target ? 1.0 : 0.0);
      policy_ce += w * ce;
      if (r.has_value) {
        const double p[3] = {o.win, o.draw, o.loss};
        double total_wdl = 0, v = 0;
        for (int k = 0; k < 3; ++k) total_wdl += r.sample.wdl[k];
        for (int k = 0; k < 3; ++k)
          if (r.sample.wdl[k] > 0) v -= r.sample.wdl[k] / total_wdl * std::log(std::max(p[k], 1e-12));
        wdl_ce += w * v;
        wdl_weight += w;
      }
    }
  }
  rows.close();
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

// pgmate.training_samples(data text) RETURNS SETOF bytea: each row of the training query
// (z or wdl required) as protocol::encode_train_sample's bytes, what `pgmate train` sends
// to the worker.
PGMATE_FUNCTION(training_samples) {
  const std::string query = pg::text_arg(fcinfo, 0);
  pg::pg_call([&] { InitMaterializedSRF(fcinfo, MAT_SRF_USE_EXPECTED_DESC | MAT_SRF_BLESS); });
  ReturnSetInfo* rsinfo = reinterpret_cast<ReturnSetInfo*>(fcinfo->resultinfo);
  pg::pg_call([] { SPI_connect(); });
  {
    pg::TrainingRows rows(query, true);
    pg::TrainingRow row;
    while (rows.next(row)) {
      const worker::protocol::Bytes& b = row.encoded;
      pg::pg_call([&] {
        // Made in the result's memory: SPI's goes away with SPI_finish.
        MemoryContext old = MemoryContextSwitchTo(rsinfo->econtext->ecxt_per_query_memory);
        bytea* value = static_cast<bytea*>(palloc(VARHDRSZ + b.size()));
        SET_VARSIZE(value, VARHDRSZ + b.size());
        std::memcpy(VARDATA(value), b.data(), b.size());
        Datum values[1] = {PointerGetDatum(value)};
        bool nulls[1] = {false};
        tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
        pfree(value);
        MemoryContextSwitchTo(old);
      });
    }
    rows.close();
  }
  pg::pg_call([] { SPI_finish(); });
  return Datum(0);
}
