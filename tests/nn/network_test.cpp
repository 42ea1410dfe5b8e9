// The LibTorch network and its EvalBackend (worker/nn/): configuration parsing, output
// shapes, determinism, the safetensors weights (exact round trips, every refusal, LibTorch
// and TorchScript archives refused without running them), rejection of bad input. Most
// tests use a small configuration for speed; one checks the default network's size.
//
// Throughput (default configuration, batch 1/8/64/256):
//   network_test --gtest_also_run_disabled_tests --gtest_filter='*Throughput*'
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>
#include <limits>
#include <numeric>
#include <random>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <ATen/CPUGeneratorImpl.h>
#include <torch/csrc/jit/runtime/print_handler.h>
#include <torch/script.h>
#include <torch/torch.h>

#include "chess/fen.h"
#include "chess/movegen.h"
#include "nn/encoding.h"
#include "worker/nn/network.h"
#include "nn/policy.h"
#include "link/network_config.h"
#include "link/safetensors.h"
#include "worker/backend/eval_backend.h"

namespace {

using pgmate::worker::EvalBackend;
using pgmate::worker::EvalBatch;
using pgmate::worker::EvalBatchResult;
using pgmate::worker::LoadedNetwork;
using pgmate::worker::make_torch_backend;
namespace nn = pgmate::worker::nn;

const std::string kSmall = R"({"filters": 16, "blocks": 2, "attention_blocks": 1})";
constexpr std::int64_t kDefaultParameters = 12273675;

// The backend with the network it last loaded: what a worker holding one network does.
class ServingBackend {
 public:
  explicit ServingBackend(std::unique_ptr<EvalBackend> backend) : backend_(std::move(backend)) {}
  std::string device() const { return backend_->device(); }
  pgmate::worker::InputForm input_form() const { return backend_->input_form(); }
  std::string init_weights(const std::string& config, std::uint64_t seed) { return backend_->init_weights(config, seed); }
  // A failed load keeps the network served before.
  void load(const std::string& config, const std::string& weights) { network_ = backend_->load(config, weights); }
  EvalBatchResult run(const EvalBatch& batch) {
    if (!network_) throw std::runtime_error("no network loaded");
    return backend_->run(*network_, batch);
  }
  std::string network_json() const {
    if (!network_) return "null";
    std::string json = network_->config_json();
    json.pop_back();
    return json + ",\"parameters\":" + std::to_string(network_->parameters()) + "}";
  }
  const LoadedNetwork& network() const { return *network_; }

 private:
  std::unique_ptr<EvalBackend> backend_;
  std::shared_ptr<const LoadedNetwork> network_;
};

template <class... Args>
std::unique_ptr<ServingBackend> torch_backend(Args&&... args) {
  return std::make_unique<ServingBackend>(make_torch_backend(std::forward<Args>(args)...));
}

// Random sparse 0/1 planes (like piece planes) plus a few constant planes, and 1..60
// distinct legal slots per position (some positions get none when allow_empty).
EvalBatch make_batch(int n, unsigned seed, bool allow_empty = false) {
  std::mt19937 rng(seed);
  EvalBatch b;
  b.size = n;
  b.planes.resize(static_cast<std::size_t>(n) * nn::kInputPlanes * 64);
  std::bernoulli_distribution bit(0.08);
  for (int i = 0; i < n; ++i) {
    float* pos = b.planes.data() + static_cast<std::size_t>(i) * nn::kInputPlanes * 64;
    for (int p = 0; p < nn::kInputPlanes; ++p) {
      const bool constant = p >= nn::kInputPlanes - 4;
      const float c = static_cast<float>(rng() % 2);
      for (int s = 0; s < 64; ++s) pos[p * 64 + s] = constant ? c : (bit(rng) ? 1.0f : 0.0f);
    }
    std::uniform_int_distribution<int> count(allow_empty ? 0 : 1, 60);
    std::set<int> slots;
    const int want = count(rng);
    while (static_cast<int>(slots.size()) < want) slots.insert(static_cast<int>(rng() % nn::kPolicySize));
    std::vector<int> list(slots.begin(), slots.end());
    std::shuffle(list.begin(), list.end(), rng);
    b.legal_slots.push_back(std::move(list));
  }
  return b;
}

// Real positions as both input forms: the start position and random playouts, each input
// with up to 3 earlier positions and a repetition count; the same legal slots in both.
struct PositionBatches {
  EvalBatch planes, boards;
};

PositionBatches position_batches(int n, unsigned seed) {
  using namespace pgmate::chess;
  std::mt19937 rng(seed);
  PositionBatches out;
  out.planes.size = out.boards.size = n;
  std::vector<Board> game = {parse_fen(kStartFen)};
  MoveList moves;
  for (int i = 0; i < n; ++i) {
    legal_moves(game.back(), moves);
    if (moves.size == 0 || game.size() > 80) {
      game = {parse_fen(kStartFen)};
      legal_moves(game.back(), moves);
    }
    Board next = game.back();
    next.play(moves.moves[rng() % unsigned(moves.size)]);
    game.push_back(next);
    const int count = 1 + int(std::min<std::size_t>(game.size() - 1, rng() % 4));
    const int repetitions = int(rng() % 3);
    std::vector<Board> history(game.rbegin(), game.rbegin() + count);
    std::vector<float> planes(pgmate::nn::kInputSize);
    pgmate::nn::encode(history.data(), count, planes.data(), repetitions);
    out.planes.planes.insert(out.planes.planes.end(), planes.begin(), planes.end());
    for (int k = 0; k < pgmate::worker::kBoardsPerInput; ++k) out.boards.boards.push_back(history[std::size_t(std::min(k, count - 1))]);
    out.boards.history_counts.push_back(std::uint8_t(count));
    out.boards.repetitions.push_back(std::uint8_t(repetitions));
    legal_moves(history.front(), moves);
    std::vector<int> slots;
    for (Move m : moves) slots.push_back(pgmate::nn::policy_slot(m, history.front().side));
    out.planes.legal_slots.push_back(slots);
    out.boards.legal_slots.push_back(slots);
  }
  return out;
}

std::unique_ptr<ServingBackend> loaded_backend(const std::string& config, std::uint64_t seed) {
  auto backend = torch_backend("cpu");
  backend->load(config, backend->init_weights(config, seed));
  return backend;
}

void expect_valid(const EvalBatch& batch, const EvalBatchResult& r) {
  ASSERT_EQ(r.wdl.size(), static_cast<std::size_t>(batch.size) * 3);
  ASSERT_EQ(r.priors.size(), static_cast<std::size_t>(batch.size));
  for (int i = 0; i < batch.size; ++i) {
    double wdl_sum = 0;
    for (int k = 0; k < 3; ++k) {
      const float v = r.wdl[static_cast<std::size_t>(i) * 3 + k];
      EXPECT_TRUE(std::isfinite(v));
      EXPECT_GE(v, 0.0f);
      EXPECT_LE(v, 1.0f);
      wdl_sum += v;
    }
    EXPECT_NEAR(wdl_sum, 1.0, 1e-5) << "position " << i;
    const auto& priors = r.priors[static_cast<std::size_t>(i)];
    ASSERT_EQ(priors.size(), batch.legal_slots[static_cast<std::size_t>(i)].size()) << "position " << i;
    if (priors.empty()) continue;
    double sum = 0;
    for (float p : priors) {
      EXPECT_TRUE(std::isfinite(p));
      EXPECT_GE(p, 0.0f);
      sum += p;
    }
    EXPECT_NEAR(sum, 1.0, 1e-5) << "position " << i;
  }
}

void expect_throws_invalid(const std::function<void()>& f, const std::string& mention) {
  try {
    f();
    ADD_FAILURE() << "no exception; expected std::invalid_argument mentioning " << mention;
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(mention), std::string::npos) << e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "wrong exception type: " << e.what();
  }
}

// ---- configuration ----

TEST(NetworkConfig, DefaultsAndParsing) {
  const nn::NetworkConfig d;
  EXPECT_EQ(d.filters, 128);
  EXPECT_EQ(d.blocks, 8);
  EXPECT_EQ(d.attention_blocks, 2);
  EXPECT_EQ(d.heads, 4);
  EXPECT_EQ(d.se_ratio, 8);
  EXPECT_EQ(nn::parse_network_config(""), d);
  EXPECT_EQ(nn::parse_network_config(" { } "), d);
  const auto c = nn::parse_network_config(
      "{\n \"se_ratio\" : 4, \"heads\":2,\"attention_blocks\":0,\"blocks\":3,\"filters\":32\n}");
  EXPECT_EQ(c.filters, 32);
  EXPECT_EQ(c.blocks, 3);
  EXPECT_EQ(c.attention_blocks, 0);
  EXPECT_EQ(c.heads, 2);
  EXPECT_EQ(c.se_ratio, 4);
  EXPECT_EQ(nn::parse_network_config(nn::to_json(c)), c);
  EXPECT_EQ(nn::to_json(d), R"({"filters":128,"blocks":8,"attention_blocks":2,"heads":4,"se_ratio":8})");
}

