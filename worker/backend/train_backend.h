// Training behind the worker's TRAIN_* requests: a backend opens sessions, each one a
// network being trained with its optimizer state (nn/trainer.h's Trainer in the LibTorch
// backend). Like EvalBackend, an interface, so that the server never links LibTorch and
// tests may plug in their own.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "worker/backend/train_batch.h"
#include "worker/backend/eval_backend.h"  // DeviceLost

namespace pgmate::worker {

// One network in training. The server drives every session from its single training
// thread, one call at a time. Errors: std::invalid_argument for a malformed batch;
// std::runtime_error when a step fails (a non-finite loss: the session is left as it was,
// and stays usable); DeviceLost when the device died.
class TrainSession {
 public:
  virtual ~TrainSession() = default;
  // One optimizer step on the batch.
  virtual nn::StepMetrics step(const nn::TrainBatch& batch) = 0;
  // The batch's losses in eval mode; changes nothing.
  virtual nn::EvalMetrics evaluate(const nn::TrainBatch& batch) = 0;
  virtual std::string weights() const = 0;  // the network's safetensors file
  virtual std::string state() const = 0;    // a checkpoint that start() resumes from
  virtual std::int64_t steps_done() const = 0;
  virtual std::string device() const = 0;  // "cpu", "cuda:0"
};

class TrainBackend {
 public:
  virtual ~TrainBackend() = default;
  virtual std::string device() const = 0;
  // A new session: from config and weights, or, given a state, resumed from it (config and
  // weights are then ignored; options replace the saved ones, "" keeps them). reference:
  // weights for the KL term. optimizer (without a state): a checkpoint of an earlier run
  // whose optimizer the new session continues. Throws std::invalid_argument for bad input
  // (configuration, weights, options, state, optimizer), std::runtime_error when the device
  // cannot take it.
  virtual std::unique_ptr<TrainSession> start(const std::string& config_json, const std::string& weights,
                                              const std::optional<std::string>& reference_weights,
                                              const std::string& options_json,
                                              const std::optional<std::string>& state,
                                              const std::optional<std::string>& optimizer) = 0;
};

// The LibTorch trainer (nn/torch_train_backend.cpp). device: "cpu", "cuda", "cuda:N" or
// "auto" (cuda:0 when LibTorch has a CUDA device, else cpu); std::invalid_argument for
// others, std::runtime_error for a CUDA device this LibTorch or machine lacks.
std::unique_ptr<TrainBackend> make_torch_train_backend(const std::string& device);

}  // namespace pgmate::worker
