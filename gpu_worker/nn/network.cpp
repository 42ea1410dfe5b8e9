#include "nn/network.h"

#include <dlfcn.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>
#include <sstream>
#include <stdexcept>

#include <torch/torch.h>

namespace pgmate::worker::nn {
namespace {

constexpr std::int64_t kFormatVersion = 1;
const char* const kFormatKey = "pgmate_format";
const char* const kConfigKey = "pgmate_config";
const char* const kChecksumKey = "pgmate_checksum";

torch::nn::Conv2d conv(int in, int out, int kernel) {
  return torch::nn::Conv2d(torch::nn::Conv2dOptions(in, out, kernel).padding(kernel / 2).bias(false));
}

torch::nn::GroupNorm group_norm(int groups, int channels) {
  return torch::nn::GroupNorm(torch::nn::GroupNormOptions(groups, channels));
}

torch::Tensor act(const torch::Tensor& x) { return torch::gelu(x); }

// CPU inference fast path through oneDNN (MKL-DNN). LibTorch's own dispatch sends small
// convolutions (batch < 2) and every linear layer to the BLAS library, which in Debian's
// libtorch is whatever libblas.so.3 points at -- by default the reference netlib BLAS, ~20x
// slower than oneDNN on the 3x3 convolutions at batch 1 and on the linear layers at batch
// >= 8. So, on CPU float tensors without autograd, when LibTorch has MKL-DNN:
//   convolutions always go to oneDNN;
//   linear layers with >= 8 rows go to oneDNN unless an optimised BLAS is loaded (LibTorch
//   built with MKL, or OpenBLAS found in the process), which is faster there.
// PGMATE_NN_MKLDNN=0 turns the fast path off, =1 sends linear layers to oneDNN regardless.
// Results equal the plain path up to float rounding.
enum class MkldnnMode { kOff, kConvolutions, kAll };

MkldnnMode mkldnn_mode() {
  static const MkldnnMode mode = [] {
    if (!at::hasMKLDNN()) return MkldnnMode::kOff;
    const char* v = std::getenv("PGMATE_NN_MKLDNN");
    const std::string setting = v ? v : "";
    if (setting == "0") return MkldnnMode::kOff;
    if (setting == "1") return MkldnnMode::kAll;
    const bool fast_blas = at::hasMKL() || dlsym(RTLD_DEFAULT, "openblas_get_config") != nullptr;
    return fast_blas ? MkldnnMode::kConvolutions : MkldnnMode::kAll;
  }();
  return mode;
}

bool cpu_inference(const torch::Tensor& x) {
  return x.device().is_cpu() && x.scalar_type() == torch::kFloat32 && !torch::GradMode::is_enabled();
}

// A stride-1, bias-free, "same"-padded convolution (every convolution of the network).
torch::Tensor conv_forward(torch::nn::Conv2d& conv, const torch::Tensor& x) {
  if (mkldnn_mode() == MkldnnMode::kOff || !cpu_inference(x)) return conv(x);
  const std::int64_t pad = conv->weight.size(-1) / 2;
  return at::mkldnn_convolution(x.contiguous(), conv->weight, c10::nullopt, {pad, pad}, {1, 1}, {1, 1}, 1);
}

// A linear layer; fewer than 8 rows (matrix-vector products) stay with BLAS, as fast
// there, without oneDNN's per-call weight preparation.
torch::Tensor linear_forward(torch::nn::Linear& linear, const torch::Tensor& x) {
  const std::int64_t rows = x.numel() / x.size(-1);
  if (rows < 8 || mkldnn_mode() != MkldnnMode::kAll || !cpu_inference(x)) return linear(x);
  auto sizes = x.sizes().vec();
  sizes.back() = linear->weight.size(0);
  auto y = at::mkldnn_linear(x.reshape({rows, x.size(-1)}).contiguous().to_mkldnn(), linear->weight, linear->bias);
  return y.to_dense().view(sizes);
}

[[noreturn]] void bad_weights(const std::string& what) {
  throw std::invalid_argument("network weights: " + what);
}

std::string shape_string(const torch::Tensor& t) {
  std::ostringstream out;
  out << t.sizes() << " " << t.dtype();
  return out.str();
}

// Module::load without its silent reshaping: every parameter, buffer and child of `module`
// must be in `archive` with the same shape and dtype, and nothing else may be there.
void load_checked(torch::nn::Module& module, torch::serialize::InputArchive& archive, const std::string& path) {
  std::set<std::string> expected;
  auto load_tensor = [&](const std::string& name, torch::Tensor& target, bool is_buffer) {
    expected.insert(name);
    torch::Tensor read;
    if (!archive.try_read(name, read, is_buffer) || !read.defined()) {
      bad_weights("missing tensor \"" + path + name + "\"");
    }
    if (read.sizes() != target.sizes() || read.scalar_type() != target.scalar_type()) {
      bad_weights("tensor \"" + path + name + "\" is " + shape_string(read) + ", the configuration needs " +
                  shape_string(target));
    }
    torch::NoGradGuard no_grad;
    target.copy_(read);
  };
  for (auto& item : module.named_parameters(/*recurse=*/false)) load_tensor(item.key(), item.value(), false);
  for (auto& item : module.named_buffers(/*recurse=*/false)) load_tensor(item.key(), item.value(), true);
  for (auto& item : module.named_children()) {
    expected.insert(item.key());
    torch::serialize::InputArchive child;
    if (!archive.try_read(item.key(), child)) bad_weights("missing module \"" + path + item.key() + "\"");
    load_checked(*item.value(), child, path + item.key() + ".");
  }
  for (const std::string& key : archive.keys()) {
    if (expected.count(key) || key == "training") continue;
    if (path.empty() && (key == kFormatKey || key == kConfigKey || key == kChecksumKey)) continue;
    bad_weights("unexpected entry \"" + path + key + "\" (weights for another architecture?)");
  }
}

// A 64-bit hash of every parameter and buffer (name, shape, bytes), in module order: detects
// corrupted tensor data, which the archive format itself does not.
std::int64_t weights_checksum(const torch::nn::Module& module) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  auto mix = [&h](std::uint64_t word) {
    h ^= word;
    h *= 0x100000001b3ull;
    h ^= h >> 29;
  };
  auto mix_bytes = [&](const unsigned char* p, std::size_t n) {
    std::size_t i = 0;
    for (; i + 8 <= n; i += 8) {
      std::uint64_t w;
      std::memcpy(&w, p + i, 8);
      mix(w);
    }
    std::uint64_t tail = 0;
    for (std::size_t k = 0; i < n; ++i, ++k) tail |= static_cast<std::uint64_t>(p[i]) << (8 * k);
    mix(tail ^ (static_cast<std::uint64_t>(n) << 56));
  };
  auto mix_tensor = [&](const std::string& name, const torch::Tensor& t) {
    mix_bytes(reinterpret_cast<const unsigned char*>(name.data()), name.size());
    for (auto d : t.sizes()) mix(static_cast<std::uint64_t>(d));
    const torch::Tensor c = t.detach().to(torch::kCPU).contiguous();
    mix_bytes(static_cast<const unsigned char*>(c.data_ptr()), c.nbytes());
  };
  for (const auto& item : module.named_parameters(/*recurse=*/true)) mix_tensor(item.key(), item.value());
  for (const auto& item : module.named_buffers(/*recurse=*/true)) mix_tensor(item.key(), item.value());
  return static_cast<std::int64_t>(h);
}

}  // namespace

