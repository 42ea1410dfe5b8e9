#include "link/training_run.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <numeric>
#include <stdexcept>

#include "common/flat_json.h"
#include "common/json.h"
#include "common/sha256.h"
#include "link/protocol.h"

namespace pgmate::worker {

namespace {

constexpr std::string_view kWhat = "training options";

// splitmix64: the epoch permutations' random stream, the same on every platform.
std::uint64_t mix(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

std::uint64_t fnv1a(std::span<const std::uint8_t> bytes) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (std::uint8_t b : bytes) h = (h ^ b) * 0x100000001b3ULL;
  return h;
}

}  // namespace

TrainingSettings parse_training_settings(std::int64_t steps, const std::string& options_json) {
  TrainingSettings s;
  if (steps < 1 || steps > (std::int64_t{1} << 40))
    throw std::invalid_argument("steps must be between 1 and 2^40, not " + std::to_string(steps));
  s.steps = steps;
  std::string trainer = "{";
  bool total_steps_given = false;  // (parse_flat_json refuses repeated keys)
  for (const FlatJsonField& f : parse_flat_json(options_json, kWhat)) {
    const auto text = [&] {
      if (!f.quoted) throw std::invalid_argument(std::string(kWhat) + ": \"" + f.key + "\" must be a string");
      return f.value;
    };
    if (f.key == "batch") {
      s.batch = int(flat_json_int(f, 1, protocol::kMaxTrainSamples, kWhat));
    } else if (f.key == "log_every") {
      s.log_every = int(flat_json_int(f, 1, 1 << 30, kWhat));
    } else if (f.key == "checkpoint_every") {
      s.checkpoint_every = int(flat_json_int(f, 1, 1 << 30, kWhat));
    } else if (f.key == "holdout") {
      s.holdout = text();
    } else if (f.key == "holdout_limit") {
      s.holdout_limit = int(flat_json_int(f, 1, 1 << 24, kWhat));
    } else if (f.key == "holdout_at_start") {
      if (f.quoted || (f.value != "true" && f.value != "false"))
        throw std::invalid_argument(std::string(kWhat) + ": \"holdout_at_start\" must be true or false");
      s.holdout_at_start = f.value == "true";
    } else if (f.key == "name") {
      s.name = text();
      if (s.name.empty()) throw std::invalid_argument(std::string(kWhat) + ": \"name\" must not be empty");
    } else if (f.key == "pause_after") {
      s.pause_after = flat_json_int(f, 0, std::int64_t{1} << 40, kWhat);
    } else if (f.key == "kl_reference") {
      s.kl_reference = flat_json_int(f, 0, std::numeric_limits<std::int64_t>::max(), kWhat);
    } else if (f.key == "optimizer_from") {
      s.optimizer_from = flat_json_int(f, 0, std::numeric_limits<std::int64_t>::max(), kWhat);
    } else {
      if (f.key == "total_steps") total_steps_given = true;
      if (trainer.size() > 1) trainer += ", ";
      trainer += json_string(f.key) + ": " + (f.quoted ? json_string(f.value) : f.value);
    }
  }
  // The run's length is the schedule's unless the options say otherwise (cosine needs one).
  if (!total_steps_given) trainer += std::string(trainer.size() > 1 ? ", " : "") + "\"total_steps\": " + std::to_string(steps);
  trainer += "}";
  s.trainer = nn::parse_train_options(trainer);
  if (s.kl_reference != 0 && !(s.trainer.kl_weight > 0))
    throw std::invalid_argument(std::string(kWhat) + ": \"kl_reference\" needs \"kl_weight\" above 0");
  if (s.checkpoint_every % s.log_every != 0)
    throw std::invalid_argument(std::string(kWhat) + ": \"checkpoint_every\" (" + std::to_string(s.checkpoint_every) +
                                ") must be a multiple of \"log_every\" (" + std::to_string(s.log_every) + ")");
  return s;
}

std::string settings_json(const TrainingSettings& s) {
  std::string trainer = nn::to_json(s.trainer);  // "{...}"
  std::string out = "{\"batch\": " + std::to_string(s.batch) + ", \"log_every\": " + std::to_string(s.log_every) +
                    ", \"checkpoint_every\": " + std::to_string(s.checkpoint_every) +
                    ", \"holdout\": " + (s.holdout.empty() ? std::string("null") : json_string(s.holdout));
  // Only when set, so that the runs stored before the setting existed keep their identity.
  if (s.kl_reference != 0) out += ", \"kl_reference\": " + std::to_string(s.kl_reference);
  if (s.optimizer_from != 0) out += ", \"optimizer_from\": " + std::to_string(s.optimizer_from);
  if (trainer.size() > 2) out += ", " + trainer.substr(1, trainer.size() - 2);
  return out + "}";
}

void SampleSet::add(std::span<const std::uint8_t> encoded) {
  if (sealed_) throw std::logic_error("SampleSet::add after seal");
  if (offsets_.empty()) offsets_.push_back(0);
  data_.append(reinterpret_cast<const char*>(encoded.data()), encoded.size());
  offsets_.push_back(data_.size());
}

std::span<const std::uint8_t> SampleSet::sample(std::size_t i) const {
  return {reinterpret_cast<const std::uint8_t*>(data_.data()) + offsets_[i], offsets_[i + 1] - offsets_[i]};
}

void SampleSet::seal() {
  if (sealed_) return;
  sealed_ = true;
  const std::size_t n = size();
  std::vector<std::uint64_t> hash(n);
  for (std::size_t i = 0; i < n; ++i) hash[i] = fnv1a(sample(i));
  std::vector<std::uint32_t> index(n);
  std::iota(index.begin(), index.end(), 0u);
  std::sort(index.begin(), index.end(), [&](std::uint32_t a, std::uint32_t b) {
    if (hash[a] != hash[b]) return hash[a] < hash[b];
    const auto x = sample(a), y = sample(b);
    return std::lexicographical_compare(x.begin(), x.end(), y.begin(), y.end());
  });
  std::string sorted;
  sorted.reserve(data_.size());
  std::vector<std::size_t> offsets{0};
  offsets.reserve(n + 1);
  for (std::uint32_t i : index) {
    const auto s = sample(i);
    sorted.append(reinterpret_cast<const char*>(s.data()), s.size());
    offsets.push_back(sorted.size());
  }
  data_ = std::move(sorted);
  offsets_ = n ? std::move(offsets) : std::vector<std::size_t>{};
}

std::string SampleSet::sha256_hex() const {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (std::uint8_t b : sha256(data_)) {
    out += kHex[b >> 4];
    out += kHex[b & 15];
  }
  return out;
}

const std::vector<std::uint32_t>& SampleSet::epoch_order(std::int64_t epoch, std::uint64_t seed) const {
  if (epoch == order_epoch_ && seed == order_seed_) return order_;
  order_.resize(size());
  std::iota(order_.begin(), order_.end(), 0u);
  std::uint64_t state = seed * 0x2545f4914f6cdd1dULL ^ std::uint64_t(epoch) * 0x9e3779b97f4a7c15ULL;
  for (std::size_t i = order_.size(); i > 1; --i) std::swap(order_[i - 1], order_[mix(state) % i]);  // Fisher-Yates
  order_epoch_ = epoch;
  order_seed_ = seed;
  return order_;
}

std::vector<std::span<const std::uint8_t>> SampleSet::batch(std::int64_t step, int batch, std::uint64_t seed) const {
  if (!sealed_ || size() == 0) throw std::logic_error("SampleSet::batch needs a sealed, non-empty set");
  std::vector<std::span<const std::uint8_t>> out;
  out.reserve(std::size_t(batch));
  const std::uint64_t n = size();
  for (int j = 0; j < batch; ++j) {
    const std::uint64_t g = std::uint64_t(step) * std::uint64_t(batch) + std::uint64_t(j);
    out.push_back(sample(epoch_order(std::int64_t(g / n), seed)[g % n]));
  }
  return out;
}

namespace {

HoldoutMetrics measure_holdout(WorkerClient& client, std::uint32_t session, const SampleSet& holdout,
                               const TrainingSettings& s, TrainingStore& store) {
  HoldoutMetrics m;
  const std::size_t n = std::min<std::size_t>(holdout.size(), std::size_t(s.holdout_limit));
  const std::size_t chunk = std::size_t(protocol::kMaxTrainSamples);
  for (std::size_t first = 0; first < n; first += chunk) {
    store.poll();
    std::vector<std::span<const std::uint8_t>> part;
    for (std::size_t i = first; i < std::min(n, first + chunk); ++i) part.push_back(holdout.sample(i));
    const protocol::TrainMetrics r = client.train_step(session, part, true);
    const double k = double(r.positions);
    m.positions += r.positions;
    m.top1 += k * r.accuracy;
    m.policy_loss += k * r.policy_loss;
    m.value_loss += k * r.value_loss;
  }
  if (m.positions > 0) {
    m.top1 /= double(m.positions);
    m.policy_loss /= double(m.positions);
    m.value_loss /= double(m.positions);
  }
  return m;
}

}  // namespace

TrainingResult run_training(WorkerClient& client, const TrainingJob& job, TrainingStore& store) {
  const TrainingSettings& s = job.settings;
  if (!job.data || job.data->size() == 0) throw std::invalid_argument("the training data has no rows");
  if (s.optimizer_from != 0 && !job.resume_state && !job.optimizer_state)
    throw std::invalid_argument("optimizer_from: the checkpoint of training run " + std::to_string(s.optimizer_from) +
                                " was not given");
  const TrainSessionInfo info =
      client.train_start(job.config_json, job.weights, job.reference_weights, nn::to_json(s.trainer), job.resume_state,
                         job.resume_state ? std::nullopt : job.optimizer_state);
  const std::uint32_t session = info.session;
  std::int64_t step = info.steps_done;
  const std::int64_t first_step = step;
  if (step > s.steps)
    throw std::invalid_argument("the checkpoint is at step " + std::to_string(step) + ", past the run's " +
                                std::to_string(s.steps) + " steps");
  const auto holdout = [&]() -> std::optional<HoldoutMetrics> {
    if (!job.holdout || job.holdout->size() == 0) return std::nullopt;
    return measure_holdout(client, session, *job.holdout, s, store);
  };
  if (step == 0) {
    TrainingLogRow row;
    row.policy_loss = row.value_loss = row.kl = row.accuracy = row.lr = row.kl_weight = row.samples_per_s = NAN;
    if (s.holdout_at_start) row.holdout = holdout();
    store.log(row);
  }

  // Means over the current logging interval, weighted by positions.
  TrainingLogRow sums;
  double positions = 0, seconds = 0;
  const std::uint64_t seed = std::uint64_t(s.trainer.seed);
  while (step < s.steps) {
    store.poll();
    const auto batch = job.data->batch(step, s.batch, seed);
    const auto started = std::chrono::steady_clock::now();
    // A refused step (a loss that is no longer finite, ...) ends the run: the worker's
    // message names the step.
    const protocol::TrainMetrics m = client.train_step(session, batch, false);
    seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    ++step;
    const double k = double(m.positions);
    positions += k;
    sums.policy_loss += k * m.policy_loss;
    sums.value_loss += k * m.value_loss;
    sums.kl += k * m.kl;
    sums.accuracy += k * m.accuracy;
    sums.lr = m.lr;
    sums.kl_weight = m.kl_weight;
    if (step % s.log_every == 0 || step == s.steps) {
      TrainingLogRow row;
      row.step = step;
      row.samples = step * std::int64_t(s.batch);
      const double w = positions > 0 ? positions : 1;
      row.policy_loss = sums.policy_loss / w;
      row.value_loss = sums.value_loss / w;
      row.kl = sums.kl / w;
      row.accuracy = sums.accuracy / w;
      row.lr = sums.lr;
      row.kl_weight = sums.kl_weight;
      row.samples_per_s = seconds > 0 ? positions / seconds : 0;
      row.holdout = holdout();
      store.log(row);
      sums = TrainingLogRow{};
      positions = seconds = 0;
    }
    if (step % s.checkpoint_every == 0 && step < s.steps) {
      const bool pause = s.pause_after > 0 && step - first_step >= s.pause_after;
      TrainSaved saved = client.train_save(session, false, true, pause);
      store.checkpoint(step, saved.state);
      if (pause) return TrainingResult{false, step, "", std::move(saved.state)};
    }
  }
  TrainSaved saved = client.train_save(session, true, true, true);
  return TrainingResult{true, step, std::move(saved.weights), std::move(saved.state)};
}

}  // namespace pgmate::worker
