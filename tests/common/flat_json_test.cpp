#include "common/flat_json.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

namespace pgmate {
namespace {

std::string error_of(const std::string& text) {
  try {
    parse_flat_json(text, "spec");
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(FlatJson, ReadsStringsNumbersAndLiterals) {
  const auto f = parse_flat_json(R"( {"type": "uci", "nodes": 1000, "x": -0.5e-3, "on": true, "off": null,
                                     "Skill Level": "0", "esc": "a\"b\\c\n\u00e9\ud83d\ude00"} )", "spec");
  ASSERT_EQ(f.size(), 7u);
  EXPECT_EQ(f[0].key, "type");
  EXPECT_EQ(f[0].value, "uci");
  EXPECT_TRUE(f[0].quoted);
  EXPECT_EQ(f[1].value, "1000");
  EXPECT_FALSE(f[1].quoted);
  EXPECT_EQ(f[2].value, "-0.5e-3");
  EXPECT_EQ(f[3].value, "true");
  EXPECT_EQ(f[4].value, "null");
  EXPECT_EQ(f[5].key, "Skill Level");
  EXPECT_EQ(f[6].value, "a\"b\\c\n\xc3\xa9\xf0\x9f\x98\x80");
  EXPECT_TRUE(parse_flat_json("", "spec").empty());
  EXPECT_TRUE(parse_flat_json(" { } ", "spec").empty());
}

TEST(FlatJson, RefusesWhatIsNotOneFlatObject) {
  EXPECT_NE(error_of(R"({"a": {"b": 1}})").find("\"a\": nested"), std::string::npos);
  EXPECT_NE(error_of(R"({"a": [1]})").find("nested"), std::string::npos);
  EXPECT_NE(error_of(R"({"a": 1, "a": 2})").find("repeated key \"a\""), std::string::npos);
  EXPECT_NE(error_of(R"({"a": 1} x)").find("trailing"), std::string::npos);
  EXPECT_NE(error_of(R"({"a": 01})").find("bad value 01"), std::string::npos);
  EXPECT_NE(error_of(R"({"a": tru})").find("bad value tru"), std::string::npos);
  EXPECT_NE(error_of(R"({"a": "\ud800"})").find("surrogate"), std::string::npos);
  EXPECT_NE(error_of(R"({"a": 1,})").find("expected a quoted string"), std::string::npos);
  EXPECT_NE(error_of("[]").find("expected '{'"), std::string::npos);
  EXPECT_EQ(error_of("[]").rfind("spec: ", 0), 0u);
  EXPECT_NE(error_of("{\"a\": \"x").find("unterminated"), std::string::npos);
}

TEST(FlatJson, Integers) {
  const auto f = parse_flat_json(R"({"a": 42, "b": -7, "c": "5", "d": 1.0, "e": 99999999999999999999})", "spec");
  EXPECT_EQ(flat_json_int(f[0], 0, 100, "spec"), 42);
  EXPECT_EQ(flat_json_int(f[1], -10, 0, "spec"), -7);
  EXPECT_THROW(flat_json_int(f[0], 0, 41, "spec"), std::invalid_argument);
  EXPECT_THROW(flat_json_int(f[2], 0, 10, "spec"), std::invalid_argument);
  EXPECT_THROW(flat_json_int(f[3], 0, 10, "spec"), std::invalid_argument);
  EXPECT_THROW(flat_json_int(f[4], 0, 10, "spec"), std::invalid_argument);
}

}  // namespace
}  // namespace pgmate
