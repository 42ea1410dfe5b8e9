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
//   policy     conv1x1 F->32, GN(8), GELU, flatten 2048, linear -> 4672 logits
//              (slot = from * 73 + type, core/nn/policy.h)
//   wdl        conv1x1 F->4, GN(1), GELU, flatten 256, linear 256, GELU, linear 3 logits
//
// Convolutions carry no bias (a GroupNorm follows each). Parameters take PyTorch's default
// initialisation (plus N(0, 0.02) positional embeddings), drawn from LibTorch's global
// generator: init_network_bytes() seeds it.
//
// Weights travel as the bytes of a torch::serialize::OutputArchive (the module tree as
// torch::save writes it) plus three extra entries checked on load: "pgmate_format" (1),
// "pgmate_config" (to_json of the configuration) and "pgmate_checksum" (a 64-bit hash of
// every tensor's name, shape and bytes: the archive format does not detect corrupted
// tensor data). A plain torch::save archive (no such entries) loads when every tensor
// matches by name, shape and dtype.
#pragma once

#include <cstdint>
#include <string>

#include <torch/nn.h>
#include <torch/types.h>

#include "nn/network_config.h"

namespace pgmate::worker::nn {

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

 private:
  NetworkConfig config_;
  torch::nn::Conv2d stem_conv_{nullptr};
  torch::nn::GroupNorm stem_norm_{nullptr};
  torch::nn::ModuleList blocks_{nullptr};
  torch::nn::Conv2d policy_conv_{nullptr};
  torch::nn::GroupNorm policy_norm_{nullptr};
  torch::nn::Linear policy_fc_{nullptr};
  torch::nn::Conv2d value_conv_{nullptr};
  torch::nn::GroupNorm value_norm_{nullptr};
  torch::nn::Linear value_fc1_{nullptr}, value_fc2_{nullptr};
};
TORCH_MODULE(Network);

// Sum of numel() over the module's parameters.
std::int64_t count_parameters(const torch::nn::Module& module);

// The serialized weights of `network` (parameters and buffers, on any device) with the
// pgmate header entries; deterministic for equal tensors.
std::string save_network(const Network& network);

// Fresh weights: seeds LibTorch's global generator with `seed` (under a process-wide lock),
// builds the network on the CPU and serializes it. Same seed and config -> same bytes.
std::string init_network_bytes(const NetworkConfig& config, std::uint64_t seed);

// Builds the network for `config` on the CPU and loads `bytes` into it. Throws
// std::invalid_argument when the bytes are not an archive, were saved for another
// configuration, miss or add a tensor, have a tensor of the wrong shape or type, fail the
// checksum, or hold a non-finite value. Returns the network in eval mode.
Network load_network(const NetworkConfig& config, const std::string& bytes);

}  // namespace pgmate::worker::nn
