// The "NeuralMatePlay" seed network in LibTorch: an SE-ResNet tower with spatial
// self-attention in its last blocks, a 4672-way policy head and a win/draw/loss head.
//
//   input      [N, 72, 8, 8] float planes (core/nn/encoding.h)
//   stem       conv3x3 72->F, GroupNorm(8), GELU
//   blocks     x B: conv3x3-GN-GELU-conv3x3-GN, squeeze-excitation (mean over squares,
//              FC F->F/r, GELU, FC F/r->F, sigmoid, channel scale), then in the last A
//              blocks spatial self-attention over the 64 squares (learned positional
//              embedding added to queries/keys/values' input, H heads, output projection,
//              residual + LayerNorm), then the block's residual add and GELU
//   policy     "fc" head: conv1x1 F->32, GN(8), GELU, dropout, flatten 2048, linear -> 4672
//              logits; "conv" head: conv1x1 F->F, GN(8), GELU, dropout, conv1x1 F->73 with
//              bias, whose output [N, 73, 8, 8] is read square-major ([N, 8, 8, 73]) so that
//              logit (square, plane) is slot square * 73 + plane -- slot = from * 73 + type,
//              core/nn/policy.h, with squares indexed rank * 8 + file as the input planes
//   wdl        conv1x1 F->4, GN(1), GELU, flatten 256, linear 256, GELU, dropout, linear 3
//              logits
//
// Dropout (kHeadDropout = 0.3 unless set_head_dropout changes it) acts only in train()
// mode, before each head's last layer; it holds no tensors, so the weights do not change.
// It draws from a generator given by set_dropout_generator (the trainer seeds one per step
// so that a resumed run repeats the masks), else from LibTorch's global generator.
//
// Convolutions carry no bias (a GroupNorm follows each). Parameters take PyTorch's default
// initialisation (plus N(0, 0.02) positional embeddings), drawn from LibTorch's global
// generator: init_network_bytes() seeds it.
//
// Weights are data, never code: they travel as a safetensors file (nn/safetensors.h),
//   tensors    every parameter and buffer under its dotted module name
//              ("stem_conv.weight", "blocks.0.se.fc1.bias", ...), dtype F32, little-endian,
//              laid out contiguously in module order (network_tensors() in network_config.h)
//   metadata   "pgmate_format": "2"
//              "pgmate_config": to_json() of the configuration
//              "pgmate_checksum": 16 lowercase hex digits, a 64-bit hash of every tensor's
//              name, shape and bytes, in module order
// Equal tensors give equal bytes. Loading parses with the strict reader and copies the data
// into a freshly built network: no LibTorch deserializer ever sees the bytes. pgmate 0.3
// stored LibTorch archives (torch::serialize::OutputArchive, a zip holding pickles and
// TorchScript, which torch::jit::load executes while reading); load_network refuses them
// unread, by their zip signature.
#pragma once

#include <cstdint>
#include <string>

#include <torch/nn.h>
#include <torch/types.h>

#include "link/network_config.h"

namespace pgmate::worker::nn {

inline constexpr double kHeadDropout = 0.3;

// Inverted dropout (scaled by 1 / (1 - p) when training, identity in eval mode) with an
// optional generator of its own.
class HeadDropoutImpl : public torch::nn::Module {
 public:
  explicit HeadDropoutImpl(double p) : p_(p) {}
  torch::Tensor forward(const torch::Tensor& x);
  void set_p(double p) { p_ = p; }
  double p() const { return p_; }
  void set_generator(c10::optional<at::Generator> generator) { generator_ = std::move(generator); }

 private:
  double p_;
  c10::optional<at::Generator> generator_;
};
TORCH_MODULE(HeadDropout);

class SqueezeExcitationImpl : public torch::nn::Module {
 public:
  SqueezeExcitationImpl(int channels, int ratio);
  torch::Tensor forward(const torch::Tensor& x);

 private:
  torch::nn::Linear fc1_{nullptr}, fc2_{nullptr};
};
TORCH_MODULE(SqueezeExcitation);

class SpatialAttentionImpl : public torch::nn::Module {
 public:
  SpatialAttentionImpl(int channels, int heads);
  torch::Tensor forward(const torch::Tensor& x);  // [N, C, 8, 8] -> [N, C, 8, 8]

