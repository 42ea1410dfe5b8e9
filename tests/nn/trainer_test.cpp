// The trainer (worker/nn/trainer.h): options, schedules, the losses against hand
// computations, per-sample weights, the optimizers' updates, the KL term and its adaptive
// weight, refusal of non-finite losses, checkpoints that resume bit for bit, and the conv
// head's slot numbering against core/nn/policy.h. Tiny networks throughout; one test prints
// the "small" preset's training and inference rates on this machine.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "chess/fen.h"
#include "chess/notation.h"
#include "worker/nn/network.h"
#include "link/network_config.h"
#include "nn/policy.h"
#include "link/safetensors.h"
#include "worker/nn/torch_compat.h"
#include "worker/nn/trainer.h"

namespace {

namespace nn = pgmate::worker::nn;

// 16 filters, 2 blocks, both with attention (the tiny preset before pgmate 0.12.0): every
// kind of parameter a network has (the attention's positional embedding too), and a policy
// far enough from uniform that a loss's terms can be told apart.
const std::string kTiny = R"({"filters": 16, "blocks": 2, "attention_blocks": 2, "policy_head": "conv"})";

nn::TrainOptions options(const std::string& json) { return nn::parse_train_options(json); }

std::string tiny_weights(std::uint64_t seed = 1) {
  return nn::init_network_bytes(nn::parse_network_config(kTiny), seed);
}

// Random sparse planes, 3..30 distinct legal slots per position, a one-hot target (or a
// random distribution) over them and a one-hot (or random) WDL target.
nn::TrainBatch make_batch(int n, unsigned seed, bool one_hot = true) {
  std::mt19937 rng(seed);
  nn::TrainBatch b;
  b.size = n;
  b.planes.resize(static_cast<std::size_t>(n) * nn::kInputPlanes * 64);
  std::bernoulli_distribution bit(0.1);
  for (float& v : b.planes) v = bit(rng) ? 1.0f : 0.0f;
  std::uniform_real_distribution<float> unit(0.05f, 1.0f);
  for (int i = 0; i < n; ++i) {
    std::set<int> slots;
    const int want = 3 + static_cast<int>(rng() % 28);
    while (static_cast<int>(slots.size()) < want) slots.insert(static_cast<int>(rng() % nn::kPolicySize));
    std::vector<int> list(slots.begin(), slots.end());
    std::shuffle(list.begin(), list.end(), rng);
    std::vector<float> target(list.size(), 0.0f);
    if (one_hot) {
      target[rng() % target.size()] = 1.0f;
    } else {
      float sum = 0;
      for (float& t : target) sum += (t = unit(rng));
      for (float& t : target) t /= sum;
    }
    b.legal_slots.push_back(std::move(list));
    b.policy.push_back(std::move(target));
    float wdl[3] = {0, 0, 0};
    if (one_hot) {
      wdl[rng() % 3] = 1.0f;
    } else {
      float sum = 0;
      for (float& w : wdl) sum += (w = unit(rng));
      for (float& w : wdl) w /= sum;
    }
    b.wdl.insert(b.wdl.end(), wdl, wdl + 3);
  }
  return b;
}

nn::TrainBatch without_position(const nn::TrainBatch& b, int drop) {
  nn::TrainBatch out;
  out.size = b.size - 1;
  const std::size_t plane_floats = nn::kInputPlanes * 64;
  for (int i = 0; i < b.size; ++i) {
    if (i == drop) continue;
    const auto k = static_cast<std::size_t>(i);
    out.planes.insert(out.planes.end(), b.planes.begin() + k * plane_floats, b.planes.begin() + (k + 1) * plane_floats);
    out.legal_slots.push_back(b.legal_slots[k]);
    out.policy.push_back(b.policy[k]);
    out.wdl.insert(out.wdl.end(), b.wdl.begin() + k * 3, b.wdl.begin() + k * 3 + 3);
    if (!b.weight.empty()) out.weight.push_back(b.weight[k]);
  }
  return out;
}

// Every tensor of a weights file, flattened, in file order.
std::vector<float> all_floats(const std::string& weights) {
  const nn::SafetensorsView view = nn::parse_safetensors(weights);
  std::vector<float> out;
  for (const auto& t : view.tensors) {
    const std::string_view bytes = view.bytes(t);
    const std::size_t at = out.size();
    out.resize(at + bytes.size() / 4);
    std::memcpy(out.data() + at, bytes.data(), bytes.size());
  }
  return out;
}

// Per float of all_floats: whether weight decay applies to it (a weight of two or more
// dimensions, not the positional embedding).
std::vector<bool> decayed_floats(const std::string& weights) {
  const nn::SafetensorsView view = nn::parse_safetensors(weights);
  std::vector<bool> out;
  for (const auto& t : view.tensors) {
    const bool decayed = t.shape.size() > 1 && t.name.find("position") == std::string::npos;
    out.insert(out.end(), view.bytes(t).size() / 4, decayed);
  }
  return out;
}

double max_abs_diff(const std::vector<float>& a, const std::vector<float>& b) {
  EXPECT_EQ(a.size(), b.size());
  double m = 0;
  for (std::size_t i = 0; i < std::min(a.size(), b.size()); ++i) m = std::max(m, std::abs(double(a[i]) - double(b[i])));
  return m;
}

// The network's policy logits (eval mode) of one position, for hand computations.
std::vector<double> legal_logits(const std::string& weights, const nn::TrainBatch& b, int position) {
  nn::Network network = nn::load_network(nn::parse_network_config(kTiny), weights);
  torch::NoGradGuard no_grad;
  const auto input = torch::from_blob(const_cast<float*>(b.planes.data()), {b.size, nn::kInputPlanes, 8, 8}).clone();
  const auto logits = network->forward(input).policy[position];
  std::vector<double> out;
  for (int slot : b.legal_slots[static_cast<std::size_t>(position)]) out.push_back(logits[slot].item<double>());
  return out;
}

std::vector<double> log_softmax(const std::vector<double>& x) {
  const double top = *std::max_element(x.begin(), x.end());
  double sum = 0;
  for (double v : x) sum += std::exp(v - top);
  std::vector<double> out;
  for (double v : x) out.push_back(v - top - std::log(sum));
  return out;
}

template <class E>
void expect_throws(const std::function<void()>& f, const std::string& mention) {
  try {
    f();
    ADD_FAILURE() << "no exception; expected one mentioning " << mention;
  } catch (const E& e) {
    EXPECT_NE(std::string(e.what()).find(mention), std::string::npos) << e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "wrong exception type: " << e.what();
  }
}

// ---- options ----

TEST(TrainOptions, DefaultsParsingAndRoundTrip) {
  const nn::TrainOptions d;
  EXPECT_EQ(nn::parse_train_options(""), d);
  EXPECT_EQ(nn::parse_train_options("{}"), d);
  const auto o = options(R"({"optimizer": "adamw", "lr": 0.003, "weight_decay": 0.01, "schedule": "cosine",
                             "warmup_steps": 10, "total_steps": 1000, "lr_min": 1e-5, "grad_clip": 1.5,
                             "label_smoothing": 0.1, "value_weight": 0.5, "kl_weight": 0.1, "kl_target": 0.02,
                             "kl_factor": 2, "kl_weight_max": 3, "dropout": 0, "precision": "fp32", "seed": 7,
                             "nesterov": true, "momentum": 0.8, "beta1": 0.85, "beta2": 0.99, "eps": 1e-7,
                             "step_size": 5, "gamma": 0.5})");
  EXPECT_EQ(o.optimizer, "adamw");
  EXPECT_EQ(o.lr, 0.003);
  EXPECT_EQ(o.lr_min, 1e-5);
  EXPECT_EQ(o.total_steps, 1000);
  EXPECT_TRUE(o.nesterov);
  EXPECT_EQ(o.seed, 7);
  EXPECT_EQ(nn::parse_train_options(nn::to_json(o)), o);
  EXPECT_EQ(nn::parse_train_options(nn::to_json(d)), d);
  EXPECT_NE(nn::to_json(o).find("\"lr\":0.003,"), std::string::npos) << nn::to_json(o);
}