// ---- modules ----

SqueezeExcitationImpl::SqueezeExcitationImpl(int channels, int ratio) {
  fc1_ = register_module("fc1", torch::nn::Linear(channels, channels / ratio));
  fc2_ = register_module("fc2", torch::nn::Linear(channels / ratio, channels));
}

torch::Tensor SqueezeExcitationImpl::forward(const torch::Tensor& x) {
  auto s = x.mean({2, 3});                      // [N, C]
  s = torch::sigmoid(linear_forward(fc2_, act(linear_forward(fc1_, s))));      // [N, C]
  return x * s.unsqueeze(-1).unsqueeze(-1);
}

SpatialAttentionImpl::SpatialAttentionImpl(int channels, int heads) : channels_(channels), heads_(heads) {
  position_ = register_parameter("position", torch::randn({1, kBoardSquares, channels}) * 0.02);
  qkv_ = register_module("qkv", torch::nn::Linear(channels, 3 * channels));
  out_ = register_module("out", torch::nn::Linear(channels, channels));
  norm_ = register_module("norm", torch::nn::LayerNorm(torch::nn::LayerNormOptions({channels})));
}

torch::Tensor SpatialAttentionImpl::forward(const torch::Tensor& x) {
  const auto n = x.size(0);
  const std::int64_t head_dim = channels_ / heads_;
  auto tokens = x.flatten(2).transpose(1, 2);                                     // [N, 64, C]
  auto qkv = linear_forward(qkv_, tokens + position_)                                              // [N, 64, 3C]
                 .view({n, kBoardSquares, 3, heads_, head_dim})
                 .permute({2, 0, 3, 1, 4});                                         // [3, N, H, 64, d]
  auto q = qkv[0], k = qkv[1], v = qkv[2];
  auto scores = torch::matmul(q, k.transpose(-2, -1)) * (1.0 / std::sqrt(static_cast<double>(head_dim)));
  auto attended = torch::matmul(torch::softmax(scores, -1), v)                       // [N, H, 64, d]
                      .transpose(1, 2)
                      .reshape({n, kBoardSquares, channels_});
  tokens = norm_(tokens + linear_forward(out_, attended));
  return tokens.transpose(1, 2).reshape({n, channels_, 8, 8});
}

