// The optimizer's update in one place: PyTorch's SGD (momentum, optional Nesterov, weight
// decay as L2 added to the gradient) and AdamW (decoupled weight decay), applied to every
// parameter at once with LibTorch's multi-tensor (_foreach_) operations. On CUDA a step is
// then about ten kernel launches, not eight per parameter tensor (over a thousand for the
// seed network); on the CPU the same calls loop over the tensors with the same arithmetic.
#pragma once

#include <cstdint>
#include <vector>

#include <torch/torch.h>

#include "link/train_options.h"

namespace pgmate::worker::nn {

struct OptimizerState {
  std::vector<torch::Tensor> parameters;  // updated in place
  std::vector<bool> decayed;              // per parameter: whether weight decay applies
  std::vector<torch::Tensor> first_moment;   // sgd momentum, adamw exp_avg
  std::vector<torch::Tensor> second_moment;  // adamw exp_avg_sq; empty for sgd
};

// One update with learning rate lr. optimizer_step: how many updates the moments have seen
// (AdamW's bias correction). gradients: one defined tensor per parameter.
void apply_update(const TrainOptions& options, double lr, std::int64_t optimizer_step, OptimizerState& state,
                  const std::vector<torch::Tensor>& gradients);

// The gradients' global L2 norm, squared, as a float64 scalar on their device (no read-back).
torch::Tensor squared_norm(const std::vector<torch::Tensor>& gradients);

}  // namespace pgmate::worker::nn
