// Small command-line helpers shared by the pgmate subcommands.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

namespace pgmate::cli {

// A usage mistake: main() prints it with the command's usage line and exits 2.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A command or option this pgmate was built without (libpqxx): main() prints it without
// the usage line and exits 2.
class NotBuiltIn : public std::runtime_error {
 public:
  explicit NotBuiltIn(const std::string& what) : std::runtime_error("this pgmate was built without libpqxx: " + what) {}
};

// Parses a whole non-negative number or throws UsageError naming the option.
int parse_count(const std::string& text, const std::string& option, int min, int max);

// Joins arguments with single spaces (a FEN may arrive unquoted, split into fields).
std::string join(const std::vector<std::string>& parts, size_t begin, size_t end);

// v with `decimals` digits after the point ("12.3").
std::string fixed(double v, int decimals);
// Today's date as PGN writes it ("2026.11.23").
std::string today_pgn_date();

}  // namespace pgmate::cli