TEST(NetworkConfig, RejectsBadConfigurations) {
  const std::vector<std::pair<std::string, std::string>> bad = {
      {R"({"filter": 128})", "filter"},
      {R"({"filters": 128, "dropout": 1})", "dropout"},
      {R"({"filters": -8})", "filters"},
      {R"({"filters": 12})", "filters"},
      {R"({"filters": 2048})", "filters"},
      {R"({"filters": "128"})", "filters"},
      {R"({"filters": 1.5})", "filters"},
      {R"({"filters": 128.0})", "filters"},
      {R"({"filters": 1e2})", "filters"},
      {R"({"filters": true})", "filters"},
      {R"({"filters": 99999999999999})", "filters"},
      {R"({"blocks": 65})", "blocks"},
      {R"({"blocks": 1, "attention_blocks": 2})", "attention_blocks"},
      {R"({"blocks": 0, "attention_blocks": 1})", "attention_blocks"},
      {R"({"attention_blocks": -1})", "attention_blocks"},
      {R"({"heads": 3})", "heads"},
      {R"({"heads": 0})", "heads"},
      {R"({"se_ratio": 0})", "se_ratio"},
      {R"({"se_ratio": 3})", "se_ratio"},
      {R"({"blocks": 4, "blocks": 4})", "blocks"},
      {R"({"blocks": null})", "blocks"},
      {R"({"blocks": {"a": 1}})", "blocks"},
      {"{", "network config"},
      {"[]", "network config"},
      {R"({"blocks": 4,})", "network config"},
      {R"({"blocks": 4} x)", "trailing"},
      {"null", "network config"},
      {R"({"policy_head": "attention"})", "policy_head"},
      {R"({"policy_head": 1})", "policy_head"},
      {R"({"preset": "huge"})", "unknown preset \"huge\""},
      {R"({"preset": 1})", "preset"},
      {"huge", "unknown preset \"huge\" (known: tiny, small, seed)"},
      {R"({"preset": "tiny", "filters": 12})", "filters"},
  };
  auto backend = torch_backend("cpu");
  for (const auto& [json, mention] : bad) {
    SCOPED_TRACE(json);
    expect_throws_invalid([&] { nn::parse_network_config(json); }, mention);
    expect_throws_invalid([&] { backend->init_weights(json, 1); }, mention);
    expect_throws_invalid([&] { backend->load(json, "whatever"); }, mention);
  }
}

// attention_blocks defaults to min(2, blocks): {"blocks": 0} and {"blocks": 1} are valid.
TEST(NetworkConfig, AttentionBlocksDefaultFollowsBlocks) {
  EXPECT_EQ(nn::parse_network_config(R"({"blocks": 0})").attention_blocks, 0);
  EXPECT_EQ(nn::parse_network_config(R"({"blocks": 1})").attention_blocks, 1);
  EXPECT_EQ(nn::parse_network_config(R"({"blocks": 2})").attention_blocks, 2);
  EXPECT_EQ(nn::parse_network_config(R"({"blocks": 5})").attention_blocks, 2);
  EXPECT_EQ(nn::parse_network_config(R"({"filters": 8})").attention_blocks, 2);
  EXPECT_EQ(nn::parse_network_config(R"({"blocks": 1, "attention_blocks": 0})").attention_blocks, 0);
  EXPECT_EQ(nn::parse_network_config(R"({"attention_blocks": 0, "blocks": 0})").attention_blocks, 0);
  const auto none = nn::parse_network_config(R"({"filters": 8, "blocks": 0})");
  EXPECT_EQ(nn::to_json(none), R"({"filters":8,"blocks":0,"attention_blocks":0,"heads":4,"se_ratio":8})");
  EXPECT_EQ(nn::parse_network_config(nn::to_json(none)), none);
  // A tower-less network builds, round-trips and serves.
  auto backend = loaded_backend(R"({"filters": 8, "blocks": 0})", 2);
  const EvalBatch batch = make_batch(2, 4);
  expect_valid(batch, backend->run(batch));
}

// network_tensors() (no LibTorch) lists exactly the modules' parameters and buffers, by
// name and shape, in module order; parameter_count() sums it.
TEST(NetworkConfig, TensorListAndParameterCountMatchModules) {
  for (const std::string& json : {kSmall, std::string(R"({"filters":32,"blocks":3,"attention_blocks":3,"heads":8})"),
                                  std::string(R"({"filters":8,"blocks":0,"attention_blocks":0})"),
                                  std::string(R"({"filters":16,"blocks":2,"policy_head":"conv"})"),
                                  std::string(R"({"filters":24,"blocks":4,"attention_blocks":1,"heads":3,"se_ratio":6})")}) {
    SCOPED_TRACE(json);
    const auto config = nn::parse_network_config(json);
    nn::Network network(config);
    EXPECT_EQ(nn::count_parameters(*network), nn::parameter_count(config));
    std::vector<std::pair<std::string, std::vector<std::int64_t>>> modules;
    for (const auto& item : network->named_parameters()) modules.emplace_back(item.key(), item.value().sizes().vec());
    for (const auto& item : network->named_buffers()) modules.emplace_back(item.key(), item.value().sizes().vec());
    std::vector<std::pair<std::string, std::vector<std::int64_t>>> listed;
    for (const auto& spec : nn::network_tensors(config)) listed.emplace_back(spec.name, spec.shape);
    EXPECT_EQ(listed, modules);
  }
  EXPECT_EQ(nn::parameter_count(nn::NetworkConfig{}), kDefaultParameters);
}

// Presets by name or as a base that JSON keys override; the policy head's key.
TEST(NetworkConfig, PresetsAndPolicyHead) {
  const auto tiny = nn::parse_network_config("tiny");
  EXPECT_EQ(nn::to_json(tiny), R"({"filters":16,"blocks":2,"attention_blocks":0,"heads":4,"se_ratio":8,"policy_head":"conv"})");
  EXPECT_EQ(nn::parse_network_config(R"({"preset": "tiny"})"), tiny);
  EXPECT_EQ(nn::parse_network_config(R"({"preset": "tiny", "blocks": 4})").attention_blocks, 0);
  EXPECT_EQ(nn::parse_network_config(R"({"preset": "tiny", "attention_blocks": 1})").attention_blocks, 1);
  const auto small = nn::parse_network_config(" small\n");
  EXPECT_EQ(nn::to_json(small), R"({"filters":64,"blocks":6,"attention_blocks":2,"heads":4,"se_ratio":8,"policy_head":"conv"})");
  EXPECT_EQ(nn::parse_network_config("seed"), nn::NetworkConfig{});
  EXPECT_EQ(nn::parse_network_config(R"({"preset": "seed"})"), nn::NetworkConfig{});
  ASSERT_EQ(nn::network_presets().size(), 3u);
  for (const auto& preset : nn::network_presets()) {
    EXPECT_EQ(nn::parse_network_config(preset.name), preset.config) << preset.name;
    EXPECT_EQ(nn::parse_network_config(nn::to_json(preset.config)), preset.config) << preset.name;
  }
  // Keys override the preset wherever "preset" stands; attention_blocks follows blocks.
  const auto four = nn::parse_network_config(R"({"blocks": 1, "preset": "small", "policy_head": "fc"})");
  EXPECT_EQ(nn::to_json(four), R"({"filters":64,"blocks":1,"attention_blocks":1,"heads":4,"se_ratio":8})");
  EXPECT_EQ(nn::parse_network_config(R"({"preset": "small", "blocks": 4})").blocks, 4);
  EXPECT_EQ(nn::parse_network_config(R"({"policy_head": "conv"})").policy_head, nn::PolicyHead::kConv);
  EXPECT_EQ(nn::parse_network_config(R"({"policy_head": "fc"})"), nn::NetworkConfig{});
  EXPECT_STREQ(nn::policy_head_name(nn::PolicyHead::kConv), "conv");
  EXPECT_STREQ(nn::policy_head_name(nn::PolicyHead::kFc), "fc");
}

