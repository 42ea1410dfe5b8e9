#include "common/flat_json.h"

#include <stdexcept>

namespace pgmate {
namespace {

class Reader {
 public:
  Reader(std::string_view text, std::string_view what) : s_(text), what_(what) {}

  [[noreturn]] void fail(const std::string& problem) const {
    throw std::invalid_argument(std::string(what_) + ": " + problem);
  }
  void skip_ws() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\n' || s_[i_] == '\r')) ++i_;
  }
  bool at_end() const { return i_ >= s_.size(); }
  char peek() const { return at_end() ? '\0' : s_[i_]; }
  std::size_t pos() const { return i_; }

  void expect(char c) {
    skip_ws();
    if (peek() != c)
      fail(std::string("expected '") + c + "' at offset " + std::to_string(i_) +
           (at_end() ? " (end of input)" : std::string(", found '") + s_[i_] + "'"));
    ++i_;
  }

  std::string read_string() {
    skip_ws();
    if (peek() != '"') fail("expected a quoted string at offset " + std::to_string(i_));
    ++i_;
    std::string out;
    for (;;) {
      if (at_end()) fail("unterminated string");
      const char c = s_[i_++];
      if (c == '"') return out;
      if (static_cast<unsigned char>(c) < 0x20) fail("control character in a string");
      if (c != '\\') {
        out += c;
        continue;
      }
      if (at_end()) fail("unterminated string");
      const char e = s_[i_++];
      switch (e) {
        case '"': case '\\': case '/': out += e; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        case 'u': append_utf8(read_code_point(), out); break;
        default: fail(std::string("bad escape \\") + e);
      }
    }
  }

  // A number or literal, as written: up to the next delimiter.
  std::string read_literal(const std::string& key) {
    skip_ws();
    const std::size_t start = i_;
    if (peek() == '{' || peek() == '[') fail("\"" + key + "\": nested objects and arrays are not accepted");
    while (i_ < s_.size() && s_[i_] != ',' && s_[i_] != '}' && s_[i_] != ' ' && s_[i_] != '\t' && s_[i_] != '\n' &&
           s_[i_] != '\r')
      ++i_;
    if (i_ == start) fail("missing value at offset " + std::to_string(start));
    std::string token(s_.substr(start, i_ - start));
    if (token != "true" && token != "false" && token != "null" && !is_number(token))
      fail("\"" + key + "\": bad value " + token + " at offset " + std::to_string(start));
    return token;
  }

 private:
  static bool is_number(std::string_view t) {
    std::size_t i = 0;
    if (i < t.size() && t[i] == '-') ++i;
    const std::size_t int_start = i;
    while (i < t.size() && t[i] >= '0' && t[i] <= '9') ++i;
    if (i == int_start || (t[int_start] == '0' && i - int_start > 1)) return false;
    if (i < t.size() && t[i] == '.') {
      const std::size_t f = ++i;
      while (i < t.size() && t[i] >= '0' && t[i] <= '9') ++i;
      if (i == f) return false;
    }
    if (i < t.size() && (t[i] == 'e' || t[i] == 'E')) {
      ++i;
      if (i < t.size() && (t[i] == '+' || t[i] == '-')) ++i;
      const std::size_t e = i;
      while (i < t.size() && t[i] >= '0' && t[i] <= '9') ++i;
      if (i == e) return false;
    }
    return i == t.size();
  }

  unsigned read_hex4() {
    if (i_ + 4 > s_.size()) fail("bad \\u escape");
    unsigned v = 0;
    for (int k = 0; k < 4; ++k) {
      const char c = s_[i_++];
      v <<= 4;
      if (c >= '0' && c <= '9') v |= unsigned(c - '0');
      else if (c >= 'a' && c <= 'f') v |= unsigned(c - 'a' + 10);
      else if (c >= 'A' && c <= 'F') v |= unsigned(c - 'A' + 10);
      else fail("bad \\u escape");
    }
    return v;
  }

  // \uXXXX, with a surrogate pair read as one code point; lone surrogates are refused.
  unsigned read_code_point() {
    const unsigned first = read_hex4();
    if (first >= 0xDC00 && first <= 0xDFFF) fail("lone surrogate in a \\u escape");
    if (first < 0xD800 || first > 0xDBFF) return first;
    if (i_ + 2 > s_.size() || s_[i_] != '\\' || s_[i_ + 1] != 'u') fail("lone surrogate in a \\u escape");
    i_ += 2;
    const unsigned second = read_hex4();
    if (second < 0xDC00 || second > 0xDFFF) fail("lone surrogate in a \\u escape");
    return 0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00);
  }

  static void append_utf8(unsigned cp, std::string& out) {
    if (cp < 0x80) {
      out += char(cp);
    } else if (cp < 0x800) {
      out += char(0xC0 | (cp >> 6));
      out += char(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      out += char(0xE0 | (cp >> 12));
      out += char(0x80 | ((cp >> 6) & 0x3F));
      out += char(0x80 | (cp & 0x3F));
    } else {
      out += char(0xF0 | (cp >> 18));
      out += char(0x80 | ((cp >> 12) & 0x3F));
      out += char(0x80 | ((cp >> 6) & 0x3F));
      out += char(0x80 | (cp & 0x3F));
    }
  }

  std::string_view s_, what_;
  std::size_t i_ = 0;
};

}  // namespace

std::vector<FlatJsonField> parse_flat_json(std::string_view text, std::string_view what) {
  Reader r(text, what);
  std::vector<FlatJsonField> fields;
  r.skip_ws();
  if (r.at_end()) return fields;
  r.expect('{');
  r.skip_ws();
  if (r.peek() == '}') {
    r.expect('}');
  } else {
    for (;;) {
      FlatJsonField f;
      f.key = r.read_string();
      for (const FlatJsonField& seen : fields)
        if (seen.key == f.key) r.fail("repeated key \"" + f.key + "\"");
      r.expect(':');
      r.skip_ws();
      f.quoted = r.peek() == '"';
      f.value = f.quoted ? r.read_string() : r.read_literal(f.key);
      fields.push_back(std::move(f));
      r.skip_ws();
      if (r.peek() == ',') {
        r.expect(',');
        continue;
      }
      r.expect('}');
      break;
    }
  }
  r.skip_ws();
  if (!r.at_end()) r.fail("trailing characters at offset " + std::to_string(r.pos()));
  return fields;
}

std::int64_t flat_json_int(const FlatJsonField& field, std::int64_t lo, std::int64_t hi, std::string_view what) {
  const auto fail = [&](const std::string& problem) {
    throw std::invalid_argument(std::string(what) + ": \"" + field.key + "\": " + problem);
  };
  const std::string& t = field.value;
  if (field.quoted) fail("expected an integer, got the string \"" + t + "\"");
  std::size_t i = t.size() && t[0] == '-' ? 1 : 0;
  if (i == t.size() || t.size() - i > 18) fail("expected an integer in " + std::to_string(lo) + ".." + std::to_string(hi) + ", got " + t);
  std::int64_t v = 0;
  for (std::size_t k = i; k < t.size(); ++k) {
    if (t[k] < '0' || t[k] > '9') fail("expected an integer, got " + t);
    v = v * 10 + (t[k] - '0');
  }
  if (t.size() - i > 1 && t[i] == '0') fail("expected an integer, got " + t);
  if (i) v = -v;
  if (v < lo || v > hi)
    fail(std::to_string(v) + " is out of range " + std::to_string(lo) + ".." + std::to_string(hi));
  return v;
}

}  // namespace pgmate
