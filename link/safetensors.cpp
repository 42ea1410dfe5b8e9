#include "link/safetensors.h"

#include <algorithm>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <unordered_set>

namespace pgmate::worker::nn {
namespace {

[[noreturn]] void fail(const std::string& what) { throw std::invalid_argument("safetensors: " + what); }

// A name or key for a message: quoted, control and non-ASCII bytes escaped, long ones cut.
std::string quoted(std::string_view s) {
  constexpr std::size_t kMax = 80;
  std::string out = "\"";
  for (std::size_t i = 0; i < s.size() && i < kMax; ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20 || c >= 0x7f) {
      static const char* const hex = "0123456789abcdef";
      out += "\\x";
      out += hex[c >> 4];
      out += hex[c & 15];
    } else {
      out += static_cast<char>(c);
    }
  }
  if (s.size() > kMax) out += "...";
  return out + "\"";
}

// Offset of the first byte that is not part of well-formed UTF-8 (no overlong forms, no
// surrogates, nothing above U+10FFFF), or npos.
std::size_t invalid_utf8_at(std::string_view s) {
  std::size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      ++i;
      continue;
    }
    std::size_t len;
    unsigned lo = 0x80, hi = 0xbf;  // range of the second byte
    if (c >= 0xc2 && c <= 0xdf) {
      len = 2;
    } else if (c >= 0xe0 && c <= 0xef) {
      len = 3;
      if (c == 0xe0) lo = 0xa0;        // overlong
      if (c == 0xed) hi = 0x9f;        // surrogates
    } else if (c >= 0xf0 && c <= 0xf4) {
      len = 4;
      if (c == 0xf0) lo = 0x90;        // overlong
      if (c == 0xf4) hi = 0x8f;        // above U+10FFFF
    } else {
      return i;
    }
    if (i + len > s.size()) return i;
    const auto c1 = static_cast<unsigned char>(s[i + 1]);
    if (c1 < lo || c1 > hi) return i;
    for (std::size_t k = 2; k < len; ++k) {
      const auto ck = static_cast<unsigned char>(s[i + k]);
      if (ck < 0x80 || ck > 0xbf) return i;
    }
    i += len;
  }
  return std::string_view::npos;
}

void append_utf8(std::string& out, std::uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xc0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xe0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  } else {
    out += static_cast<char>(0xf0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3f));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  }
}

// A reader for exactly the JSON of a safetensors header: objects, strings, arrays of
// non-negative integers. No recursion: the nesting is fixed.
class HeaderReader {
 public:
  explicit HeaderReader(std::string_view text) : s_(text) {}

  bool at_end() const { return i_ >= s_.size(); }
  char peek() const { return at_end() ? '\0' : s_[i_]; }
  std::size_t pos() const { return i_; }

