#include "worker/nn/network.h"

#include <dlfcn.h>

#include <bit>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <stdexcept>
#include <unordered_map>

#include <torch/torch.h>

#include "link/safetensors.h"

namespace pgmate::worker::nn {
namespace {

// Tensor data is written as the machine holds it; the format wants little-endian.
static_assert(std::endian::native == std::endian::little, "weights are read and written as little-endian floats");

const char* const kFormatVersion = "2";
const char* const kFormatKey = kWeightsFormatKey;
const char* const kConfigKey = kWeightsConfigKey;
const char* const kChecksumKey = kWeightsChecksumKey;
const char* const kDtype = "F32";

torch::nn::Conv2d conv(int in, int out, int kernel) {
  return torch::nn::Conv2d(torch::nn::Conv2dOptions(in, out, kernel).padding(kernel / 2).bias(false));
}

torch::nn::GroupNorm group_norm(int groups, int channels) {
  return torch::nn::GroupNorm(torch::nn::GroupNormOptions(groups, channels));
}

torch::Tensor act(const torch::Tensor& x) { return torch::gelu(x); }

// A GroupNorm over x in its weights' dtype: under CPU bf16 autocast the convolutions give
// bf16, and LibTorch's CPU group norm takes no mix of bf16 input and fp32 weights (CUDA
// autocast casts it to fp32 itself). Without autocast the dtypes agree and nothing is cast.
torch::Tensor norm(torch::nn::GroupNorm& gn, const torch::Tensor& x) {
  const auto dtype = gn->weight.scalar_type();
  return gn(x.scalar_type() == dtype ? x : x.to(dtype));
}

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

// A stride-1, "same"-padded convolution (every convolution of the network).
torch::Tensor conv_forward(torch::nn::Conv2d& conv, const torch::Tensor& x) {
  if (mkldnn_mode() == MkldnnMode::kOff || !cpu_inference(x)) return conv(x);
  const std::int64_t pad = conv->weight.size(-1) / 2;
  const c10::optional<torch::Tensor> bias =
      conv->bias.defined() ? c10::optional<torch::Tensor>(conv->bias) : c10::nullopt;
  return at::mkldnn_convolution(x.contiguous(), conv->weight, bias, {pad, pad}, {1, 1}, {1, 1}, 1);
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

// LibTorch's generator is process-wide: seeded builds (init_network_bytes) and the random
// initialisation every build does (load_network) take turns.
std::mutex& generator_mutex() {
  static std::mutex mutex;
  return mutex;
}

std::string shape_string(const std::vector<std::uint64_t>& shape) {
  std::string out = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) out += (i ? ", " : "") + std::to_string(shape[i]);
  return out + "]";
}

std::vector<std::uint64_t> unsigned_shape(const std::vector<std::int64_t>& shape) {
  return std::vector<std::uint64_t>(shape.begin(), shape.end());
}

// A 64-bit hash of every tensor (name, shape, bytes), in the network's order: a check that
// the tensor data is what was saved.
class WeightsChecksum {
 public:
  void add(std::string_view name, const std::vector<std::uint64_t>& shape, std::string_view bytes) {
    mix_bytes(name);
    for (std::uint64_t d : shape) mix(d);
    mix_bytes(bytes);
  }

  std::string hex() const {
    static const char* const digits = "0123456789abcdef";
    std::string out(16, '0');
    for (int i = 0; i < 16; ++i) out[static_cast<std::size_t>(15 - i)] = digits[(h_ >> (4 * i)) & 15];
    return out;
  }

 private:
  void mix(std::uint64_t word) {
    h_ ^= word;
    h_ *= 0x100000001b3ull;
    h_ ^= h_ >> 29;
  }

