// Shared by the worker tests: a fake evaluation backend that records its batches and
// computes a deterministic answer from the planes, random positions, temp directories.
#pragma once

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <memory>
#include <mutex>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "chess/fen.h"
#include "chess/movegen.h"
#include "nn/encoding.h"
#include "nn/policy.h"
#include "link/protocol.h"
#include "worker/backend/eval_backend.h"

namespace pgmate::worker::testing {

constexpr int kPlaneFloats = ::pgmate::nn::kInputPlanes * 64;

// A deterministic function of one position's planes: the fake network's WDL.
inline void fake_wdl(const float* planes, float* wdl) {
  double s = 0;
  for (int j = 0; j < kPlaneFloats; ++j) s += double(planes[j]) * double((j * 31) % 101 + 1);
  const double frac = std::fmod(s, 1000.0) / 1000.0;
  wdl[0] = float(0.1 + 0.8 * frac);
  wdl[1] = (1.0f - wdl[0]) * 0.5f;
  wdl[2] = 1.0f - wdl[0] - wdl[1];
}

// The fake network's priors: proportional to slot + 1.
inline std::vector<float> fake_priors(const std::vector<int>& slots) {
  double sum = 0;
  for (int s : slots) sum += s + 1;
  std::vector<float> p;
  for (int s : slots) p.push_back(float((s + 1) / sum));
  return p;
}

// State shared between a test and the FakeBackend the server owns.
struct FakeState {
  std::mutex mutex;
  std::vector<int> batch_sizes;
  std::atomic<int> delay_ms{0};
  std::atomic<int> runs{0};
  std::atomic<int> running{0}, most_running{0};  // runs in progress at once
  std::atomic<bool> fail_runs{false};
  std::atomic<bool> lose_device{false};  // runs throw DeviceLost, as a dead CUDA context makes them
  // Spoils the last answer of each batch: 1 a NaN win, 2 an infinite prior, 3 a WDL summing to 1.5.
  std::atomic<int> spoil{0};
  std::atomic<int> load_delay_ms{0};
  std::atomic<int> loads{0};
  std::atomic<std::size_t> network_bytes{std::size_t(1) << 20};
  bool takes_boards = false;  // the backend asks for boards (InputForm::kBoards); set before the batcher is made
  std::vector<std::string> batch_networks;  // per batch run: its network's configuration

  std::vector<int> sizes() {
    std::lock_guard lock(mutex);
    return batch_sizes;
  }
  int largest() {
    int m = 0;
    for (int s : sizes()) m = std::max(m, s);
    return m;
  }
};

// A fake network: its configuration and the memory it claims to take.
class FakeNetwork : public LoadedNetwork {
 public:
  FakeNetwork(std::string config, std::size_t bytes) : config_(std::move(config)), bytes_(bytes) {}
  std::string config_json() const override { return config_; }
  std::int64_t parameters() const override { return std::int64_t(bytes_ / 4); }
  std::size_t memory_bytes() const override { return bytes_; }

 private:
  std::string config_;
  std::size_t bytes_;
};

class FakeBackend : public EvalBackend {
 public:
  // A boards batch's planes, made as the batcher makes them; empty when malformed.
  static std::vector<float> encode_boards(const EvalBatch& batch) {
    const auto n = std::size_t(batch.size);
    if (!batch.planes.empty() || batch.boards.size() != n * kBoardsPerInput || batch.history_counts.size() != n ||
        batch.repetitions.size() != n)
      return {};
    std::vector<float> planes(n * kPlaneFloats);
    for (std::size_t i = 0; i < n; ++i)
      ::pgmate::nn::encode(batch.boards.data() + i * kBoardsPerInput, batch.history_counts[i], planes.data() + i * kPlaneFloats,
                 batch.repetitions[i]);
    return planes;
  }