TEST(TrainOptions, BadOptionsAreNamed) {
  const std::vector<std::pair<std::string, std::string>> bad = {
      {R"({"optimiser": "sgd"})", "unknown key \"optimiser\""},
      {R"({"optimizer": "adam"})", "\"optimizer\""},
      {R"({"optimizer": 1})", "\"optimizer\""},
      {R"({"lr": 0})", "\"lr\""},
      {R"({"lr": -1})", "\"lr\""},
      {R"({"lr": "0.1"})", "\"lr\""},
      {R"({"lr": true})", "\"lr\""},
      {R"({"lr": 1e999})", "\"lr\""},
      {R"({"momentum": 1})", "\"momentum\""},
      {R"({"momentum": 0, "nesterov": true})", "\"nesterov\""},
      {R"({"nesterov": 1})", "\"nesterov\""},
      {R"({"weight_decay": -0.1})", "\"weight_decay\""},
      {R"({"schedule": "linear"})", "\"schedule\""},
      {R"({"schedule": "cosine"})", "\"total_steps\""},
      {R"({"schedule": "cosine", "warmup_steps": 10, "total_steps": 10})", "\"total_steps\""},
      {R"({"warmup_steps": -1})", "\"warmup_steps\""},
      {R"({"warmup_steps": 1.5})", "\"warmup_steps\""},
      {R"({"step_size": 0})", "\"step_size\""},
      {R"({"gamma": 0})", "\"gamma\""},
      {R"({"gamma": 1.5})", "\"gamma\""},
      {R"({"grad_clip": -1})", "\"grad_clip\""},
      {R"({"label_smoothing": 1})", "\"label_smoothing\""},
      {R"({"value_weight": -1})", "\"value_weight\""},
      {R"({"kl_weight": -1})", "\"kl_weight\""},
      {R"({"kl_factor": 1})", "\"kl_factor\""},
      {R"({"kl_weight": 2, "kl_weight_max": 1})", "\"kl_weight_max\""},
      {R"({"dropout": 1})", "\"dropout\""},
      {R"({"precision": "fp16"})", "\"precision\""},
      {R"({"seed": -3})", "\"seed\""},
      {R"({"lr_min": 1, "lr": 0.1})", "\"lr_min\""},
      {R"({"lr": 0.1, "lr": 0.2})", "repeated key \"lr\""},
      {R"({"lr": 0.1)", "train options"},
  };
  for (const auto& [json, mention] : bad) {
    SCOPED_TRACE(json);
    expect_throws<std::invalid_argument>([&] { nn::parse_train_options(json); }, mention);
  }
  // What only the trainer can check.
  const std::string weights = tiny_weights();
  expect_throws<std::invalid_argument>([&] { nn::Trainer(kTiny, weights, std::nullopt, options(R"({"kl_weight": 0.1})")); },
                                       "\"kl_weight\"");
  expect_throws<std::invalid_argument>([&] { nn::Trainer(kTiny, weights, std::nullopt, {}, "tpu"); }, "tpu");
  expect_throws<std::invalid_argument>([&] { nn::Trainer("small", weights, std::nullopt, {}); }, "saved for configuration");
  expect_throws<std::invalid_argument>([&] { nn::Trainer(kTiny, weights, tiny_weights().substr(0, 100), {}); },
                                       "network weights");
}

