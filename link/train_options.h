// The trainer's settings (nn/trainer.h), read from a flat JSON object:
//
//   {"optimizer": "adamw", "lr": 0.001, "schedule": "cosine", "warmup_steps": 100,
//    "total_steps": 5000, "grad_clip": 1, "label_smoothing": 0.05}
//
// Every key is optional; "" and "{}" give the defaults below. Unknown or repeated keys,
// values of another type and values out of range throw std::invalid_argument naming the
// key ("train options: \"lr\": ..."). No LibTorch here: a client can check options before
// sending them.
//
//   optimizer        "sgd" (momentum, optional Nesterov; weight_decay is L2, added to the
//                    gradient) | "adamw" (beta1, beta2, eps; weight_decay is decoupled,
//                    p -= lr * weight_decay * p)
//   lr               the peak learning rate, > 0
//   schedule         after warmup_steps of linear warm-up (lr * (k + 1) / warmup_steps at
//                    step k): "constant"; "cosine" from lr down to lr_min at total_steps
//                    (then lr_min); "step": lr * gamma^floor((k - warmup_steps) / step_size)
//   grad_clip        the gradients' global L2 norm is scaled down to this; 0: no clipping
//   label_smoothing  eps: the policy target becomes (1 - eps) * target + eps / legal moves
//   value_weight     the WDL cross-entropy's weight in the loss
//   kl_weight        the weight of KL(current || reference) over the legal moves (needs
//                    reference weights); with kl_target > 0 it adapts after every step:
//                    measured KL > kl_target * kl_factor -> weight * kl_factor (at most
//                    kl_weight_max); KL < kl_target / kl_factor -> weight / kl_factor (at
//                    least kl_weight); in between it stays
//   dropout          the heads' dropout while training (0, the default, turns it off: a
//                    small network fitting targets that move lacks the capacity it would
//                    take, and a KL against the reference would measure the masks)
//   weight_decay     applies to weights of two or more dimensions, not to the gains and
//                    biases of normalisation layers and heads nor the positional embedding
//   precision        "auto" (bf16 autocast on CUDA, fp32 on the CPU) | "fp32" | "bf16" (autocast on
//                    either: on the CPU oneDNN's bf16 kernels where the CPU has them)
//   seed             dropout's masks: step k draws from a generator seeded with (seed, k)
#pragma once

#include <cstdint>
#include <string>

namespace pgmate::worker::nn {

struct TrainOptions {
  std::string optimizer = "sgd";
  double lr = 0.01;
  double momentum = 0.9;   // sgd
  bool nesterov = false;   // sgd
  double beta1 = 0.9;      // adamw
  double beta2 = 0.999;    // adamw
  double eps = 1e-8;       // adamw
  double weight_decay = 1e-4;
  std::string schedule = "constant";
  std::int64_t warmup_steps = 0;  // see schedule
  std::int64_t total_steps = 0;  // cosine: required, > warmup_steps
  double lr_min = 0;             // cosine
  std::int64_t step_size = 1000; // step
  double gamma = 0.1;            // step
  double grad_clip = 0;
  double label_smoothing = 0;
  double value_weight = 1;
  double kl_weight = 0;
  double kl_target = 0;       // see kl_weight
  double kl_factor = 1.5;     // see kl_weight
  double kl_weight_max = 1;   // see kl_weight
  double dropout = 0;
  std::string precision = "auto";
  std::int64_t seed = 0;

  bool operator==(const TrainOptions&) const = default;
};

// Parses and validates; throws std::invalid_argument naming the key.
TrainOptions parse_train_options(const std::string& json);

// Throws std::invalid_argument naming the first key out of range.
void validate_train_options(const TrainOptions& options);

// Every key, in the struct's order; numbers written so that they read back exactly:
// parse_train_options(to_json(o)) == o.
std::string to_json(const TrainOptions& options);

// The learning rate of step k (0-based: the first step is k = 0) under the schedule.
double scheduled_lr(const TrainOptions& options, std::int64_t step);

}  // namespace pgmate::worker::nn
