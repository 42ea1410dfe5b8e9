#include "link/game_rows.h"

#include "common/json.h"

namespace pgmate::rows {

ArenaGameTags arena_game_tags(const std::vector<std::pair<std::string, std::string>>& tags) {
  ArenaGameTags out;
  out.json = "{";
  for (std::size_t i = 0; i < tags.size(); ++i) {
    const auto& [name, value] = tags[i];
    out.json += (i ? ", " : "") + json_string(name) + ": " + json_string(value);
    if (name == "Event") out.event = value;
    if (name == "Round") out.round = value;
    if (name == "White") out.white = value;
    if (name == "Black") out.black = value;
  }
  out.json += "}";
  return out;
}

}  // namespace pgmate::rows