TEST(TrainOptions, SchedulesGiveTheExpectedRates) {
  const auto warm_cosine = options(R"({"lr": 0.1, "schedule": "cosine", "warmup_steps": 10, "total_steps": 110})");
  EXPECT_DOUBLE_EQ(nn::scheduled_lr(warm_cosine, 0), 0.01);
  EXPECT_DOUBLE_EQ(nn::scheduled_lr(warm_cosine, 4), 0.05);
  EXPECT_DOUBLE_EQ(nn::scheduled_lr(warm_cosine, 9), 0.1);
  EXPECT_DOUBLE_EQ(nn::scheduled_lr(warm_cosine, 10), 0.1);
  EXPECT_NEAR(nn::scheduled_lr(warm_cosine, 60), 0.05, 1e-15);
  EXPECT_NEAR(nn::scheduled_lr(warm_cosine, 35), 0.1 * 0.5 * (1 + std::cos(M_PI * 0.25)), 1e-15);
  EXPECT_NEAR(nn::scheduled_lr(warm_cosine, 110), 0.0, 1e-15);
  EXPECT_NEAR(nn::scheduled_lr(warm_cosine, 500), 0.0, 1e-15);
  const auto floor = options(R"({"lr": 0.1, "schedule": "cosine", "total_steps": 100, "lr_min": 0.001})");
  EXPECT_DOUBLE_EQ(nn::scheduled_lr(floor, 0), 0.1);
  EXPECT_NEAR(nn::scheduled_lr(floor, 50), 0.0505, 1e-15);
  EXPECT_DOUBLE_EQ(nn::scheduled_lr(floor, 100), 0.001);
  EXPECT_DOUBLE_EQ(nn::scheduled_lr(floor, 1000), 0.001);
  const auto step = options(R"({"lr": 0.1, "schedule": "step", "warmup_steps": 10, "step_size": 100, "gamma": 0.5})");
  EXPECT_DOUBLE_EQ(nn::scheduled_lr(step, 0), 0.01);
  EXPECT_DOUBLE_EQ(nn::scheduled_lr(step, 10), 0.1);
  EXPECT_DOUBLE_EQ(nn::scheduled_lr(step, 109), 0.1);
  EXPECT_DOUBLE_EQ(nn::scheduled_lr(step, 110), 0.05);
  EXPECT_DOUBLE_EQ(nn::scheduled_lr(step, 310), 0.0125);
  const auto constant = options(R"({"lr": 0.02})");
  EXPECT_DOUBLE_EQ(nn::scheduled_lr(constant, 0), 0.02);
  EXPECT_DOUBLE_EQ(nn::scheduled_lr(constant, 123456), 0.02);
  // The trainer uses the schedule's rate of each step.
  nn::Trainer trainer(kTiny, tiny_weights(), std::nullopt, options(R"({"lr": 0.03, "warmup_steps": 3})"));
  const auto batch = make_batch(2, 1);
  EXPECT_DOUBLE_EQ(trainer.step(batch).lr, 0.01);
  EXPECT_DOUBLE_EQ(trainer.step(batch).lr, 0.02);
  EXPECT_DOUBLE_EQ(trainer.step(batch).lr, 0.03);
  EXPECT_DOUBLE_EQ(trainer.step(batch).lr, 0.03);
  EXPECT_EQ(trainer.steps_done(), 4);
}

// ---- batches and losses ----

TEST(Trainer, RejectsMalformedBatches) {
  nn::Trainer trainer(kTiny, tiny_weights(), std::nullopt, {});
  const std::string before = trainer.weights();
  const auto good = make_batch(3, 2);
  const std::vector<std::pair<std::function<void(nn::TrainBatch&)>, std::string>> cases = {
      {[](auto& b) { b.size = 0; }, "size 0"},
      {[](auto& b) { b.planes.pop_back(); }, "planes"},
      {[](auto& b) { b.legal_slots.pop_back(); }, "legal_slots"},
      {[](auto& b) { b.policy.pop_back(); }, "policy has"},
      {[](auto& b) { b.policy[1].pop_back(); }, "position 1: policy has"},
      {[](auto& b) { b.wdl.pop_back(); }, "wdl"},
      {[](auto& b) { b.weight = {1, 1}; }, "weight"},
      {[](auto& b) { b.weight = {1, -1, 1}; }, "weight of position 1"},
      {[](auto& b) { b.weight = {0, 0, 0}; }, "sum to 0"},
      {[](auto& b) { b.legal_slots[2][0] = 4672; }, "slot 4672"},
      {[](auto& b) { b.legal_slots[2][0] = -1; }, "slot -1"},
      {[](auto& b) { b.legal_slots[0][1] = b.legal_slots[0][0]; }, "repeated"},
      {[](auto& b) { b.policy[0][0] = -0.5f; }, "negative"},
  };
  for (const auto& [change, mention] : cases) {
    SCOPED_TRACE(mention);
    nn::TrainBatch b = good;
    change(b);
    expect_throws<std::invalid_argument>([&] { trainer.step(b); }, mention);
    expect_throws<std::invalid_argument>([&] { trainer.evaluate(b); }, mention);
  }
  EXPECT_EQ(trainer.weights(), before);
  EXPECT_EQ(trainer.steps_done(), 0);
}

// evaluate(): cross-entropies and accuracy as computed by hand from the network's logits,
// for one-hot and for distribution targets.
TEST(Trainer, LossesMatchHandComputation) {
  const std::string weights = tiny_weights(3);
  nn::Trainer trainer(kTiny, weights, std::nullopt, {});
  for (const bool one_hot : {true, false}) {
    SCOPED_TRACE(one_hot ? "one-hot" : "distribution");
    const auto batch = make_batch(5, one_hot ? 10 : 11, one_hot);
    double policy = 0, accuracy = 0;
    for (int i = 0; i < batch.size; ++i) {
      const auto logp = log_softmax(legal_logits(weights, batch, i));
      const auto& target = batch.policy[static_cast<std::size_t>(i)];
      for (std::size_t k = 0; k < logp.size(); ++k) policy -= target[k] * logp[k];
      const auto best = std::max_element(logp.begin(), logp.end()) - logp.begin();
      const auto wanted = std::max_element(target.begin(), target.end()) - target.begin();
      accuracy += best == wanted;
    }
    const nn::EvalMetrics m = trainer.evaluate(batch);
    EXPECT_NEAR(m.policy_loss, policy / batch.size, 1e-5);
    EXPECT_NEAR(m.accuracy, accuracy / batch.size, 1e-6);
    EXPECT_EQ(m.positions, 5);
    EXPECT_GT(m.value_loss, 0.5);  // about log 3 for a fresh network
    EXPECT_LT(m.value_loss, 2.0);
    EXPECT_EQ(m.kl, 0.0);
  }
  EXPECT_EQ(trainer.weights(), weights);  // evaluate changes nothing
}

// Label smoothing on a one-position batch: -sum ((1 - eps) t + eps / n) log p, as computed by
// hand; the step's loss (before its update; no dropout) is that.
TEST(Trainer, LabelSmoothingAsComputedByHand) {
  const std::string weights = tiny_weights(4);
  const auto batch = make_batch(1, 12);
  const auto logp = log_softmax(legal_logits(weights, batch, 0));
  const double eps = 0.2, n = static_cast<double>(logp.size());
  double smoothed = 0, plain = 0;
  for (std::size_t k = 0; k < logp.size(); ++k) {
    smoothed -= ((1 - eps) * batch.policy[0][k] + eps / n) * logp[k];
    plain -= batch.policy[0][k] * logp[k];
  }
  ASSERT_GT(std::abs(smoothed - plain), 0.01);
  nn::Trainer with(kTiny, weights, std::nullopt, options(R"({"label_smoothing": 0.2, "dropout": 0})"));
  nn::Trainer without(kTiny, weights, std::nullopt, options(R"({"dropout": 0})"));
  EXPECT_NEAR(with.step(batch).policy_loss, smoothed, 1e-5);
  EXPECT_NEAR(without.step(batch).policy_loss, plain, 1e-5);
  // evaluate() reports the plain cross-entropy either way.
  nn::Trainer fresh(kTiny, weights, std::nullopt, options(R"({"label_smoothing": 0.2})"));
  EXPECT_NEAR(fresh.evaluate(batch).policy_loss, plain, 1e-5);
}