// The conv head: its tensors, its parameter count, exact weight round trips, and the fc
// head's weights refused as conv-head weights (and the reverse).
TEST(NetworkConfig, ConvPolicyHead) {
  const auto conv = nn::parse_network_config(R"({"filters": 16, "blocks": 1, "policy_head": "conv"})");
  auto fc = conv;
  fc.policy_head = nn::PolicyHead::kFc;
  // The fc head's policy part: 16*32 + 2*32 + 2048*4672 + 4672; the conv head's:
  // 16*16 + 2*16 + 73*16 + 73.
  EXPECT_EQ(nn::parameter_count(fc) - nn::parameter_count(conv),
            (16 * 32 + 64 + 2048 * 4672 + 4672) - (16 * 16 + 32 + 73 * 16 + 73));
  const auto specs = nn::network_tensors(conv);
  std::vector<std::string> policy_names;
  for (const auto& spec : specs) {
    if (spec.name.rfind("policy", 0) == 0) policy_names.push_back(spec.name);
  }
  EXPECT_EQ(policy_names, (std::vector<std::string>{"policy_conv.weight", "policy_norm.weight", "policy_norm.bias",
                                                    "policy_out.weight", "policy_out.bias"}));
  nn::Network network(conv);
  EXPECT_EQ(nn::count_parameters(*network), nn::parameter_count(conv));
  const std::string weights = nn::init_network_bytes(conv, 3);
  EXPECT_EQ(weights.size(), nn::serialized_weights_size(conv));
  nn::Network loaded = nn::load_network(conv, weights);
  EXPECT_EQ(nn::save_network(loaded), weights);
  expect_throws_invalid([&] { nn::load_network(fc, weights); }, "saved for configuration");
  expect_throws_invalid([&] { nn::load_network(conv, nn::init_network_bytes(fc, 3)); }, "saved for configuration");
  // Served like any network.
  auto backend = loaded_backend(nn::to_json(conv), 5);
  const EvalBatch batch = make_batch(4, 11);
  expect_valid(batch, backend->run(batch));
  // Presets' sizes.
  EXPECT_EQ(nn::parameter_count(nn::parse_network_config("seed")), kDefaultParameters);
  std::printf("presets: tiny %lld, small %lld, seed %lld parameters\n",
              static_cast<long long>(nn::parameter_count(nn::parse_network_config("tiny"))),
              static_cast<long long>(nn::parameter_count(nn::parse_network_config("small"))),
              static_cast<long long>(nn::parameter_count(nn::parse_network_config("seed"))));
}

// Conv head logit (square, plane) is slot square * 73 + plane: with zero weights and a bias
// that picks one plane, exactly the slots of that move type light up.
TEST(NetworkConfig, ConvPolicyHeadSlotNumbering) {
  const auto config = nn::parse_network_config("tiny");
  nn::Network network(config);
  network->eval();
  torch::NoGradGuard no_grad;
  for (const int type : {0, 17, 56, 63, 64, 72}) {
    SCOPED_TRACE(type);
    for (const auto& item : network->named_parameters()) {
      if (item.key() == "policy_out.weight") item.value().zero_();
      if (item.key() == "policy_out.bias") {
        item.value().zero_();
        item.value()[type] = 5.0f;
      }
    }
    const auto logits = network->forward(torch::rand({2, nn::kInputPlanes, 8, 8})).policy;
    ASSERT_EQ(logits.sizes(), (std::vector<std::int64_t>{2, nn::kPolicySize}));
    for (int slot = 0; slot < nn::kPolicySize; ++slot) {
      const float want = slot % nn::kPolicyMoveTypes == type ? 5.0f : 0.0f;
      ASSERT_EQ(logits[0][slot].item<float>(), want) << "slot " << slot;
      ASSERT_EQ(logits[1][slot].item<float>(), want) << "slot " << slot;
    }
  }
  // The square: a tower-less network that carries input plane 0 (stem channel 0, the
  // centre tap) through the norms (which keep its argmax) into policy plane 9 only.
  const auto bare = nn::parse_network_config(R"({"filters": 8, "blocks": 0, "policy_head": "conv"})");
  nn::Network flat(bare);
  flat->eval();
  for (const auto& item : flat->named_parameters()) {
    const std::string& name = item.key();
    item.value().zero_();
    if (name == "stem_conv.weight") item.value()[0][0][1][1] = 1.0f;
    if (name == "stem_norm.weight" || name == "policy_norm.weight") item.value().fill_(1.0f);
    if (name == "policy_conv.weight") item.value()[0][0][0][0] = 1.0f;
    if (name == "policy_out.weight") item.value()[9][0][0][0] = 1.0f;
  }
  for (const int square : {0, 7, 12, 63}) {
    auto input = torch::zeros({1, nn::kInputPlanes, 8, 8});
    input[0][0][square / 8][square % 8] = 1.0f;  // plane index sq = rank * 8 + file
    const auto logits = flat->forward(input).policy;
    EXPECT_EQ(logits.argmax(1).item<std::int64_t>(), square * nn::kPolicyMoveTypes + 9) << square;
  }
}

// Dropout acts in train() mode only and changes no tensor list.
TEST(NetworkConfig, HeadDropoutOnlyWhenTraining) {
  for (const char* preset : {"tiny", "seed"}) {
    SCOPED_TRACE(preset);
    const auto config = nn::parse_network_config(preset);
    nn::Network network = nn::load_network(config, nn::init_network_bytes(config, 1));
    torch::NoGradGuard no_grad;
    const auto input = torch::rand({3, nn::kInputPlanes, 8, 8});
    const auto a = network->forward(input);
    const auto b = network->forward(input);
    EXPECT_TRUE(torch::equal(a.policy, b.policy));
    EXPECT_TRUE(torch::equal(a.wdl, b.wdl));
    network->train();
    const auto c = network->forward(input);
    EXPECT_FALSE(torch::equal(a.policy, c.policy));
    EXPECT_FALSE(torch::equal(a.wdl, c.wdl));
    network->set_head_dropout(0.0);
    const auto d = network->forward(input);
    EXPECT_TRUE(torch::allclose(a.policy, d.policy, 1e-5, 1e-5));
    network->set_head_dropout(nn::kHeadDropout);
    // A seeded generator repeats the masks.
    auto generator = at::detail::createCPUGenerator(42);
    network->set_dropout_generator(generator);
    const auto e = network->forward(input);
    generator.set_current_seed(42);
    const auto f = network->forward(input);
    EXPECT_TRUE(torch::equal(e.policy, f.policy));
    EXPECT_TRUE(torch::equal(e.wdl, f.wdl));
  }
}

// ---- backend ----

TEST(TorchBackend, Devices) {
  EXPECT_EQ(torch_backend("cpu")->device(), "cpu");
  const std::string automatic = torch_backend("auto")->device();
  // A CUDA device describes itself further: "cuda:0 bf16 (LibTorch ...)".
  EXPECT_TRUE(automatic == "cpu" || automatic.rfind("cuda:0 ", 0) == 0) << automatic;
  EXPECT_THROW(torch_backend("tpu"), std::invalid_argument);
  EXPECT_THROW(torch_backend("cuda:x"), std::invalid_argument);
  if (!torch::cuda::is_available()) {
    EXPECT_THROW(torch_backend("cuda"), std::runtime_error);
  } else {
    EXPECT_EQ(torch_backend("cuda")->device().rfind("cuda:0 bf16 (LibTorch ", 0), 0u) << torch_backend("cuda")->device();
  }
  // Reduced precision is for CUDA only; unknown names are refused on any device.
  expect_throws_invalid([] { torch_backend("cpu", std::uint64_t{64} << 20, "bf16"); }, "needs a CUDA device");
  expect_throws_invalid([] { torch_backend("cpu", std::uint64_t{64} << 20, "fp8"); }, "unknown precision");
  EXPECT_EQ(torch_backend("cpu", std::uint64_t{64} << 20, "fp32")->device(), "cpu");
  // auto without a GPU: the CPU's fp32, whatever the GPU would have used
  if (!torch::cuda::is_available()) {
    EXPECT_EQ(torch_backend("auto", std::uint64_t{64} << 20, "bf16")->device(), "cpu");
    expect_throws_invalid([] { torch_backend("auto", std::uint64_t{64} << 20, "fp64"); }, "unknown precision");
  }
}

