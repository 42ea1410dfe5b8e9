// CALL pgmate.train: a network trained on pgmate-worker from the rows of a query, with its
// run, checkpoints and log as rows (the bookkeeping functions of 98_train.sql), driven by
// the loop `pgmate train` runs too (link/training_run.h). And
// pgmate.training_chart, the run's curves as SVG.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "link/training_run.h"
#include "common/line_chart.h"
#include "datum.h"
#include "networks.h"
#include "procedure.h"
#include "training_rows.h"
#include "worker_link.h"

extern "C" {
#include "access/htup_details.h"
#include "access/xact.h"
#include "funcapi.h"
#include "executor/spi.h"
}

using namespace pgmate;

namespace {

Datum bytea_datum(const std::string& bytes) {
  return pg::pg_call([&] {
    bytea* b = static_cast<bytea*>(palloc(VARHDRSZ + bytes.size()));
    SET_VARSIZE(b, VARHDRSZ + bytes.size());
    std::memcpy(VARDATA(b), bytes.data(), bytes.size());
    return PointerGetDatum(b);
  });
}

std::string bytes_of(Datum d) {
  bytea* b = DatumGetByteaPP(d);
  return std::string(VARDATA_ANY(b), VARSIZE_ANY_EXHDR(b));
}

Datum float_or_null(double v, char& null) {
  null = std::isfinite(v) ? ' ' : 'n';
  return Float8GetDatum(std::isfinite(v) ? v : 0);
}

// Runs a statement with arguments (nulls: ' ' or 'n' per argument, as SPI wants).
void execute(const char* sql, const std::vector<Oid>& types, const std::vector<Datum>& values,
             const std::string& nulls = "") {
  pg::pinned_sql([&] {
    SPI_execute_with_args(sql, int(types.size()), const_cast<Oid*>(types.data()), const_cast<Datum*>(values.data()),
                          nulls.empty() ? nullptr : nulls.c_str(), false, 0);
  });
}

// The first `take` rows of a query (all when it has fewer), encoded as the worker's samples,
// in their fixed order. They are held in this backend's memory, outside work_mem, so more
// than `room` of them is refused before the next one is read.
worker::SampleSet read_samples(const std::string& query, const char* what, std::int64_t take, std::int64_t room,
                               const std::string& room_shared_with = "") {
  worker::SampleSet set;
  pg::TrainingRows rows(query, true, what);
  pg::TrainingRow row;
  while (std::int64_t(set.size()) < take && rows.next(row)) {
    if (std::int64_t(set.size()) >= room)
      throw pg::SqlError(ERRCODE_PROGRAM_LIMIT_EXCEEDED,
                         std::string(what) + ": more than " + std::to_string(room) + " rows" + room_shared_with +
                             "; pgmate.train_max_rows (" + std::to_string(pg::train_max_rows) +
                             ") is the most one training holds in memory");
    set.add(row.encoded);
  }
  rows.close();
  if (set.size() == 0)
    throw pg::SqlError(ERRCODE_INVALID_PARAMETER_VALUE, std::string(what) + ": the query returned no rows");
  set.seal();
  return set;
}

// Log rows and checkpoints as rows; each committed at once when the CALL may commit.
class SqlTrainingStore : public worker::TrainingStore {
 public:
  SqlTrainingStore(std::int64_t run, std::int64_t steps, bool commit) : run_(run), steps_(steps), commit_(commit) {}

  void log(const worker::TrainingLogRow& r) override {
    const worker::HoldoutMetrics h = r.holdout.value_or(worker::HoldoutMetrics{});
    std::string nulls(14, ' ');
    std::vector<Datum> v = {Int64GetDatum(run_), Int64GetDatum(r.step), Int64GetDatum(r.samples)};
    const double values[] = {r.policy_loss, r.value_loss, r.kl, r.accuracy, r.lr, r.kl_weight, r.samples_per_s};
    for (double x : values) v.push_back(float_or_null(x, nulls[v.size()]));
    v.push_back(Int64GetDatum(h.positions));
    if (!r.holdout) nulls[v.size() - 1] = 'n';
    for (double x : {h.top1, h.policy_loss, h.value_loss}) {
      v.push_back(float_or_null(r.holdout ? x : NAN, nulls[v.size()]));
    }
    execute("SELECT pgmate.training_record($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)",
            {INT8OID, INT8OID, INT8OID, FLOAT8OID, FLOAT8OID, FLOAT8OID, FLOAT8OID, FLOAT8OID, FLOAT8OID, FLOAT8OID,
             INT8OID, FLOAT8OID, FLOAT8OID, FLOAT8OID},
            v, nulls);
    commit();
    std::string message = "train: step " + std::to_string(r.step) + "/" + std::to_string(steps_);
    if (r.step > 0) message += ", policy loss " + fixed(r.policy_loss, 3) + ", value loss " + fixed(r.value_loss, 3) +
                               ", accuracy " + fixed(100 * r.accuracy, 1) + "%";
    if (r.holdout)
      message += "; held-out top-1 " + fixed(100 * h.top1, 1) + "%, policy loss " + fixed(h.policy_loss, 3) +
                 ", value loss " + fixed(h.value_loss, 3);
    const std::string detail = r.step > 0 ? std::to_string(std::int64_t(r.samples_per_s)) + " samples/s, lr " +
                                                fixed(r.lr, 6)
                                          : std::string("before training");
    pg::pg_call([&] { ereport(NOTICE, (errmsg("%s", message.c_str()), errdetail("%s", detail.c_str()))); });
  }