// The total is policy + value_weight * value (+ kl_weight * kl).
TEST(Trainer, TotalLossWeighsTheParts) {
  const auto batch = make_batch(4, 13, false);
  nn::Trainer trainer(kTiny, tiny_weights(), std::nullopt, options(R"({"value_weight": 0.25, "dropout": 0})"));
  const nn::StepMetrics m = trainer.step(batch);
  EXPECT_NEAR(m.total_loss, m.policy_loss + 0.25 * m.value_loss, 1e-6);
  EXPECT_EQ(m.kl, 0.0);
  EXPECT_EQ(m.positions, 4);
  EXPECT_GT(m.grad_norm, 0.0);
  // evaluate() weighs its parts the same way (no KL without a reference).
  const nn::EvalMetrics e = trainer.evaluate(batch);
  EXPECT_NEAR(e.total_loss, e.policy_loss + 0.25 * e.value_loss, 1e-6);
  EXPECT_EQ(e.kl_weight, 0.0);
}

// A weight-0 position has no influence: the step gives the same loss and weights as the
// batch without it; with weight 1 it does change them. Weights scale, not just select.
TEST(Trainer, PerSampleWeights) {
  const std::string weights = tiny_weights(5);
  const auto opts = options(R"({"dropout": 0, "lr": 0.05})");
  nn::TrainBatch batch = make_batch(4, 14);
  batch.weight = {1, 0, 2, 1};
  nn::TrainBatch removed = without_position(batch, 1);
  nn::Trainer a(kTiny, weights, std::nullopt, opts), b(kTiny, weights, std::nullopt, opts);
  const auto ma = a.step(batch), mb = b.step(removed);
  EXPECT_NEAR(ma.total_loss, mb.total_loss, 1e-6);
  EXPECT_NEAR(ma.grad_norm, mb.grad_norm, 1e-5 * mb.grad_norm);
  EXPECT_LT(max_abs_diff(all_floats(a.weights()), all_floats(b.weights())), 1e-6);

  nn::TrainBatch counted = batch;
  counted.weight[1] = 1;
  nn::Trainer c(kTiny, weights, std::nullopt, opts);
  c.step(counted);
  EXPECT_GT(max_abs_diff(all_floats(c.weights()), all_floats(b.weights())), 1e-4);

  // Weight 2 counts like the position twice.
  nn::TrainBatch doubled = without_position(batch, 1);
  doubled.weight.clear();
  doubled.size += 1;
  const std::size_t plane_floats = nn::kInputPlanes * 64;
  doubled.planes.insert(doubled.planes.end(), removed.planes.begin() + plane_floats, removed.planes.begin() + 2 * plane_floats);
  doubled.legal_slots.push_back(removed.legal_slots[1]);
  doubled.policy.push_back(removed.policy[1]);
  doubled.wdl.insert(doubled.wdl.end(), removed.wdl.begin() + 3, removed.wdl.begin() + 6);
  nn::Trainer d(kTiny, weights, std::nullopt, opts);
  EXPECT_NEAR(d.step(doubled).total_loss, mb.total_loss, 1e-6);
  EXPECT_LT(max_abs_diff(all_floats(d.weights()), all_floats(b.weights())), 1e-6);
}

// A position without legal moves trains the value head only.
TEST(Trainer, PositionWithoutLegalMoves) {
  const std::string weights = tiny_weights(6);
  nn::TrainBatch batch = make_batch(2, 15);
  batch.legal_slots[1].clear();
  batch.policy[1].clear();
  nn::Trainer trainer(kTiny, weights, std::nullopt, options(R"({"dropout": 0})"));
  const auto m = trainer.step(batch);
  EXPECT_TRUE(std::isfinite(m.total_loss));
  const auto logp = log_softmax(legal_logits(weights, batch, 0));
  double policy = 0;
  for (std::size_t k = 0; k < logp.size(); ++k) policy -= batch.policy[0][k] * logp[k];
  EXPECT_NEAR(m.policy_loss, policy / 2, 1e-5);
  EXPECT_LE(m.accuracy, 1.0);
}

// ---- optimizers ----

