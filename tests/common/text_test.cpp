// quote_input: user input in error messages is cut on UTF-8 character boundaries and
// escaped, so every message is valid UTF-8 whatever the input; and the parsers that quote
// their input do so through it.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include "checkers/fen.h"
#include "checkers/notation.h"
#include "chess/fen.h"
#include "chess/geometry.h"
#include "chess/notation.h"
#include "chess/pgn.h"
#include "common/text.h"

namespace pgmate {
namespace {

using testing::HasSubstr;

// An independent check: well-formed UTF-8 (RFC 3629).
bool valid_utf8(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    size_t n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    if (n == 0 || i + n > s.size()) return false;
    std::uint32_t cp = n == 1 ? c : n == 2 ? (c & 0x1F) : n == 3 ? (c & 0x0F) : (c & 0x07);
    for (size_t k = 1; k < n; ++k) {
      const auto d = static_cast<unsigned char>(s[i + k]);
      if ((d & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (d & 0x3F);
    }
    const std::uint32_t min[5] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < min[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
    i += n;
  }
  return true;
}

const std::string kEuro = "\xE2\x82\xAC";      // 3 bytes
const std::string kFace = "\xF0\x9F\x98\x80";  // 4 bytes
const std::string kEAcute = "\xC3\xA9";        // 2 bytes

// "a" + b for a literal, without GCC 12's false -Wrestrict on operator+(const char*, string&&).
std::string cat(std::string a, const std::string& b) { return a.append(b); }

TEST(QuoteInput, ShortInputIsQuotedWhole) {
  EXPECT_EQ(quote_input("e4", 40), "\"e4\"");
  EXPECT_EQ(quote_input("", 40), "\"\"");
  EXPECT_EQ(quote_input(kEuro + "5", 2), cat("\"", kEuro) + "5\"");
}

TEST(QuoteInput, CutCountsCharactersAndAddsEllipsis) {
  EXPECT_EQ(quote_input("abcdef", 3), "\"abc...\"");
  EXPECT_EQ(quote_input("abc", 3), "\"abc\"");
  EXPECT_EQ(quote_input("abcd", 0), "\"...\"");
}

// A byte limit would cut these characters in two; the helper keeps each whole.
TEST(QuoteInput, MultiByteCharactersStraddlingTheLimitStayWhole) {
  for (const std::string& ch : {kEAcute, kEuro, kFace}) {
    const std::string s = std::string(59, 'x') + ch + ch + "tail";
    const std::string q = quote_input(s, 60);
    EXPECT_EQ(q, cat("\"", std::string(59, 'x')) + ch + "...\"");
    EXPECT_TRUE(valid_utf8(q));
  }
  // Every limit, over a mix of 1- to 4-byte characters.
  const std::string mixed = cat("a", kEAcute) + kEuro + "b" + kFace + kEuro + kEAcute;
  for (size_t limit = 0; limit <= mixed.size(); ++limit) {
    const std::string q = quote_input(mixed, limit);
    EXPECT_TRUE(valid_utf8(q)) << limit;
    EXPECT_EQ(q.ends_with("...\""), limit < 7) << limit << ": " << q;
  }
}

TEST(QuoteInput, ControlBytesQuotesAndBackslashesAreEscaped) {
  EXPECT_EQ(quote_input("a\nb\tc\rd", 40), "\"a\\nb\\tc\\rd\"");
  EXPECT_EQ(quote_input(std::string("x\0y", 3), 40), "\"x\\x00y\"");
  EXPECT_EQ(quote_input("\x01\x1f\x7f", 40), "\"\\x01\\x1f\\x7f\"");
  EXPECT_EQ(quote_input("say \"hi\" \\o/", 40), "\"say \\\"hi\\\" \\\\o/\"");
  // An escape counts as one character.
  EXPECT_EQ(quote_input("\n\n\n\n", 2), "\"\\n\\n...\"");
}

TEST(QuoteInput, BytesOutsideWellFormedUtf8AreEscaped) {
  EXPECT_EQ(quote_input("\xFF", 40), "\"\\xff\"");
  EXPECT_EQ(quote_input("a\x80z", 40), "\"a\\x80z\"");                 // stray continuation
  EXPECT_EQ(quote_input("\xE2\x82", 40), "\"\\xe2\\x82\"");            // cut short at the end
  EXPECT_EQ(quote_input("\xE2\x82z", 40), "\"\\xe2\\x82z\"");          // cut short by ASCII
  EXPECT_EQ(quote_input("\xC0\xAF", 40), "\"\\xc0\\xaf\"");            // overlong '/'
  EXPECT_EQ(quote_input("\xED\xA0\x80", 40), "\"\\xed\\xa0\\x80\"");   // a surrogate
  EXPECT_EQ(quote_input("\xF4\x90\x80\x80", 40), "\"\\xf4\\x90\\x80\\x80\"");  // above U+10FFFF
  EXPECT_TRUE(valid_utf8(quote_input("\xC3", 40)));
}

TEST(QuoteInput, Utf8PrefixLengthBacksOffToACharacterStart) {
  const std::string s = cat("a", kEuro) + "b";  // a, 3 bytes, b
  EXPECT_EQ(utf8_prefix_length(s, 10), s.size());
  EXPECT_EQ(utf8_prefix_length(s, 1), 1u);
  EXPECT_EQ(utf8_prefix_length(s, 2), 1u);
  EXPECT_EQ(utf8_prefix_length(s, 3), 1u);
  EXPECT_EQ(utf8_prefix_length(s, 4), 4u);
}

template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  ADD_FAILURE() << "no error";
  return "";
}

// Each parser that quotes its input: a long multi-byte input gives a valid UTF-8 message
// holding whole characters. Before quote_input these cut at a byte count.
TEST(QuoteInput, ParsersQuoteThroughIt) {
  const std::string euros = [] {
    std::string s;
    for (int i = 0; i < 200; ++i) s += kEuro;
    return s;
  }();
  const chess::Board start = chess::parse_fen("startpos");
  const std::string messages[] = {
      error_of([&] { chess::parse_fen(cat("x", euros)); }),
      error_of([&] { chess::parse_fen(cat("8/8/8/8/8/8/8/8 ", euros) + " - - 0 1"); }),
      error_of([&] { chess::parse_uci_syntax(cat("e", kEuro)); }),
      error_of([&] { chess::parse_san(start, cat("N", euros)); }),
      error_of([&] { chess::parse_pgn(cat("1. e4 \"", euros) + "\" *"); }),
      error_of([&] { checkers::parse_fen(cat("X", euros)); }),
      error_of([&] { checkers::lex_move(cat("1", euros)); }),
      error_of([&] { chess::move_table(cat("k", euros)); }),
      error_of([&] { chess::move_mask(cat("k", euros), 0); }),
  };
  for (const std::string& m : messages) {
    EXPECT_TRUE(valid_utf8(m)) << m;
    EXPECT_THAT(m, HasSubstr(kEuro)) << m;
  }
  EXPECT_THAT(messages[0], HasSubstr(cat("x", euros.substr(0, 119 * kEuro.size())) + "...\""));
  EXPECT_THAT(messages[7], HasSubstr(cat("unknown piece \"k", euros.substr(0, 39 * kEuro.size())) + "...\""));
  // A lone byte of a character (the SAN reader looks at one byte at a time) is escaped.
  EXPECT_THAT(error_of([&] { chess::parse_san(start, cat("N", kEAcute) + "f3"); }),
              HasSubstr("unexpected \"\\xc3\""));
}

}  // namespace
}  // namespace pgmate
