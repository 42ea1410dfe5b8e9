// pgmate train: trains a copy of a network of pgmate.networks on pgmate-worker from the
// rows of a training query, with the run, its checkpoints and its log as rows; the same
// loop and bookkeeping as CALL pgmate.train (link/training_run.h and the
// functions of the extension's 98_train.sql). Progress per log row on stdout; the new
// network's id alone on the last line. Ctrl-C or a killed client leaves the run to resume:
// the same command again continues from its last checkpoint.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <limits>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <pqxx/pqxx>

#include "args.h"
#include "link/training_run.h"
#include "commands.h"
#include "common/json.h"
#include "db.h"
#include "interrupt.h"
#include "selfplay_store.h"

namespace pgmate::cli {

namespace {

struct Options {
  std::string conninfo, worker_address, data, holdout;
  std::int64_t network = 0, steps = 1000;
  std::vector<std::pair<std::string, std::string>> options;  // --option KEY=VALUE, --batch, --lr, --name
};

// A value as JSON: numbers, true and false as they are, anything else a string.
std::string json_value(const std::string& v) {
  if (v == "true" || v == "false") return v;
  char* end = nullptr;
  std::strtod(v.c_str(), &end);
  if (!v.empty() && end == v.c_str() + v.size() && v.find_first_not_of("+-0123456789.eE") == std::string::npos) return v;
  return json_string(v);
}

Options parse_options(const std::vector<std::string>& args) {
  Options o;
  bool has_network = false;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto value = [&]() -> const std::string& {
      if (i + 1 >= args.size()) throw UsageError(a + " needs a value");
      return args[++i];
    };
    if (a == "--db") o.conninfo = value();
    else if (a == "--worker") o.worker_address = value();
    else if (a == "--network") {
      const std::string& v = value();
      char* end = nullptr;
      o.network = std::strtoll(v.c_str(), &end, 10);
      if (v.empty() || *end || o.network <= 0) throw UsageError("--network needs a network id (a positive number), not \"" + v + "\"");
      has_network = true;
    } else if (a == "--data") o.data = value();
    else if (a == "--holdout") o.options.emplace_back("holdout", value());
    else if (a == "--steps") o.steps = parse_count(value(), "--steps", 1, 1 << 30);
    else if (a == "--batch") o.options.emplace_back("batch", value());
    else if (a == "--lr") o.options.emplace_back("lr", value());
    else if (a == "--name") o.options.emplace_back("name", value());
    else if (a == "--option") {
      const std::string& kv = value();
      const std::size_t eq = kv.find('=');
      if (eq == std::string::npos || eq == 0) throw UsageError("--option needs KEY=VALUE, not \"" + kv + "\"");
      o.options.emplace_back(kv.substr(0, eq), kv.substr(eq + 1));
    } else throw UsageError("unknown argument " + a);
  }
  if (!has_network) throw UsageError("--network ID is required: the network to train a copy of");
  if (o.data.empty()) throw UsageError("--data QUERY is required: the training rows");
  return o;
}

std::string options_json(const Options& o) {
  std::string json = "{";
  for (const auto& [key, value] : o.options) {
    if (json.size() > 1) json += ", ";
    json += json_string(key) + ": " + (key == "name" || key == "holdout" ? json_string(value) : json_value(value));
  }
  return json + "}";
}

std::optional<double> nullable(double v) { return std::isfinite(v) ? std::optional<double>(v) : std::nullopt; }

class DbTrainingStore : public worker::TrainingStore {
 public:
  DbTrainingStore(pqxx::connection& conn, std::int64_t run, std::int64_t steps) : conn_(conn), run_(run), steps_(steps) {}

  void log(const worker::TrainingLogRow& r) override {
    const auto& h = r.holdout;
    with_db_errors([&] {
      pqxx::work tx(conn_);
      tx.exec_params("SELECT pgmate.training_record($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)", run_,
                     r.step, r.samples, nullable(r.policy_loss), nullable(r.value_loss), nullable(r.kl),
                     nullable(r.accuracy), nullable(r.lr), nullable(r.kl_weight), nullable(r.samples_per_s),
                     h ? std::optional<std::int64_t>(h->positions) : std::nullopt,
                     h ? nullable(h->top1) : std::nullopt, h ? nullable(h->policy_loss) : std::nullopt,
                     h ? nullable(h->value_loss) : std::nullopt);
      tx.commit();
    });
    std::cout << "step " << r.step << "/" << steps_;
    if (r.step > 0)
      std::cout << "  " << std::int64_t(r.samples_per_s) << " samples/s  policy " << fixed(r.policy_loss, 3) << "  value "
                << fixed(r.value_loss, 3) << "  accuracy " << fixed(100 * r.accuracy, 1) << "%  lr " << r.lr;
    if (h)
      std::cout << "  held-out: top-1 " << fixed(100 * h->top1, 1) << "%  policy " << fixed(h->policy_loss, 3)
                << "  value " << fixed(h->value_loss, 3);
    std::cout << std::endl;
  }

