#include "worker/nn/optimizer.h"

#include <cmath>
#include <stdexcept>

namespace pgmate::worker::nn {
namespace {

// The tensors of `all` whose flag is set.
std::vector<torch::Tensor> where(const std::vector<torch::Tensor>& all, const std::vector<bool>& flags) {
  std::vector<torch::Tensor> out;
  for (std::size_t i = 0; i < all.size(); ++i)
    if (flags[i]) out.push_back(all[i]);
  return out;
}

}  // namespace

void apply_update(const TrainOptions& options, double lr, std::int64_t optimizer_step, OptimizerState& state,
                  const std::vector<torch::Tensor>& gradients) {
  const std::size_t n = state.parameters.size();
  if (gradients.size() != n || state.decayed.size() != n || state.first_moment.size() != n ||
      (options.optimizer == "adamw" && state.second_moment.size() != n)) {
    throw std::logic_error("optimizer: parameters, gradients and buffers differ in number");
  }
  if (n == 0) return;
  torch::NoGradGuard no_grad;
  const double wd = options.weight_decay;
  std::vector<torch::Tensor>& p = state.parameters;
  std::vector<torch::Tensor>& m = state.first_moment;
  if (options.optimizer == "sgd") {
    // g + wd * p for the decayed parameters (new tensors: the gradients stay as given).
    std::vector<torch::Tensor> g = gradients;
    if (wd > 0) {
      std::vector<torch::Tensor> decayed_g = where(gradients, state.decayed), decayed_p = where(p, state.decayed);
      if (!decayed_g.empty()) {
        std::vector<torch::Tensor> with_decay = at::_foreach_add(decayed_g, decayed_p, wd);
        for (std::size_t i = 0, k = 0; i < n; ++i)
          if (state.decayed[i]) g[i] = with_decay[k++];
      }
    }
    at::_foreach_mul_(m, options.momentum);
    at::_foreach_add_(m, g);
    if (options.nesterov) {
      at::_foreach_add_(p, at::_foreach_add(g, m, options.momentum), -lr);
    } else {
      at::_foreach_add_(p, m, -lr);
    }
    return;
  }
  std::vector<torch::Tensor>& v = state.second_moment;
  const double t = static_cast<double>(optimizer_step + 1);
  const double bias1 = 1 - std::pow(options.beta1, t);
  const double bias2 = 1 - std::pow(options.beta2, t);
  if (wd > 0) {
    std::vector<torch::Tensor> decayed_p = where(p, state.decayed);
    if (!decayed_p.empty()) at::_foreach_mul_(decayed_p, 1 - lr * wd);
  }
  at::_foreach_mul_(m, options.beta1);
  at::_foreach_add_(m, gradients, 1 - options.beta1);
  at::_foreach_mul_(v, options.beta2);
  at::_foreach_addcmul_(v, gradients, gradients, 1 - options.beta2);
  std::vector<torch::Tensor> denominator = at::_foreach_sqrt(v);
  at::_foreach_div_(denominator, std::sqrt(bias2));
  at::_foreach_add_(denominator, options.eps);
  at::_foreach_addcdiv_(p, m, denominator, -lr / bias1);
}

torch::Tensor squared_norm(const std::vector<torch::Tensor>& gradients) {
  torch::NoGradGuard no_grad;
  if (gradients.empty()) return torch::zeros({}, torch::kFloat64);
  const std::vector<torch::Tensor> norms = at::_foreach_norm(gradients);
  return torch::stack(norms).to(torch::kFloat64).pow(2).sum();
}

}  // namespace pgmate::worker::nn
