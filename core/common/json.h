// Writing JSON string literals (tags, status reports). Bytes that are not part of a
// well-formed UTF-8 character are written as the text \xNN (JSON "\\xNN"), as text.h
// quotes them, so the literal is always valid UTF-8 whatever the input.
#pragma once

#include <string>
#include <string_view>

#include "common/text.h"

namespace pgmate {

inline void append_json_string(std::string& out, std::string_view s) {
  static const char kHex[] = "0123456789abcdef";
  out += '"';
  std::size_t plain = 0;  // the start of the characters not yet written, none of them escaped
  for (std::size_t i = 0; i < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x80) {
      if (const std::size_t n = utf8_char_length(s, i)) {
        i += n - 1;
        continue;
      }
    } else if (c >= 0x20 && c != '"' && c != '\\') {
      continue;
    }
    out.append(s, plain, i - plain);  // a run of plain characters at once
    plain = i + 1;
    if (c >= 0x80) {
      out += "\\\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
      continue;
    }
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        out += "\\u00";
        out += kHex[c >> 4];
        out += kHex[c & 15];
    }
  }
  out.append(s, plain, s.size() - plain);
  out += '"';
}

inline std::string json_string(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 2);
  append_json_string(out, s);
  return out;
}

}  // namespace pgmate