// One step from the same weights: SGD moves by -lr * (g + wd * p), Nesterov's first step by
// -(1 + momentum) * lr * g; AdamW's first step by about -lr * sign(g) after shrinking p by
// (1 - lr * wd); clipping scales the update to the clip norm. Weight decay applies to
// weights, not to gains, biases and the positional embedding.
TEST(Trainer, SgdAndAdamWUpdates) {
  const std::string weights = tiny_weights(7);
  const auto p0 = all_floats(weights);
  const auto decayed = decayed_floats(weights);
  ASSERT_EQ(decayed.size(), p0.size());
  EXPECT_GT(std::count(decayed.begin(), decayed.end(), true), 0);
  EXPECT_GT(std::count(decayed.begin(), decayed.end(), false), 0);
  const auto batch = make_batch(6, 16, false);
  const auto delta = [&](const std::string& json, nn::StepMetrics* metrics = nullptr) {
    nn::Trainer t(kTiny, weights, std::nullopt, options(json));
    const auto m = t.step(batch);
    if (metrics) *metrics = m;
    const auto p1 = all_floats(t.weights());
    std::vector<double> d(p1.size());
    for (std::size_t i = 0; i < d.size(); ++i) d[i] = double(p1[i]) - double(p0[i]);
    return d;
  };
  const auto sgd = delta(R"({"dropout": 0, "lr": 0.01, "weight_decay": 0})");  // -lr g
  const auto sgd_wd = delta(R"({"dropout": 0, "lr": 0.01, "weight_decay": 0.1})");
  const auto nesterov = delta(R"({"dropout": 0, "lr": 0.01, "weight_decay": 0, "nesterov": true})");
  double norm = 0;
  for (std::size_t i = 0; i < sgd.size(); ++i) {
    ASSERT_NEAR(sgd_wd[i], sgd[i] - (decayed[i] ? 0.01 * 0.1 * p0[i] : 0), 1e-6) << i;
    ASSERT_NEAR(nesterov[i], 1.9 * sgd[i], 1e-6) << i;
    norm += sgd[i] * sgd[i];
  }
  ASSERT_GT(norm, 0);
  nn::StepMetrics m;
  const auto clipped = delta(R"({"dropout": 0, "lr": 0.01, "weight_decay": 0, "grad_clip": 0.001})", &m);
  EXPECT_NEAR(std::sqrt(norm) / 0.01, m.grad_norm, 1e-3 * m.grad_norm);  // the reported norm is g's
  double clipped_norm = 0;
  for (double d : clipped) clipped_norm += d * d;
  EXPECT_NEAR(std::sqrt(clipped_norm) / 0.01, 0.001, 1e-5);

  const auto adamw = delta(R"({"optimizer": "adamw", "dropout": 0, "lr": 0.001, "weight_decay": 0})");
  const auto adamw_wd = delta(R"({"optimizer": "adamw", "dropout": 0, "lr": 0.001, "weight_decay": 0.5})");
  int full_steps = 0;
  for (std::size_t i = 0; i < adamw.size(); ++i) {
    ASSERT_LE(std::abs(adamw[i]), 0.001 * (1 + 1e-4)) << i;
    if (std::abs(std::abs(adamw[i]) - 0.001) < 1e-6) ++full_steps;
    if (std::abs(sgd[i]) > 1e-6) {
      ASSERT_GT(adamw[i] * sgd[i], 0.0) << i;  // the same direction as SGD's
    }
    ASSERT_NEAR(adamw_wd[i], adamw[i] - (decayed[i] ? 0.001 * 0.5 * p0[i] : 0), 1e-6) << i;
  }
  EXPECT_GT(full_steps, static_cast<int>(adamw.size()) / 2);
}

// Training a tiny network on a fixed batch fits it: the loss falls, top-1 accuracy rises.
TEST(Trainer, OverfitsAFixedBatch) {
  for (const std::string& json : {std::string(R"({"optimizer": "adamw", "lr": 0.003, "weight_decay": 0})"),
                                 std::string(R"({"optimizer": "sgd", "lr": 0.05, "nesterov": true})")}) {
    SCOPED_TRACE(json);
    nn::Trainer trainer(kTiny, tiny_weights(8), std::nullopt, options(json));
    const auto batch = make_batch(16, 17);
    const nn::EvalMetrics before = trainer.evaluate(batch);
    double first_loss = 0, last_loss = 0;
    for (int i = 0; i < 80; ++i) {
      const auto m = trainer.step(batch);
      if (i == 0) first_loss = m.total_loss;
      last_loss = m.total_loss;
    }
    const nn::EvalMetrics after = trainer.evaluate(batch);
    std::printf("%s: policy %.3f -> %.3f, value %.3f -> %.3f, top-1 %.2f -> %.2f, step loss %.3f -> %.3f\n",
                json.c_str(), before.policy_loss, after.policy_loss, before.value_loss, after.value_loss,
                before.accuracy, after.accuracy, first_loss, last_loss);
    EXPECT_LT(after.policy_loss, 0.5 * before.policy_loss);
    EXPECT_LT(after.value_loss, before.value_loss);
    EXPECT_LT(last_loss, 0.6 * first_loss);
    EXPECT_GE(after.accuracy, before.accuracy + 0.5);
    EXPECT_EQ(trainer.steps_done(), 80);
  }
}

// fp32 on CUDA (the batch in one pinned copy, one read a step, the multi-tensor optimizer)
// steps as the CPU does: the same losses, gradient norms and weights, within float error
// (skipped without a CUDA LibTorch and a device).
TEST(Trainer, CudaStepsAsTheCpu) {
  if (!torch::cuda::is_available()) GTEST_SKIP() << "no CUDA device visible to LibTorch";
  for (const std::string& json :
       {std::string(R"({"optimizer": "adamw", "lr": 0.003, "dropout": 0, "precision": "fp32", "grad_clip": 0.5})"),
        std::string(R"({"optimizer": "sgd", "lr": 0.05, "nesterov": true, "dropout": 0, "precision": "fp32"})")}) {
    SCOPED_TRACE(json);
    pgmate::worker::torch_compat::allow_tf32(false);
    nn::Trainer cpu(kTiny, tiny_weights(8), std::nullopt, options(json), "cpu");
    nn::Trainer cuda(kTiny, tiny_weights(8), std::nullopt, options(json), "cuda");
    for (int i = 0; i < 4; ++i) {
      const auto batch = make_batch(24, 30 + unsigned(i));
      const nn::StepMetrics a = cpu.step(batch), b = cuda.step(batch);
      EXPECT_NEAR(a.total_loss, b.total_loss, 1e-4 * std::abs(a.total_loss)) << "step " << i;
      EXPECT_NEAR(a.grad_norm, b.grad_norm, 1e-3 * a.grad_norm) << "step " << i;
      EXPECT_NEAR(a.accuracy, b.accuracy, 0.05) << "step " << i;  // an argmax may flip on a near tie
    }
    const nn::EvalMetrics a = cpu.evaluate(make_batch(16, 99)), b = cuda.evaluate(make_batch(16, 99));
    EXPECT_NEAR(a.total_loss, b.total_loss, 1e-3 * std::abs(a.total_loss));
  }
}

// bf16 autocast on the CPU: the same first loss as fp32 to bf16's precision, and it learns
// the batch as fp32 does.
TEST(Trainer, Bf16OnTheCpuLearnsAsFp32Does) {
  const auto batch = make_batch(16, 17);
  double first[2] = {0, 0}, last[2] = {0, 0};
  const char* jsons[2] = {R"({"optimizer": "adamw", "lr": 0.003, "weight_decay": 0, "precision": "fp32"})",
                          R"({"optimizer": "adamw", "lr": 0.003, "weight_decay": 0, "precision": "bf16"})"};
  for (int k = 0; k < 2; ++k) {
    nn::Trainer trainer(kTiny, tiny_weights(8), std::nullopt, options(jsons[k]), "cpu");
    for (int i = 0; i < 60; ++i) {
      const auto m = trainer.step(batch);
      ASSERT_TRUE(std::isfinite(m.total_loss)) << jsons[k];
      if (i == 0) first[k] = m.total_loss;
      last[k] = m.total_loss;
    }
  }
  EXPECT_NEAR(first[1], first[0], 0.02 * first[0]);
  EXPECT_LT(last[1], 0.6 * first[1]);
  EXPECT_NEAR(last[1], last[0], 0.25 * first[0]);
}

