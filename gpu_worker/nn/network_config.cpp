#include "nn/network_config.h"

#include <cctype>
#include <stdexcept>
#include <string_view>

namespace pgmate::worker::nn {
namespace {

[[noreturn]] void fail(const std::string& what) {
  throw std::invalid_argument("network config: " + what);
}

// A minimal reader for one flat JSON object whose values are integers.
class FlatJsonReader {
 public:
  explicit FlatJsonReader(std::string_view text) : s_(text) {}

  void skip_ws() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\n' || s_[i_] == '\r')) ++i_;
  }
  bool at_end() const { return i_ >= s_.size(); }
  char peek() const { return at_end() ? '\0' : s_[i_]; }
  std::size_t pos() const { return i_; }

  void expect(char c) {
    skip_ws();
    if (peek() != c) {
      fail(std::string("expected '") + c + "' at offset " + std::to_string(i_) +
           (at_end() ? " (end of input)" : std::string(", found '") + s_[i_] + "'"));
    }
    ++i_;
  }

  std::string read_string() {
    skip_ws();
    if (peek() != '"') fail("expected a quoted key at offset " + std::to_string(i_));
    ++i_;
    std::string out;
    while (true) {
      if (at_end()) fail("unterminated string");
      char c = s_[i_++];
      if (c == '"') return out;
      if (static_cast<unsigned char>(c) < 0x20) fail("control character in string");
      if (c == '\\') {
        if (at_end()) fail("unterminated string");
        char e = s_[i_++];
        switch (e) {
          case '"': case '\\': case '/': out += e; break;
          case 'b': out += '\b'; break;
          case 'f': out += '\f'; break;
          case 'n': out += '\n'; break;
          case 'r': out += '\r'; break;
          case 't': out += '\t'; break;
          case 'u':
            // Keys are ASCII; keep the escape verbatim, it cannot match a known key.
            if (i_ + 4 > s_.size()) fail("bad \\u escape");
            out += "\\u";
            out.append(s_.substr(i_, 4));
            i_ += 4;
            break;
          default: fail(std::string("bad escape \\") + e);
        }
      } else {
        out += c;
      }
    }
  }

  // The raw text of one JSON value (number, string, literal, object, array), for messages
  // and for integer parsing.
  std::string read_value_token() {
    skip_ws();
    std::size_t start = i_;
    if (peek() == '"') {
      read_string();
    } else if (peek() == '{' || peek() == '[') {
      int depth = 0;
      bool in_string = false;
      for (; i_ < s_.size(); ++i_) {
        char c = s_[i_];
        if (in_string) {
          if (c == '\\') ++i_;
          else if (c == '"') in_string = false;
        } else if (c == '"') {
          in_string = true;
        } else if (c == '{' || c == '[') {
          ++depth;
        } else if (c == '}' || c == ']') {
          if (--depth == 0) { ++i_; break; }
        }
      }
      if (depth != 0) fail("unterminated value at offset " + std::to_string(start));
    } else {
      while (i_ < s_.size() && s_[i_] != ',' && s_[i_] != '}' && s_[i_] != ' ' && s_[i_] != '\t' &&
             s_[i_] != '\n' && s_[i_] != '\r') {
        ++i_;
      }
    }
    if (i_ == start) fail("missing value at offset " + std::to_string(start));
    return std::string(s_.substr(start, i_ - start));
  }

 private:
  std::string_view s_;
  std::size_t i_ = 0;
};

int parse_int(const std::string& key, const std::string& token) {
  std::size_t i = 0;
  bool negative = false;
  if (i < token.size() && token[i] == '-') { negative = true; ++i; }
  std::size_t digits = 0;
  long long v = 0;
  for (; i < token.size() && std::isdigit(static_cast<unsigned char>(token[i])); ++i, ++digits) {
    if (digits >= 9) fail("\"" + key + "\": value " + token + " out of range");
    v = v * 10 + (token[i] - '0');
  }
  if (digits == 0 || i != token.size() || (digits > 1 && token[negative ? 1 : 0] == '0')) {
    fail("\"" + key + "\": expected an integer, got " + token);
  }
  return static_cast<int>(negative ? -v : v);
}

void check_range(const char* key, int v, int lo, int hi) {
  if (v < lo || v > hi) {
    fail(std::string("\"") + key + "\": " + std::to_string(v) + " is out of range " + std::to_string(lo) +
         ".." + std::to_string(hi));
  }
}

}  // namespace

void validate_network_config(const NetworkConfig& c) {
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

NetworkConfig parse_network_config(const std::string& json) {
  NetworkConfig c;
  FlatJsonReader r(json);
  r.skip_ws();
  if (r.at_end()) return c;  // "" means the defaults
  r.expect('{');
  r.skip_ws();
  unsigned seen = 0;
  c.attention_blocks = -1;  // not given: min(2, blocks) below
  if (r.peek() == '}') {
    r.expect('}');
  } else {
    while (true) {
      std::string key = r.read_string();
      r.expect(':');
      std::string token = r.read_value_token();
      int* field = nullptr;
      unsigned bit = 0;
      if (key == "filters") { field = &c.filters; bit = 1; }
      else if (key == "blocks") { field = &c.blocks; bit = 2; }
      else if (key == "attention_blocks") { field = &c.attention_blocks; bit = 4; }
      else if (key == "heads") { field = &c.heads; bit = 8; }
      else if (key == "se_ratio") { field = &c.se_ratio; bit = 16; }
      else {
        fail("unknown key \"" + key +
             "\" (known: filters, blocks, attention_blocks, heads, se_ratio)");
      }
      if (seen & bit) fail("repeated key \"" + key + "\"");
      seen |= bit;
      *field = parse_int(key, token);
      r.skip_ws();
      if (r.peek() == ',') { r.expect(','); continue; }
      r.expect('}');
      break;
    }
  }
  r.skip_ws();
  if (!r.at_end()) fail("trailing characters at offset " + std::to_string(r.pos()));
  if (!(seen & 4)) c.attention_blocks = c.blocks < 2 ? c.blocks : 2;
  validate_network_config(c);
  return c;
}

std::string to_json(const NetworkConfig& c) {
  return "{\"filters\":" + std::to_string(c.filters) + ",\"blocks\":" + std::to_string(c.blocks) +
         ",\"attention_blocks\":" + std::to_string(c.attention_blocks) + ",\"heads\":" + std::to_string(c.heads) +
         ",\"se_ratio\":" + std::to_string(c.se_ratio) + "}";
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
  conv("policy_conv", f, kPolicyChannels, 1);
  norm("policy_norm", kPolicyChannels);
  linear("policy_fc", kPolicyChannels * kBoardSquares, kPolicySize);
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
