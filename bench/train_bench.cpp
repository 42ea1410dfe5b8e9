// Training throughput of the worker's Trainer against the forward-only evaluation of the
// same network, in the same run: samples/s of optimizer steps (AdamW, batch B) and
// positions/s of inference, and their ratio, per network configuration.
// Usage: train_bench [--batch B] [--seconds S] [--device cpu|cuda] [--threads N]
//                    [--precision fp32|bf16|auto] [CONFIG ...]
//        (default configurations: the presets tiny, small and seed)
// Batches are real positions from random games, each with a one-hot target on a legal move.
// The first lines after the settings are the host's costs per training row: encoding it,
// and building the whole batch from the worker's samples (make_train_batch: planes, legal
// slots and targets), as the worker does for every step.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <torch/torch.h>

#include "chess/fen.h"
#include "chess/movegen.h"
#include "nn/encoding.h"
#include "worker/nn/network.h"
#include "nn/policy.h"
#include "link/train_options.h"
#include "worker/nn/trainer.h"
#include "worker/server/train_samples.h"

using namespace pgmate;
namespace wnn = pgmate::worker::nn;

namespace {

wnn::TrainBatch real_batch(int n, unsigned seed) {
  std::mt19937 rng(seed);
  wnn::TrainBatch b;
  b.size = n;
  b.planes.resize(std::size_t(n) * nn::kInputPlanes * 64);
  chess::Board board = chess::parse_fen("startpos");
  for (int i = 0; i < n; ++i) {
    chess::MoveList list;
    chess::legal_moves(board, list);
    if (list.size == 0 || board.halfmove > 60) {
      board = chess::parse_fen("startpos");
      chess::legal_moves(board, list);
    }
    nn::encode(&board, 1, b.planes.data() + std::size_t(i) * nn::kInputPlanes * 64);
    std::vector<int> slots;
    for (chess::Move m : list) slots.push_back(nn::policy_slot(m, board.side));
    const int played = int(rng() % std::uint32_t(list.size));
    std::vector<float> target(slots.size(), 0.0f);
    target[std::size_t(played)] = 1.0f;
    b.legal_slots.push_back(std::move(slots));
    b.policy.push_back(std::move(target));
    const int result = int(rng() % 3);
    for (int k = 0; k < 3; ++k) b.wdl.push_back(k == result ? 1.0f : 0.0f);
    board.play(list.moves[played]);
  }
  return b;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Microseconds to encode one position with 3 earlier ones (nn::encode, as the worker does
// for every training row), over positions of random games: what keeping rows encoded
// between epochs could save at most.
double encode_microseconds(unsigned seed) {
  std::mt19937 rng(seed);
  std::vector<std::vector<chess::Board>> histories;
  for (int game = 0; game < 500; ++game) {
    chess::Board board = chess::parse_fen("startpos");
    std::vector<chess::Board> history{board};
    for (int ply = 0; ply < 60; ++ply) {
      chess::MoveList list;
      chess::legal_moves(board, list);
      if (list.size == 0) break;
      board.play(list.moves[rng() % std::uint32_t(list.size)]);
      history.insert(history.begin(), board);
      if (history.size() > 4) history.pop_back();
      histories.push_back(history);
    }
  }
  std::vector<float> planes(nn::kInputSize);
  double checksum = 0;
  int encoded = 0;
  const auto t0 = std::chrono::steady_clock::now();
  while (encoded < 100000) {
    for (const auto& h : histories) nn::encode(h.data(), int(h.size()), planes.data());
    checksum += planes[0];
    encoded += int(histories.size());
  }
  const double seconds = seconds_since(t0);
  if (checksum < 0) std::printf("%g\n", checksum);  // keeps the loop
  return seconds / encoded * 1e6;
}

// Microseconds a sample for make_train_batch over batches of `batch` samples of random games
// (4 positions of history, a one-hot target): the host's part of a step on the worker,
// which a GPU step has to hide or outrun.
double batch_building_microseconds(int batch, unsigned seed) {
  std::mt19937 rng(seed);
  std::vector<pgmate::worker::protocol::TrainSample> samples;
  while (int(samples.size()) < batch) {
    chess::Board board = chess::parse_fen("startpos");
    std::vector<chess::Board> history{board};
    for (int ply = 0; ply < 60 && int(samples.size()) < batch; ++ply) {
      chess::MoveList list;
      chess::legal_moves(board, list);
      if (list.size == 0) break;
      const chess::Move played = list.moves[rng() % std::uint32_t(list.size)];
      pgmate::worker::protocol::TrainSample sample;
      sample.history = history;
      sample.moves = {played};
      sample.policy = {1.0f};
      samples.push_back(std::move(sample));
      board.play(played);
      history.insert(history.begin(), board);
      if (history.size() > 4) history.pop_back();
    }
  }
  int built = 0;
  double checksum = 0;
  const auto t0 = std::chrono::steady_clock::now();
  while (built < 100000) {
    const wnn::TrainBatch b = pgmate::worker::make_train_batch(samples);
    checksum += b.planes[0];
    built += b.size;
  }
  const double seconds = seconds_since(t0);
  if (checksum < 0) std::printf("%g\n", checksum);
  return seconds / built * 1e6;
}

int run(int argc, char** argv) {
  int batch = 256;
  double min_seconds = 4;
  std::string device = "cpu", precision = "auto";
  int threads = int(std::thread::hardware_concurrency());
  std::vector<std::string> configs;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--batch") && i + 1 < argc) batch = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--seconds") && i + 1 < argc) min_seconds = std::atof(argv[++i]);
    else if (!std::strcmp(argv[i], "--device") && i + 1 < argc) device = argv[++i];
    else if (!std::strcmp(argv[i], "--threads") && i + 1 < argc) threads = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--precision") && i + 1 < argc) precision = argv[++i];
    else configs.push_back(argv[i]);
  }
  if (configs.empty()) configs = {"tiny", "small", "seed"};
  torch::set_num_threads(std::max(1, threads));  // both sides of the ratio use the same threads
  const wnn::TrainBatch data = real_batch(batch, 1);
  std::printf("batch %d, device %s, precision %s, %d intra-op threads\n", batch, device.c_str(), precision.c_str(),
              torch::get_num_threads());
  std::printf("host encoding (nn::encode, a position and 3 earlier ones): %.2f us a position\n",
              encode_microseconds(7));
  std::printf("host batch building (make_train_batch, batch %d): %.2f us a sample\n", batch,
              batch_building_microseconds(batch, 8));
  std::printf("%-8s %12s %18s %20s %8s\n", "config", "parameters", "train samples/s", "forward positions/s", "ratio");
  for (const std::string& name : configs) {
    const wnn::NetworkConfig config = wnn::parse_network_config(name);
    const std::string weights = wnn::init_network_bytes(config, 1);
    wnn::Trainer trainer(name, weights, std::nullopt,
                         wnn::parse_train_options(R"({"optimizer": "adamw", "lr": 0.001, "precision": ")" + precision +
                                                  R"("})"),
                         device);
    trainer.step(data);  // warm-up
    int steps = 0;
    auto t0 = std::chrono::steady_clock::now();
    while (steps < 2 || seconds_since(t0) < min_seconds) {
      trainer.step(data);
      ++steps;
    }
    const double train_rate = double(batch) * steps / seconds_since(t0);

    wnn::Network network = wnn::load_network(config, weights);
    network->to(torch::Device(device));
    network->eval();
    torch::NoGradGuard no_grad;
    const auto input = torch::from_blob(const_cast<float*>(data.planes.data()), {batch, nn::kInputPlanes, 8, 8})
                           .clone()
                           .to(torch::Device(device));
    network->forward(input);  // warm-up
    int runs = 0;
    t0 = std::chrono::steady_clock::now();
    while (runs < 2 || seconds_since(t0) < min_seconds) {
      (void)network->forward(input).wdl.to(torch::kCPU);
      ++runs;
    }
    const double forward_rate = double(batch) * runs / seconds_since(t0);
    std::printf("%-8s %12lld %18.1f %20.1f %8.2f\n", name.c_str(), static_cast<long long>(wnn::parameter_count(config)),
                train_rate, forward_rate, train_rate / forward_rate);
    std::fflush(stdout);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "train_bench: %s\n", e.what());
    return 1;
  }
}