  void checkpoint(std::int64_t step, const std::string& state) override {
    execute("SELECT pgmate.training_checkpoint($1, $2, $3)", {INT8OID, INT8OID, BYTEAOID},
            {Int64GetDatum(run_), Int64GetDatum(step), bytea_datum(state)});
    commit();
  }

  // Query cancel and statement_timeout stop the run between steps (and while waiting for
  // the worker: the client's poll hook); what was committed stays, and the same call resumes.
  void poll() override { pg::check_for_interrupts(); }

  void commit() {
    if (commit_) pg::pg_call([] { SPI_commit(); });
  }

  static std::string fixed(double v, int decimals) {
    char text[64];
    snprintf(text, sizeof text, "%.*f", decimals, v);
    return text;
  }

 private:
  std::int64_t run_, steps_;
  bool commit_;
};

// A procedure's output arguments come back as a record, even a single one.
Datum new_network_result(FunctionCallInfo fcinfo, std::optional<std::int64_t> id) {
  return pg::pg_call([&] {
    TupleDesc desc;
    if (get_call_result_type(fcinfo, nullptr, &desc) != TYPEFUNC_COMPOSITE)
      ereport(ERROR, (errcode(ERRCODE_FEATURE_NOT_SUPPORTED), errmsg("a record is returned here")));
    desc = BlessTupleDesc(desc);
    Datum values[1] = {Int64GetDatum(id.value_or(0))};
    bool nulls[1] = {!id};
    return HeapTupleGetDatum(heap_form_tuple(desc, values, nulls));
  });
}

}  // namespace

