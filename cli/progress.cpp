#include "progress.h"

#include <unistd.h>

#include <cstdio>
#include <iostream>

namespace pgmate::cli {

std::string format_bytes(std::uint64_t bytes) {
  static const char* const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024 && u < 4) v /= 1024, ++u;
  char buf[32];
  std::snprintf(buf, sizeof buf, u == 0 ? "%.0f %s" : "%.1f %s", v, units[u]);
  return buf;
}

Progress::Progress(std::uint64_t total_bytes, std::string unit)
    : enabled_(isatty(STDERR_FILENO)), total_(total_bytes), unit_(std::move(unit)), start_(Clock::now()) {}

Progress::~Progress() { finish(); }

void Progress::update(std::uint64_t bytes, std::uint64_t items, bool force) {
  bytes_ = bytes;
  items_ = items;
  if (!enabled_) return;
  const auto now = Clock::now();
  if (!force && shown_ && now - last_draw_ < std::chrono::milliseconds(100)) return;
  last_draw_ = now;
  draw();
}

void Progress::draw() {
  const double secs = std::chrono::duration<double>(Clock::now() - start_).count();
  std::string line = "\r";
  line += format_bytes(bytes_);
  if (total_ > 0) {
    char pct[32];
    std::snprintf(pct, sizeof pct, " (%.1f%%)", 100.0 * static_cast<double>(bytes_) / static_cast<double>(total_));
    line += " / " + format_bytes(total_) + pct;
  }
  line += ", " + std::to_string(items_) + " " + unit_;
  if (secs > 0.05) line += ", " + std::to_string(static_cast<std::uint64_t>(items_ / secs)) + " " + unit_ + "/s";
  line += "\x1b[K";  // erase the rest of the previous line
  std::cerr << line << std::flush;
  shown_ = true;
}

void Progress::clear() {
  if (enabled_ && shown_) std::cerr << "\r\x1b[K" << std::flush;
  shown_ = false;
}

void Progress::finish() {
  clear();
  enabled_ = false;
}

}  // namespace pgmate::cli
