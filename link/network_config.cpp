#include "link/network_config.h"

#include <algorithm>
#include <stdexcept>
#include <string_view>

#include "common/flat_json.h"

namespace pgmate::worker::nn {
namespace {

[[noreturn]] void fail(const std::string& what) {
  throw std::invalid_argument("network config: " + what);
}

void check_range(const char* key, int v, int lo, int hi) {
  if (v < lo || v > hi) {
    fail(std::string("\"") + key + "\": " + std::to_string(v) + " is out of range " + std::to_string(lo) +
         ".." + std::to_string(hi));
  }
}

}  // namespace

void validate_network_config(const NetworkConfig& c) {
  if (c.policy_head != PolicyHead::kFc && c.policy_head != PolicyHead::kConv) fail("\"policy_head\": unknown head");
  check_range("filters", c.filters, 8, 1024);
  if (c.filters % kNormGroups != 0) {
    fail("\"filters\": " + std::to_string(c.filters) + " is not a multiple of " + std::to_string(kNormGroups));
  }
  check_range("blocks", c.blocks, 0, 64);
  check_range("attention_blocks", c.attention_blocks, 0, c.blocks);
  check_range("heads", c.heads, 1, 64);
  if (c.filters % c.heads != 0) {
    fail("\"heads\": " + std::to_string(c.heads) + " does not divide filters " + std::to_string(c.filters));
  }
  check_range("se_ratio", c.se_ratio, 1, c.filters);
  if (c.filters % c.se_ratio != 0) {
    fail("\"se_ratio\": " + std::to_string(c.se_ratio) + " does not divide filters " + std::to_string(c.filters));
  }
}

const char* policy_head_name(PolicyHead head) { return head == PolicyHead::kConv ? "conv" : "fc"; }

const std::vector<NetworkPreset>& network_presets() {
  static const std::vector<NetworkPreset> presets = [] {
    auto make = [](int filters, int blocks, int attention_blocks, PolicyHead head) {
      NetworkConfig c;
      c.filters = filters;
      c.blocks = blocks;
      c.attention_blocks = attention_blocks;
      c.policy_head = head;
      return c;
    };
    // tiny has no attention: on 16 filters its two attention blocks took 40% of a bf16
    // training step (75% in fp32) and lost to the network without them at equal training
    // time (bench/RESULTS.md, "Configurations for strength per CPU-second"). A network row
    // stores its whole configuration, never a preset's name, so redefining a preset leaves
    // stored networks as they are.
    return std::vector<NetworkPreset>{{"tiny", make(16, 2, 0, PolicyHead::kConv)},
                                      {"small", make(64, 6, 2, PolicyHead::kConv)},
                                      {"seed", make(128, 8, 2, PolicyHead::kFc)}};
  }();
  return presets;
}

namespace {

const NetworkConfig& preset_config(const std::string& name) {
  std::string known;
  for (const NetworkPreset& p : network_presets()) {
    if (name == p.name) return p.config;
    known += std::string(known.empty() ? "" : ", ") + p.name;
  }
  fail("unknown preset \"" + name + "\" (known: " + known + ")");
}

bool is_preset_name(const std::string& text) {
  const auto begin = text.find_first_not_of(" \t\r\n");
  return begin != std::string::npos && ((text[begin] >= 'a' && text[begin] <= 'z') || (text[begin] >= 'A' && text[begin] <= 'Z'));
}

std::string trimmed(const std::string& text) {
  const auto begin = text.find_first_not_of(" \t\r\n");
  const auto end = text.find_last_not_of(" \t\r\n");
  return text.substr(begin, end - begin + 1);
}

}  // namespace

NetworkConfig parse_network_config(const std::string& json) {
  if (is_preset_name(json)) return preset_config(trimmed(json));
  const std::vector<FlatJsonField> fields = parse_flat_json(json, "network config");
  NetworkConfig c;
  // The preset first, wherever its key stands, so that every other key overrides it.
  for (const FlatJsonField& f : fields) {
    if (f.key != "preset") continue;
    if (!f.quoted) fail("\"preset\": expected a preset name string, got " + f.value);
    c = preset_config(f.value);
  }
  bool attention_given = false;
  for (const FlatJsonField& f : fields) {
    if (f.key == "preset") continue;
    if (f.key == "policy_head") {
      if (f.quoted && f.value == "fc") c.policy_head = PolicyHead::kFc;
      else if (f.quoted && f.value == "conv") c.policy_head = PolicyHead::kConv;
      else fail("\"policy_head\": expected \"fc\" or \"conv\", got " + (f.quoted ? "\"" + f.value + "\"" : f.value));
      continue;
    }
    int* field = nullptr;
    if (f.key == "filters") field = &c.filters;
    else if (f.key == "blocks") field = &c.blocks;
    else if (f.key == "attention_blocks") field = &c.attention_blocks, attention_given = true;
    else if (f.key == "heads") field = &c.heads;
    else if (f.key == "se_ratio") field = &c.se_ratio;
    else {
      fail("unknown key \"" + f.key +
           "\" (known: preset, filters, blocks, attention_blocks, heads, se_ratio, policy_head)");
    }
    *field = int(flat_json_int(f, -1000000000, 1000000000, "network config"));
  }
  // The preset's (or the default's) attention blocks, at most one per block.
  if (!attention_given) c.attention_blocks = std::min(c.attention_blocks, c.blocks);
  validate_network_config(c);
  return c;
}

std::string to_json(const NetworkConfig& c) {
  return "{\"filters\":" + std::to_string(c.filters) + ",\"blocks\":" + std::to_string(c.blocks) +
         ",\"attention_blocks\":" + std::to_string(c.attention_blocks) + ",\"heads\":" + std::to_string(c.heads) +
         ",\"se_ratio\":" + std::to_string(c.se_ratio) +
         (c.policy_head == PolicyHead::kConv ? ",\"policy_head\":\"conv\"" : "") + "}";
}

std::vector<TensorSpec> network_tensors(const NetworkConfig& c) {
  validate_network_config(c);
  const std::int64_t f = c.filters;
  std::vector<TensorSpec> out;
  auto add = [&out](std::string name, std::vector<std::int64_t> shape) {
    out.push_back({std::move(name), std::move(shape)});
  };
  auto conv = [&](const std::string& name, std::int64_t in, std::int64_t o, std::int64_t k) {
    add(name + ".weight", {o, in, k, k});  // no bias
  };
  auto norm = [&](const std::string& name, std::int64_t ch) {  // GroupNorm / LayerNorm affine
    add(name + ".weight", {ch});
    add(name + ".bias", {ch});
  };
  auto linear = [&](const std::string& name, std::int64_t in, std::int64_t o) {
    add(name + ".weight", {o, in});
    add(name + ".bias", {o});
  };
  conv("stem_conv", kInputPlanes, f, 3);
  norm("stem_norm", f);
  for (int b = 0; b < c.blocks; ++b) {
    const std::string p = "blocks." + std::to_string(b) + ".";
    conv(p + "conv1", f, f, 3);
    norm(p + "norm1", f);
    conv(p + "conv2", f, f, 3);
    norm(p + "norm2", f);
    linear(p + "se.fc1", f, f / c.se_ratio);
    linear(p + "se.fc2", f / c.se_ratio, f);
    if (b >= c.blocks - c.attention_blocks) {
      add(p + "attention.position", {1, kBoardSquares, f});
      linear(p + "attention.qkv", f, 3 * f);
      linear(p + "attention.out", f, f);
      norm(p + "attention.norm", f);
    }
  }
  if (c.policy_head == PolicyHead::kFc) {
    conv("policy_conv", f, kPolicyChannels, 1);
    norm("policy_norm", kPolicyChannels);
    linear("policy_fc", kPolicyChannels * kBoardSquares, kPolicySize);
  } else {
    conv("policy_conv", f, f, 1);
    norm("policy_norm", f);
    add("policy_out.weight", {kPolicyMoveTypes, f, 1, 1});
    add("policy_out.bias", {kPolicyMoveTypes});
  }
  conv("value_conv", f, kValueChannels, 1);
  norm("value_norm", kValueChannels);
  linear("value_fc1", kValueChannels * kBoardSquares, kValueHidden);
  linear("value_fc2", kValueHidden, kWdlSize);
  return out;
}

std::int64_t parameter_count(const NetworkConfig& c) {
  std::int64_t n = 0;
  for (const TensorSpec& t : network_tensors(c)) {
    std::int64_t numel = 1;
    for (std::int64_t d : t.shape) numel *= d;
    n += numel;
  }
  return n;
}

}  // namespace pgmate::worker::nn
