// Published perft counts of American checkers from the start position (Aart Bik, "perft for
// 8x8 checkers", 2009; OEIS A133046): a generator that does not merge duplicate captures.
#pragma once

#include <cstdint>

namespace pgmate::checkers::testing {

inline constexpr std::uint64_t kStartPerft[] = {
    7,          49,          302,          1469,          7361,          36768,         179740,
    845931,     3963680,     18391564,     85242128,      388623673,     1766623630,    7978439499,
    36263167175ULL, 165629569428ULL, 758818810990ULL,
};
inline constexpr int kStartPerftDepths = sizeof(kStartPerft) / sizeof(kStartPerft[0]);

}  // namespace pgmate::checkers::testing
