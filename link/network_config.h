// The network's configuration: the hyper-parameters of the "NeuralMatePlay" seed
// architecture (see network.h), read from a small flat JSON object or a preset's name.
//
//   {"filters": 128, "blocks": 8, "attention_blocks": 2, "heads": 4, "se_ratio": 8,
//    "policy_head": "fc"}
//
// Every key is optional (defaults above, except that attention_blocks defaults to
// min(2, blocks), so {"blocks": 1} is valid); "" and "{}" give the defaults. Values are JSON
// integers, except policy_head, a string. Unknown keys, repeated keys, values of another
// type and out-of-range values throw std::invalid_argument naming the key. Constraints:
//   filters           8..1024, a multiple of 8 (GroupNorm uses 8 groups)
//   blocks            0..64 residual blocks
//   attention_blocks  0..blocks: the last attention_blocks blocks carry self-attention
//   heads             1..64 attention heads, filters % heads == 0
//   se_ratio          1..filters, filters % se_ratio == 0 (SE hidden = filters / se_ratio)
//   policy_head       "fc": conv1x1 -> 32, flatten, linear 2048 -> 4672 (the seed's);
//                     "conv": conv1x1 -> filters, conv1x1 -> 73 planes, one logit per
//                     (from-square, move type), AlphaZero's layout (network.h)
//
// Presets (network_presets()): a bare name ("small") is accepted wherever the JSON is, and
// {"preset": "small", "blocks": 4} starts from the preset and overrides the keys given:
//   tiny    16 filters, 2 blocks, no attention, conv head   (tests, smoke runs)
//   small   64 filters, 6 blocks, 2 attention, conv head    (CPU training)
//   seed    128 filters, 8 blocks, 2 attention, fc head     (the defaults)
// Unless attention_blocks is given, it is the preset's (or the default's 2), at most blocks.
//
// No LibTorch here: the server can validate and print configurations without it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace pgmate::worker::nn {

inline constexpr int kInputPlanes = 72;     // encoded planes per position (core/nn/encoding.h)
inline constexpr int kBoardSquares = 64;    // 8 x 8
inline constexpr int kPolicySize = 4672;    // 64 from-squares x 73 move types (core/nn/policy.h)
inline constexpr int kWdlSize = 3;          // win, draw, loss
inline constexpr int kNormGroups = 8;       // GroupNorm groups in the tower and policy head
inline constexpr int kPolicyChannels = 32;  // policy head 1x1 conv width
inline constexpr int kValueChannels = 4;    // WDL head 1x1 conv width
inline constexpr int kValueHidden = 256;    // WDL head hidden layer
inline constexpr int kPolicyMoveTypes = 73; // conv policy head planes (core/nn/policy.h)

static_assert(kPolicyMoveTypes * kBoardSquares == kPolicySize);

enum class PolicyHead { kFc, kConv };

struct NetworkConfig {
  int filters = 128;
  int blocks = 8;
  int attention_blocks = 2;
  int heads = 4;
  int se_ratio = 8;
  PolicyHead policy_head = PolicyHead::kFc;

  bool operator==(const NetworkConfig&) const = default;
};

// Parses and validates; throws std::invalid_argument naming the offending key or position.
NetworkConfig parse_network_config(const std::string& json);

// Throws std::invalid_argument when a value is out of range (parse_network_config's rules).
void validate_network_config(const NetworkConfig& config);

// {"filters":128,"blocks":8,"attention_blocks":2,"heads":4,"se_ratio":8}: every key, in
// this order, then "policy_head":"conv" for the conv head only, so that an fc-head
// configuration (and the weights saved before the conv head existed) keeps its exact text;
// parse_network_config(to_json(c)) == c.
std::string to_json(const NetworkConfig& config);

// "fc" or "conv".
const char* policy_head_name(PolicyHead head);

struct NetworkPreset {
  const char* name;
  NetworkConfig config;
};

// The named configurations (tiny, small, seed), in that order.
const std::vector<NetworkPreset>& network_presets();

// One parameter of the network: its dotted module name and shape.
struct TensorSpec {
  std::string name;                // e.g. "blocks.0.conv1.weight"
  std::vector<std::int64_t> shape;
};

// Every parameter and buffer of the network built from this configuration, in the order of
// NetworkImpl::named_parameters() then named_buffers() (the network has no buffers; its
// dropout layers hold no tensors). No
// LibTorch needed: load_network checks weights against this before building anything.
std::vector<TensorSpec> network_tensors(const NetworkConfig& config);

// Trainable parameters of the network built from this configuration (no LibTorch needed;
// equals the sum of numel() over NetworkImpl::parameters()).
std::int64_t parameter_count(const NetworkConfig& config);

}  // namespace pgmate::worker::nn
