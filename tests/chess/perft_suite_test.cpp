// Every position of tests/data/perftsuite.epd at every depth up to PGMATE_PERFT_MAX_DEPTH
// (ctest runs depth 5 by default and depth 6 under the `long` label).
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "chess/fen.h"
#include "chess/movegen.h"

namespace pgmate::chess {
namespace {

int max_depth() {
  const char* env = std::getenv("PGMATE_PERFT_MAX_DEPTH");
  return env ? std::atoi(env) : 4;
}

TEST(PerftSuite, AllPositionsExact) {
  std::ifstream in(std::string(PGMATE_TEST_DATA_DIR) + "/perftsuite.epd");
  ASSERT_TRUE(in) << "cannot open perftsuite.epd";
  const int limit = max_depth();
  int positions = 0, counts = 0;
  for (std::string line; std::getline(in, line);) {
    if (line.empty()) continue;
    const size_t semi = line.find(';');
    ASSERT_NE(semi, std::string::npos) << line;
    const Board b = parse_fen(line.substr(0, semi));
    ++positions;
    std::istringstream fields(line.substr(semi));
    for (std::string field; std::getline(fields, field, ';');) {
      std::istringstream f(field);
      std::string label;
      std::uint64_t expected;
      if (!(f >> label >> expected)) continue;
      const int depth = std::atoi(label.c_str() + 1);
      if (depth > limit) continue;
      EXPECT_EQ(perft(b, depth), expected) << line.substr(0, semi) << " depth " << depth;
      ++counts;
    }
  }
  EXPECT_EQ(positions, 127);  // the whole file: a truncated copy must not pass
  std::cout << positions << " positions, " << counts << " counts checked up to depth " << limit << "\n";
}

}  // namespace
}  // namespace pgmate::chess