// The backend that encodes boards itself (encode "device"; on the CPU with the host encoder)
// answers as the batcher's planes do, exactly.
TEST(TorchBackend, BoardsInputGivesThePlanesResults) {
  const std::uint64_t limit = std::uint64_t{64} << 20;
  auto planes = torch_backend("cpu", limit, "auto", "host");
  auto boards = torch_backend("cpu", limit, "auto", "device");
  EXPECT_EQ(planes->input_form(), pgmate::worker::InputForm::kPlanes);
  EXPECT_EQ(boards->input_form(), pgmate::worker::InputForm::kBoards);
  EXPECT_EQ(torch_backend("cpu")->input_form(), pgmate::worker::InputForm::kPlanes);  // auto on the CPU: host
  const std::string weights = planes->init_weights(kSmall, 31);
  planes->load(kSmall, weights);
  boards->load(kSmall, weights);
  for (int n : {1, 57}) {
    SCOPED_TRACE(n);
    const PositionBatches b = position_batches(n, 40 + unsigned(n));
    const EvalBatchResult a = planes->run(b.planes), c = boards->run(b.boards);
    expect_valid(b.boards, c);
    EXPECT_EQ(a.wdl, c.wdl);
    EXPECT_EQ(a.priors, c.priors);
  }
  expect_throws_invalid([&] { torch_backend("cpu", limit, "auto", "gpu"); }, "unknown encode");
  // CUDA graphs are for CUDA only; "auto" without a GPU runs without them.
  expect_throws_invalid([&] { torch_backend("cpu", limit, "auto", "auto", true); }, "CUDA graphs need a CUDA device");
  if (!torch::cuda::is_available()) {
    EXPECT_EQ(torch_backend("auto", limit, "auto", "auto", true)->device(), "cpu");
  }
}

TEST(TorchBackend, RejectsMalformedBoardBatches) {
  auto backend = torch_backend("cpu", std::uint64_t{64} << 20, "auto", "device");
  backend->load(kSmall, backend->init_weights(kSmall, 32));
  const PositionBatches good = position_batches(3, 5);
  EvalBatch b = good.boards;
  b.boards.pop_back();
  expect_throws_invalid([&] { backend->run(b); }, "needs 12 boards");
  b = good.boards;
  b.history_counts[1] = 0;
  expect_throws_invalid([&] { backend->run(b); }, "input 1 has 0 boards");
  b = good.boards;
  b.history_counts[2] = 5;
  expect_throws_invalid([&] { backend->run(b); }, "input 2 has 5 boards");
  b = good.boards;
  b.repetitions[0] = 3;
  expect_throws_invalid([&] { backend->run(b); }, "repetition count 3");
  b = good.planes;  // planes for a backend that takes boards
  expect_throws_invalid([&] { backend->run(b); }, "needs 12 boards");
}

// ---- the same network on CUDA (skipped without a CUDA LibTorch and a device) ----

// Largest absolute difference of WDL and priors between two results of one batch.
double max_difference(const EvalBatchResult& a, const EvalBatchResult& b) {
  double worst = 0;
  EXPECT_EQ(a.wdl.size(), b.wdl.size());
  EXPECT_EQ(a.priors.size(), b.priors.size());
  for (std::size_t i = 0; i < std::min(a.wdl.size(), b.wdl.size()); ++i)
    worst = std::max(worst, double(std::fabs(a.wdl[i] - b.wdl[i])));
  for (std::size_t i = 0; i < std::min(a.priors.size(), b.priors.size()); ++i) {
    EXPECT_EQ(a.priors[i].size(), b.priors[i].size());
    for (std::size_t j = 0; j < std::min(a.priors[i].size(), b.priors[i].size()); ++j)
      worst = std::max(worst, double(std::fabs(a.priors[i][j] - b.priors[i][j])));
  }
  return worst;
}

class CudaNetwork : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (!torch::cuda::is_available()) GTEST_SKIP() << "no CUDA device visible to LibTorch";
  }
};

// fp32 on CUDA (TF32 off) computes what the CPU computes, for the seed's network and a small one.
TEST_P(CudaNetwork, Fp32AgreesWithTheCpu) {
  const std::string config = GetParam();
  auto cpu = torch_backend("cpu");
  const std::string weights = cpu->init_weights(config, 21);
  cpu->load(config, weights);
  auto cuda = torch_backend("cuda", std::uint64_t{64} << 20, "fp32");
  cuda->load(config, weights);
  for (int n : {1, 37, 256}) {
    SCOPED_TRACE(n);
    const EvalBatch batch = make_batch(n, 300 + unsigned(n), /*allow_empty=*/true);
    const EvalBatchResult on_cpu = cpu->run(batch), on_cuda = cuda->run(batch);
    expect_valid(batch, on_cuda);
    const double worst = max_difference(on_cpu, on_cuda);
    EXPECT_LT(worst, 1e-4);
    std::printf("[ %s, batch %d ] fp32 CUDA vs CPU: max |difference| %.3g\n", config.c_str(), n, worst);
  }
}

// The GPU encoder (encode "auto" on CUDA, checked when the backend is made) feeds the
// network the host encoder's planes: the same results as planes encoded on the host.
TEST_P(CudaNetwork, GpuEncoderGivesThePlanesResults) {
  const std::string config = GetParam();
  const std::uint64_t limit = std::uint64_t{64} << 20;
  auto host = torch_backend("cuda", limit, "fp32", "host");
  auto gpu = torch_backend("cuda", limit, "fp32", "auto");
  ASSERT_EQ(gpu->input_form(), pgmate::worker::InputForm::kBoards) << gpu->device();
  EXPECT_EQ(gpu->device().find("host encoding"), std::string::npos) << gpu->device();
  const std::string weights = host->init_weights(config, 23);
  host->load(config, weights);
  gpu->load(config, weights);
  for (int n : {1, 300}) {
    SCOPED_TRACE(n);
    const PositionBatches b = position_batches(n, 90 + unsigned(n));
    const EvalBatchResult a = host->run(b.planes), c = gpu->run(b.boards);
    expect_valid(b.boards, c);
    EXPECT_LT(max_difference(a, c), 1e-6);
  }
  EXPECT_EQ(torch_backend("cuda", limit, "bf16", "device")->input_form(), pgmate::worker::InputForm::kBoards);
}

// A forward pass replayed as a CUDA graph (padded to its power of two, replayed again for
// another batch of the same size) answers as the eager one does.
TEST_P(CudaNetwork, CudaGraphsGiveTheEagerResults) {
  const std::string config = GetParam();
  const std::uint64_t limit = std::uint64_t{64} << 20;
  auto eager = torch_backend("cuda", limit, "fp32", "auto");
  auto graphs = torch_backend("cuda", limit, "fp32", "auto", true);
  EXPECT_NE(graphs->device().find("CUDA graphs"), std::string::npos) << graphs->device();
  const std::string weights = eager->init_weights(config, 24);
  eager->load(config, weights);
  graphs->load(config, weights);
  for (int n : {1, 37, 300, 290, 5000}) {  // 290 replays 300's graph; 5000 is past the largest graph
    SCOPED_TRACE(n);
    const PositionBatches b = position_batches(n, 120 + unsigned(n));
    const EvalBatchResult a = eager->run(b.boards), c = graphs->run(b.boards);
    expect_valid(b.boards, c);
    EXPECT_LT(max_difference(a, c), 1e-5);
  }
}

// bf16 and fp16 stay close to fp32: probabilities within a few hundredths.
TEST_P(CudaNetwork, ReducedPrecisionStaysClose) {
  const std::string config = GetParam();
  auto reference = torch_backend("cuda", std::uint64_t{64} << 20, "fp32");
  const std::string weights = reference->init_weights(config, 22);
  reference->load(config, weights);
  const EvalBatch batch = make_batch(128, 17);
  const EvalBatchResult expected = reference->run(batch);
  for (const char* precision : {"bf16", "fp16"}) {
    SCOPED_TRACE(precision);
    auto backend = torch_backend("cuda", std::uint64_t{64} << 20, precision);
    backend->load(config, weights);
    const EvalBatchResult r = backend->run(batch);
    expect_valid(batch, r);
    const double worst = max_difference(expected, r);
    EXPECT_LT(worst, 0.05);
    std::printf("[ %s ] %s vs fp32: max |difference| %.3g\n", config.c_str(), precision, worst);
  }
}