ResidualBlockImpl::ResidualBlockImpl(int channels, int se_ratio, bool attention, int heads) {
  conv1_ = register_module("conv1", conv(channels, channels, 3));
  norm1_ = register_module("norm1", group_norm(kNormGroups, channels));
  conv2_ = register_module("conv2", conv(channels, channels, 3));
  norm2_ = register_module("norm2", group_norm(kNormGroups, channels));
  se_ = register_module("se", SqueezeExcitation(channels, se_ratio));
  if (attention) attention_ = register_module("attention", SpatialAttention(channels, heads));
}

torch::Tensor ResidualBlockImpl::forward(const torch::Tensor& x) {
  auto y = act(norm1_(conv_forward(conv1_, x)));
  y = se_(norm2_(conv_forward(conv2_, y)));
  if (attention_) y = attention_(y);
  return act(x + y);
}

NetworkImpl::NetworkImpl(const NetworkConfig& config) : config_(config) {
  validate_network_config(config_);
  const int f = config_.filters;
  stem_conv_ = register_module("stem_conv", conv(kInputPlanes, f, 3));
  stem_norm_ = register_module("stem_norm", group_norm(kNormGroups, f));
  blocks_ = register_module("blocks", torch::nn::ModuleList());
  for (int b = 0; b < config_.blocks; ++b) {
    const bool attention = b >= config_.blocks - config_.attention_blocks;
    blocks_->push_back(ResidualBlock(f, config_.se_ratio, attention, config_.heads));
  }
  policy_conv_ = register_module("policy_conv", conv(f, kPolicyChannels, 1));
  policy_norm_ = register_module("policy_norm", group_norm(kNormGroups, kPolicyChannels));
  policy_fc_ = register_module("policy_fc", torch::nn::Linear(kPolicyChannels * kBoardSquares, kPolicySize));
  value_conv_ = register_module("value_conv", conv(f, kValueChannels, 1));
  value_norm_ = register_module("value_norm", group_norm(1, kValueChannels));
  value_fc1_ = register_module("value_fc1", torch::nn::Linear(kValueChannels * kBoardSquares, kValueHidden));
  value_fc2_ = register_module("value_fc2", torch::nn::Linear(kValueHidden, kWdlSize));
}

