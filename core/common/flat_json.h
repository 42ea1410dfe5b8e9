// One flat JSON object, {"key": value, ...}, whose values are strings, numbers, true, false
// or null: the shape of every small settings object pgmate reads (network configurations,
// player specs). Nested objects and arrays, repeated keys, and anything after the object
// are refused.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace pgmate {

struct FlatJsonField {
  std::string key;
  std::string value;    // a string's text (unescaped), else the literal as written (12, -0.5, true, null)
  bool quoted = false;  // the value was a JSON string
};

// Throws std::invalid_argument "<what>: <problem>" (e.g. "network config: unknown key").
// "" and "{}" give no fields.
std::vector<FlatJsonField> parse_flat_json(std::string_view text, std::string_view what);

// A whole number in [lo, hi] from a field's literal (no sign for 0, no leading zeros, no
// fraction); throws std::invalid_argument "<what>: <key> must be ...".
std::int64_t flat_json_int(const FlatJsonField& field, std::int64_t lo, std::int64_t hi, std::string_view what);

}  // namespace pgmate
