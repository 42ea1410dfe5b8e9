#include "gamedb/time_control.h"

#include <charconv>
#include <cstdint>

namespace pgmate::gamedb {

namespace {

// A whole number of seconds, digits only, at most a year (so the estimate cannot overflow).
bool seconds(std::string_view text, std::uint64_t& out) {
  if (text.empty() || text.size() > 9) return false;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && end == text.data() + text.size() && out <= 366u * 24 * 3600;
}

}  // namespace

std::string_view game_speed(std::string_view time_control) {
  if (time_control == "-") return "correspondence";
  const std::size_t plus = time_control.find('+');
  if (plus == std::string_view::npos) return "";
  std::uint64_t base = 0, increment = 0;
  if (!seconds(time_control.substr(0, plus), base) || !seconds(time_control.substr(plus + 1), increment)) return "";
  const std::uint64_t estimate = base + 40 * increment;
  if (estimate < 30) return "ultraBullet";
  if (estimate < 180) return "bullet";
  if (estimate < 480) return "blitz";
  if (estimate < 1500) return "rapid";
  if (estimate < 21600) return "classical";
  return "correspondence";
}

}  // namespace pgmate::gamedb