  void skip_ws() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\n' || s_[i_] == '\r')) ++i_;
  }

  [[noreturn]] void fail_here(const std::string& context, const std::string& what) const {
    std::string where = "header offset " + std::to_string(i_);
    fail(context.empty() ? what + " at " + where : context + ": " + what + " at " + where);
  }

  std::string found() const {
    if (at_end()) return "the end of the header";
    const char c = s_[i_];
    if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f) return "a non-printable byte";
    return std::string("'") + c + "'";
  }

  void expect(char c, const std::string& context) {
    skip_ws();
    if (peek() != c) fail_here(context, std::string("expected '") + c + "', found " + found());
    ++i_;
  }

  // After '{' or a member: true when another member follows (consumes the ','), false at
  // the closing '}' (consumed). `first`: right after '{'.
  bool next_member(bool first, const std::string& context) {
    skip_ws();
    if (peek() == '}') {
      ++i_;
      return false;
    }
    if (!first) {
      if (peek() != ',') fail_here(context, "expected ',' or '}', found " + found());
      ++i_;
      skip_ws();
    }
    return true;
  }

  std::string read_string(const std::string& context) {
    skip_ws();
    if (peek() != '"') fail_here(context, "expected a string, found " + found());
    ++i_;
    std::string out;
    while (true) {
      if (at_end()) fail_here(context, "unterminated string");
      const char c = s_[i_];
      if (c == '"') {
        ++i_;
        return out;
      }
      if (static_cast<unsigned char>(c) < 0x20) fail_here(context, "control character in a string");
      if (c != '\\') {
        out += c;  // the header was checked to be UTF-8 as a whole
        ++i_;
        continue;
      }
      ++i_;
      if (at_end()) fail_here(context, "unterminated string");
      const char e = s_[i_++];
      switch (e) {
        case '"': case '\\': case '/': out += e; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        case 'u': {
          std::uint32_t cp = read_hex4(context);
          if (cp >= 0xdc00 && cp <= 0xdfff) fail_here(context, "lone low surrogate in a \\u escape");
          if (cp >= 0xd800 && cp <= 0xdbff) {
            if (i_ + 2 > s_.size() || s_[i_] != '\\' || s_[i_ + 1] != 'u') {
              fail_here(context, "high surrogate not followed by a \\u low surrogate");
            }
            i_ += 2;
            const std::uint32_t low = read_hex4(context);
            if (low < 0xdc00 || low > 0xdfff) fail_here(context, "high surrogate not followed by a low surrogate");
            cp = 0x10000 + ((cp - 0xd800) << 10) + (low - 0xdc00);
          }
          append_utf8(out, cp);
          break;
        }
        default:
          --i_;
          fail_here(context, "bad escape \\" + std::string(1, e));
      }
    }
  }

  // A JSON integer that fits in 64 unsigned bits.
  std::uint64_t read_uint(const std::string& context) {
    skip_ws();
    if (peek() == '-') fail_here(context, "negative number");
    if (peek() < '0' || peek() > '9') fail_here(context, "expected a non-negative integer, found " + found());
    const std::size_t start = i_;
    std::uint64_t v = 0;
    while (peek() >= '0' && peek() <= '9') {
      const auto d = static_cast<std::uint64_t>(peek() - '0');
      if (v > (std::numeric_limits<std::uint64_t>::max() - d) / 10) {
        fail_here(context, "number too large for 64 bits");
      }
      v = v * 10 + d;
      ++i_;
    }
    if (i_ - start > 1 && s_[start] == '0') {
      i_ = start;
      fail_here(context, "number with a leading zero");
    }
    if (peek() == '.' || peek() == 'e' || peek() == 'E') fail_here(context, "not an integer");
    return v;
  }

  std::vector<std::uint64_t> read_uint_array(const std::string& context) {
    expect('[', context);
    std::vector<std::uint64_t> out;
    skip_ws();
    if (peek() == ']') {
      ++i_;
      return out;
    }
    while (true) {
      out.push_back(read_uint(context));
      skip_ws();
      if (peek() == ']') {
        ++i_;
        return out;
      }
      if (peek() != ',') fail_here(context, "expected ',' or ']', found " + found());
      ++i_;
    }
  }

 private:
  std::uint32_t read_hex4(const std::string& context) {
    std::uint32_t v = 0;
    for (int k = 0; k < 4; ++k) {
      if (at_end()) fail_here(context, "bad \\u escape");
      const char c = s_[i_];
      v <<= 4;
      if (c >= '0' && c <= '9') v |= static_cast<std::uint32_t>(c - '0');
      else if (c >= 'a' && c <= 'f') v |= static_cast<std::uint32_t>(c - 'a' + 10);
      else if (c >= 'A' && c <= 'F') v |= static_cast<std::uint32_t>(c - 'A' + 10);
      else fail_here(context, "bad \\u escape");
      ++i_;
    }
    return v;
  }

  std::string_view s_;
  std::size_t i_ = 0;
};

std::string tensor_context(const std::string& name) { return "tensor " + quoted(name); }

SafetensorsTensor read_tensor(HeaderReader& r, const std::string& name) {
  const std::string context = tensor_context(name);
  SafetensorsTensor t;
  t.name = name;
  bool have_dtype = false, have_shape = false, have_offsets = false;
  std::vector<std::uint64_t> offsets;
  r.expect('{', context);
  for (bool first = true; r.next_member(first, context); first = false) {
    const std::string field = r.read_string(context);
    const std::string field_context = context + " field " + quoted(field);
    r.expect(':', field_context);
    bool* seen = nullptr;
    if (field == "dtype") {
      seen = &have_dtype;
      if (!*seen) t.dtype = r.read_string(field_context);
    } else if (field == "shape") {
      seen = &have_shape;
      if (!*seen) t.shape = r.read_uint_array(field_context);
    } else if (field == "data_offsets") {
      seen = &have_offsets;
      if (!*seen) offsets = r.read_uint_array(field_context);
    } else {
      fail(context + ": unknown field " + quoted(field) + " (expected dtype, shape, data_offsets)");
    }
    if (*seen) fail(field_context + ": repeated");
    *seen = true;
  }
  if (!have_dtype) fail(context + ": no \"dtype\"");
  if (!have_shape) fail(context + ": no \"shape\"");
  if (!have_offsets) fail(context + ": no \"data_offsets\"");
  if (offsets.size() != 2) {
    fail(context + " field \"data_offsets\": " + std::to_string(offsets.size()) + " numbers, expected [begin, end]");
  }
  t.begin = offsets[0];
  t.end = offsets[1];
  return t;
}

