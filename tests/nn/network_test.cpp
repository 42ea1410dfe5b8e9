// The LibTorch network and its EvalBackend (gpu_worker/nn/): configuration parsing, output
// shapes, determinism, weight round trips, rejection of bad input. Most tests use a small
// configuration for speed; one checks the default network's size.
//
// Throughput (default configuration, batch 1/8/64/256):
//   network_test --gtest_also_run_disabled_tests --gtest_filter='*Throughput*'
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <numeric>
#include <random>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <torch/torch.h>

#include "nn/network.h"
#include "nn/network_config.h"
#include "server/eval_backend.h"

namespace {

using pgmate::worker::EvalBackend;
using pgmate::worker::EvalBatch;
using pgmate::worker::EvalBatchResult;
using pgmate::worker::make_torch_backend;
namespace nn = pgmate::worker::nn;

const std::string kSmall = R"({"filters": 16, "blocks": 2, "attention_blocks": 1})";
constexpr std::int64_t kDefaultParameters = 12273675;

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

std::unique_ptr<EvalBackend> loaded_backend(const std::string& config, std::uint64_t seed) {
  auto backend = make_torch_backend("cpu");
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
      {R"({"blocks": 1})", "attention_blocks"},  // default attention_blocks 2 > 1
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
  };
  auto backend = make_torch_backend("cpu");
  for (const auto& [json, mention] : bad) {
    SCOPED_TRACE(json);
    expect_throws_invalid([&] { nn::parse_network_config(json); }, mention);
    expect_throws_invalid([&] { backend->init_weights(json, 1); }, mention);
    expect_throws_invalid([&] { backend->load(json, "whatever"); }, mention);
  }
}

TEST(NetworkConfig, ParameterCountFormulaMatchesModules) {
  for (const std::string& json : {kSmall, std::string(R"({"filters":32,"blocks":3,"attention_blocks":3,"heads":8})"),
                                  std::string(R"({"filters":8,"blocks":0,"attention_blocks":0})")}) {
    const auto config = nn::parse_network_config(json);
    nn::Network network(config);
    EXPECT_EQ(nn::count_parameters(*network), nn::parameter_count(config)) << json;
  }
}

// ---- backend ----

TEST(TorchBackend, Devices) {
  EXPECT_EQ(make_torch_backend("cpu")->device(), "cpu");
  const std::string automatic = make_torch_backend("auto")->device();
  EXPECT_TRUE(automatic == "cpu" || automatic == "cuda:0") << automatic;
  EXPECT_THROW(make_torch_backend("tpu"), std::invalid_argument);
  EXPECT_THROW(make_torch_backend("cuda:x"), std::invalid_argument);
  if (!torch::cuda::is_available()) {
    EXPECT_THROW(make_torch_backend("cuda"), std::runtime_error);
  } else {
    EXPECT_EQ(make_torch_backend("cuda")->device(), "cuda:0");
  }
}

TEST(TorchBackend, NothingLoaded) {
  auto backend = make_torch_backend("cpu");
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
  auto backend = make_torch_backend("cpu");
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
  auto backend = make_torch_backend("cpu");
  const std::string weights = backend->init_weights(kSmall, 42);
  EXPECT_EQ(backend->init_weights(kSmall, 42), weights);  // same seed -> same bytes
  const std::string other = backend->init_weights(kSmall, 43);
  EXPECT_NE(other, weights);                               // another seed -> other bytes

  backend->load(kSmall, weights);
  auto twin = make_torch_backend("cpu");
  twin->load(kSmall, weights);
  const EvalBatch batch = make_batch(16, 9);
  const EvalBatchResult a = backend->run(batch);
  const EvalBatchResult b = backend->run(batch);
  const EvalBatchResult c = twin->run(batch);
  EXPECT_EQ(a.wdl, b.wdl);
  EXPECT_EQ(a.priors, b.priors);
  EXPECT_EQ(a.wdl, c.wdl);
  EXPECT_EQ(a.priors, c.priors);

  auto stranger = make_torch_backend("cpu");
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
  auto backend = make_torch_backend("cpu");
  const std::string weights = backend->init_weights(kSmall, 3);
  backend->load(kSmall, weights);
  const EvalBatch batch = make_batch(7, 21);
  const EvalBatchResult before = backend->run(batch);

  // Load, save again: same bytes; serve the re-saved bytes: same outputs.
  const std::string resaved = nn::save_network(nn::load_network(config, weights));
  EXPECT_EQ(resaved, weights);
  auto again = make_torch_backend("cpu");
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
  auto third = make_torch_backend("cpu");
  third->load(kSmall, nn::save_network(nn::load_network(config, changed)));
  EXPECT_EQ(third->run(batch).wdl, changed_out.wdl);
}