  void checkpoint(std::int64_t step, const std::string& state) override {
    with_db_errors([&] {
      pqxx::work tx(conn_);
      tx.exec_params("SELECT pgmate.training_checkpoint($1, $2, $3)", run_, step, pqxx::binarystring(state));
      tx.commit();
    });
  }

  void poll() override { stop_if_interrupted(); }

 private:
  pqxx::connection& conn_;
  std::int64_t run_, steps_;
};

// The rows of a query as training samples, read through a cursor in chunks, at most
// `limit` of them (the held-out rows: only holdout_limit are measured, so no more are read).
worker::SampleSet read_samples(pqxx::connection& conn, const std::string& query, const char* what,
                               std::int64_t limit = std::numeric_limits<std::int64_t>::max()) {
  worker::SampleSet set;
  with_db_errors([&] {
    pqxx::work tx(conn);
    tx.exec_params("DECLARE samples NO SCROLL CURSOR FOR SELECT s FROM pgmate.training_samples($1) s", query);
    for (std::int64_t read = 0; read < limit;) {
      stop_if_interrupted();
      const pqxx::result r = tx.exec("FETCH " + std::to_string(std::min<std::int64_t>(8192, limit - read)) + " FROM samples");
      if (r.empty()) break;
      read += std::int64_t(r.size());
      for (const auto& row : r) {
        const pqxx::binarystring b(row[0]);
        set.add({b.data(), b.size()});
      }
    }
    tx.commit();
  });
  if (set.size() == 0) throw std::runtime_error(std::string(what) + ": the query returned no rows");
  set.seal();
  return set;
}

}  // namespace

