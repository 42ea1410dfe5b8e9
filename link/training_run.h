// A training run as CALL pgmate.train (the extension) and `pgmate train` (the CLI) both
// drive it: the run's settings, its samples in a fixed order, and the loop of steps, log
// rows and checkpoints on a worker's training session. Where rows come from and where log
// rows and checkpoints go is the caller's (TrainingStore); everything else is here, once.
//
// Determinism: the samples are put in an order of their own (by content), so the order a
// query returns its rows in does not matter; step k trains on positions k*batch ..
// (k+1)*batch - 1 of an endless sequence of epochs, each a permutation drawn from (seed,
// epoch). A run resumed from a checkpoint at step k therefore sees exactly the batches an
// uninterrupted run would, and (on the same worker) ends with the same weights.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "link/worker_client.h"
#include "link/train_options.h"

namespace pgmate::worker {

// The settings of a run: the run's own keys of the options object, and the trainer's
// (nn/train_options.h) for the rest.
//   batch             samples per step (256; 1..8192)
//   log_every         steps per log row and held-out measurement (50)
//   checkpoint_every  steps per checkpoint (500; a multiple of log_every, so that a resumed
//                     run's log rows are those of an uninterrupted one)
//   holdout           a training query whose rows are never trained on (none)
//   holdout_limit     held-out rows measured per log row (4096): CALL pgmate.train and
//                     pgmate train read only the query's first ones (an ORDER BY fixes which)
//   holdout_at_start  whether a new run measures the held-out rows before its first step
//                     (true); the learning loop says false when the network it trains was
//                     measured on the same rows at the end of the training that made it
//   name              the new network's name (the parent's name + " trained")
//   pause_after       stop this call at the first checkpoint at least this many steps in
//                     (0: never); the run stays running, and the same call goes on from there
//   kl_reference      the network (an id of pgmate.networks) whose policy the trainer's KL
//                     term measures against (0, the default: the network trained); the
//                     learning loop keeps every candidate close to the pretrained network
//   optimizer_from    a training run (an id of pgmate.training_runs) whose last checkpoint's
//                     optimizer (moments and step count) this run continues instead of
//                     starting cold (0, the default: a new optimizer); the learning loop's
//                     next iteration goes on from the last one's
// Without total_steps, the schedule's length is the run's steps.
struct TrainingSettings {
  std::int64_t steps = 0;
  int batch = 256;
  int log_every = 50;
  int checkpoint_every = 500;
  std::string holdout;
  int holdout_limit = 4096;
  bool holdout_at_start = true;
  std::string name;
  std::int64_t pause_after = 0;
  std::int64_t kl_reference = 0;
  std::int64_t optimizer_from = 0;
  nn::TrainOptions trainer;
};

// Parses a flat JSON options object; std::invalid_argument naming the key for anything
// wrong (unknown keys, values out of range, the trainer's own checks).
TrainingSettings parse_training_settings(std::int64_t steps, const std::string& options_json);

// Every setting but steps, name, holdout_limit, holdout_at_start and pause_after (what identifies a run's batches and
// updates, so a changed one is another run), as one JSON object with the trainer's keys
// in full: the run's `settings`.
std::string settings_json(const TrainingSettings& settings);

// The samples of a query, each one protocol::encode_train_sample's bytes.
class SampleSet {
 public:
  void add(std::span<const std::uint8_t> encoded);
  // Puts the samples in their fixed order (by content); call once, after the last add().
  void seal();
  std::size_t size() const { return offsets_.empty() ? 0 : offsets_.size() - 1; }
  std::size_t bytes() const { return data_.size(); }
  // SHA-256 (hex) of the sealed samples: whether a resumed run trains on the same data.
  std::string sha256_hex() const;
  std::span<const std::uint8_t> sample(std::size_t i) const;
  // The `batch` samples of step `step` (see the top of this file).
  std::vector<std::span<const std::uint8_t>> batch(std::int64_t step, int batch, std::uint64_t seed) const;

 private:
  const std::vector<std::uint32_t>& epoch_order(std::int64_t epoch, std::uint64_t seed) const;

  std::string data_;
  std::vector<std::size_t> offsets_;  // size() + 1 entries once a sample is added
  bool sealed_ = false;
  mutable std::int64_t order_epoch_ = -1;
  mutable std::uint64_t order_seed_ = 0;
  mutable std::vector<std::uint32_t> order_;
};

struct HoldoutMetrics {
  std::int64_t positions = 0;
  double top1 = 0, policy_loss = 0, value_loss = 0;
};

// One log row. The training means are NaN on the row of step 0 (before any step).
struct TrainingLogRow {
  std::int64_t step = 0;     // steps done
  std::int64_t samples = 0;  // samples trained on, in all
  double policy_loss = 0, value_loss = 0, kl = 0, accuracy = 0, lr = 0, kl_weight = 0, samples_per_s = 0;
  std::optional<HoldoutMetrics> holdout;
};

class TrainingStore {
 public:
  virtual ~TrainingStore() = default;
  // Stores and shows a log row.
  virtual void log(const TrainingLogRow& row) = 0;
  // Stores the state of step `step` (the run resumes from it), replacing the previous one.
  virtual void checkpoint(std::int64_t step, const std::string& state) = 0;
  // Between steps; may throw to stop the run (cancel).
  virtual void poll() {}
};

struct TrainingJob {
  std::string config_json;  // the network trained (its row)
  std::string weights;
  std::optional<std::string> reference_weights;  // for the KL term (kl_weight > 0)
  TrainingSettings settings;
  const SampleSet* data = nullptr;     // sealed, not empty
  const SampleSet* holdout = nullptr;  // sealed, or null
  std::optional<std::string> resume_state;  // a checkpoint of this run
  // The checkpoint of run settings.optimizer_from, whose optimizer a new session takes (a
  // resumed one has its own in its checkpoint).
  std::optional<std::string> optimizer_state;
};

struct TrainingResult {
  bool finished = false;  // false: paused (pause_after), at step `steps_done`
  std::int64_t steps_done = 0;
  std::string weights;  // the trained network (when finished)
  std::string state;    // the checkpoint of the last step
};

// Runs the job on a training session of `client` (started here, closed at the end). The
// worker's errors come as the client's exceptions: a non-finite loss is a WorkerError with
// the last good checkpoint already stored.
TrainingResult run_training(WorkerClient& client, const TrainingJob& job, TrainingStore& store);

}  // namespace pgmate::worker
