#include "worker/server/batcher.h"

#include <algorithm>
#include <exception>
#include <latch>

#include "chess/movegen.h"
#include "nn/encoding.h"
#include "nn/policy.h"

namespace pgmate::worker {

using protocol::ErrorCode;

namespace {

constexpr int kPlaneFloats = ::pgmate::nn::kInputPlanes * 64;
constexpr auto kRateWindow = std::chrono::seconds(5);
constexpr std::size_t kMinEncodeChunk = 64;  // positions; smaller batches are encoded inline
static_assert(protocol::kMaxHistory == kBoardsPerInput, "an input's boards fill EvalBatch::boards' slots");

bool flag_set(const CancelFlag& f) { return f && f->load(std::memory_order_relaxed); }

}  // namespace

// A queued request and its results. Its slices may be in batches of several evaluation
// threads at once: each thread encodes and fills only its own slice's entries, and
// `mutex` guards what they share (completed, finished, the done/fail call).
struct Batcher::EvalTask {
  EvalJob job;
  std::vector<protocol::EvalResult> results;
  std::mutex mutex;
  std::size_t completed = 0;
  bool finished = false;  // done or fail called
  bool is_cancelled() const { return flag_set(job.cancelled); }
  bool is_finished() {
    std::lock_guard lock(mutex);
    return finished;
  }
  void fail(ErrorCode code, const std::string& message) {
    std::lock_guard lock(mutex);
    if (finished) return;
    finished = true;
    if (job.fail) job.fail(code, message);
  }
};

// What one evaluation thread reuses from batch to batch.
struct Batcher::EvalBuffers {
  EvalBatch batch;
  std::vector<std::pair<EvalTask*, std::size_t>> where;  // batch position -> (task, input)
};

struct Batcher::LegalTask {
  LegalJob job;
  std::vector<std::vector<chess::Move>> results;
  std::size_t completed = 0;
  bool finished = false;
  bool is_cancelled() const { return flag_set(job.cancelled); }
  void fail(ErrorCode code, const std::string& message) {
    if (finished) return;
    finished = true;
    if (job.fail) job.fail(code, message);
  }
};

namespace {
std::unique_ptr<EvalBackend> required(std::unique_ptr<EvalBackend> backend) {
  if (!backend) throw std::invalid_argument("Batcher needs an evaluation backend");
  return backend;
}
}  // namespace

Batcher::Batcher(std::unique_ptr<EvalBackend> backend, BatcherConfig config)
    : backend_(required(std::move(backend))),
      config_(config),
      networks_(*backend_, config.network_memory),
      eval_queue_(std::make_unique<BatchQueue<EvalTask>>()),
      legal_queue_(std::make_unique<BatchQueue<LegalTask>>()) {
  if (config_.max_batch < 1) throw std::invalid_argument("max_batch must be at least 1");
  if (config_.deadline.count() < 0) throw std::invalid_argument("the batch deadline must not be negative");
  const int encode_threads = config_.encode_threads >= 0
                                 ? config_.encode_threads
                                 : std::min(8, int(std::thread::hardware_concurrency()) - 1);
  if (encode_threads > 0) encode_pool_ = std::make_unique<ThreadPool>(encode_threads);
  device_ = backend_->device();
  input_form_ = backend_->input_form();
  // On a GPU a second thread encodes the next batch while the first one's runs.
  const int eval_threads = config_.eval_threads > 0 ? config_.eval_threads : device_.rfind("cuda", 0) == 0 ? 2 : 1;
  for (int i = 0; i < eval_threads; ++i) eval_threads_.emplace_back([this] { eval_loop(); });
  legal_thread_ = std::thread([this] { legal_loop(); });
}

Batcher::~Batcher() { stop(); }

void Batcher::submit(EvalJob job) {
  auto task = std::make_shared<EvalTask>();
  const std::size_t n = job.inputs.size();
  task->job = std::move(job);
  if (stopped_) return task->fail(ErrorCode::kShuttingDown, "the worker is shutting down");
  if (!task->job.network) return task->fail(ErrorCode::kNotLoaded, task->job.key.describe() + " is not loaded");
  if (n == 0) {
    task->finished = true;
    if (task->job.done) task->job.done({});
    return;
  }
  if (!task->job.repetitions.empty() && task->job.repetitions.size() != n)
    return task->fail(ErrorCode::kBadRequest, "repetition counts do not match the inputs");
  for (std::size_t i = 0; i < n; ++i) {
    const auto& h = task->job.inputs[i];
    if (h.empty() || h.size() > std::size_t(protocol::kMaxHistory))
      return task->fail(ErrorCode::kBadRequest,
                        "input " + std::to_string(i) + " has " + std::to_string(h.size()) + " positions (1..4)");
  }
  task->results.resize(n);
  {
    std::lock_guard lock(stats_mutex_);
    ++stats_.eval_requests;
  }
  if (!eval_queue_->push(task, n)) task->fail(ErrorCode::kShuttingDown, "the worker is shutting down");
}

void Batcher::submit(LegalJob job) {
  auto task = std::make_shared<LegalTask>();
  const std::size_t n = job.boards.size();
  task->job = std::move(job);
  if (stopped_) return task->fail(ErrorCode::kShuttingDown, "the worker is shutting down");
  if (n == 0) {
    task->finished = true;
    if (task->job.done) task->job.done({});
    return;
  }
  task->results.resize(n);
  {
    std::lock_guard lock(stats_mutex_);
    ++stats_.legal_requests;
  }
  if (!legal_queue_->push(task, n)) task->fail(ErrorCode::kShuttingDown, "the worker is shutting down");
}

void Batcher::stop() {
  if (stopped_.exchange(true)) {
    // Someone else is stopping (or has stopped); joining twice is harmless.
  }
  eval_queue_->stop();
  legal_queue_->stop();
  for (auto& t : eval_threads_)
    if (t.joinable()) t.join();
  if (legal_thread_.joinable()) legal_thread_.join();
  if (encode_pool_) encode_pool_->stop();
  for (auto& t : eval_queue_->drain()) t->fail(ErrorCode::kShuttingDown, "the worker is shutting down");
  for (auto& t : legal_queue_->drain()) t->fail(ErrorCode::kShuttingDown, "the worker is shutting down");
}

void Batcher::eval_loop() {
  EvalBuffers buffers;
  for (;;) {
    auto slices = eval_queue_->take(std::size_t(config_.max_batch), config_.deadline, config_.all_clients_waiting);
    if (slices.empty()) return;
    run_eval_batch(slices, buffers);
  }
}

void Batcher::legal_loop() {
  for (;;) {
    auto slices = legal_queue_->take(std::size_t(config_.max_batch), config_.deadline, config_.all_clients_waiting);
    if (slices.empty()) return;
    run_legal_batch(slices);
  }
}

void Batcher::run_eval_batch(std::vector<BatchQueue<EvalTask>::Slice>& slices, EvalBuffers& buffers) {
  // Slices of tasks that already failed (in an earlier batch) take no place in this one.
  std::erase_if(slices, [](const auto& s) { return s.task->is_finished(); });
  // One backend run per network, in the order the networks first appear.
  std::vector<const LoadedNetwork*> networks;
  for (const auto& s : slices)
    if (std::find(networks.begin(), networks.end(), s.task->job.network.get()) == networks.end())
      networks.push_back(s.task->job.network.get());
  if (networks.size() <= 1) {
    if (!slices.empty()) run_eval_group(slices, buffers);
    return;
  }
  for (const LoadedNetwork* n : networks) {
    std::vector<BatchQueue<EvalTask>::Slice> group;
    for (const auto& s : slices)
      if (s.task->job.network.get() == n) group.push_back(s);
    run_eval_group(group, buffers);
  }
}

void Batcher::run_eval_group(std::span<const BatchQueue<EvalTask>::Slice> slices, EvalBuffers& buffers) {
  const LoadedNetwork& network = *slices.front().task->job.network;
  std::size_t total = 0;
  for (const auto& s : slices) total += s.end - s.begin;
  if (total == 0) return;

  // Encode every position: planes (or, for a backend that encodes them, the boards), legal
  // moves and their policy slots. Large batches are encoded in parallel chunks; the buffers
  // are reused from batch to batch.
  EvalBatch& batch = buffers.batch;
  batch.size = int(total);
  const bool boards = input_form_ == InputForm::kBoards;
  batch.planes.resize(boards ? 0 : total * kPlaneFloats);
  batch.boards.resize(boards ? total * kBoardsPerInput : 0);
  batch.history_counts.resize(boards ? total : 0);
  batch.repetitions.resize(boards ? total : 0);
  batch.legal_slots.resize(total);
  std::vector<std::pair<EvalTask*, std::size_t>>& where = buffers.where;
  where.clear();
  for (const auto& s : slices)
    for (std::size_t i = s.begin; i < s.end; ++i) where.emplace_back(s.task.get(), i);
  auto encode_range = [&batch, &where, boards](std::size_t from, std::size_t to) {
    chess::MoveList list;
    for (std::size_t k = from; k < to; ++k) {
      auto [task, i] = where[k];
      const auto& history = task->job.inputs[i];
      const chess::Board& b = history.front();
      const int repetitions = task->job.repetitions.empty() ? 0 : task->job.repetitions[i];
      if (boards) {
        std::copy(history.begin(), history.end(), batch.boards.begin() + std::ptrdiff_t(k * kBoardsPerInput));
        batch.history_counts[k] = std::uint8_t(history.size());
        batch.repetitions[k] = std::uint8_t(repetitions);
      } else {
        ::pgmate::nn::encode(history.data(), int(history.size()), batch.planes.data() + k * kPlaneFloats, repetitions);
      }
      chess::legal_moves(b, list);
      auto& moves = task->results[i].moves;
      moves.assign(list.begin(), list.end());
      auto& slots = batch.legal_slots[k];
      slots.resize(moves.size());
      for (std::size_t m = 0; m < moves.size(); ++m) slots[m] = ::pgmate::nn::policy_slot(moves[m], b.side);
    }
  };
  const std::size_t chunks =
      encode_pool_ ? std::min<std::size_t>(std::size_t(encode_pool_->size()) + 1, total / kMinEncodeChunk) : 1;
  if (chunks <= 1) {
    encode_range(0, total);
  } else {
    // Chunks 1.. go to the pool, chunk 0 is encoded here; then wait for the rest.
    std::latch done(std::ptrdiff_t(chunks - 1));
    for (std::size_t c = 1; c < chunks; ++c) {
      const std::size_t from = total * c / chunks, to = total * (c + 1) / chunks;
      if (!encode_pool_->submit([&, from, to] {
            encode_range(from, to);
            done.count_down();
          })) {
        encode_range(from, to);
        done.count_down();
      }
    }
    encode_range(0, total / chunks);
    done.wait();
  }

  // Run it on the network the jobs were submitted for.
  EvalBatchResult result;
  std::string error;
  {
    try {
      result = backend_->run(network, batch);
      if (result.wdl.size() != total * 3 || result.priors.size() != total) {
        error = "the evaluation backend returned " + std::to_string(result.wdl.size()) + " WDL values and " +
                std::to_string(result.priors.size()) + " prior lists for a batch of " + std::to_string(total);
      } else {
        for (std::size_t k = 0; k < total && error.empty(); ++k)
          if (result.priors[k].size() != batch.legal_slots[k].size())
            error = "the evaluation backend returned " + std::to_string(result.priors[k].size()) +
                    " priors for a position with " + std::to_string(batch.legal_slots[k].size()) + " legal moves";
      }
    } catch (const DeviceLost& e) {
      error = std::string("the GPU failed (") + e.what() + "); the worker restarts";
      if (!device_lost_.exchange(true) && config_.on_device_lost) config_.on_device_lost(e.what());
    } catch (const std::exception& e) {
      error = std::string("evaluation failed: ") + e.what();
    } catch (...) {
      error = "evaluation failed (unknown exception)";
    }
  }

  // Split the results back to their requests.
  std::uint64_t failures = 0;
  std::size_t k = 0;
  for (const auto& s : slices) {
    EvalTask& t = *s.task;
    const std::size_t n = s.end - s.begin;
    std::lock_guard task_lock(t.mutex);
    if (!t.finished && !error.empty()) {
      t.finished = true;
      if (t.job.fail) t.job.fail(ErrorCode::kBackend, error);
      ++failures;
    }
    if (t.finished) {
      k += n;
      continue;
    }
    for (std::size_t i = s.begin; i < s.end; ++i, ++k) {
      auto& r = t.results[i];
      r.win = result.wdl[3 * k];
      r.draw = result.wdl[3 * k + 1];
      r.loss = result.wdl[3 * k + 2];
      r.priors = std::move(result.priors[k]);
    }
    t.completed += n;
    if (t.completed == t.results.size()) {
      t.finished = true;
      if (t.job.done) {
        try {
          t.job.done(std::move(t.results));
        } catch (...) {
          // The reply could not be delivered (connection gone); nothing else to do.
        }
      }
    }
  }

  const auto now = Clock::now();
  std::lock_guard lock(stats_mutex_);
  stats_.eval_failures += failures;
  if (error.empty()) {
    ++stats_.eval_batches;
    stats_.eval_positions += total;
    stats_.largest_batch = std::max(stats_.largest_batch, int(total));
    recent_.emplace_back(now, int(total));
    while (!recent_.empty() && now - recent_.front().first > kRateWindow) recent_.pop_front();
  }
}

void Batcher::run_legal_batch(std::vector<BatchQueue<LegalTask>::Slice>& slices) {
  std::erase_if(slices, [](const auto& s) { return s.task->finished; });
  std::size_t total = 0;
  chess::MoveList list;
  for (const auto& s : slices) {
    LegalTask& t = *s.task;
    for (std::size_t i = s.begin; i < s.end; ++i) {
      chess::legal_moves(t.job.boards[i], list);
      t.results[i].assign(list.begin(), list.end());
    }
    total += s.end - s.begin;
    t.completed += s.end - s.begin;
    if (t.completed == t.results.size()) {
      t.finished = true;
      if (t.job.done) {
        try {
          t.job.done(std::move(t.results));
        } catch (...) {
        }
      }
    }
  }
  std::lock_guard lock(stats_mutex_);
  ++stats_.legal_batches;
  stats_.legal_positions += total;
}

std::string Batcher::init_weights(const std::string& config_json, std::uint64_t seed) {
  return backend_->init_weights(config_json, seed);
}

std::string Batcher::device() const { return device_; }

BatcherStats Batcher::stats() const {
  BatcherStats s;
  const auto now = Clock::now();
  {
    std::lock_guard lock(stats_mutex_);
    s = stats_;
    std::uint64_t recent_positions = 0;
    for (const auto& [when, n] : recent_)
      if (now - when <= kRateWindow) recent_positions += std::uint64_t(n);
    const double window =
        std::min(std::chrono::duration<double>(kRateWindow).count(), std::chrono::duration<double>(now - started_).count());
    s.positions_per_s = window > 0 ? double(recent_positions) / window : 0.0;
  }
  s.mean_batch_size = s.eval_batches ? double(s.eval_positions) / double(s.eval_batches) : 0.0;
  s.eval_queue_depth = eval_queue_->depth();
  s.legal_queue_depth = legal_queue_->depth();
  return s;
}

}  // namespace pgmate::worker
