// Training the network (network.h) on batches of positions with target distributions.
//
// A Trainer holds a network in train mode, its optimizer state, the step count and, when
// given, a frozen reference network for the KL term. Each step() is one optimizer step on
// one batch:
//
//   loss = policy + value_weight * value + kl_weight * kl      (L2 / weight decay: optimizer)
//   policy  cross-entropy of the target over the legal slots only: softmax over the legal
//           moves' logits; label smoothing eps uses (1 - eps) * target + eps / legal moves
//   value   cross-entropy of the WDL target (win, draw, loss) against the WDL head
//   kl      KL(current || reference) = sum p (log p - log q) over the legal slots, p the
//           trained network's and q the reference's softmax (q in eval mode, no gradient)
// Each part is the per-sample weighted mean: sum w_i l_i / sum w_i (so a weight-0 sample has
// no influence at all). A position without legal slots contributes to the value loss only.
// Targets are taken as given (a distribution should sum to 1; nothing renormalises it).
//
// Determinism: the only randomness is the heads' dropout, drawn from a generator of the
// trainer seeded per step from (options.seed, step); a trainer resumed from state() repeats
// an uninterrupted run's next steps exactly (on the CPU, with the same thread count).
//
// Checkpoints (state()) are safetensors, never LibTorch archives or pickles:
//   tensors   "network.<name>": every weight tensor, as in the weights file (F32);
//             "optimizer.<name>.momentum" (sgd) or "optimizer.<name>.exp_avg" and
//             "optimizer.<name>.exp_avg_sq" (adamw) for every parameter, F32
//   metadata  pgmate_format, pgmate_config, pgmate_checksum: the weights file's (network.h)
//             pgmate_checkpoint: "1"
//             pgmate_train_options: to_json(options)
//             pgmate_step: steps taken, decimal
//             pgmate_optimizer_step: the optimizer's own step count (AdamW's bias correction),
//               decimal; above pgmate_step when the optimizer came from an earlier run
//               (take_optimizer); absent in older checkpoints, where it equals pgmate_step
//             pgmate_kl_weight: the adaptive KL weight, shortest exact decimal
//             pgmate_reference_checksum: the reference weights' pgmate_checksum, or "none"
//
// Not thread-safe: one thread drives a trainer.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "link/network_config.h"
#include "worker/backend/train_batch.h"
#include "link/train_options.h"

namespace pgmate::worker::nn {

class Trainer {
 public:
  // config_json: parse_network_config's input; weights: the network's safetensors bytes
  // (load_network); reference_weights: the same configuration's weights for the KL term;
  // device "cpu", "cuda" or "cuda:N". Throws std::invalid_argument for bad input (a
  // kl_weight > 0 without reference weights, bf16 on the CPU, ...), std::runtime_error for
  // a device this LibTorch lacks.
  Trainer(const std::string& config_json, const std::string& weights,
          const std::optional<std::string>& reference_weights, const TrainOptions& options,
          const std::string& device = "cpu");
  // A trainer from state(): the same weights, optimizer state, step and KL weight. The
  // reference weights must be those the state was trained with (by checksum). `options`
  // replaces the saved options (e.g. more total_steps) but must keep the optimizer.
  static Trainer resume(const std::string& state, const std::optional<std::string>& reference_weights,
                        const std::string& device = "cpu", const std::optional<TrainOptions>& options = std::nullopt);

  // Continues the optimizer of another training run (the learning loop's next iteration):
  // the moments and the optimizer's step count of `state` (a checkpoint of a network of
  // the same configuration, trained with the same optimizer) replace this trainer's, so
  // that its next update is the one that run would have made on the same weights. The
  // weights, the step count, the options and the KL weight stay this trainer's. Throws
  // std::invalid_argument naming what does not fit; the trainer is then unchanged.
  void take_optimizer(const std::string& state);

  Trainer(Trainer&&) noexcept;
  Trainer& operator=(Trainer&&) noexcept;
  ~Trainer();

  // One optimizer step. Throws std::invalid_argument for a malformed batch and
  // std::runtime_error when the loss or the gradients are not finite; either way the
  // weights, the optimizer state and the step count are unchanged.
  StepMetrics step(const TrainBatch& batch);

  // The batch's losses in eval mode (no dropout, no gradient, no label smoothing); changes
  // nothing. The KL to the reference (a second forward pass) only with with_kl: a held-out
  // measurement does not use it.
  EvalMetrics evaluate(const TrainBatch& batch, bool with_kl = false);

  // The current weights: network.h's safetensors file, loadable by load_network.
  std::string weights() const;
  // A checkpoint (see above).
  std::string state() const;

  std::int64_t steps_done() const;
  std::int64_t optimizer_steps() const;  // steps the optimizer's moments have seen
  double kl_weight() const;
  const TrainOptions& options() const;
  const NetworkConfig& config() const;
  std::string device() const;

 private:
  struct Impl;
  explicit Trainer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace pgmate::worker::nn