// ---- KL ----

TEST(Trainer, KlTermAndAdaptiveWeight) {
  const std::string weights = tiny_weights(9);
  const auto batch = make_batch(6, 18, false);
  // A held-out measurement makes no reference pass unless asked: KL 0, not in the total.
  {
    nn::Trainer other(kTiny, weights, tiny_weights(10), options(R"({"kl_weight": 0.5, "dropout": 0})"));
    const auto plain = other.evaluate(batch);
    EXPECT_EQ(plain.kl, 0.0);
    EXPECT_NEAR(plain.total_loss, plain.policy_loss + plain.value_loss, 1e-5);
    EXPECT_GT(other.evaluate(batch, true).kl, 1e-3);
  }
  // Reference == current: KL 0 (and, in evaluate, exactly 0).
  nn::Trainer same(kTiny, weights, weights, options(R"({"kl_weight": 0.5, "dropout": 0})"));
  EXPECT_EQ(same.evaluate(batch, true).kl, 0.0);
  const auto first = same.step(batch);
  EXPECT_NEAR(first.kl, 0.0, 1e-6);
  EXPECT_EQ(first.kl_weight, 0.5);
  EXPECT_NEAR(first.total_loss, first.policy_loss + first.value_loss, 1e-5);
  // After the step the network moved away from the reference.
  const auto later = same.evaluate(batch, true);
  EXPECT_GT(later.kl, 1e-6);
  // Another reference: KL > 0, counted in the total.
  nn::Trainer other(kTiny, weights, tiny_weights(10), options(R"({"kl_weight": 0.5, "dropout": 0})"));
  const auto m = other.step(batch);
  EXPECT_GT(m.kl, 1e-3);
  EXPECT_NEAR(m.total_loss, m.policy_loss + m.value_loss + 0.5 * m.kl, 1e-5);
  const auto e = other.evaluate(batch, true);
  EXPECT_EQ(e.kl_weight, 0.5);
  EXPECT_NEAR(e.total_loss, e.policy_loss + e.value_loss + 0.5 * e.kl, 1e-5);
  // The KL pulls toward the reference: a step with a large KL weight lowers the KL more.
  nn::Trainer pulled(kTiny, weights, tiny_weights(10), options(R"({"kl_weight": 50, "kl_weight_max": 50, "dropout": 0, "lr": 0.01})"));
  nn::Trainer free(kTiny, weights, tiny_weights(10), options(R"({"kl_weight": 0, "dropout": 0, "lr": 0.01})"));
  pulled.step(batch);
  free.step(batch);
  EXPECT_LT(pulled.evaluate(batch, true).kl, free.evaluate(batch, true).kl);

  // Adaptive: KL above target * factor multiplies the weight by factor, up to the maximum;
  // below target / factor divides it, down to kl_weight.
  nn::Trainer rising(kTiny, weights, tiny_weights(10),
                     options(R"({"kl_weight": 0.5, "kl_target": 1e-6, "kl_factor": 2, "kl_weight_max": 1.5})"));
  EXPECT_EQ(rising.kl_weight(), 0.5);
  EXPECT_EQ(rising.step(batch).kl_weight, 0.5);
  EXPECT_EQ(rising.kl_weight(), 1.0);
  EXPECT_EQ(rising.step(batch).kl_weight, 1.0);
  EXPECT_EQ(rising.kl_weight(), 1.5);
  rising.step(batch);
  EXPECT_EQ(rising.kl_weight(), 1.5);
  // Resumed with a high target, the weight falls back toward kl_weight.
  auto falling_options = rising.options();
  falling_options.kl_target = 1000;
  nn::Trainer falling = nn::Trainer::resume(rising.state(), tiny_weights(10), "cpu", falling_options);
  EXPECT_EQ(falling.kl_weight(), 1.5);
  falling.step(batch);
  EXPECT_EQ(falling.kl_weight(), 0.75);
  falling.step(batch);
  EXPECT_EQ(falling.kl_weight(), 0.5);
  // Without a target the weight stays.
  nn::Trainer fixed(kTiny, weights, tiny_weights(10), options(R"({"kl_weight": 0.5})"));
  fixed.step(batch);
  EXPECT_EQ(fixed.kl_weight(), 0.5);
}

// ---- failures ----

// A NaN target makes the loss NaN: the step throws and changes nothing; the next good step
// is the one a fresh trainer would take.
TEST(Trainer, NonFiniteLossThrowsAndKeepsTheWeights) {
  const std::string weights = tiny_weights(11);
  const auto opts = options(R"({"optimizer": "adamw", "lr": 0.01})");
  nn::Trainer trainer(kTiny, weights, std::nullopt, opts);
  const auto good = make_batch(3, 19);
  trainer.step(good);
  const std::string weights_before = trainer.weights(), state_before = trainer.state();
  nn::TrainBatch nan_policy = good;
  nan_policy.policy[1][0] = std::nanf("");
  nn::TrainBatch inf_wdl = good;
  inf_wdl.wdl[4] = INFINITY;
  nn::TrainBatch nan_planes = good;
  nan_planes.planes[100] = std::nanf("");
  for (const auto* bad : {&nan_policy, &inf_wdl, &nan_planes}) {
    expect_throws<std::runtime_error>([&] { trainer.step(*bad); }, "not finite");
    EXPECT_EQ(trainer.weights(), weights_before);
    EXPECT_EQ(trainer.state(), state_before);
    EXPECT_EQ(trainer.steps_done(), 1);
  }
  nn::Trainer reference(kTiny, weights, std::nullopt, opts);
  reference.step(good);
  const auto a = trainer.step(good), b = reference.step(good);
  EXPECT_EQ(a.total_loss, b.total_loss);
  EXPECT_EQ(trainer.weights(), reference.weights());
}

// ---- checkpoints ----

