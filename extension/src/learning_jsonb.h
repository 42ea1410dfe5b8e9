// What the learning loop's SQL entry points share: jsonb read into core/learning's
// JsonObject and written back, its errors raised with their hints, and what resolving a
// run's settings asks of the database.
#pragma once

#include <string>

#include "learning/settings.h"
#include "guard.h"

namespace pgmate::pg {

// A jsonb value: its type and text as jsonb writes it, and an object's members.
struct JsonbInput {
  learning::JsonType type = learning::JsonType::Null;
  std::string json;
  learning::JsonObject members;
};
JsonbInput read_jsonb(Datum datum);
// The same of jsonb's text (as SPI_getvalue gives a jsonb column).
JsonbInput read_jsonb_text(const std::string& text);
Datum jsonb_of(const learning::JsonObject& object);
Datum jsonb_of_text(const std::string& json);

// An error with its SQLSTATE, message and hint (none when empty).
[[noreturn]] void raise_error(int sqlstate, const std::string& message, const std::string& hint);
// 22023 with the option's message and hint.
[[noreturn]] void raise(const learning::OptionError& e);

// Whether the ECO lines are loaded, and a fresh seed. Needs no SPI connection of its own.
learning::SettingsContext database_context();

}  // namespace pgmate::pg