// CALL pgmate.train(network bigint, data text, steps bigint, options jsonb DEFAULT '{}',
//                   INOUT new_network bigint DEFAULT NULL)
PGMATE_FUNCTION(train_procedure) {
  for (int i = 0; i < 3; ++i)
    if (PG_ARGISNULL(i))
      throw pg::SqlError(ERRCODE_NULL_VALUE_NOT_ALLOWED,
                         std::string("argument ") + (i == 0 ? "network" : i == 1 ? "data" : "steps") + " must not be null");
  const std::int64_t network = PG_GETARG_INT64(0);
  const std::string data = pg::text_arg(fcinfo, 1);
  const std::int64_t steps = PG_GETARG_INT64(2);
  const std::string options =
      PG_ARGISNULL(3) ? "{}" : pg::pg_call([&] { return std::string(JsonbToCString(nullptr, &PG_GETARG_JSONB_P(3)->root, 0)); });

  worker::TrainingSettings settings;
  try {
    settings = worker::parse_training_settings(steps, options);
  } catch (const std::invalid_argument& e) {
    throw pg::SqlError(ERRCODE_INVALID_PARAMETER_VALUE, e.what());
  }

  // CALL outside a transaction block: log rows and checkpoints commit as they are made.
  const bool nonatomic = pg::nonatomic_call(fcinfo);
  pg::pg_call([&] { SPI_connect_ext(nonatomic ? SPI_OPT_NONATOMIC : 0); });
  const bool commit = nonatomic && !IsSubTransaction();

  const pg::NetworkRow parent = pg::read_network(network);  // checks the caller may read it
  std::string name = settings.name;
  if (name.empty()) {
    execute("SELECT name FROM pgmate.networks WHERE id = $1", {INT8OID}, {Int64GetDatum(network)});
    bool is_null = true;
    if (SPI_processed == 1) {
      const Datum d = pg::pg_call([&] { return SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &is_null); });
      if (!is_null) name = pg::pg_call([&] { return std::string(TextDatumGetCString(d)); }) + " trained";
    }
  }

  // The held-out rows share the limit with the training rows; only the ones measured are read.
  const std::int64_t max_rows = pg::train_max_rows;
  const worker::SampleSet samples =
      read_samples(data, "training data", std::numeric_limits<std::int64_t>::max(), max_rows);
  std::optional<worker::SampleSet> holdout;
  if (!settings.holdout.empty())
    holdout = read_samples(settings.holdout, "holdout", settings.holdout_limit,
                           max_rows - std::int64_t(samples.size()),
                           " besides the " + std::to_string(samples.size()) + " training rows");

  // The optimizer to go on from, read before the run is made (a bad run id stores nothing).
  std::optional<std::string> optimizer_state;
  if (settings.optimizer_from != 0) {
    execute("SELECT pgmate.training_optimizer($1)", {INT8OID}, {Int64GetDatum(settings.optimizer_from)});
    pg::pg_call([&] {
      bool is_null = false;
      optimizer_state = bytes_of(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &is_null));
    });
  }

  // The run: a new one, or the same training left running by a session that is gone.
  const std::string settings_text = worker::settings_json(settings);
  const std::string sha = samples.sha256_hex();
  execute("SELECT run, resumed, step, state, data_changed FROM pgmate.training_begin($1, $2, $3, $4::jsonb, $5, $6)",
          {INT8OID, TEXTOID, INT8OID, TEXTOID, INT8OID, TEXTOID},
          {Int64GetDatum(network), pg::text_datum(data), Int64GetDatum(steps), pg::text_datum(settings_text),
           Int64GetDatum(std::int64_t(samples.size())), pg::text_datum(sha)});
  std::int64_t run = 0, from_step = 0;
  bool resumed = false, data_changed = false;
  std::optional<std::string> state;
  pg::pg_call([&] {
    HeapTuple row = SPI_tuptable->vals[0];
    TupleDesc desc = SPI_tuptable->tupdesc;
    bool is_null = false;
    run = DatumGetInt64(SPI_getbinval(row, desc, 1, &is_null));
    resumed = DatumGetBool(SPI_getbinval(row, desc, 2, &is_null));
    const Datum step = SPI_getbinval(row, desc, 3, &is_null);
    if (!is_null) from_step = DatumGetInt64(step);
    const Datum s = SPI_getbinval(row, desc, 4, &is_null);
    if (!is_null) state = bytes_of(s);
    data_changed = DatumGetBool(SPI_getbinval(row, desc, 5, &is_null));
  });
  SqlTrainingStore store(run, steps, commit);
  store.commit();
  {
    std::string message = "train: run " + std::to_string(run) + (resumed ? " resumed" : "") + ", " +
                          std::to_string(samples.size()) + " training rows" +
                          (holdout ? ", " + std::to_string(holdout->size()) + " held-out rows" : "");
    if (resumed) message += state ? ", from the checkpoint of step " + std::to_string(from_step) : ", from the start";
    pg::pg_call([&] { ereport(NOTICE, (errmsg("%s", message.c_str()))); });
    if (data_changed)
      pg::pg_call([&] {
        ereport(WARNING, (errmsg("train: run %lld resumes on data that changed since it started",
                                 static_cast<long long>(run)),
                          errdetail("The remaining steps draw from today's rows; the result differs from an "
                                    "uninterrupted run's.")));
      });
  }

  worker::TrainingJob job;
  job.config_json = parent.config;
  job.weights = parent.weights;
  // KL against the starting network, or the one named.
  if (settings.trainer.kl_weight > 0)
    job.reference_weights = settings.kl_reference != 0 ? pg::read_network(settings.kl_reference).weights : parent.weights;
  job.settings = settings;
  job.data = &samples;
  job.holdout = holdout ? &*holdout : nullptr;
  job.resume_state = state;
  job.optimizer_state = std::move(optimizer_state);

  worker::TrainingResult result;
  try {
    result = worker::run_training(pg::worker_client(), job, store);
  } catch (const worker::WorkerUnavailable&) {
    pg::rethrow_worker_failure();  // 08006; the run stays, to resume
  } catch (const worker::WorkerError& e) {
    // The worker refused a step (a loss that is no longer finite, ...): the run is over, its
    // last checkpoint stays.
    const std::string message = e.what();
    execute("SELECT pgmate.training_fail($1, $2)", {INT8OID, TEXTOID}, {Int64GetDatum(run), pg::text_datum(message)});
    store.commit();
    throw pg::SqlError(ERRCODE_DATA_EXCEPTION, "training run " + std::to_string(run) + " failed: " + message +
                                                   " (its last checkpoint is kept in pgmate.training_checkpoints)");
  } catch (const pg::PgError&) {
    pg::rethrow_worker_failure();  // cancelled while waiting for the worker
  }

  if (!result.finished) {
    pg::pg_call([&] {
      ereport(NOTICE, (errmsg("train: run %lld paused at step %lld of %lld; the same call goes on from there",
                              static_cast<long long>(run), static_cast<long long>(result.steps_done),
                              static_cast<long long>(steps))));
    });
    pg::pg_call([] { SPI_finish(); });
    return new_network_result(fcinfo, std::nullopt);
  }
  execute("SELECT pgmate.training_finish($1, $2, $3, $4)", {INT8OID, TEXTOID, BYTEAOID, BYTEAOID},
          {Int64GetDatum(run), pg::text_datum(name), bytea_datum(result.weights), bytea_datum(result.state)});
  std::int64_t new_network = 0;
  pg::pg_call([&] {
    bool is_null = false;
    new_network = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &is_null));
  });
  store.commit();
  pg::pg_call([&] {
    ereport(NOTICE, (errmsg("train: run %lld finished: network %lld", static_cast<long long>(run),
                            static_cast<long long>(new_network))));
  });
  pg::pg_call([] { SPI_finish(); });
  return new_network_result(fcinfo, new_network);
}