// product(shape) * dtype size, or a failure naming the tensor.
std::uint64_t tensor_byte_size(const std::string& name, std::string_view dtype,
                               const std::vector<std::uint64_t>& shape) {
  const std::size_t element = safetensors_dtype_size(dtype);
  if (element == 0) fail(tensor_context(name) + ": unknown dtype " + quoted(dtype));
  std::uint64_t n = element;
  for (std::uint64_t d : shape) {  // in order, like the reference: [2^40, 2^40, 0] overflows
    if (d != 0 && n > std::numeric_limits<std::uint64_t>::max() / d) {
      fail(tensor_context(name) + " field \"shape\": the byte size overflows 64 bits");
    }
    n *= d;
  }
  return n;
}

void check_utf8(std::string_view s, const std::string& what) {
  if (invalid_utf8_at(s) != std::string_view::npos) fail(what + " is not valid UTF-8");
}

void write_json_string(std::string& out, std::string_view s) {
  static const char* const hex = "0123456789abcdef";
  out += '"';
  for (const char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (u < 0x20) {
      out += "\\u00";
      out += hex[u >> 4];
      out += hex[u & 15];
    } else {
      out += c;
    }
  }
  out += '"';
}

void write_uint_array(std::string& out, const std::vector<std::uint64_t>& values) {
  out += '[';
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (i) out += ',';
    out += std::to_string(values[i]);
  }
  out += ']';
}

// The padded JSON header, and each tensor's byte size.
std::string header_json(const SafetensorsMetadata& metadata, const std::vector<SafetensorsInput>& tensors,
                        std::vector<std::uint64_t>* sizes) {
  std::string json = "{";
  if (!metadata.empty()) {
    std::unordered_set<std::string_view> keys;
    json += "\"__metadata__\":{";
    for (std::size_t i = 0; i < metadata.size(); ++i) {
      const auto& [key, value] = metadata[i];
      check_utf8(key, "metadata key " + quoted(key));
      check_utf8(value, "metadata value of " + quoted(key));
      if (!keys.insert(key).second) fail("repeated metadata key " + quoted(key));
      if (i) json += ',';
      write_json_string(json, key);
      json += ':';
      write_json_string(json, value);
    }
    json += '}';
  }
  std::unordered_set<std::string_view> names;
  std::uint64_t offset = 0;
  for (const SafetensorsInput& t : tensors) {
    check_utf8(t.name, "tensor name " + quoted(t.name));
    if (t.name == "__metadata__") fail("\"__metadata__\" is not a tensor name");
    if (!names.insert(t.name).second) fail("repeated tensor name " + quoted(t.name));
    const std::uint64_t size = tensor_byte_size(t.name, t.dtype, t.shape);
    if (offset > std::numeric_limits<std::uint64_t>::max() - size) fail("total data size overflows 64 bits");
    if (sizes) sizes->push_back(size);
    if (json.size() > 1) json += ',';
    write_json_string(json, t.name);
    json += ":{\"dtype\":";
    write_json_string(json, t.dtype);
    json += ",\"shape\":";
    write_uint_array(json, t.shape);
    json += ",\"data_offsets\":";
    write_uint_array(json, {offset, offset + size});
    json += '}';
    offset += size;
  }
  json += '}';
  json.append((8 - json.size() % 8) % 8, ' ');
  return json;
}

}  // namespace

std::size_t safetensors_dtype_size(std::string_view dtype) {
  if (dtype == "F32" || dtype == "I32" || dtype == "U32") return 4;
  if (dtype == "F16" || dtype == "BF16" || dtype == "I16" || dtype == "U16") return 2;
  if (dtype == "F64" || dtype == "I64" || dtype == "U64") return 8;
  if (dtype == "BOOL" || dtype == "U8" || dtype == "I8" || dtype == "F8_E5M2" || dtype == "F8_E4M3") return 1;
  return 0;
}

