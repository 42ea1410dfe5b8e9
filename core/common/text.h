// User input shown in error messages. Messages go to PostgreSQL, which checks that they
// are valid in the client's encoding, so a quote must never cut a UTF-8 character in two
// (a cut byte sequence turns the real error into an encoding error, SQLSTATE 22021).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace pgmate {

// Length of the well-formed UTF-8 character that starts s[i] (1 to 4 bytes: no overlong
// forms, no surrogates, nothing above U+10FFFF), or 0 when the bytes there are not one.
inline std::size_t utf8_char_length(std::string_view s, std::size_t i) {
  const auto at = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = at(i);
  if (c < 0x80) return 1;
  std::size_t n;
  unsigned char low = 0x80, high = 0xBF;  // range of the second byte
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3;
    if (c == 0xE0) low = 0xA0;
    if (c == 0xED) high = 0x9F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4;
    if (c == 0xF0) low = 0x90;
    if (c == 0xF4) high = 0x8F;
  } else {
    return 0;
  }
  if (i + n > s.size() || at(i + 1) < low || at(i + 1) > high) return 0;
  for (std::size_t k = 2; k < n; ++k)
    if ((at(i + k) & 0xC0) != 0x80) return 0;
  return n;
}

// The longest prefix of s of at most max_bytes bytes that does not end inside a UTF-8
// character (for a byte-limited buffer).
inline std::size_t utf8_prefix_length(std::string_view s, std::size_t max_bytes) {
  if (s.size() <= max_bytes) return s.size();
  std::size_t n = max_bytes;
  for (int back = 0; back < 3 && n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80; ++back) --n;
  return n;
}

// s in double quotes for an error message, at most max_chars characters of it, then
// "..." inside the quotes when there is more. Whole UTF-8 characters are copied (never
// cut); '"' and '\' are escaped with a backslash, tab, line feed and carriage return as
// \t \n \r, every other control byte and every byte that is not part of a well-formed
// UTF-8 character as \xNN. Each character or escape counts as one.
inline std::string quote_input(std::string_view s, std::size_t max_chars) {
  static const char kHex[] = "0123456789abcdef";
  std::string out = "\"";
  std::size_t i = 0;
  for (std::size_t shown = 0; i < s.size() && shown < max_chars; ++shown) {
    const auto c = static_cast<unsigned char>(s[i]);
    const std::size_t n = utf8_char_length(s, i);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += char(c);
    } else if (c == '\t') {
      out += "\\t";
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (n == 0 || c < 0x20 || c == 0x7F) {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    } else {
      out.append(s.substr(i, n));
      i += n;
      continue;
    }
    ++i;
  }
  if (i < s.size()) out += "...";
  return out + "\"";
}

// Text from another program (a UCI engine's name, say) made fit to store and to show: whole
// UTF-8 characters are copied, every control byte and every byte that is not part of a
// well-formed UTF-8 character is written \xNN, and after max_chars characters (an escape
// counts as one) the rest is replaced by "...". Text that is valid UTF-8 without control
// bytes comes back unchanged, so escaping twice changes nothing.
inline std::string escape_text(std::string_view s, std::size_t max_chars = std::string_view::npos) {
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(s.size() < 256 ? s.size() : 256);
  std::size_t i = 0;
  for (std::size_t shown = 0; i < s.size() && shown < max_chars; ++shown) {
    const auto c = static_cast<unsigned char>(s[i]);
    const std::size_t n = utf8_char_length(s, i);
    if (n == 0 || c < 0x20 || c == 0x7F) {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
      ++i;
    } else {
      out.append(s.substr(i, n));
      i += n;
    }
  }
  if (i < s.size()) out += "...";
  return out;
}

// A duration for progress lines: "42s", "3m07s", "2h05m".
inline std::string duration_text(double seconds) {
  const long s = seconds > 0 ? long(seconds + 0.5) : 0;
  const auto two = [](long v) { return (v < 10 ? "0" : "") + std::to_string(v); };
  if (s >= 3600) return std::to_string(s / 3600) + "h" + two(s / 60 % 60) + "m";
  if (s >= 60) return std::to_string(s / 60) + "m" + two(s % 60) + "s";
  return std::to_string(s) + "s";
}

}  // namespace pgmate