// pgmate.training_chart(network bigint, width int, height int) RETURNS text: the SVG of the
// run that made the network, or else of the newest run training it; NULL when neither.
PGMATE_FUNCTION(training_chart) {
  const std::int64_t network = PG_GETARG_INT64(0);
  const int width = PG_GETARG_INT32(1), height = PG_GETARG_INT32(2);
  if (width < 200 || width > 4000 || height < 120 || height > 4000)
    throw pg::SqlError(ERRCODE_INVALID_PARAMETER_VALUE, "training_chart: width must be 200..4000 and height 120..4000");
  pg::pg_call([] { SPI_connect(); });
  execute("SELECT p.step, p.policy_loss, p.value_loss, p.accuracy, p.holdout_top1, p.holdout_policy_loss,"
          "       p.holdout_value_loss, r.id"
          " FROM pgmate.training_progress p JOIN pgmate.training_runs r ON r.id = p.run_id"
          " WHERE r.id = (SELECT id FROM pgmate.training_runs"
          "               ORDER BY new_network = $1 DESC, network_id = $1 DESC, id DESC LIMIT 1)"
          "   AND (r.new_network = $1 OR r.network_id = $1)"
          " ORDER BY p.step",
          {INT8OID}, {Int64GetDatum(network)});
  // Training curves solid, held-out ones dashed; losses on the left axis, accuracy on the right.
  std::vector<ChartSeries> series = {
      {"policy loss", "#1f77b4", false, false, {}},         {"value loss", "#ff7f0e", false, false, {}},
      {"held-out policy loss", "#1f77b4", false, true, {}}, {"held-out value loss", "#ff7f0e", false, true, {}},
      {"accuracy", "#2ca02c", true, false, {}},             {"held-out top-1", "#2ca02c", true, true, {}},
  };
  std::int64_t run = 0;
  const int columns[] = {2, 3, 6, 7, 4, 5};
  const std::uint64_t n = SPI_processed;
  pg::pg_call([&] {
    for (std::uint64_t i = 0; i < n; ++i) {
      CHECK_FOR_INTERRUPTS();
      HeapTuple row = SPI_tuptable->vals[i];
      TupleDesc desc = SPI_tuptable->tupdesc;
      bool is_null = false;
      const double step = double(DatumGetInt64(SPI_getbinval(row, desc, 1, &is_null)));
      run = DatumGetInt64(SPI_getbinval(row, desc, 8, &is_null));
      for (std::size_t k = 0; k < series.size(); ++k) {
        const Datum d = SPI_getbinval(row, desc, columns[k], &is_null);
        if (!is_null) series[k].points.push_back({step, DatumGetFloat8(d)});
      }
    }
  });
  pg::pg_call([] { SPI_finish(); });
  if (n == 0) PG_RETURN_NULL();
  const std::string svg = line_chart_svg("training run " + std::to_string(run) + ", network " + std::to_string(network),
                                         "step", "loss", "accuracy", series, width, height);
  return pg::text_datum(svg);
}
