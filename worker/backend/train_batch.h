// What the trainer (trainer.h) takes and gives back, without LibTorch: the worker's server
// builds batches from the protocol's samples and reports the metrics, and must not need
// LibTorch to do it.
#pragma once

#include <cstdint>
#include <vector>

namespace pgmate::worker::nn {

struct TrainBatch {
  int size = 0;
  std::vector<float> planes;                   // size x 72 x 64 (core/nn/encoding.h)
  std::vector<std::vector<int>> legal_slots;   // size lists of distinct slots, 0..4671
  std::vector<std::vector<float>> policy;      // per position, the target over legal_slots (same order)
  std::vector<float> wdl;                      // size x 3 target probabilities (win, draw, loss)
  std::vector<float> weight;                   // size per-sample weights >= 0, or empty: all 1
};

struct StepMetrics {
  std::int64_t step = 0;     // this step's index (0-based)
  double policy_loss = 0;    // with label smoothing
  double value_loss = 0;
  double kl = 0;             // 0 without a reference
  double total_loss = 0;
  double accuracy = 0;       // weighted share of positions whose argmax legal logit is the target's argmax
  double lr = 0;             // the learning rate used
  double grad_norm = 0;      // global L2 norm of the gradients, before clipping
  double kl_weight = 0;      // the KL weight used (the adaptive rule may change it for the next step)
  int positions = 0;
};

struct EvalMetrics {
  double policy_loss = 0;  // no label smoothing
  double value_loss = 0;
  double kl = 0;           // 0 without a reference
  double total_loss = 0;   // the parts weighed as a step would weigh them now
  double accuracy = 0;
  double kl_weight = 0;    // the KL weight in total_loss (0 without a reference)
  int positions = 0;
};

}  // namespace pgmate::worker::nn
