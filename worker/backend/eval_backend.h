// The network evaluation behind the worker's batcher: a backend takes a batch of encoded
// positions and returns value and move priors. The LibTorch backend (nn/) is the real one;
// tests may plug in their own.
#pragma once

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "chess/board.h"

namespace pgmate::worker {

// The backend's device failed for good (a CUDA error that leaves the context dead: every
// later call fails, perft's too). The worker then stops, so that its supervisor starts a
// fresh process.
class DeviceLost : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// How a backend takes its inputs (EvalBackend::input_form): as planes the batcher encoded
// on the host, or as the positions themselves, which it encodes (a CUDA backend on the
// device: a 72-plane input is 18,432 bytes, its four boards about 30 times fewer).
enum class InputForm { kPlanes, kBoards };

inline constexpr int kBoardsPerInput = 4;  // an input's position and up to 3 earlier ones

struct EvalBatch {
  int size = 0;
  std::vector<float> planes;                   // kPlanes: size x 72 x 8 x 8, from core/nn/encoding.h
  std::vector<chess::Board> boards;            // kBoards: size x kBoardsPerInput, newest first; slots past
                                               // an input's history count are not read
  std::vector<std::uint8_t> history_counts;    // kBoards: per input, its boards in use (1..4)
  std::vector<std::uint8_t> repetitions;       // kBoards: per input, 0..2 (the encoder's plane)
  std::vector<std::vector<int>> legal_slots;   // per position: policy slots (0..4671) of its legal moves
};

struct EvalBatchResult {
  std::vector<float> wdl;                      // size x 3: win, draw, loss (softmax)
  std::vector<std::vector<float>> priors;      // per position: softmax over its legal_slots
};

// A network a backend made ready to run (weights checked, on the backend's device).
// Immutable and shared: the batches that use it hold it, so dropping it from the worker's
// cache never pulls it from under a running batch.
class LoadedNetwork {
 public:
  virtual ~LoadedNetwork() = default;
  virtual std::string config_json() const = 0;  // the configuration, normalised
  virtual std::int64_t parameters() const = 0;
  virtual std::size_t memory_bytes() const = 0;  // parameters and buffers on the device
};

class EvalBackend {
 public:
  virtual ~EvalBackend() = default;
  virtual std::string device() const = 0;  // "cpu", "cuda:0", ...
  virtual InputForm input_form() const { return InputForm::kPlanes; }
  // Checks and prepares weights (bytes as produced by init_weights); throws
  // std::invalid_argument on bad bytes. Safe to call while run() runs on another thread.
  virtual std::shared_ptr<const LoadedNetwork> load(const std::string& config_json, const std::string& weights) = 0;
  // Fresh random weights for a configuration (deterministic for a seed).
  virtual std::string init_weights(const std::string& config_json, std::uint64_t seed) = 0;
  // `network` must come from this backend's load().
  virtual EvalBatchResult run(const LoadedNetwork& network, const EvalBatch& batch) = 0;
};

// "cpu", "cuda" or "auto" (CUDA when LibTorch has it and a device is present).
// init_weights refuses configurations whose weights would exceed max_weight_bytes (the
// default: the protocol's default max_large_payload, 64 MiB). precision: "auto" (bf16 on
// CUDA, fp32 on the CPU), "fp32", "bf16" or "fp16" (CUDA only: std::invalid_argument for
// device "cpu"; device "auto" without a GPU runs fp32); std::invalid_argument for others.
// encode: where the input planes are made: "host" (by the batcher, on the CPU), "device"
// (by the backend from the boards: on CUDA with the GPU encoder when this build has it, on
// the CPU with the host encoder) or "auto" (device on CUDA when the GPU encoder is built,
// else host); std::invalid_argument for others. cuda_graphs: replay each network's forward
// pass as CUDA graphs (CUDA only: std::invalid_argument for device "cpu"; ignored by "auto"
// without a GPU).
std::unique_ptr<EvalBackend> make_torch_backend(const std::string& device,
                                                std::uint64_t max_weight_bytes = std::uint64_t{64} << 20,
                                                const std::string& precision = "auto",
                                                const std::string& encode = "auto", bool cuda_graphs = false);

}  // namespace pgmate::worker