TEST(Trainer, ResumeRepeatsTheUninterruptedRunExactly) {
  for (const std::string& json :
       {std::string(R"({"optimizer": "adamw", "lr": 0.002, "schedule": "cosine", "warmup_steps": 2, "total_steps": 10, "seed": 5, "kl_weight": 0.2, "kl_target": 0.001})"),
        std::string(R"({"optimizer": "sgd", "lr": 0.02, "nesterov": true, "grad_clip": 0.5, "label_smoothing": 0.1})")}) {
    SCOPED_TRACE(json);
    const std::string weights = tiny_weights(12), reference = tiny_weights(13);
    const bool with_reference = json.find("kl_weight") != std::string::npos;
    const std::optional<std::string> ref = with_reference ? std::optional<std::string>(reference) : std::nullopt;
    std::vector<nn::TrainBatch> batches;
    for (unsigned i = 0; i < 5; ++i) batches.push_back(make_batch(4, 30 + i, i % 2 == 0));

    nn::Trainer run(kTiny, weights, ref, options(json));
    for (int i = 0; i < 3; ++i) run.step(batches[static_cast<std::size_t>(i)]);
    const std::string state = run.state();
    const double kl_weight = run.kl_weight();

    nn::Trainer resumed = nn::Trainer::resume(state, ref);
    EXPECT_EQ(resumed.steps_done(), 3);
    EXPECT_EQ(resumed.kl_weight(), kl_weight);
    EXPECT_EQ(resumed.options(), options(json));
    EXPECT_EQ(resumed.weights(), run.weights());
    EXPECT_EQ(resumed.state(), state);
    for (int i = 3; i < 5; ++i) {
      const auto a = run.step(batches[static_cast<std::size_t>(i)]);
      const auto b = resumed.step(batches[static_cast<std::size_t>(i)]);
      EXPECT_EQ(a.total_loss, b.total_loss) << "step " << i;
      EXPECT_EQ(a.policy_loss, b.policy_loss) << "step " << i;
      EXPECT_EQ(a.kl, b.kl) << "step " << i;
      EXPECT_EQ(a.grad_norm, b.grad_norm) << "step " << i;
      EXPECT_EQ(a.lr, b.lr) << "step " << i;
    }
    EXPECT_EQ(resumed.weights(), run.weights());
    EXPECT_EQ(resumed.state(), run.state());

    // A fresh trainer from the same weights (no optimizer state, step 0) takes another step:
    // what the checkpoint carries matters.
    nn::Trainer again = nn::Trainer::resume(state, ref);
    again.step(batches[3]);
    nn::Trainer fresh(kTiny, nn::Trainer::resume(state, ref).weights(), ref, options(json));
    fresh.step(batches[3]);
    EXPECT_NE(again.weights(), fresh.weights());

    // The weights are the network's file; the state is not weights.
    nn::Network network = nn::load_network(nn::parse_network_config(kTiny), run.weights());
    EXPECT_EQ(nn::save_network(network), run.weights());
    EXPECT_THROW(nn::load_network(nn::parse_network_config(kTiny), state), std::invalid_argument);
  }
}

// The learning loop's next training takes the last one's optimizer: on the same weights, its
// first update is the one the earlier run would have made next, step for step.
TEST(Trainer, TakeOptimizerContinuesAnotherRunsUpdates) {
  const std::string json = R"({"optimizer": "adamw", "lr": 0.003, "schedule": "constant", "dropout": 0, "seed": 3})";
  std::vector<nn::TrainBatch> batches;
  for (unsigned i = 0; i < 6; ++i) batches.push_back(make_batch(4, 70 + i, i % 2 == 0));
  nn::Trainer earlier(kTiny, tiny_weights(21), std::nullopt, options(json));
  for (int i = 0; i < 3; ++i) earlier.step(batches[static_cast<std::size_t>(i)]);
  const std::string state = earlier.state();

  nn::Trainer next(kTiny, earlier.weights(), std::nullopt, options(json));
  next.take_optimizer(state);
  EXPECT_EQ(next.steps_done(), 0);
  EXPECT_EQ(next.optimizer_steps(), 3);
  nn::Trainer cold(kTiny, earlier.weights(), std::nullopt, options(json));
  for (int i = 3; i < 6; ++i) {
    const auto a = earlier.step(batches[static_cast<std::size_t>(i)]);
    const auto b = next.step(batches[static_cast<std::size_t>(i)]);
    cold.step(batches[static_cast<std::size_t>(i)]);
    EXPECT_EQ(a.total_loss, b.total_loss) << "step " << i;
    EXPECT_EQ(a.grad_norm, b.grad_norm) << "step " << i;
  }
  EXPECT_EQ(next.weights(), earlier.weights());
  EXPECT_NE(cold.weights(), earlier.weights());  // a cold optimizer moves otherwise

  // Its checkpoint counts both: its own steps, and the optimizer's.
  const std::string next_state = next.state();
  const nn::SafetensorsView view = nn::parse_safetensors(next_state);
  EXPECT_EQ(*view.metadata_value("pgmate_step"), "3");
  EXPECT_EQ(*view.metadata_value("pgmate_optimizer_step"), "6");
  nn::Trainer resumed = nn::Trainer::resume(next_state, std::nullopt);
  EXPECT_EQ(resumed.steps_done(), 3);
  EXPECT_EQ(resumed.optimizer_steps(), 6);
  EXPECT_EQ(resumed.state(), next_state);

  // What does not fit is named, and the trainer stays as it was.
  nn::Trainer sgd(kTiny, earlier.weights(), std::nullopt, options(R"({"optimizer": "sgd", "dropout": 0})"));
  const std::string before = sgd.state();
  expect_throws<std::invalid_argument>([&] { sgd.take_optimizer(state); }, "optimizer \"adamw\"");
  EXPECT_EQ(sgd.state(), before);
  const std::string other =  // the same tensor shapes, another network
      R"({"filters": 16, "blocks": 2, "attention_blocks": 2, "heads": 2, "policy_head": "conv"})";
  nn::Trainer different(other, nn::init_network_bytes(nn::parse_network_config(other), 4), std::nullopt,
                        options(json));
  const std::string untouched = different.state();
  expect_throws<std::invalid_argument>([&] { different.take_optimizer(state); }, "another configuration");
  EXPECT_EQ(different.state(), untouched);
  expect_throws<std::invalid_argument>([&] { next.take_optimizer(earlier.weights()); }, "pgmate_checkpoint");
  // A checkpoint from before the optimizer's own count: the step count stands for it.
  std::string old_state;
  {
    nn::SafetensorsMetadata metadata;
    for (const auto& [key, value] : view.metadata)
      if (key != "pgmate_optimizer_step") metadata.emplace_back(key, value);
    std::vector<nn::SafetensorsInput> inputs;
    for (const nn::SafetensorsTensor& t : view.tensors) inputs.push_back({t.name, t.dtype, t.shape, view.bytes(t)});
    old_state = nn::write_safetensors(metadata, inputs);
  }
  EXPECT_EQ(nn::Trainer::resume(old_state, std::nullopt).optimizer_steps(), 3);
}