// Threads run batches on their own streams at once; each gets its own answer.
TEST_P(CudaNetwork, ConcurrentThreadsGetTheirOwnResults) {
  const std::string config = GetParam();
  auto backend = torch_backend("cuda", std::uint64_t{64} << 20, "fp32");
  backend->load(config, backend->init_weights(config, 23));
  std::vector<EvalBatch> batches;
  std::vector<EvalBatchResult> expected;
  for (unsigned t = 0; t < 4; ++t) {
    batches.push_back(make_batch(64 + int(t), 400 + t));
    expected.push_back(backend->run(batches.back()));
  }
  std::vector<double> worst(4, 0);
  std::vector<std::thread> threads;
  for (std::size_t t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int round = 0; round < 20; ++round)
        worst[t] = std::max(worst[t], max_difference(expected[t], backend->run(batches[t])));
    });
  for (auto& t : threads) t.join();
  for (double w : worst) EXPECT_LT(w, 1e-5);
}

INSTANTIATE_TEST_SUITE_P(SeedAndSmall, CudaNetwork, ::testing::Values(std::string("{}"), kSmall),
                         [](const auto& info) { return info.param == "{}" ? std::string("Seed") : std::string("Small"); });

TEST(TorchBackend, NothingLoaded) {
  auto backend = torch_backend("cpu");
  EXPECT_EQ(backend->network_json(), "null");
  EXPECT_THROW(backend->run(make_batch(1, 1)), std::runtime_error);
}

TEST(TorchBackend, OutputShapes) {
  auto backend = loaded_backend(kSmall, 7);
  EXPECT_EQ(backend->network_json(),
            R"({"filters":16,"blocks":2,"attention_blocks":1,"heads":4,"se_ratio":8,"parameters":)" +
                std::to_string(nn::parameter_count(nn::parse_network_config(kSmall))) + "}");
  for (int n : {1, 7, 64}) {
    SCOPED_TRACE(n);
    const EvalBatch batch = make_batch(n, 100 + n);
    expect_valid(batch, backend->run(batch));
  }
}

TEST(TorchBackend, EmptyBatchAndEmptyLegalLists) {
  auto backend = loaded_backend(kSmall, 7);
  const EvalBatchResult empty = backend->run(EvalBatch{});
  EXPECT_TRUE(empty.wdl.empty());
  EXPECT_TRUE(empty.priors.empty());

  EvalBatch batch = make_batch(9, 5, /*allow_empty=*/true);
  batch.legal_slots[0].clear();
  batch.legal_slots[4].clear();
  expect_valid(batch, backend->run(batch));
  for (auto& slots : batch.legal_slots) slots.clear();  // every list empty: WDL only
  const EvalBatchResult r = backend->run(batch);
  expect_valid(batch, r);
}

TEST(TorchBackend, RejectsMalformedBatches) {
  auto backend = loaded_backend(kSmall, 7);
  EvalBatch batch = make_batch(3, 1);
  EvalBatch short_planes = batch;
  short_planes.planes.pop_back();
  EXPECT_THROW(backend->run(short_planes), std::invalid_argument);
  EvalBatch missing_list = batch;
  missing_list.legal_slots.pop_back();
  EXPECT_THROW(backend->run(missing_list), std::invalid_argument);
  EvalBatch high_slot = batch;
  high_slot.legal_slots[1].push_back(nn::kPolicySize);
  EXPECT_THROW(backend->run(high_slot), std::invalid_argument);
  EvalBatch negative_slot = batch;
  negative_slot.legal_slots[2].push_back(-1);
  EXPECT_THROW(backend->run(negative_slot), std::invalid_argument);
  EvalBatch negative_size;
  negative_size.size = -1;
  EXPECT_THROW(backend->run(negative_size), std::invalid_argument);
}

// The priors are the softmax of the full policy logits restricted to the legal slots, in
// the order given; WDL is the softmax of the WDL logits.
TEST(TorchBackend, PriorsAreSoftmaxOverLegalLogits) {
  auto backend = torch_backend("cpu");
  const std::string weights = backend->init_weights(kSmall, 11);
  backend->load(kSmall, weights);
  const EvalBatch batch = make_batch(5, 3);
  const EvalBatchResult r = backend->run(batch);

  nn::Network network = nn::load_network(nn::parse_network_config(kSmall), weights);
  torch::NoGradGuard no_grad;
  auto input = torch::from_blob(const_cast<float*>(batch.planes.data()), {5, 72, 8, 8}).clone();
  const nn::NetworkOutput out = network->forward(input);
  ASSERT_EQ(out.policy.sizes(), (std::vector<std::int64_t>{5, nn::kPolicySize}));
  ASSERT_EQ(out.wdl.sizes(), (std::vector<std::int64_t>{5, 3}));
  auto policy = out.policy.to(torch::kFloat64);
  auto wdl = torch::softmax(out.wdl.to(torch::kFloat64), 1);
  for (int i = 0; i < 5; ++i) {
    const auto& slots = batch.legal_slots[static_cast<std::size_t>(i)];
    std::vector<double> logits;
    for (int s : slots) logits.push_back(policy[i][s].item<double>());
    const double mx = *std::max_element(logits.begin(), logits.end());
    double z = 0;
    for (double l : logits) z += std::exp(l - mx);
    for (std::size_t j = 0; j < slots.size(); ++j) {
      EXPECT_NEAR(r.priors[static_cast<std::size_t>(i)][j], std::exp(logits[j] - mx) / z, 1e-6);
    }
    for (int k = 0; k < 3; ++k) EXPECT_NEAR(r.wdl[static_cast<std::size_t>(i) * 3 + k], wdl[i][k].item<double>(), 1e-6);
  }
}

TEST(TorchBackend, Deterministic) {
  auto backend = torch_backend("cpu");
  const std::string weights = backend->init_weights(kSmall, 42);
  EXPECT_EQ(backend->init_weights(kSmall, 42), weights);  // same seed -> same bytes
  const std::string other = backend->init_weights(kSmall, 43);
  EXPECT_NE(other, weights);                               // another seed -> other bytes

  backend->load(kSmall, weights);
  auto twin = torch_backend("cpu");
  twin->load(kSmall, weights);
  const EvalBatch batch = make_batch(16, 9);
  const EvalBatchResult a = backend->run(batch);
  const EvalBatchResult b = backend->run(batch);
  const EvalBatchResult c = twin->run(batch);
  EXPECT_EQ(a.wdl, b.wdl);
  EXPECT_EQ(a.priors, b.priors);
  EXPECT_EQ(a.wdl, c.wdl);
  EXPECT_EQ(a.priors, c.priors);

  auto stranger = torch_backend("cpu");
  stranger->load(kSmall, other);
  EXPECT_NE(stranger->run(batch).wdl, a.wdl);

  // A position's result does not depend on its batch companions (up to kernel rounding).
  EvalBatch single;
  single.size = 1;
  single.planes.assign(batch.planes.begin() + 3 * 72 * 64, batch.planes.begin() + 4 * 72 * 64);
  single.legal_slots = {batch.legal_slots[3]};
  const EvalBatchResult s = backend->run(single);
  for (int k = 0; k < 3; ++k) EXPECT_NEAR(s.wdl[static_cast<std::size_t>(k)], a.wdl[9 + static_cast<std::size_t>(k)], 1e-5);
  for (std::size_t j = 0; j < s.priors[0].size(); ++j) EXPECT_NEAR(s.priors[0][j], a.priors[3][j], 1e-5);
  // Nor on whether its batch ran on one intra-op thread (under 64 positions) or on all.
  const EvalBatch large = make_batch(80, 9);  // its first 16 positions are batch's
  ASSERT_TRUE(std::equal(batch.planes.begin(), batch.planes.end(), large.planes.begin()));
  const EvalBatchResult l = backend->run(large);
  for (int k = 0; k < 3; ++k) EXPECT_NEAR(l.wdl[9 + static_cast<std::size_t>(k)], a.wdl[9 + static_cast<std::size_t>(k)], 1e-5);
  for (std::size_t j = 0; j < a.priors[3].size(); ++j) EXPECT_NEAR(l.priors[3][j], a.priors[3][j], 1e-5);
}

TEST(TorchBackend, ConcurrentRunsAgreeWithSerial) {
  auto backend = loaded_backend(kSmall, 5);
  const EvalBatch batch = make_batch(8, 77);
  const EvalBatchResult expected = backend->run(batch);
  std::vector<EvalBatchResult> results(4);
  std::vector<std::thread> threads;
  for (auto& r : results) threads.emplace_back([&] { r = backend->run(batch); });
  for (auto& t : threads) t.join();
  for (const auto& r : results) {
    ASSERT_EQ(r.wdl.size(), expected.wdl.size());
    for (std::size_t i = 0; i < r.wdl.size(); ++i) EXPECT_NEAR(r.wdl[i], expected.wdl[i], 1e-6);
  }
}

