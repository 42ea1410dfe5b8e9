// The trainer's optimizer (nn/optimizer.h) against LibTorch's own SGD and AdamW: the same
// parameters, gradients and settings give the same weights after several steps.
#include "worker/nn/optimizer.h"

#include <gtest/gtest.h>

#include <torch/torch.h>

#include "link/train_options.h"

namespace pgmate::worker::nn {
namespace {

struct Problem {
  std::vector<torch::Tensor> ours, theirs;  // equal starting weights
  std::vector<bool> decayed;
  std::vector<std::vector<torch::Tensor>> gradients;  // per step, per parameter
};

Problem make_setup(int steps) {
  torch::manual_seed(7);
  Problem s;
  const std::vector<std::vector<std::int64_t>> shapes = {{8, 4, 3, 3}, {8}, {16, 8}, {16}, {5, 7}};
  for (std::size_t i = 0; i < shapes.size(); ++i) {
    torch::Tensor w = torch::randn(shapes[i]);
    s.ours.push_back(w.clone());
    s.theirs.push_back(w.clone().set_requires_grad(true));
    s.decayed.push_back(shapes[i].size() > 1);
  }
  for (int k = 0; k < steps; ++k) {
    std::vector<torch::Tensor> g;
    for (const auto& shape : shapes) g.push_back(torch::randn(shape) * (k + 1));
    s.gradients.push_back(std::move(g));
  }
  return s;
}

// Steps ours with apply_update and theirs with `optimizer` (built over param groups:
// decayed parameters first, then the others), then compares.
template <class Optimizer>
void expect_same_weights(const TrainOptions& options, Problem& s, Optimizer& optimizer, const char* what) {
  OptimizerState state;
  state.parameters = s.ours;
  state.decayed = s.decayed;
  for (const auto& p : s.ours) {
    state.first_moment.push_back(torch::zeros_like(p));
    if (options.optimizer == "adamw") state.second_moment.push_back(torch::zeros_like(p));
  }
  for (std::size_t k = 0; k < s.gradients.size(); ++k) {
    apply_update(options, options.lr, static_cast<std::int64_t>(k), state, s.gradients[k]);
    for (std::size_t i = 0; i < s.theirs.size(); ++i) s.theirs[i].mutable_grad() = s.gradients[k][i].clone();
    optimizer.step();
  }
  for (std::size_t i = 0; i < s.ours.size(); ++i) {
    EXPECT_TRUE(torch::allclose(s.ours[i], s.theirs[i].detach(), 1e-6, 1e-7))
        << what << ", parameter " << i << ": largest difference "
        << (s.ours[i] - s.theirs[i].detach()).abs().max().item<double>();
    EXPECT_FALSE(torch::equal(s.ours[i], s.gradients[0][i])) << "the weights moved";
  }
}

std::vector<torch::optim::OptimizerParamGroup> groups(const Problem& s, std::unique_ptr<torch::optim::OptimizerOptions> decayed,
                                                      std::unique_ptr<torch::optim::OptimizerOptions> plain) {
  std::vector<torch::Tensor> a, b;
  for (std::size_t i = 0; i < s.theirs.size(); ++i) (s.decayed[i] ? a : b).push_back(s.theirs[i]);
  std::vector<torch::optim::OptimizerParamGroup> out;
  out.emplace_back(a, std::move(decayed));
  out.emplace_back(b, std::move(plain));
  return out;
}

TEST(Optimizer, AdamWMatchesLibTorchs) {
  TrainOptions o;
  o.optimizer = "adamw";
  o.lr = 0.01;
  o.weight_decay = 0.1;
  o.beta1 = 0.8;
  o.beta2 = 0.95;
  o.eps = 1e-6;
  Problem s = make_setup(4);
  const auto adamw = [&](double wd) {
    return std::make_unique<torch::optim::AdamWOptions>(
        torch::optim::AdamWOptions(o.lr).betas({o.beta1, o.beta2}).eps(o.eps).weight_decay(wd));
  };
  torch::optim::AdamW theirs(groups(s, adamw(o.weight_decay), adamw(0)), torch::optim::AdamWOptions(o.lr));
  expect_same_weights(o, s, theirs, "adamw");
}

TEST(Optimizer, SgdWithMomentumMatchesLibTorchs) {
  for (bool nesterov : {false, true}) {
    TrainOptions o;
    o.optimizer = "sgd";
    o.lr = 0.05;
    o.weight_decay = 0.01;
    o.momentum = 0.9;
    o.nesterov = nesterov;
    Problem s = make_setup(4);
    const auto sgd = [&](double wd) {
      return std::make_unique<torch::optim::SGDOptions>(
          torch::optim::SGDOptions(o.lr).momentum(o.momentum).nesterov(nesterov).weight_decay(wd));
    };
    torch::optim::SGD theirs(groups(s, sgd(o.weight_decay), sgd(0)), torch::optim::SGDOptions(o.lr));
    expect_same_weights(o, s, theirs, nesterov ? "sgd, nesterov" : "sgd");
  }
}

TEST(Optimizer, SquaredNormIsTheSumOverAllGradients) {
  const Problem s = make_setup(1);
  double expected = 0;
  for (const auto& g : s.gradients[0]) expected += g.to(torch::kFloat64).pow(2).sum().item<double>();
  const torch::Tensor got = squared_norm(s.gradients[0]);
  EXPECT_EQ(got.scalar_type(), torch::kFloat64);
  EXPECT_NEAR(got.item<double>(), expected, 1e-6 * expected);
  EXPECT_EQ(squared_norm({}).item<double>(), 0.0);
}

// The multi-tensor kernels on CUDA update as the CPU's loops do (skipped without a CUDA
// LibTorch and a device).
TEST(Optimizer, CudaUpdatesAsTheCpu) {
  if (!torch::cuda::is_available()) GTEST_SKIP() << "no CUDA device visible to LibTorch";
  for (const char* optimizer : {"sgd", "adamw"}) {
    SCOPED_TRACE(optimizer);
    TrainOptions o;
    o.optimizer = optimizer;
    o.lr = 0.01;
    o.weight_decay = 0.1;
    o.nesterov = true;
    const Problem s = make_setup(3);
    OptimizerState cpu, cuda;
    cpu.decayed = cuda.decayed = s.decayed;
    for (const auto& p : s.ours) {
      cpu.parameters.push_back(p.clone());
      cuda.parameters.push_back(p.to(torch::kCUDA));
      for (OptimizerState* state : {&cpu, &cuda}) {
        const torch::Tensor& mine = state->parameters.back();
        state->first_moment.push_back(torch::zeros_like(mine));
        if (o.optimizer == "adamw") state->second_moment.push_back(torch::zeros_like(mine));
      }
    }
    for (std::size_t k = 0; k < s.gradients.size(); ++k) {
      std::vector<torch::Tensor> on_cuda;
      for (const auto& g : s.gradients[k]) on_cuda.push_back(g.to(torch::kCUDA));
      apply_update(o, o.lr, static_cast<std::int64_t>(k), cpu, s.gradients[k]);
      apply_update(o, o.lr, static_cast<std::int64_t>(k), cuda, on_cuda);
    }
    for (std::size_t i = 0; i < cpu.parameters.size(); ++i)
      EXPECT_TRUE(torch::allclose(cpu.parameters[i], cuda.parameters[i].cpu(), 1e-5, 1e-6)) << "parameter " << i;
    std::vector<torch::Tensor> first_on_cuda;
    for (const auto& g : s.gradients[0]) first_on_cuda.push_back(g.to(torch::kCUDA));
    const double expected = squared_norm(s.gradients[0]).item<double>();
    EXPECT_NEAR(squared_norm(first_on_cuda).item<double>(), expected, 1e-6 * expected);
  }
}

TEST(Optimizer, MismatchedListsAreRefused) {
  TrainOptions o;
  o.optimizer = "adamw";
  Problem s = make_setup(1);
  OptimizerState state;
  state.parameters = s.ours;
  state.decayed = s.decayed;
  for (const auto& p : s.ours) state.first_moment.push_back(torch::zeros_like(p));  // no second moments
  EXPECT_THROW(apply_update(o, 0.01, 0, state, s.gradients[0]), std::logic_error);
}

}  // namespace
}  // namespace pgmate::worker::nn