  explicit FakeBackend(std::shared_ptr<FakeState> state) : state_(std::move(state)) {}
  std::string device() const override { return "fake"; }
  InputForm input_form() const override { return state_->takes_boards ? InputForm::kBoards : InputForm::kPlanes; }
  std::shared_ptr<const LoadedNetwork> load(const std::string& config, const std::string& weights) override {
    if (weights.rfind("fake-weights:", 0) != 0) throw std::invalid_argument("these are not fake weights");
    if (int d = state_->load_delay_ms.load()) std::this_thread::sleep_for(std::chrono::milliseconds(d));
    ++state_->loads;
    return std::make_shared<FakeNetwork>(config, state_->network_bytes.load());
  }
  std::string init_weights(const std::string& config, std::uint64_t seed) override {
    return "fake-weights:" + config + ":" + std::to_string(seed);
  }
  EvalBatchResult run(const LoadedNetwork& network, const EvalBatch& batch) override {
    {
      std::lock_guard lock(state_->mutex);
      state_->batch_sizes.push_back(batch.size);
      state_->batch_networks.push_back(network.config_json());
    }
    ++state_->runs;
    const int now_running = ++state_->running;
    for (int most = state_->most_running.load(); now_running > most;)
      if (state_->most_running.compare_exchange_weak(most, now_running)) break;
    struct Leave {
      std::atomic<int>& running;
      ~Leave() { --running; }
    } leave{state_->running};
    if (int d = state_->delay_ms.load()) std::this_thread::sleep_for(std::chrono::milliseconds(d));
    if (state_->fail_runs) throw std::runtime_error("fake failure");
    if (state_->lose_device) throw DeviceLost("fake: an illegal memory access was encountered");
    const std::vector<float> planes = state_->takes_boards ? encode_boards(batch) : batch.planes;
    if (planes.size() != std::size_t(batch.size) * kPlaneFloats || batch.legal_slots.size() != std::size_t(batch.size))
      throw std::runtime_error("malformed batch");
    EvalBatchResult r;
    r.wdl.resize(std::size_t(batch.size) * 3);
    for (int i = 0; i < batch.size; ++i) {
      fake_wdl(planes.data() + std::size_t(i) * kPlaneFloats, r.wdl.data() + 3 * i);
      r.priors.push_back(fake_priors(batch.legal_slots[i]));
    }
    if (batch.size > 0) {
      const std::size_t last = std::size_t(batch.size) - 1;
      switch (state_->spoil.load()) {
        case 1: r.wdl[3 * last] = std::nanf(""); break;
        case 2: r.priors[last].front() = std::numeric_limits<float>::infinity(); break;
        case 3: r.wdl[3 * last] += 0.5f; break;
        default: break;
      }
    }
    return r;
  }

 private:
  std::shared_ptr<FakeState> state_;
};

// The network the test servers hold from the start (FakeBackend weights).
inline protocol::NetworkKey test_network(std::int64_t id = 1, std::uint8_t version = 0) {
  protocol::NetworkKey key;
  key.id = id;
  key.sha256.fill(version);
  return key;
}
inline const std::string kTestNetworkConfig = "{\"fake\":true}";
inline std::string fake_weights(const std::string& config = kTestNetworkConfig, std::uint64_t seed = 1) {
  return "fake-weights:" + config + ":" + std::to_string(seed);
}

// What the fake network answers for one input, computed here independently of the server.
inline protocol::EvalResult expected_result(const std::vector<chess::Board>& history, int repetitions = 0) {
  std::vector<float> planes(kPlaneFloats);
  ::pgmate::nn::encode(history.data(), int(history.size()), planes.data(), repetitions);
  protocol::EvalResult r;
  float wdl[3];
  fake_wdl(planes.data(), wdl);
  r.win = wdl[0];
  r.draw = wdl[1];
  r.loss = wdl[2];
  chess::MoveList list;
  chess::legal_moves(history.front(), list);
  r.moves.assign(list.begin(), list.end());
  std::vector<int> slots;
  for (chess::Move m : r.moves) slots.push_back(::pgmate::nn::policy_slot(m, history.front().side));
  r.priors = fake_priors(slots);
  return r;
}

// A game of random legal moves; returns its positions (start included).
inline std::vector<chess::Board> random_game(std::uint64_t seed, int plies) {
  std::mt19937_64 rng(seed);
  std::vector<chess::Board> game{chess::parse_fen(chess::kStartFen)};
  chess::MoveList list;
  for (int i = 0; i < plies; ++i) {
    chess::legal_moves(game.back(), list);
    if (list.size == 0) break;
    chess::Board next = game.back();
    next.play(list.moves[rng() % std::uint64_t(list.size)]);
    game.push_back(next);
  }
  return game;
}

// Random positions, each with up to 3 predecessors (newest first).
inline std::vector<std::vector<chess::Board>> random_histories(std::uint64_t seed, int count) {
  std::vector<std::vector<chess::Board>> out;
  std::mt19937_64 rng(seed);
  while (int(out.size()) < count) {
    const auto game = random_game(rng(), 1 + int(rng() % 80));
    const int end = int(game.size()) - 1;
    const int n = 1 + int(rng() % 4);
    std::vector<chess::Board> h;
    for (int i = end; i >= 0 && int(h.size()) < n; --i) h.push_back(game[i]);
    out.push_back(std::move(h));
  }
  return out;
}

inline std::vector<chess::Board> random_positions(std::uint64_t seed, int count) {
  std::vector<chess::Board> out;
  for (auto& h : random_histories(seed, count)) out.push_back(h.front());
  return out;
}

// A fresh private directory under /tmp (short: Unix socket paths are limited to 107 bytes).
class TempDir {
 public:
  TempDir() {
    char tmpl[] = "/tmp/pgmw-XXXXXX";
    if (!mkdtemp(tmpl)) throw std::runtime_error("mkdtemp failed");
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }
  std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

inline double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace pgmate::worker::testing