TEST(TorchBackend, SaveLoadRoundTrip) {
  const auto config = nn::parse_network_config(kSmall);
  auto backend = torch_backend("cpu");
  const std::string weights = backend->init_weights(kSmall, 3);
  backend->load(kSmall, weights);
  const EvalBatch batch = make_batch(7, 21);
  const EvalBatchResult before = backend->run(batch);

  // Load, save again: same bytes; serve the re-saved bytes: same outputs.
  const std::string resaved = nn::save_network(nn::load_network(config, weights));
  EXPECT_EQ(resaved, weights);
  auto again = torch_backend("cpu");
  again->load(kSmall, resaved);
  const EvalBatchResult after = again->run(batch);
  EXPECT_EQ(before.wdl, after.wdl);
  EXPECT_EQ(before.priors, after.priors);

  // Changed weights survive the trip too.
  nn::Network network = nn::load_network(config, weights);
  {
    torch::NoGradGuard no_grad;
    for (auto& p : network->parameters()) p.mul_(1.5).add_(0.01);
  }
  const std::string changed = nn::save_network(network);
  again->load(kSmall, changed);
  const EvalBatchResult changed_out = again->run(batch);
  EXPECT_NE(changed_out.wdl, before.wdl);
  auto third = torch_backend("cpu");
  third->load(kSmall, nn::save_network(nn::load_network(config, changed)));
  EXPECT_EQ(third->run(batch).wdl, changed_out.wdl);
}

TEST(TorchBackend, RejectsGarbageAndMismatchedWeights) {
  auto backend = torch_backend("cpu");
  const std::string weights = backend->init_weights(kSmall, 1);
  expect_throws_invalid([&] { backend->load(kSmall, ""); }, "network weights");
  expect_throws_invalid([&] { backend->load(kSmall, "not a network"); }, "network weights");
  std::mt19937 rng(5);
  std::string noise(4096, '\0');
  for (char& c : noise) c = static_cast<char>(rng());
  expect_throws_invalid([&] { backend->load(kSmall, noise); }, "network weights");
  for (std::size_t cut : {std::size_t{4}, std::size_t{100}, weights.size() / 3, weights.size() / 2, weights.size() - 30,
                          weights.size() - 1}) {
    SCOPED_TRACE(cut);
    expect_throws_invalid([&] { backend->load(kSmall, weights.substr(0, cut)); }, "network weights");
  }
  // Weights of another configuration.
  const std::string bigger = R"({"filters": 32, "blocks": 2, "attention_blocks": 1})";
  expect_throws_invalid([&] { backend->load(bigger, weights); }, "configuration");
  expect_throws_invalid([&] { backend->load(R"({"filters": 16, "blocks": 3, "attention_blocks": 1})", weights); },
                        "configuration");
  // Non-finite weights.
  {
    nn::Network network = nn::load_network(nn::parse_network_config(kSmall), weights);
    torch::NoGradGuard no_grad;
    network->parameters()[0].view(-1)[0] = std::nanf("");
    expect_throws_invalid([&] { backend->load(kSmall, nn::save_network(network)); }, "NaN");
  }
  // A flipped byte inside tensor data (the middle of the file): caught by the checksum.
  {
    std::string flipped = weights;
    flipped[flipped.size() / 2] = static_cast<char>(flipped[flipped.size() / 2] ^ 0x40);
    expect_throws_invalid([&] { backend->load(kSmall, flipped); }, "checksum");
  }
  // A failed load keeps serving the previous network.
  backend->load(kSmall, weights);
  const std::string served = backend->network_json();
  EXPECT_THROW(backend->load(kSmall, "junk"), std::invalid_argument);
  EXPECT_EQ(backend->network_json(), served);
  expect_valid(make_batch(2, 2), backend->run(make_batch(2, 2)));
}

// Corrupted bytes anywhere: either rejected with std::invalid_argument or loaded (a flip
// inside tensor data is not detectable), never a crash or another exception type.
TEST(TorchBackend, CorruptedWeightsNeverCrash) {
  auto backend = torch_backend("cpu");
  const std::string weights = backend->init_weights(kSmall, 1);
  std::mt19937 rng(17);
  int rejected = 0, accepted = 0;
  for (int trial = 0; trial < 60; ++trial) {
    std::string bad = weights;
    const int flips = 1 + static_cast<int>(rng() % 4);
    for (int f = 0; f < flips; ++f) {
      // Half the flips in the first/last 2 KiB (the length, the JSON header; the data's end).
      std::size_t at = rng() % bad.size();
      if (trial % 2 == 0) {
        const std::size_t edge = std::min<std::size_t>(2048, bad.size());
        at = (rng() % 2) ? rng() % edge : bad.size() - 1 - rng() % edge;
      }
      bad[at] = static_cast<char>(bad[at] ^ static_cast<char>(1 + rng() % 255));
    }
    try {
      backend->load(kSmall, bad);
      ++accepted;
      expect_valid(make_batch(1, 1), backend->run(make_batch(1, 1)));
    } catch (const std::invalid_argument&) {
      ++rejected;
    } catch (const std::exception& e) {
      ADD_FAILURE() << "trial " << trial << ": " << e.what();
    }
  }
  std::printf("corrupted weights: %d rejected, %d accepted\n", rejected, accepted);
  EXPECT_GT(rejected, 0);
}

// ---- the weights format (safetensors) ----

// Parses `bytes`, lets `edit` change the metadata and the tensor list (views into `bytes`
// or into storage the caller keeps), writes them again.
std::string rewrite(const std::string& bytes,
                    const std::function<void(nn::SafetensorsMetadata&, std::vector<nn::SafetensorsInput>&)>& edit) {
  const nn::SafetensorsView view = nn::parse_safetensors(bytes);
  nn::SafetensorsMetadata metadata = view.metadata;
  std::vector<nn::SafetensorsInput> tensors;
  for (const auto& t : view.tensors) tensors.push_back({t.name, t.dtype, t.shape, view.bytes(t)});
  edit(metadata, tensors);
  return nn::write_safetensors(metadata, tensors);
}

nn::SafetensorsInput* find_input(std::vector<nn::SafetensorsInput>& tensors, const std::string& name) {
  for (auto& t : tensors) {
    if (t.name == name) return &t;
  }
  ADD_FAILURE() << "no tensor " << name;
  static nn::SafetensorsInput none;
  return &none;
}

void set_metadata(nn::SafetensorsMetadata& metadata, const std::string& key, const std::string& value) {
  for (auto& [k, v] : metadata) {
    if (k == key) {
      v = value;
      return;
    }
  }
  metadata.emplace_back(key, value);
}

void erase_metadata(nn::SafetensorsMetadata& metadata, const std::string& key) {
  std::erase_if(metadata, [&](const auto& kv) { return kv.first == key; });
}

// What init_network_bytes writes: the three metadata entries, every tensor of the
// configuration in module order as contiguous little-endian F32, the header padded to 8.
TEST(WeightsFormat, LayoutAndMetadata) {
  const auto config = nn::parse_network_config(kSmall);
  const std::string weights = nn::init_network_bytes(config, 9);
  EXPECT_EQ(weights.size(), nn::serialized_weights_size(config));
  std::uint64_t header = 0;
  std::memcpy(&header, weights.data(), 8);
  EXPECT_EQ(header % 8, 0u);
  EXPECT_EQ(weights[8], '{');

  const nn::SafetensorsView view = nn::parse_safetensors(weights);
  ASSERT_EQ(view.metadata.size(), 3u);
  EXPECT_EQ(view.metadata[0], (std::pair<std::string, std::string>{"pgmate_format", "2"}));
  EXPECT_EQ(view.metadata[1], (std::pair<std::string, std::string>{"pgmate_config", nn::to_json(config)}));
  EXPECT_EQ(view.metadata[2].first, "pgmate_checksum");
  EXPECT_EQ(view.metadata[2].second.size(), 16u);
  EXPECT_EQ(view.metadata[2].second.find_first_not_of("0123456789abcdef"), std::string::npos);

  nn::Network network = nn::load_network(config, weights);
  const auto specs = nn::network_tensors(config);
  ASSERT_EQ(view.tensors.size(), specs.size());
  std::uint64_t offset = 0;
  for (std::size_t i = 0; i < specs.size(); ++i) {
    const nn::SafetensorsTensor& t = view.tensors[i];
    SCOPED_TRACE(t.name);
    EXPECT_EQ(t.name, specs[i].name);
    EXPECT_EQ(t.dtype, "F32");
    EXPECT_EQ(t.shape, std::vector<std::uint64_t>(specs[i].shape.begin(), specs[i].shape.end()));
    EXPECT_EQ(t.begin, offset);
    offset = t.end;
  }
  // The data is each parameter's floats, as the network holds them.
  std::size_t i = 0;
  for (const auto& item : network->named_parameters()) {
    const torch::Tensor p = item.value().contiguous();
    ASSERT_EQ(item.key(), view.tensors[i].name);
    EXPECT_EQ(view.bytes(view.tensors[i]), std::string_view(static_cast<const char*>(p.data_ptr()), p.nbytes()));
    ++i;
  }
  EXPECT_EQ(i, view.tensors.size());
  // A known value: GroupNorm starts at weight 1, bias 0.
  float first = 0;
  std::memcpy(&first, view.bytes(*view.find("stem_norm.weight")).data(), 4);
  EXPECT_EQ(first, 1.0f);
  EXPECT_EQ(std::string(view.bytes(*view.find("stem_norm.weight")).substr(0, 4)), std::string("\0\0\x80\x3f", 4));
}