 private:
  int channels_, heads_;
  torch::Tensor position_;  // [1, 64, C]
  torch::nn::Linear qkv_{nullptr}, out_{nullptr};
  torch::nn::LayerNorm norm_{nullptr};
};
TORCH_MODULE(SpatialAttention);

class ResidualBlockImpl : public torch::nn::Module {
 public:
  ResidualBlockImpl(int channels, int se_ratio, bool attention, int heads);
  torch::Tensor forward(const torch::Tensor& x);

 private:
  torch::nn::Conv2d conv1_{nullptr}, conv2_{nullptr};
  torch::nn::GroupNorm norm1_{nullptr}, norm2_{nullptr};
  SqueezeExcitation se_{nullptr};
  SpatialAttention attention_{nullptr};  // null when the block has none
};
TORCH_MODULE(ResidualBlock);

struct NetworkOutput {
  torch::Tensor policy;  // [N, 4672] logits
  torch::Tensor wdl;     // [N, 3] logits (win, draw, loss)
};

class NetworkImpl : public torch::nn::Module {
 public:
  explicit NetworkImpl(const NetworkConfig& config);
  NetworkOutput forward(const torch::Tensor& planes);  // [N, 72, 8, 8]
  const NetworkConfig& config() const { return config_; }
  // 0 <= p < 1; applies to both heads.
  void set_head_dropout(double p);
  // The generator both dropout layers draw from (on the network's device); nullopt: the
  // global one.
  void set_dropout_generator(const c10::optional<at::Generator>& generator);

 private:
  NetworkConfig config_;
  torch::nn::Conv2d stem_conv_{nullptr};
  torch::nn::GroupNorm stem_norm_{nullptr};
  torch::nn::ModuleList blocks_{nullptr};
  torch::nn::Conv2d policy_conv_{nullptr};
  torch::nn::GroupNorm policy_norm_{nullptr};
  torch::nn::Linear policy_fc_{nullptr};  // fc head
  torch::nn::Conv2d policy_out_{nullptr};  // conv head
  HeadDropout policy_dropout_{nullptr}, value_dropout_{nullptr};
  torch::nn::Conv2d value_conv_{nullptr};
  torch::nn::GroupNorm value_norm_{nullptr};
  torch::nn::Linear value_fc1_{nullptr}, value_fc2_{nullptr};
};
TORCH_MODULE(Network);

// The weights file's metadata keys (above).
inline constexpr const char* kWeightsFormatKey = "pgmate_format";
inline constexpr const char* kWeightsConfigKey = "pgmate_config";
inline constexpr const char* kWeightsChecksumKey = "pgmate_checksum";

// Sum of numel() over the module's parameters.
std::int64_t count_parameters(const torch::nn::Module& module);

// The largest weights init_network_bytes makes by default: the protocol's default
// max_large_payload (the LOAD_NETWORK and INIT_WEIGHTS_REPLY frames).
inline constexpr std::uint64_t kMaxWeightBytes = std::uint64_t{64} << 20;

// The serialized weights of `network` (parameters and buffers, on any device): the
// safetensors file described above; deterministic for equal tensors.
std::string save_network(const Network& network);

// The exact size of save_network's output for a network of this configuration, computed
// without building it (no LibTorch work).
std::uint64_t serialized_weights_size(const NetworkConfig& config);

// Fresh weights: seeds LibTorch's global generator with `seed` (under a process-wide lock),
// builds the network on the CPU and serializes it. Same seed and config -> same bytes.
// Throws std::invalid_argument, before building anything, when the weights would exceed
// max_bytes (the message names the parameter count, the size and the limit).
std::string init_network_bytes(const NetworkConfig& config, std::uint64_t seed,
                               std::uint64_t max_bytes = kMaxWeightBytes);

// Checks `bytes` against `config` and loads them into a network built on the CPU. Throws
// std::invalid_argument when the bytes are a LibTorch archive (refused unread), are not
// strict safetensors, lack pgmate_format "2", were saved for another configuration, miss or
// add a tensor, have a tensor of another dtype than F32 or another shape, fail the checksum,
// or hold a non-finite value; all of this is checked before the network is built. Returns
// the network in eval mode.
Network load_network(const NetworkConfig& config, const std::string& bytes);

}  // namespace pgmate::worker::nn