  void mix_bytes(std::string_view s) {
    const auto* p = reinterpret_cast<const unsigned char*>(s.data());
    const std::size_t n = s.size();
    std::size_t i = 0;
    for (; i + 8 <= n; i += 8) {
      std::uint64_t w;
      std::memcpy(&w, p + i, 8);
      mix(w);
    }
    std::uint64_t tail = 0;
    for (std::size_t k = 0; i < n; ++i, ++k) tail |= static_cast<std::uint64_t>(p[i]) << (8 * k);
    mix(tail ^ (static_cast<std::uint64_t>(n) << 56));
  }

  std::uint64_t h_ = 0xcbf29ce484222325ull;
};

SafetensorsMetadata weights_metadata(const NetworkConfig& config, const std::string& checksum) {
  return {{kFormatKey, kFormatVersion}, {kConfigKey, to_json(config)}, {kChecksumKey, checksum}};
}

// Every parameter, then every buffer, by dotted name (the order of network_tensors()).
std::vector<std::pair<std::string, torch::Tensor>> network_state(const torch::nn::Module& module) {
  std::vector<std::pair<std::string, torch::Tensor>> out;
  for (const auto& item : module.named_parameters(/*recurse=*/true)) out.emplace_back(item.key(), item.value());
  for (const auto& item : module.named_buffers(/*recurse=*/true)) out.emplace_back(item.key(), item.value());
  return out;
}

bool is_lower_hex(const std::string& s, std::size_t digits) {
  if (s.size() != digits) return false;
  for (char c : s) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

}  // namespace

// ---- modules ----

torch::Tensor HeadDropoutImpl::forward(const torch::Tensor& x) {
  if (!is_training() || p_ == 0) return x;
  const torch::Tensor keep = torch::empty_like(x).bernoulli_(1.0 - p_, generator_);
  return x * keep * (1.0 / (1.0 - p_));
}

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
  auto y = act(norm(norm1_, conv_forward(conv1_, x)));
  y = se_(norm(norm2_, conv_forward(conv2_, y)));
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
  if (config_.policy_head == PolicyHead::kFc) {
    policy_conv_ = register_module("policy_conv", conv(f, kPolicyChannels, 1));
    policy_norm_ = register_module("policy_norm", group_norm(kNormGroups, kPolicyChannels));
    policy_fc_ = register_module("policy_fc", torch::nn::Linear(kPolicyChannels * kBoardSquares, kPolicySize));
  } else {
    policy_conv_ = register_module("policy_conv", conv(f, f, 1));
    policy_norm_ = register_module("policy_norm", group_norm(kNormGroups, f));
    policy_out_ = register_module("policy_out", torch::nn::Conv2d(torch::nn::Conv2dOptions(f, kPolicyMoveTypes, 1)));
  }
  policy_dropout_ = register_module("policy_dropout", HeadDropout(kHeadDropout));
  value_dropout_ = register_module("value_dropout", HeadDropout(kHeadDropout));
  value_conv_ = register_module("value_conv", conv(f, kValueChannels, 1));
  value_norm_ = register_module("value_norm", group_norm(1, kValueChannels));
  value_fc1_ = register_module("value_fc1", torch::nn::Linear(kValueChannels * kBoardSquares, kValueHidden));
  value_fc2_ = register_module("value_fc2", torch::nn::Linear(kValueHidden, kWdlSize));
}

NetworkOutput NetworkImpl::forward(const torch::Tensor& planes) {
  auto x = act(norm(stem_norm_, conv_forward(stem_conv_, planes)));
  for (const auto& block : *blocks_) x = block->as<ResidualBlock>()->forward(x);
  auto p = policy_dropout_(act(norm(policy_norm_, conv_forward(policy_conv_, x))));
  torch::Tensor policy;
  if (config_.policy_head == PolicyHead::kFc) {
    policy = linear_forward(policy_fc_, p.flatten(1));
  } else {
    // [N, 73, 8, 8] -> [N, 8, 8, 73] -> slot square * 73 + type.
    policy = conv_forward(policy_out_, p).permute({0, 2, 3, 1}).reshape({p.size(0), kPolicySize});
  }
  auto v = act(norm(value_norm_, conv_forward(value_conv_, x))).flatten(1);
  return {policy, linear_forward(value_fc2_, value_dropout_(act(linear_forward(value_fc1_, v))))};
}

void NetworkImpl::set_head_dropout(double p) {
  if (!(p >= 0 && p < 1)) throw std::invalid_argument("head dropout must be in [0, 1)");
  policy_dropout_->set_p(p);
  value_dropout_->set_p(p);
}

void NetworkImpl::set_dropout_generator(const c10::optional<at::Generator>& generator) {
  policy_dropout_->set_generator(generator);
  value_dropout_->set_generator(generator);
}

// ---- weights ----

std::int64_t count_parameters(const torch::nn::Module& module) {
  std::int64_t n = 0;
  for (const auto& p : module.parameters()) n += p.numel();
  return n;
}

std::string save_network(const Network& network) {
  torch::NoGradGuard no_grad;
  std::vector<torch::Tensor> keep;  // the CPU float copies the inputs point into
  std::vector<SafetensorsInput> inputs;
  WeightsChecksum checksum;
  for (auto& [name, tensor] : network_state(*network)) {
    torch::Tensor t = tensor.detach().to(torch::kCPU, torch::kFloat32).contiguous();
    SafetensorsInput input;
    input.name = name;
    input.dtype = kDtype;
    input.shape = unsigned_shape(t.sizes().vec());
    input.data = std::string_view(static_cast<const char*>(t.data_ptr()), t.nbytes());
    checksum.add(input.name, input.shape, input.data);
    inputs.push_back(std::move(input));
    keep.push_back(std::move(t));
  }
  return write_safetensors(weights_metadata(network->config(), checksum.hex()), inputs);
}

std::uint64_t serialized_weights_size(const NetworkConfig& config) {
  std::vector<SafetensorsInput> inputs;
  std::uint64_t data = 0;
  for (const TensorSpec& spec : network_tensors(config)) {
    SafetensorsInput input;
    input.name = spec.name;
    input.dtype = kDtype;
    input.shape = unsigned_shape(spec.shape);
    std::uint64_t numel = 1;
    for (std::uint64_t d : input.shape) numel *= d;
    data += 4 * numel;
    inputs.push_back(std::move(input));
  }
  return safetensors_header_size(weights_metadata(config, std::string(16, '0')), inputs) + data;
}

std::string init_network_bytes(const NetworkConfig& config, std::uint64_t seed, std::uint64_t max_bytes) {
  validate_network_config(config);
  const std::uint64_t size = serialized_weights_size(config);
  if (size > max_bytes) {
    throw std::invalid_argument("network config: " + to_json(config) + " has " +
                                std::to_string(parameter_count(config)) + " parameters, " + std::to_string(size) +
                                " bytes of weights, above the limit of " + std::to_string(max_bytes) + " bytes");
  }
  std::lock_guard<std::mutex> lock(generator_mutex());  // one seeded build at a time
  torch::manual_seed(seed);
  Network network(config);
  return save_network(network);
}

Network load_network(const NetworkConfig& config, const std::string& bytes) {
  validate_network_config(config);
  if (bytes.empty()) bad_weights("empty");
  if (bytes.size() >= 4 && bytes.compare(0, 4, "PK\x03\x04", 4) == 0) {
    bad_weights(
        "a LibTorch archive (pgmate 0.3 weights) is never loaded: weights must be safetensors (pgmate_format 2); "
        "re-create the network or convert it with a trusted tool");
  }
  SafetensorsView view;
  try {
    view = parse_safetensors(bytes);
  } catch (const std::invalid_argument& e) {
    bad_weights(e.what());
  }

  // Metadata: the format, the configuration, the checksum.
  const std::string* format = view.metadata_value(kFormatKey);
  if (!format) bad_weights("no \"pgmate_format\" metadata (safetensors, but not pgmate weights)");
  if (*format != kFormatVersion) {
    bad_weights("unsupported pgmate_format \"" + *format + "\" (this worker reads " + kFormatVersion + ")");
  }
  const std::string* saved_json = view.metadata_value(kConfigKey);
  if (!saved_json) bad_weights("no \"pgmate_config\" metadata");
  NetworkConfig saved;
  try {
    saved = parse_network_config(*saved_json);
  } catch (const std::invalid_argument& e) {
    bad_weights(std::string("stored configuration is invalid: ") + e.what());
  }
  if (!(saved == config)) {
    bad_weights("saved for configuration " + to_json(saved) + ", asked to load as " + to_json(config));
  }
  const std::string* saved_checksum = view.metadata_value(kChecksumKey);
  if (!saved_checksum) bad_weights("no \"pgmate_checksum\" metadata");
  if (!is_lower_hex(*saved_checksum, 16)) bad_weights("\"pgmate_checksum\" is not 16 lowercase hex digits");

  // Exactly the configuration's tensors, float32, of its shapes: checked before anything
  // is allocated for the network.
  const std::vector<TensorSpec> specs = network_tensors(config);
  std::unordered_map<std::string_view, const SafetensorsTensor*> by_name;
  for (const SafetensorsTensor& t : view.tensors) by_name.emplace(t.name, &t);
  std::vector<std::string_view> data;
  WeightsChecksum checksum;
  for (const TensorSpec& spec : specs) {
    const auto it = by_name.find(spec.name);
    if (it == by_name.end()) bad_weights("missing tensor \"" + spec.name + "\"");
    const SafetensorsTensor& t = *it->second;
    const std::vector<std::uint64_t> shape = unsigned_shape(spec.shape);
    if (t.dtype != kDtype) bad_weights("tensor \"" + spec.name + "\" is " + t.dtype + ", the network needs F32");
    if (t.shape != shape) {
      bad_weights("tensor \"" + spec.name + "\" has shape " + shape_string(t.shape) + ", the configuration needs " +
                  shape_string(shape));
    }
    data.push_back(view.bytes(t));
    checksum.add(spec.name, shape, data.back());
    by_name.erase(it);
  }
  if (!by_name.empty()) {
    for (const SafetensorsTensor& t : view.tensors) {  // the first in file order, for a stable message
      if (by_name.count(t.name)) bad_weights("unexpected tensor \"" + t.name + "\" (weights for another architecture?)");
    }
  }
  if (checksum.hex() != *saved_checksum) bad_weights("checksum mismatch (corrupted tensor data)");
  for (std::size_t i = 0; i < specs.size(); ++i) {
    const std::string_view d = data[i];
    for (std::size_t at = 0; at < d.size(); at += 4) {
      float v;
      std::memcpy(&v, d.data() + at, 4);
      if (!std::isfinite(v)) bad_weights("tensor \"" + specs[i].name + "\" holds NaN or infinity");
    }
  }

  // Build the network and copy the data in.
  Network network{nullptr};
  {
    std::lock_guard<std::mutex> lock(generator_mutex());
    network = Network(config);
  }
  torch::NoGradGuard no_grad;
  auto state = network_state(*network);
  if (state.size() != specs.size()) throw std::logic_error("network_tensors() does not match the network's modules");
  for (std::size_t i = 0; i < specs.size(); ++i) {
    torch::Tensor& target = state[i].second;
    if (state[i].first != specs[i].name || target.sizes().vec() != specs[i].shape ||
        target.scalar_type() != torch::kFloat32 || !target.is_contiguous() || !target.device().is_cpu() ||
        target.nbytes() != data[i].size()) {
      throw std::logic_error("network_tensors() does not match the network's tensor \"" + state[i].first + "\"");
    }
    std::memcpy(target.data_ptr(), data[i].data(), data[i].size());
  }
  network->eval();
  return network;
}

}  // namespace pgmate::worker::nn