// save -> load -> save gives the same bytes; the tensors' order in the file does not matter
// (tools such as the Python library order them their own way).
TEST(WeightsFormat, ExactRoundTripAndAnyTensorOrder) {
  const auto config = nn::parse_network_config(kSmall);
  const std::string weights = nn::init_network_bytes(config, 4);
  nn::Network loaded = nn::load_network(config, weights);
  EXPECT_EQ(nn::save_network(loaded), weights);
  EXPECT_EQ(nn::save_network(nn::load_network(config, nn::save_network(loaded))), weights);

  const std::string reversed = rewrite(weights, [](auto&, auto& tensors) { std::reverse(tensors.begin(), tensors.end()); });
  ASSERT_NE(reversed, weights);
  nn::Network from_reversed = nn::load_network(config, reversed);
  EXPECT_EQ(nn::save_network(from_reversed), weights);
  // Extra metadata (e.g. the Python library's {"format": "pt"}) is ignored.
  const std::string extra = rewrite(weights, [](auto& metadata, auto&) { metadata.emplace_back("format", "pt"); });
  EXPECT_EQ(nn::save_network(nn::load_network(config, extra)), weights);

  torch::NoGradGuard no_grad;
  const auto input = torch::rand({3, nn::kInputPlanes, 8, 8});
  const auto a = loaded->forward(input);
  const auto b = from_reversed->forward(input);
  EXPECT_TRUE(torch::equal(a.policy, b.policy));
  EXPECT_TRUE(torch::equal(a.wdl, b.wdl));
}

// pgmate 0.3 stored torch::serialize::OutputArchive bytes (a zip of pickles and TorchScript
// that torch::jit::load executes): refused by their signature, never read.
TEST(WeightsFormat, RefusesLibTorchArchives) {
  const auto config = nn::parse_network_config(kSmall);
  torch::manual_seed(0);
  nn::Network network(config);
  torch::serialize::OutputArchive archive;
  network->save(archive);
  archive.write("pgmate_format", c10::IValue(std::int64_t{1}));
  archive.write("pgmate_config", c10::IValue(nn::to_json(config)));
  std::ostringstream out;
  archive.save_to(out);
  const std::string old = out.str();
  ASSERT_EQ(old.substr(0, 4), std::string("PK\x03\x04"));
  expect_throws_invalid([&] { nn::load_network(config, old); },
                        "network weights: a LibTorch archive (pgmate 0.3 weights) is never loaded: weights must be "
                        "safetensors (pgmate_format 2); re-create the network or convert it with a trusted tool");
  expect_throws_invalid([&] { torch_backend("cpu")->load(kSmall, old); }, "LibTorch archive");
  std::ostringstream tensor_out;
  torch::save(torch::ones({2}), tensor_out);
  expect_throws_invalid([&] { nn::load_network(config, tensor_out.str()); }, "LibTorch archive");
}

// A TorchScript archive whose loading runs code: its class's __setstate__ prints a line and
// creates a file. torch::jit::load does both (the control: the test can fail); load_network
// refuses the bytes and neither happens.
std::atomic<int> g_sentinel_prints{0};
void sentinel_print_handler(const std::string& text) {
  if (text.find("pgmate-sentinel") != std::string::npos) ++g_sentinel_prints;
}

TEST(WeightsFormat, TorchScriptArchiveIsRefusedWithoutRunningIt) {
  const std::filesystem::path sentinel =
      std::filesystem::temp_directory_path() / ("pgmate_sentinel_" + std::to_string(::getpid()) + ".bin");
  std::filesystem::remove(sentinel);
  ASSERT_EQ(sentinel.string().find('"'), std::string::npos);

  torch::jit::Module evil("PgmateEvil");
  evil.register_attribute("x", c10::TensorType::get(), torch::zeros({1}));
  evil.define(R"(
def forward(self, x: Tensor) -> Tensor:
    return x + self.x

def __getstate__(self) -> Tensor:
    return self.x

def __setstate__(self, state: Tensor) -> None:
    print("pgmate-sentinel")
    self.x = state + torch.from_file(")" + sentinel.string() + R"(", True, 1)
)");
  std::ostringstream out;
  evil.save(out);
  const std::string bytes = out.str();
  ASSERT_FALSE(std::filesystem::exists(sentinel));  // saving calls __getstate__ only

  const auto previous = torch::jit::getPrintHandler();
  torch::jit::setPrintHandler(sentinel_print_handler);
  g_sentinel_prints = 0;
  // Refused, nothing run.
  expect_throws_invalid([&] { nn::load_network(nn::parse_network_config(kSmall), bytes); }, "LibTorch archive");
  expect_throws_invalid([&] { torch_backend("cpu")->load(kSmall, bytes); }, "LibTorch archive");
  EXPECT_EQ(g_sentinel_prints.load(), 0);
  EXPECT_FALSE(std::filesystem::exists(sentinel));
  // Without the zip signature (the first bytes changed): still refused, as not safetensors.
  std::string disguised = bytes;
  disguised[0] = 'Q';
  expect_throws_invalid([&] { nn::load_network(nn::parse_network_config(kSmall), disguised); }, "safetensors");
  EXPECT_EQ(g_sentinel_prints.load(), 0);
  EXPECT_FALSE(std::filesystem::exists(sentinel));

  // The control: LibTorch's loader (what pgmate 0.3's load_network called) runs the code.
  {
    std::istringstream in(bytes);
    torch::jit::Module loaded = torch::jit::load(in);
    (void)loaded;
  }
  torch::jit::setPrintHandler(previous);
  EXPECT_EQ(g_sentinel_prints.load(), 1);
  EXPECT_TRUE(std::filesystem::exists(sentinel));
  std::filesystem::remove(sentinel);
}

