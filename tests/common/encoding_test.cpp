// Text encodings: UTF-8 validation, and Windows-1252 (Latin-1's superset) to UTF-8, the
// conversion the PGN reader and `pgmate import` apply to text that is not UTF-8.
#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include "common/encoding.h"

namespace pgmate {
namespace {

TEST(Utf8, Validation) {
  EXPECT_TRUE(is_valid_utf8(""));
  EXPECT_TRUE(is_valid_utf8("plain ASCII, longer than one 8-byte word"));
  EXPECT_TRUE(is_valid_utf8(std::string_view("nul\0inside", 10)));
  EXPECT_TRUE(is_valid_utf8("M\xC3\xBCller \xE2\x82\xAC \xF0\x9F\x98\x80"));  // ü € and an emoji
  EXPECT_TRUE(is_valid_utf8("\xF4\x8F\xBF\xBF"));                             // U+10FFFF
  EXPECT_FALSE(is_valid_utf8("M\xFCller"));                                   // Latin-1
  EXPECT_FALSE(is_valid_utf8("abcdefghijklmnop\xE9"));                        // after a long ASCII run
  EXPECT_FALSE(is_valid_utf8("\xC0\xAF"));                                    // overlong '/'
  EXPECT_FALSE(is_valid_utf8("\xE0\x80\xAF"));                                // overlong
  EXPECT_FALSE(is_valid_utf8("\xED\xA0\x80"));                                // a surrogate
  EXPECT_FALSE(is_valid_utf8("\xF4\x90\x80\x80"));                            // above U+10FFFF
  EXPECT_FALSE(is_valid_utf8("\xE2\x82"));                                    // cut short
  EXPECT_FALSE(is_valid_utf8("\x80"));                                        // a lone continuation
}

TEST(Windows1252, EveryByte) {
  // 0x80-0x9F: the printable characters Windows-1252 puts there.
  EXPECT_EQ(windows1252_to_utf8("\x80"), "\u20AC");  // €
  EXPECT_EQ(windows1252_to_utf8("\x84\x93\x94\x91\x92"), "\u201E\u201C\u201D\u2018\u2019");
  EXPECT_EQ(windows1252_to_utf8("\x96\x97\x85\x99"), "\u2013\u2014\u2026\u2122");
  EXPECT_EQ(windows1252_to_utf8("\x8A\x9A\x8E\x9E\x9F"), "\u0160\u0161\u017D\u017E\u0178");
  // The five undefined bytes stay the C1 controls Latin-1 has there.
  EXPECT_EQ(windows1252_to_utf8("\x81\x8D\x8F\x90\x9D"), "\xC2\x81\xC2\x8D\xC2\x8F\xC2\x90\xC2\x9D");
  // 0xA0-0xFF: Latin-1.
  EXPECT_EQ(windows1252_to_utf8("M\xFCller, J\xF6rg, Cura\xE7" "ao \xBD \xA0 \xFF"),
            "M\u00FCller, J\u00F6rg, Cura\u00E7" "ao \u00BD \u00A0 \u00FF");
  // Every byte gives valid UTF-8 of one to three bytes; ASCII is unchanged.
  for (int c = 1; c < 256; ++c) {
    const std::string in(1, char(c));
    const std::string out = windows1252_to_utf8(in);
    EXPECT_TRUE(is_valid_utf8(out)) << c;
    if (c < 0x80)
      EXPECT_EQ(out, in);
    else
      EXPECT_GE(out.size(), 2u) << c;
  }
}

TEST(ToUtf8, KeepsUtf8AndConvertsTheRest) {
  EXPECT_EQ(to_utf8("Stra\xC3\x9F" "e"), "Stra\u00DF" "e");        // UTF-8: kept
  EXPECT_EQ(to_utf8("Stra\xDF" "e"), "Stra\u00DF" "e");             // Latin-1: converted
  EXPECT_EQ(to_utf8("\x84Quote\x93 \x80"), "\u201EQuote\u201C \u20AC");
  EXPECT_EQ(to_utf8("ascii"), "ascii");
  // Mixed text is not valid UTF-8, so all of it is read as Windows-1252.
  EXPECT_EQ(to_utf8("\xC3\xBC \xFC"), "\u00C3\u00BC \u00FC");
  EXPECT_EQ(to_utf8(std::string_view("a\0b", 3)), std::string("a\0b", 3));
}

}  // namespace
}  // namespace pgmate
