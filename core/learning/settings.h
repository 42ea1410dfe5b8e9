// The options of a learning run (CALL pgmate.learn, pgmate learn --option): their table,
// and a run's settings checked and completed with their defaults. The one place they are
// written: pgmate.learning_options and pgmate.learning_settings read them from here.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace pgmate::learning {

enum class OptionKind { Int, Number, Text };

struct OptionSpec {
  int position;
  const char* name;
  OptionKind kind;
  // Bounds of a number, as SQL's numeric prints them (messages quote them); none for text.
  const char* low;
  const char* high;
  std::vector<const char*> choices;  // text with a fixed set of values; empty: any string
  const char* default_json;          // nullptr: none, or computed from other options
  bool per_call;                     // a key of one call (network, stop_after), not a setting
  const char* description;
};

// Every option, in position order.
const std::vector<OptionSpec>& option_specs();
const char* kind_name(OptionKind kind);

// A JSON value as jsonb writes it: `json` is its text (strings quoted), `text` a string's
// content.
enum class JsonType { String, Number, Boolean, Null, Object, Array };
struct JsonValue {
  JsonType type = JsonType::Null;
  std::string json;
  std::string text;
  static JsonValue number(const std::string& literal) { return {JsonType::Number, literal, literal}; }
  static JsonValue string(const std::string& s);
};
// An object's values by key (a run's settings, the options of a call).
using JsonObject = std::map<std::string, JsonValue>;

// Bad options: 22023 in SQL, with a hint where there is one.
class OptionError : public std::invalid_argument {
 public:
  explicit OptionError(const std::string& message, std::string hint = "")
      : std::invalid_argument(message), hint_(std::move(hint)) {}
  const std::string& hint() const { return hint_; }

 private:
  std::string hint_;
};

// What resolving needs to know of the database.
struct SettingsContext {
  std::function<bool()> have_eco_openings;  // whether pgmate.openings holds the ECO lines
  std::function<std::int64_t()> random_seed;  // a seed for a run that names none
};

// A new run's settings from the caller's options, checked and completed with defaults
// (per-call keys left out). Throws OptionError naming the option (require_object first
// when the options might not be an object).
JsonObject new_run_settings(const JsonObject& given, const SettingsContext& context);

// An existing run's call: its stored settings checked again as a new run's would be, and
// every given option equal to the stored one (a run's settings never change).
void check_call_against_stored(const JsonObject& given, const JsonObject& stored, const SettingsContext& context);

// The options of a call must be an object: throws OptionError with its JSON text otherwise.
void require_object(JsonType type, const std::string& json);

// A new run's batch and learning rate on the worker's device where the caller gave none: a
// CUDA worker trains 1,024 positions a step at the default rate times sqrt(1024 / 128).
JsonObject device_defaults(JsonObject settings, const JsonObject& given, const std::string& device);

// A JSON object's text with its members in key order.
std::string object_json(const JsonObject& object);

// A number's value (settings are checked, so a number is there).
double number_of(const JsonObject& settings, const std::string& key);

// What a SQL round(x::numeric, places) prints: decimal rounding, half away from zero, of
// the value's 15 significant digits, with exactly `places` digits after the point.
std::string round_decimal(double x, int places);
// The same of a number as JSON or SQL writes it ("0.5", "-143.88", "1e-05"), digit by digit.
std::string round_decimal_literal(const std::string& literal, int places);

}  // namespace pgmate::learning