int train_command(const std::vector<std::string>& args) {
  const Options o = parse_options(args);
  worker::TrainingSettings settings;
  try {
    settings = worker::parse_training_settings(o.steps, options_json(o));
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  const InterruptScope interrupt;  // Ctrl-C stops at the next step; the run stays resumable
  auto conn = connect_db(o.conninfo);
  require_table(*conn, "pgmate.training_runs");

  std::string config, weights, name;
  with_db_errors([&] {
    pqxx::nontransaction tx(*conn);
    const pqxx::result r = tx.exec_params("SELECT config::text, weights, name FROM pgmate.networks WHERE id = $1", o.network);
    if (r.empty()) throw UsageError("network " + std::to_string(o.network) + " not found in pgmate.networks");
    config = r[0][0].as<std::string>();
    weights = pqxx::binarystring(r[0][1]).str();
    name = r[0][2].as<std::string>();
  });
  if (settings.name.empty()) settings.name = name + " trained";

  const worker::SampleSet samples = read_samples(*conn, o.data, "training data");
  std::optional<worker::SampleSet> holdout;
  if (!settings.holdout.empty()) holdout = read_samples(*conn, settings.holdout, "holdout", settings.holdout_limit);

  // The optimizer to go on from, read before the run is made (a bad run id stores nothing).
  std::optional<std::string> optimizer_state;
  if (settings.optimizer_from != 0)
    with_db_errors([&] {
      pqxx::nontransaction tx(*conn);
      const pqxx::result r = tx.exec_params("SELECT pgmate.training_optimizer($1)", settings.optimizer_from);
      optimizer_state = pqxx::binarystring(r[0][0]).str();
    });

  std::int64_t run = 0, from_step = 0;
  bool resumed = false, data_changed = false;
  std::optional<std::string> state;
  // A run of this training still held by another session is often one whose client has
  // just gone (Ctrl-C, a killed terminal): its backend stops within a few seconds, and the
  // run is then resumed here rather than begun again.
  with_db_errors([&] {
    pqxx::nontransaction tx(*conn);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (tx.exec_params(
                  "SELECT EXISTS (SELECT 1 FROM pgmate.training_runs r WHERE r.network_id = $1 AND r.data = $2"
                  " AND r.steps = $3 AND r.settings = $4::jsonb AND r.status = 'running'"
                  " AND r.owner = pgmate.acting_role()"
                  " AND pgmate.session_is_working(r.holder_pid, r.holder_backend_start, r.holder_since))",
                  o.network, o.data, o.steps, worker::settings_json(settings))[0][0]
               .as<bool>() &&
           std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(250));
  });
  with_db_errors([&] {
    pqxx::work tx(*conn);
    // The client trains through many statements: it holds the run for its session.
    const pqxx::result r = tx.exec_params(
        "SELECT run, resumed, step, state, data_changed FROM pgmate.training_begin($1, $2, $3, $4::jsonb, $5, $6, true)",
        o.network, o.data, o.steps, worker::settings_json(settings), std::int64_t(samples.size()), samples.sha256_hex());
    run = r[0][0].as<std::int64_t>();
    resumed = r[0][1].as<bool>();
    if (!r[0][2].is_null()) from_step = r[0][2].as<std::int64_t>();
    if (!r[0][3].is_null()) state = pqxx::binarystring(r[0][3]).str();
    data_changed = r[0][4].as<bool>();
    tx.commit();
  });
  std::cout << "run " << run << (resumed ? " resumed" : "") << ": network " << o.network << ", " << samples.size()
            << " training rows";
  if (holdout) std::cout << ", " << holdout->size() << " held-out rows";
  if (resumed) std::cout << (state ? ", from the checkpoint of step " + std::to_string(from_step) : ", from the start");
  std::cout << std::endl;
  if (data_changed)
    std::cerr << "warning: run " << run << " resumes on data that changed since it started: the result differs from "
              << "an uninterrupted run's\n";

  std::string address = o.worker_address.empty() ? db_worker_address(*conn, kWorkerHint) : o.worker_address;
  worker::ClientOptions co;
  co.address = address;
  if (const char* token = std::getenv("PGMATE_WORKER_TOKEN")) co.token = token;
  co.poll = [] { stop_if_interrupted(); };
  std::optional<worker::WorkerClient> client;
  try {
    client.emplace(co);
  } catch (const worker::WorkerUnavailable& e) {
    throw std::runtime_error("cannot reach pgmate-worker at " + address + ": " + e.what() + "; " + kWorkerHint);
  }

  worker::TrainingJob job;
  job.config_json = config;
  job.weights = weights;
  // KL against the starting network, or the one named.
  if (settings.trainer.kl_weight > 0) {
    job.reference_weights = weights;
    if (settings.kl_reference != 0)
      with_db_errors([&] {
        pqxx::nontransaction tx(*conn);
        const pqxx::result r = tx.exec_params("SELECT weights FROM pgmate.networks WHERE id = $1", settings.kl_reference);
        if (r.empty())
          throw UsageError("kl_reference: network " + std::to_string(settings.kl_reference) + " not found in pgmate.networks");
        job.reference_weights = pqxx::binarystring(r[0][0]).str();
      });
  }
  job.settings = settings;
  job.data = &samples;
  job.holdout = holdout ? &*holdout : nullptr;
  job.resume_state = state;
  job.optimizer_state = std::move(optimizer_state);
  DbTrainingStore store(*conn, run, o.steps);
  worker::TrainingResult result;
  try {
    result = worker::run_training(*client, job, store);
  } catch (const Interrupted&) {
    std::cerr << "interrupted: run " << run << " keeps its last checkpoint; the same command resumes it\n";
    return 130;
  } catch (const worker::WorkerUnavailable& e) {
    throw std::runtime_error("lost pgmate-worker (" + std::string(e.what()) + "): run " + std::to_string(run) +
                             " keeps its last checkpoint; the same command resumes it");
  } catch (const worker::WorkerError& e) {
    with_db_errors([&] {
      pqxx::work tx(*conn);
      tx.exec_params("SELECT pgmate.training_fail($1, $2)", run, std::string(e.what()));
      tx.commit();
    });
    throw std::runtime_error("training run " + std::to_string(run) + " failed: " + e.what() +
                             " (its last checkpoint is kept in pgmate.training_checkpoints)");
  }
  if (!result.finished) {
    std::cout << "run " << run << " paused at step " << result.steps_done << " of " << o.steps
              << ": the same command goes on from there" << std::endl;
    return 0;
  }
  std::int64_t new_network = 0;
  with_db_errors([&] {
    pqxx::work tx(*conn);
    new_network = tx.exec_params("SELECT pgmate.training_finish($1, $2, $3, $4)", run, settings.name,
                                 pqxx::binarystring(result.weights), pqxx::binarystring(result.state))[0][0]
                      .as<std::int64_t>();
    tx.commit();
  });
  std::cout << "run " << run << " finished: network " << new_network << " \"" << settings.name << "\"\n"
            << new_network << std::endl;
  return 0;
}

}  // namespace pgmate::cli