const SafetensorsTensor* SafetensorsView::find(std::string_view name) const {
  for (const auto& t : tensors) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

const std::string* SafetensorsView::metadata_value(std::string_view key) const {
  for (const auto& [k, v] : metadata) {
    if (k == key) return &v;
  }
  return nullptr;
}

SafetensorsView parse_safetensors(std::string_view bytes) {
  if (bytes.size() < 8) {
    fail(std::to_string(bytes.size()) + " bytes, shorter than the 8-byte header length");
  }
  std::uint64_t n = 0;
  for (int k = 7; k >= 0; --k) n = (n << 8) | static_cast<unsigned char>(bytes[static_cast<std::size_t>(k)]);
  if (n > kSafetensorsMaxHeader) {
    fail("header length " + std::to_string(n) + " exceeds the limit of " + std::to_string(kSafetensorsMaxHeader));
  }
  if (n > bytes.size() - 8) {
    fail("header length " + std::to_string(n) + " exceeds the " + std::to_string(bytes.size() - 8) +
         " bytes that follow it");
  }
  const std::string_view header = bytes.substr(8, n);
  if (const std::size_t bad = invalid_utf8_at(header); bad != std::string_view::npos) {
    fail("header is not valid UTF-8 (header offset " + std::to_string(bad) + ")");
  }
  SafetensorsView view;
  view.data = bytes.substr(8 + n);

  HeaderReader r(header);
  if (r.peek() != '{') fail("header does not start with '{'");
  r.expect('{', "header");
  std::unordered_set<std::string> keys;
  for (bool first = true; r.next_member(first, "header"); first = false) {
    std::string key = r.read_string("header key");
    if (!keys.insert(key).second) fail("repeated key " + quoted(key) + " in the header");
    if (key == "__metadata__") {
      r.expect(':', "\"__metadata__\"");
      std::unordered_set<std::string> metadata_keys;
      r.expect('{', "\"__metadata__\"");
      for (bool mfirst = true; r.next_member(mfirst, "\"__metadata__\""); mfirst = false) {
        std::string mkey = r.read_string("\"__metadata__\" key");
        const std::string context = "metadata " + quoted(mkey);
        if (!metadata_keys.insert(mkey).second) fail(context + ": repeated key");
        r.expect(':', context);
        r.skip_ws();
        if (r.peek() != '"') r.fail_here(context, "the value is not a string");
        std::string value = r.read_string(context);
        view.metadata.emplace_back(std::move(mkey), std::move(value));
      }
    } else {
      r.expect(':', tensor_context(key));
      view.tensors.push_back(read_tensor(r, key));
    }
  }
  r.skip_ws();
  if (!r.at_end()) r.fail_here("header", "trailing bytes after the JSON object");

  // Sizes and offsets.
  for (const SafetensorsTensor& t : view.tensors) {
    const std::uint64_t size = tensor_byte_size(t.name, t.dtype, t.shape);
    const std::string context = tensor_context(t.name) + " field \"data_offsets\"";
    if (t.end < t.begin) {
      fail(context + ": end " + std::to_string(t.end) + " before begin " + std::to_string(t.begin));
    }
    if (t.end > view.data.size()) {
      fail(context + ": end " + std::to_string(t.end) + " beyond the " + std::to_string(view.data.size()) +
           "-byte data buffer");
    }
    if (t.end - t.begin != size) {
      fail(context + ": " + std::to_string(t.end - t.begin) + " bytes, but dtype " + t.dtype + " and shape need " +
           std::to_string(size));
    }
  }
  // Every byte of the buffer in exactly one tensor.
  std::vector<std::size_t> order(view.tensors.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    const auto& ta = view.tensors[a];
    const auto& tb = view.tensors[b];
    return ta.begin != tb.begin ? ta.begin < tb.begin : ta.end < tb.end;
  });
  std::uint64_t covered = 0;
  const SafetensorsTensor* previous = nullptr;
  for (std::size_t index : order) {
    const SafetensorsTensor& t = view.tensors[index];
    if (t.begin < covered) {
      fail(tensor_context(t.name) + " field \"data_offsets\": overlaps tensor " + quoted(previous->name));
    }
    if (t.begin > covered) {
      fail(tensor_context(t.name) + " field \"data_offsets\": a gap of " + std::to_string(t.begin - covered) +
           " unused bytes before it (at data offset " + std::to_string(covered) + ")");
    }
    covered = t.end;
    previous = &t;
  }
  if (covered != view.data.size()) {
    fail(std::to_string(view.data.size() - covered) + " bytes after the last tensor's data (at data offset " +
         std::to_string(covered) + ")");
  }
  return view;
}

std::string write_safetensors(const SafetensorsMetadata& metadata, const std::vector<SafetensorsInput>& tensors) {
  std::vector<std::uint64_t> sizes;
  const std::string json = header_json(metadata, tensors, &sizes);
  std::uint64_t total = 8 + json.size();
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    if (tensors[i].data.size() != sizes[i]) {
      fail(tensor_context(tensors[i].name) + ": " + std::to_string(tensors[i].data.size()) + " data bytes, dtype " +
           tensors[i].dtype + " and shape need " + std::to_string(sizes[i]));
    }
    total += sizes[i];
  }
  std::string out;
  out.reserve(total);
  const std::uint64_t n = json.size();
  for (int k = 0; k < 8; ++k) out += static_cast<char>((n >> (8 * k)) & 0xff);
  out += json;
  for (const SafetensorsInput& t : tensors) out.append(t.data);
  return out;
}

std::uint64_t safetensors_header_size(const SafetensorsMetadata& metadata,
                                      const std::vector<SafetensorsInput>& tensors) {
  return 8 + header_json(metadata, tensors, nullptr).size();
}

}  // namespace pgmate::worker::nn
