// A one-line progress meter on stderr for long-running commands: bytes read of the
// total (with a percentage when the total is known), items done and items per second.
// Redrawn in place at most ten times a second, and only when stderr is a terminal.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace pgmate::cli {

class Progress {
 public:
  // total_bytes 0: size unknown (a pipe). `unit` names the items counted ("games").
  Progress(std::uint64_t total_bytes, std::string unit);
  ~Progress();

  bool enabled() const { return enabled_; }
  // Records the counts; redraws when 100 ms passed since the last redraw (or `force`).
  void update(std::uint64_t bytes, std::uint64_t items, bool force = false);
  // Erases the line, so other output can go to stderr; the next update redraws it.
  void clear();
  // Erases the line for good.
  void finish();

 private:
  using Clock = std::chrono::steady_clock;
  void draw();

  bool enabled_;
  bool shown_ = false;
  std::uint64_t total_;
  std::string unit_;
  std::uint64_t bytes_ = 0, items_ = 0;
  Clock::time_point start_, last_draw_;
};

// "12.3 MiB", "512 B", ...
std::string format_bytes(std::uint64_t bytes);

}  // namespace pgmate::cli
