// Deep perft from the start position (ctest label `long`): depths 9-13 against the published
// counts, about 25 s on one core. PGMATE_CHECKERS_PERFT_MAX_DEPTH raises the last depth
// (14 is about a minute and a half more).
#include <gtest/gtest.h>

#include <cstdlib>

#include "checkers/perft.h"
#include "perft_counts.h"

namespace pgmate::checkers {
namespace {

TEST(CheckersPerftDeep, StartPosition) {
  int max_depth = 13;
  if (const char* env = std::getenv("PGMATE_CHECKERS_PERFT_MAX_DEPTH")) max_depth = std::atoi(env);
  max_depth = std::min(max_depth, testing::kStartPerftDepths);
  for (int depth = 9; depth <= max_depth; ++depth)
    EXPECT_EQ(perft(Board::start(), depth), testing::kStartPerft[depth - 1]) << "depth " << depth;
}

}  // namespace
}  // namespace pgmate::checkers