TEST(Trainer, StateFormatAndRefusals) {
  const std::string weights = tiny_weights(14), reference = tiny_weights(15);
  nn::Trainer trainer(kTiny, weights, reference, options(R"({"optimizer": "adamw", "kl_weight": 0.1})"));
  trainer.step(make_batch(2, 40));
  const std::string state = trainer.state();
  const nn::SafetensorsView view = nn::parse_safetensors(state);
  EXPECT_EQ(*view.metadata_value("pgmate_checkpoint"), "1");
  EXPECT_EQ(*view.metadata_value("pgmate_step"), "1");
  EXPECT_EQ(*view.metadata_value("pgmate_optimizer_step"), "1");
  EXPECT_EQ(*view.metadata_value("pgmate_kl_weight"), "0.1");
  EXPECT_EQ(*view.metadata_value("pgmate_config"), nn::to_json(nn::parse_network_config(kTiny)));
  EXPECT_EQ(*view.metadata_value("pgmate_reference_checksum"),
            *nn::parse_safetensors(reference).metadata_value("pgmate_checksum"));
  EXPECT_EQ(nn::parse_train_options(*view.metadata_value("pgmate_train_options")), trainer.options());
  ASSERT_NE(view.find("network.stem_conv.weight"), nullptr);
  ASSERT_NE(view.find("network.policy_out.bias"), nullptr);
  ASSERT_NE(view.find("optimizer.policy_out.bias.exp_avg"), nullptr);
  ASSERT_NE(view.find("optimizer.policy_out.bias.exp_avg_sq"), nullptr);
  EXPECT_EQ(view.find("optimizer.policy_out.bias.momentum"), nullptr);
  const auto specs = nn::network_tensors(nn::parse_network_config(kTiny));
  EXPECT_EQ(view.tensors.size(), 3 * specs.size());
  EXPECT_EQ(view.bytes(*view.find("network.stem_conv.weight")),
            nn::parse_safetensors(trainer.weights()).bytes(*nn::parse_safetensors(trainer.weights()).find("stem_conv.weight")));

  expect_throws<std::invalid_argument>([&] { nn::Trainer::resume(state, std::nullopt); }, "reference");
  expect_throws<std::invalid_argument>([&] { nn::Trainer::resume(state, weights); }, "reference");
  expect_throws<std::invalid_argument>([&] { nn::Trainer::resume(weights, reference); }, "pgmate_checkpoint");
  expect_throws<std::invalid_argument>([&] { nn::Trainer::resume(state.substr(0, state.size() - 4), reference); },
                                       "training state");
  auto sgd = trainer.options();
  sgd.optimizer = "sgd";
  expect_throws<std::invalid_argument>([&] { nn::Trainer::resume(state, reference, "cpu", sgd); }, "optimizer");
  // A corrupted weight: the weights' checksum catches it.
  std::string corrupt = state;
  const auto& t = *view.find("network.stem_conv.weight");
  corrupt[state.size() - view.data.size() + t.begin + 1] ^= 0x40;
  expect_throws<std::invalid_argument>([&] { nn::Trainer::resume(corrupt, reference); }, "checksum");
  // A NaN optimizer buffer.
  std::string nan_buffer = state;
  const auto& b = *view.find("optimizer.stem_conv.weight.exp_avg");
  const float nan = std::nanf("");
  std::memcpy(&nan_buffer[state.size() - view.data.size() + b.begin], &nan, 4);
  expect_throws<std::invalid_argument>([&] { nn::Trainer::resume(nan_buffer, reference); }, "NaN");
}

// ---- the conv head's slots ----

// A tower-less conv-head network that carries input plane 0 into policy plane `type` only:
// the logit at slot square * 73 + type is the largest when plane 0 is lit on `square`.
// Checked against policy_slot for real moves of both colours (Black's frame is flipped).
TEST(Trainer, ConvHeadSlotsMatchPolicySlot) {
  using namespace pgmate::chess;
  const auto config = nn::parse_network_config(R"({"filters": 8, "blocks": 0, "policy_head": "conv"})");
  nn::Network network(config);
  network->eval();
  torch::NoGradGuard no_grad;
  const std::vector<std::pair<std::string, std::vector<std::string>>> cases = {
      {"rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", {"e2e4", "g1f3", "b1a3", "a2a3"}},
      {"rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1", {"e7e5", "g8f6", "h7h6"}},
      {"1n5k/P7/8/8/8/8/8/K7 w - - 0 1", {"a7a8q", "a7b8n", "a7a8r", "a7b8b"}},
      {"k7/8/8/8/8/8/p7/1N5K b - - 0 1", {"a2b1r", "a2a1n"}},
      {"r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1", {"e1g1", "e1c1", "a1a8"}},
  };
  int checked = 0;
  for (const auto& [fen, moves] : cases) {
    const Board board = parse_fen(fen);
    for (const std::string& uci : moves) {
      SCOPED_TRACE(fen + " " + uci);
      const Move move = parse_uci(board, uci);
      const int slot = pgmate::nn::policy_slot(move, board.side);
      ASSERT_GE(slot, 0);
      const int type = slot % pgmate::nn::kMoveTypes;
      const int from = board.side == kWhite ? move.from() : move.from() ^ 56;
      for (const auto& item : network->named_parameters()) {
        const std::string& name = item.key();
        item.value().zero_();
        if (name == "stem_conv.weight") item.value()[0][0][1][1] = 1.0f;
        if (name == "stem_norm.weight" || name == "policy_norm.weight") item.value().fill_(1.0f);
        if (name == "policy_conv.weight") item.value()[0][0][0][0] = 1.0f;
        if (name == "policy_out.weight") item.value()[type][0][0][0] = 1.0f;
      }
      auto input = torch::zeros({1, nn::kInputPlanes, 8, 8});
      input[0][0][from / 8][from % 8] = 1.0f;  // the from-square in the side to move's frame
      const auto logits = network->forward(input).policy;
      EXPECT_EQ(logits.argmax(1).item<std::int64_t>(), slot);
      ++checked;
    }
  }
  EXPECT_EQ(checked, 16);
}

// ---- throughput (printed, not asserted) ----

}  // namespace