// Every refusal of load_network on safetensors input, each naming what is wrong.
TEST(WeightsFormat, RefusesWrongContents) {
  const auto config = nn::parse_network_config(kSmall);
  const std::string weights = nn::init_network_bytes(config, 6);
  auto refused = [&](const std::string& bytes, const std::string& mention) {
    expect_throws_invalid([&] { nn::load_network(config, bytes); }, mention);
  };
  const std::string stray_data(4 * 16, '\0');

  // Metadata.
  refused(rewrite(weights, [](auto& metadata, auto&) { metadata.clear(); }),
          "network weights: no \"pgmate_format\" metadata");
  refused(rewrite(weights, [](auto& metadata, auto&) { set_metadata(metadata, "pgmate_format", "1"); }),
          "unsupported pgmate_format \"1\"");
  refused(rewrite(weights, [](auto& metadata, auto&) { erase_metadata(metadata, "pgmate_config"); }),
          "no \"pgmate_config\" metadata");
  refused(rewrite(weights, [](auto& metadata, auto&) { set_metadata(metadata, "pgmate_config", "{\"filters\": 12}"); }),
          "stored configuration is invalid");
  // Another configuration with the very same tensors (heads changes no shape).
  refused(rewrite(weights,
                  [](auto& metadata, auto&) {
                    set_metadata(metadata, "pgmate_config",
                                 R"({"filters":16,"blocks":2,"attention_blocks":1,"heads":2,"se_ratio":8})");
                  }),
          "saved for configuration {\"filters\":16,\"blocks\":2,\"attention_blocks\":1,\"heads\":2,\"se_ratio\":8}, "
          "asked to load as {\"filters\":16,\"blocks\":2,\"attention_blocks\":1,\"heads\":4,\"se_ratio\":8}");
  refused(rewrite(weights, [](auto& metadata, auto&) { erase_metadata(metadata, "pgmate_checksum"); }),
          "no \"pgmate_checksum\" metadata");
  refused(rewrite(weights, [](auto& metadata, auto&) { set_metadata(metadata, "pgmate_checksum", "0123456789ABCDEF"); }),
          "\"pgmate_checksum\" is not 16 lowercase hex digits");
  // A metadata value that is not a string (same header length: JSON allows the spaces).
  {
    std::string number = weights;
    const std::size_t at = number.find("\"pgmate_format\":\"2\"");
    ASSERT_NE(at, std::string::npos);
    number.replace(at, 19, "\"pgmate_format\":2  ");
    refused(number, "network weights: safetensors: metadata \"pgmate_format\": the value is not a string");
  }

  // Tensors.
  refused(rewrite(weights, [&](auto&, auto& tensors) { tensors.push_back({"blocks.9.conv1.weight", "F32", {16}, stray_data}); }),
          "unexpected tensor \"blocks.9.conv1.weight\"");
  refused(rewrite(weights,
                  [](auto&, auto& tensors) {
                    std::erase_if(tensors, [](const auto& t) { return t.name == "blocks.1.attention.position"; });
                  }),
          "missing tensor \"blocks.1.attention.position\"");
  refused(rewrite(weights, [](auto&, auto& tensors) { find_input(tensors, "policy_fc.bias")->shape = {2, 2336}; }),
          "tensor \"policy_fc.bias\" has shape [2, 2336], the configuration needs [4672]");
  refused(rewrite(weights, [](auto&, auto& tensors) { find_input(tensors, "stem_norm.weight")->shape = {1, 16}; }),
          "tensor \"stem_norm.weight\" has shape [1, 16], the configuration needs [16]");
  refused(rewrite(weights, [](auto&, auto& tensors) { find_input(tensors, "stem_norm.weight")->dtype = "I32"; }),
          "tensor \"stem_norm.weight\" is I32, the network needs F32");
  refused(rewrite(weights,
                  [](auto&, auto& tensors) {
                    auto* t = find_input(tensors, "value_fc2.bias");
                    t->dtype = "F16";
                    t->shape = {6};
                  }),
          "tensor \"value_fc2.bias\" is F16");

  // Data: a flipped bit, two same-shaped tensors swapped, non-finite values.
  {
    const nn::SafetensorsView view = nn::parse_safetensors(weights);
    std::string flipped = weights;
    const std::size_t at = weights.size() - view.data.size() + view.find("value_fc1.weight")->begin + 101;
    flipped[at] = static_cast<char>(flipped[at] ^ 0x01);
    refused(flipped, "checksum mismatch");
  }
  refused(rewrite(weights,
                  [](auto&, auto& tensors) {
                    std::swap(find_input(tensors, "blocks.0.norm1.weight")->data,
                              find_input(tensors, "blocks.0.norm1.bias")->data);
                  }),
          "checksum mismatch");
  for (const float bad : {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(),
                          -std::numeric_limits<float>::infinity()}) {
    SCOPED_TRACE(bad);
    nn::Network network = nn::load_network(config, weights);
    {
      torch::NoGradGuard no_grad;
      network->named_parameters()["blocks.1.se.fc2.bias"].view(-1)[3] = bad;
    }
    refused(nn::save_network(network), "tensor \"blocks.1.se.fc2.bias\" holds NaN or infinity");
  }

  // Not safetensors at all, or not strict safetensors.
  refused(std::string("\x10\0\0\0\0\0\0\0{\"a\":1}         ", 24), "network weights: safetensors: tensor \"a\"");
  refused(weights + "x", "bytes after the last tensor's data");
  refused(weights.substr(0, weights.size() - 4), "beyond the");
  {
    std::uint64_t n = 0;  // one more header byte, not whitespace, after the JSON object
    std::memcpy(&n, weights.data(), 8);
    std::string trailing = weights;
    trailing.insert(8 + n, "x");
    ++n;
    std::memcpy(trailing.data(), &n, 8);
    refused(trailing, "trailing bytes after the JSON object");
  }
}

// init_network_bytes refuses, before building anything, a configuration whose weights would
// not fit the limit (64 MiB by default: the protocol's max_large_payload).
TEST(WeightsFormat, InitRefusesOversizedConfigurations) {
  const auto largest = nn::parse_network_config(R"({"filters": 1024, "blocks": 64, "attention_blocks": 64})");
  expect_throws_invalid([&] { nn::init_network_bytes(largest, 1); },
                        std::to_string(nn::parameter_count(largest)) + " parameters");
  expect_throws_invalid([&] { nn::init_network_bytes(largest, 1); }, "above the limit of 67108864 bytes");
  expect_throws_invalid([&] { torch_backend("cpu")->init_weights(R"({"filters": 256})", 1); }, "limit");
  expect_throws_invalid([&] { torch_backend("cpu", 1000)->init_weights(kSmall, 1); },
                        "above the limit of 1000 bytes");
  EXPECT_GT(nn::serialized_weights_size(nn::parse_network_config(R"({"filters": 256})")), nn::kMaxWeightBytes);
  EXPECT_LT(nn::serialized_weights_size(nn::NetworkConfig{}), nn::kMaxWeightBytes);

  // The limit is on the exact size written.
  const auto small = nn::parse_network_config(kSmall);
  const std::uint64_t size = nn::serialized_weights_size(small);
  EXPECT_EQ(nn::init_network_bytes(small, 1, size).size(), size);
  expect_throws_invalid([&] { nn::init_network_bytes(small, 1, size - 1); },
                        "above the limit of " + std::to_string(size - 1) + " bytes");
  for (const std::string& json : {std::string(R"({"filters": 8, "blocks": 0})"),
                                  std::string(R"({"filters": 24, "blocks": 3, "heads": 3, "se_ratio": 6})")}) {
    const auto config = nn::parse_network_config(json);
    EXPECT_EQ(nn::init_network_bytes(config, 2).size(), nn::serialized_weights_size(config)) << json;
  }
}

TEST(TorchBackend, DefaultConfiguration) {
  auto backend = torch_backend("cpu");
  const nn::NetworkConfig defaults;
  EXPECT_EQ(nn::parameter_count(defaults), kDefaultParameters);
  const std::string weights = backend->init_weights("{}", 1);
  backend->load("", weights);
  EXPECT_EQ(backend->network_json(),
            R"({"filters":128,"blocks":8,"attention_blocks":2,"heads":4,"se_ratio":8,"parameters":)" +
                std::to_string(kDefaultParameters) + "}");
  nn::Network network(defaults);
  EXPECT_EQ(nn::count_parameters(*network), kDefaultParameters);
  EXPECT_EQ(weights.size(), nn::serialized_weights_size(defaults));
  std::printf("default network: %lld parameters, %zu weight bytes\n", static_cast<long long>(kDefaultParameters),
              weights.size());
  const EvalBatch batch = make_batch(3, 8);
  expect_valid(batch, backend->run(batch));
  torch::NoGradGuard no_grad;
  network->eval();
  const nn::NetworkOutput out = network->forward(torch::zeros({3, 72, 8, 8}));
  EXPECT_EQ(out.policy.sizes(), (std::vector<std::int64_t>{3, nn::kPolicySize}));
  EXPECT_EQ(out.wdl.sizes(), (std::vector<std::int64_t>{3, 3}));
}

TEST(TorchBackend, DISABLED_Throughput) {
  auto backend = torch_backend("auto");
  const std::string weights = backend->init_weights("{}", 1);
  backend->load("{}", weights);
  std::printf("device %s, %d threads, weights %zu bytes\n", backend->device().c_str(), torch::get_num_threads(),
              weights.size());
  for (int n : {1, 8, 64, 256}) {
    const EvalBatch batch = make_batch(n, static_cast<unsigned>(n));
    backend->run(batch);  // warm-up
    int runs = 0;
    const auto start = std::chrono::steady_clock::now();
    double seconds = 0;
    do {
      backend->run(batch);
      ++runs;
      seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    } while (seconds < 3.0 || runs < 3);
    std::printf("batch %4d: %9.1f positions/s (%.2f ms per batch, %d runs)\n", n, n * runs / seconds,
                1000.0 * seconds / runs, runs);
  }
}

}  // namespace