TEST(TorchBackend, RejectsGarbageAndMismatchedWeights) {
  auto backend = make_torch_backend("cpu");
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
  // Weights of another configuration, with and without the stored configuration entry.
  const std::string bigger = R"({"filters": 32, "blocks": 2, "attention_blocks": 1})";
  expect_throws_invalid([&] { backend->load(bigger, weights); }, "configuration");
  expect_throws_invalid([&] { backend->load(R"({"filters": 16, "blocks": 3, "attention_blocks": 1})", weights); },
                        "configuration");
  {
    torch::manual_seed(0);
    nn::Network other(nn::parse_network_config(bigger));
    torch::serialize::OutputArchive archive;  // plain torch::save layout, no pgmate entries
    other->save(archive);
    std::ostringstream out;
    archive.save_to(out);
    expect_throws_invalid([&] { backend->load(kSmall, out.str()); }, "stem_conv.weight");
    torch::manual_seed(0);
    nn::Network deeper(nn::parse_network_config(R"({"filters": 16, "blocks": 3, "attention_blocks": 2})"));
    torch::serialize::OutputArchive deeper_archive;
    deeper->save(deeper_archive);
    std::ostringstream deeper_out;
    deeper_archive.save_to(deeper_out);
    expect_throws_invalid([&] { backend->load(kSmall, deeper_out.str()); }, "unexpected entry");
    // Without pgmate entries but the right shapes: accepted.
    nn::Network same(nn::parse_network_config(kSmall));
    torch::serialize::OutputArchive same_archive;
    same->save(same_archive);
    std::ostringstream same_out;
    same_archive.save_to(same_out);
    EXPECT_NO_THROW(backend->load(kSmall, same_out.str()));
  }
  // Non-finite weights.
  {
    nn::Network network = nn::load_network(nn::parse_network_config(kSmall), weights);
    torch::NoGradGuard no_grad;
    network->parameters()[0].view(-1)[0] = std::nanf("");
    expect_throws_invalid([&] { backend->load(kSmall, nn::save_network(network)); }, "NaN");
  }
  // A flipped byte inside tensor data (the middle of the archive): caught by the checksum.
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
  auto backend = make_torch_backend("cpu");
  const std::string weights = backend->init_weights(kSmall, 1);
  std::mt19937 rng(17);
  int rejected = 0, accepted = 0;
  for (int trial = 0; trial < 60; ++trial) {
    std::string bad = weights;
    const int flips = 1 + static_cast<int>(rng() % 4);
    for (int f = 0; f < flips; ++f) {
      // Half the flips in the first/last 2 KiB (zip headers, pickles, central directory).
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

TEST(TorchBackend, DefaultConfiguration) {
  auto backend = make_torch_backend("cpu");
  const nn::NetworkConfig defaults;
  EXPECT_EQ(nn::parameter_count(defaults), kDefaultParameters);
  const std::string weights = backend->init_weights("{}", 1);
  backend->load("", weights);
  EXPECT_EQ(backend->network_json(),
            R"({"filters":128,"blocks":8,"attention_blocks":2,"heads":4,"se_ratio":8,"parameters":)" +
                std::to_string(kDefaultParameters) + "}");
  nn::Network network(defaults);
  EXPECT_EQ(nn::count_parameters(*network), kDefaultParameters);
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
  auto backend = make_torch_backend("auto");
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