NetworkOutput NetworkImpl::forward(const torch::Tensor& planes) {
  auto x = act(stem_norm_(conv_forward(stem_conv_, planes)));
  for (const auto& block : *blocks_) x = block->as<ResidualBlock>()->forward(x);
  auto p = act(policy_norm_(conv_forward(policy_conv_, x))).flatten(1);
  auto v = act(value_norm_(conv_forward(value_conv_, x))).flatten(1);
  return {linear_forward(policy_fc_, p), linear_forward(value_fc2_, act(linear_forward(value_fc1_, v)))};
}

// ---- weights ----

std::int64_t count_parameters(const torch::nn::Module& module) {
  std::int64_t n = 0;
  for (const auto& p : module.parameters()) n += p.numel();
  return n;
}

std::string save_network(const Network& network) {
  torch::serialize::OutputArchive archive;
  network->save(archive);
  archive.write(kFormatKey, c10::IValue(kFormatVersion));
  archive.write(kConfigKey, c10::IValue(to_json(network->config())));
  archive.write(kChecksumKey, c10::IValue(weights_checksum(*network)));
  std::ostringstream out(std::ios::binary);
  archive.save_to(out);
  return std::move(out).str();
}

std::string init_network_bytes(const NetworkConfig& config, std::uint64_t seed) {
  validate_network_config(config);
  static std::mutex seed_mutex;  // the generator is global: one seeded build at a time
  std::lock_guard<std::mutex> lock(seed_mutex);
  torch::manual_seed(seed);
  Network network(config);
  return save_network(network);
}

Network load_network(const NetworkConfig& config, const std::string& bytes) {
  validate_network_config(config);
  if (bytes.empty()) bad_weights("empty");
  torch::serialize::InputArchive archive;
  try {
    std::istringstream in(bytes, std::ios::binary);
    archive.load_from(in, torch::Device(torch::kCPU));
  } catch (const c10::Error& e) {
    bad_weights(std::string("not a LibTorch archive (") + e.what_without_backtrace() + ")");
  } catch (const std::exception& e) {
    bad_weights(std::string("not a LibTorch archive (") + e.what() + ")");
  }

  try {
    c10::IValue version;
    if (archive.try_read(kFormatKey, version)) {
      if (!version.isInt() || version.toInt() != kFormatVersion) bad_weights("unsupported pgmate_format");
    }
    c10::IValue saved_config;
    if (archive.try_read(kConfigKey, saved_config)) {
      if (!saved_config.isString()) bad_weights("pgmate_config is not a string");
      NetworkConfig saved;
      try {
        saved = parse_network_config(saved_config.toStringRef());
      } catch (const std::invalid_argument& e) {
        bad_weights(std::string("stored configuration is invalid: ") + e.what());
      }
      if (!(saved == config)) {
        bad_weights("saved for configuration " + to_json(saved) + ", asked to load as " + to_json(config));
      }
    }

    Network network(config);
    load_checked(*network, archive, "");
    c10::IValue checksum;
    if (archive.try_read(kChecksumKey, checksum)) {
      if (!checksum.isInt() || checksum.toInt() != weights_checksum(*network)) {
        bad_weights("checksum mismatch (corrupted tensor data)");
      }
    }
    torch::NoGradGuard no_grad;
    for (const auto& item : network->named_parameters()) {
      if (!torch::isfinite(item.value()).all().item<bool>()) {
        bad_weights("tensor \"" + item.key() + "\" holds NaN or infinity");
      }
    }
    network->eval();
    return network;
  } catch (const std::invalid_argument&) {
    throw;
  } catch (const c10::Error& e) {
    bad_weights(std::string("unreadable archive (") + e.what_without_backtrace() + ")");
  } catch (const std::exception& e) {
    bad_weights(std::string("unreadable archive (") + e.what() + ")");
  }
}

}  // namespace pgmate::worker::nn
