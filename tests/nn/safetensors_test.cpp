// The safetensors reader and writer (link/safetensors.h), without LibTorch: files
// as the Python library writes them, round trips, and every refusal of the strict reader.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "link/safetensors.h"

namespace {

namespace nn = pgmate::worker::nn;

// 8-byte little-endian length, header, data.
std::string file(const std::string& header, const std::string& data = "") {
  std::string out;
  const std::uint64_t n = header.size();
  for (int k = 0; k < 8; ++k) out += static_cast<char>((n >> (8 * k)) & 0xff);
  return out + header + data;
}

// The header padded with spaces to a multiple of 8, as the Python library writes it.
std::string padded(std::string header) {
  header.append((8 - header.size() % 8) % 8, ' ');
  return header;
}

std::string floats(std::initializer_list<float> values) {
  std::string out(values.size() * 4, '\0');
  std::size_t i = 0;
  for (float v : values) std::memcpy(&out[4 * i++], &v, 4);
  return out;
}

void expect_refused(const std::string& bytes, const std::string& mention) {
  try {
    nn::parse_safetensors(bytes);
    ADD_FAILURE() << "accepted; expected std::invalid_argument mentioning " << mention;
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(mention), std::string::npos) << e.what();
    EXPECT_EQ(std::string(e.what()).rfind("safetensors: ", 0), 0u) << e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "wrong exception type: " << e.what();
  }
}

const std::string kTwo = floats({1.5f, -2.0f});

// ---- files as written by the Python library ----

// safetensors.torch.save_file({"a": torch.tensor([1.5, -2.0])}): the header without
// whitespace, padded with spaces so that the data starts at a multiple of 8.
TEST(Safetensors, ReadsPythonLibraryOutput) {
  const std::string header = R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})";
  ASSERT_EQ(header.size(), 54u);
  const std::string bytes = file(padded(header), kTwo);
  ASSERT_EQ(bytes.size(), 8u + 56u + 8u);
  const nn::SafetensorsView view = nn::parse_safetensors(bytes);
  EXPECT_TRUE(view.metadata.empty());
  ASSERT_EQ(view.tensors.size(), 1u);
  const nn::SafetensorsTensor& a = view.tensors[0];
  EXPECT_EQ(a.name, "a");
  EXPECT_EQ(a.dtype, "F32");
  EXPECT_EQ(a.shape, (std::vector<std::uint64_t>{2}));
  EXPECT_EQ(a.begin, 0u);
  EXPECT_EQ(a.end, 8u);
  EXPECT_EQ(view.bytes(a), kTwo);
  EXPECT_EQ(view.find("a"), &view.tensors[0]);
  EXPECT_EQ(view.find("b"), nullptr);

  // The writer makes the same bytes.
  EXPECT_EQ(nn::write_safetensors({}, {{"a", "F32", {2}, kTwo}}), bytes);
}

// The bytes the Python library's own serialization test expects from
// save({"test": np.zeros((2, 2), dtype=np.int32)}): a 60-byte header padded to 64 with
// spaces ('@' = 64), then 16 bytes of data. Older releases wrote it unpadded ('<' = 60).
TEST(Safetensors, ReadsAndWritesThePythonLibraryTestVector) {
  const std::string zeros(16, '\0');
  const std::string python = std::string("@\0\0\0\0\0\0\0", 8) +
                             R"({"test":{"dtype":"I32","shape":[2,2],"data_offsets":[0,16]}}    )" + zeros;
  EXPECT_EQ(nn::write_safetensors({}, {{"test", "I32", {2, 2}, zeros}}), python);
  const nn::SafetensorsView view = nn::parse_safetensors(python);
  ASSERT_EQ(view.tensors.size(), 1u);
  EXPECT_EQ(view.tensors[0], (nn::SafetensorsTensor{"test", "I32", {2, 2}, 0, 16}));
  EXPECT_EQ(view.bytes(view.tensors[0]), zeros);
  const std::string unpadded = std::string("<\0\0\0\0\0\0\0", 8) +
                               R"({"test":{"dtype":"I32","shape":[2,2],"data_offsets":[0,16]}})" + zeros;
  EXPECT_EQ(nn::parse_safetensors(unpadded).tensors, view.tensors);
}

// save_file({"w": ..., "step": ...}, metadata={"format": "pt"}): metadata first, tensors
// in offset order, mixed dtypes, a scalar.
TEST(Safetensors, ReadsMetadataAndMixedDtypes) {
  const std::string header =
      R"({"__metadata__":{"format":"pt"},"step":{"dtype":"I64","shape":[],"data_offsets":[0,8]},)"
      R"("w":{"dtype":"F32","shape":[1,2],"data_offsets":[8,16]},"m":{"dtype":"BOOL","shape":[3],"data_offsets":[16,19]}})";
  std::string data(8, '\0');
  data[0] = 7;
  data += kTwo + std::string("\x01\x00\x01", 3);
  const nn::SafetensorsView view = nn::parse_safetensors(file(padded(header), data));
  ASSERT_EQ(view.metadata.size(), 1u);
  EXPECT_EQ(view.metadata[0], (std::pair<std::string, std::string>{"format", "pt"}));
  ASSERT_NE(view.metadata_value("format"), nullptr);
  EXPECT_EQ(*view.metadata_value("format"), "pt");
  EXPECT_EQ(view.metadata_value("other"), nullptr);
  ASSERT_EQ(view.tensors.size(), 3u);
  EXPECT_EQ(view.tensors[0].name, "step");
  EXPECT_TRUE(view.tensors[0].shape.empty());
  EXPECT_EQ(view.bytes(view.tensors[0])[0], 7);
  EXPECT_EQ(view.bytes(*view.find("w")), kTwo);
  EXPECT_EQ(view.bytes(*view.find("m")).size(), 3u);
}

TEST(Safetensors, AcceptsWhitespaceOrderEscapesAndEmptyTensors) {
  // Whitespace between tokens, the header order unlike the data order, zero-element tensors
  // (also at the same offset as another), an empty shape dimension list.
  const std::string text =
      "{ \"b\" : { \"data_offsets\" : [ 8 , 16 ] , \"shape\" : [ 2 ] , \"dtype\" : \"F32\" } ,\n"
      "\t\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},\r\n"
      "\"empty\":{\"dtype\":\"F64\",\"shape\":[0,5],\"data_offsets\":[8,8]},"
      "\"last_empty\":{\"dtype\":\"U8\",\"shape\":[3,0],\"data_offsets\":[16,16]}}   \n";
  const nn::SafetensorsView view = nn::parse_safetensors(file(text, kTwo + floats({3.0f, 4.0f})));
  ASSERT_EQ(view.tensors.size(), 4u);
  EXPECT_EQ(view.tensors[0].name, "b");
  EXPECT_EQ(view.bytes(view.tensors[0]), floats({3.0f, 4.0f}));
  EXPECT_EQ(view.bytes(*view.find("empty")), "");

  // Escapes, \u including a surrogate pair, raw UTF-8.
  const std::string escaped =
      R"({"\u00e9\ud83d\ude00\n\"\\\/\b\f\r\t":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},)"
      "\"caf\xc3\xa9 \xf0\x9f\x98\x80\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[1,2]}}";
  const nn::SafetensorsView e = nn::parse_safetensors(file(escaped, "xy"));
  ASSERT_EQ(e.tensors.size(), 2u);
  EXPECT_EQ(e.tensors[0].name, "\xc3\xa9\xf0\x9f\x98\x80\n\"\\/\b\f\r\t");
  EXPECT_EQ(e.tensors[1].name, "caf\xc3\xa9 \xf0\x9f\x98\x80");

  // No tensors at all.
  EXPECT_TRUE(nn::parse_safetensors(file("{}")).tensors.empty());
  EXPECT_TRUE(nn::parse_safetensors(file("{\"__metadata__\":{}}      ")).metadata.empty());
}

// ---- writer ----

TEST(Safetensors, WriterRoundTrip) {
  const std::string big(4 * 6, 'z');
  const std::string ones(8, '\x01');
  const nn::SafetensorsMetadata metadata = {{"b", "2"}, {"a", "quote \" backslash \\ newline \n nul " + std::string(1, '\0')}};
  const std::vector<nn::SafetensorsInput> inputs = {
      {"z.weight", "F32", {2, 3}, big},
      {"a\tb\"c", "F32", {2}, kTwo},
      {"scalar", "I64", {}, ones},
      {"nothing", "F16", {0}, ""},
      {"caf\xc3\xa9", "U8", {1}, "!"},
  };
  const std::string bytes = nn::write_safetensors(metadata, inputs);
  std::uint64_t n = 0;
  std::memcpy(&n, bytes.data(), 8);
  EXPECT_EQ(n % 8, 0u);
  EXPECT_EQ(nn::safetensors_header_size(metadata, inputs), 8 + n);
  EXPECT_EQ(bytes.size(), 8 + n + big.size() + 8 + 8 + 0 + 1);

  const nn::SafetensorsView view = nn::parse_safetensors(bytes);
  EXPECT_EQ(view.metadata, metadata);
  ASSERT_EQ(view.tensors.size(), inputs.size());
  std::uint64_t offset = 0;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    SCOPED_TRACE(inputs[i].name);
    EXPECT_EQ(view.tensors[i].name, inputs[i].name);
    EXPECT_EQ(view.tensors[i].dtype, inputs[i].dtype);
    EXPECT_EQ(view.tensors[i].shape, inputs[i].shape);
    EXPECT_EQ(view.tensors[i].begin, offset);  // contiguous, in the order given
    EXPECT_EQ(view.bytes(view.tensors[i]), inputs[i].data);
    offset = view.tensors[i].end;
  }
  // Deterministic, and a re-write of what was read is identical.
  EXPECT_EQ(nn::write_safetensors(metadata, inputs), bytes);
  std::vector<nn::SafetensorsInput> again;
  for (const auto& t : view.tensors) again.push_back({t.name, t.dtype, t.shape, view.bytes(t)});
  EXPECT_EQ(nn::write_safetensors(view.metadata, again), bytes);
  // Nothing at all.
  EXPECT_EQ(nn::write_safetensors({}, {}), file("{}      "));
}

TEST(Safetensors, WriterRefusesBadInput) {
  auto refused = [](const nn::SafetensorsMetadata& metadata, const std::vector<nn::SafetensorsInput>& inputs,
                    const std::string& mention) {
    try {
      nn::write_safetensors(metadata, inputs);
      ADD_FAILURE() << "written; expected a refusal mentioning " << mention;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(mention), std::string::npos) << e.what();
    }
  };
  refused({}, {{"a", "F32", {3}, kTwo}}, "tensor \"a\": 8 data bytes");
  refused({}, {{"a", "F31", {2}, kTwo}}, "unknown dtype \"F31\"");
  refused({}, {{"a", "F32", {2}, kTwo}, {"a", "F32", {2}, kTwo}}, "repeated tensor name \"a\"");
  refused({}, {{"__metadata__", "F32", {2}, kTwo}}, "__metadata__");
  refused({}, {{"bad\xff", "F32", {2}, kTwo}}, "UTF-8");
  refused({{"k", "\xc0\xaf"}}, {}, "UTF-8");
  refused({{"k", "1"}, {"k", "2"}}, {}, "repeated metadata key \"k\"");
  refused({}, {{"a", "F32", {1ull << 40, 1ull << 40}, ""}}, "overflows");
}

// ---- refusals ----

TEST(Safetensors, RefusesBadLengths) {
  expect_refused("", "shorter than the 8-byte header length");
  expect_refused("1234567", "shorter than the 8-byte header length");
  std::string beyond = file("{}");
  beyond[0] = 3;  // header length 3, one byte follows
  expect_refused(beyond, "header length 3 exceeds the 2 bytes that follow");
  std::string huge = file("{}");
  huge[7] = '\x80';  // 2^63 + 2
  expect_refused(huge, "exceeds the limit");
  std::string cap = file("{}");
  const std::uint64_t over = nn::kSafetensorsMaxHeader + 1;
  std::memcpy(&cap[0], &over, 8);
  expect_refused(cap, "exceeds the limit of 100000000");
  expect_refused(file(""), "does not start with '{'");
}

TEST(Safetensors, RefusesMalformedJson) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"[]", "does not start with '{'"},
      {" {}", "does not start with '{'"},
      {"{", "expected a string"},
      {R"({"a":{"dtype":"F32")", "expected ',' or '}'"},
      {R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8])", "expected ',' or '}'"},
      {R"({"a":{"dtype":"F32","shape":[2,],"data_offsets":[0,8]}})", "expected a non-negative integer"},
      {R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},})", "expected a string"},
      {R"({"a" {}})", "expected ':'"},
      {R"({"a":{"dtype":"F32","shape":[2] "data_offsets":[0,8]}})", "expected ',' or '}'"},
      {R"({"a":1})", "expected '{'"},
      {R"({"a":[]})", "expected '{'"},
      {R"({"a":{"dtype":"F32","shape":2,"data_offsets":[0,8]}})", "expected '['"},
      {R"({"a":{"dtype":F32,"shape":[2],"data_offsets":[0,8]}})", "expected a string"},
      {R"({"a":{"dtype":"F32","shape":[[2]],"data_offsets":[0,8]}})", "expected a non-negative integer"},
      {R"({"a":{"dtype":"F32","shape":[null],"data_offsets":[0,8]}})", "expected a non-negative integer"},
      {R"({} x)", "trailing bytes after the JSON object"},
      {R"({}{})", "trailing bytes"},
      {R"({"a\q":1})", "bad escape \\q"},
      {R"({"\u12":1})", "bad \\u escape"},
      {R"({"\ud800":1})", "high surrogate"},
      {R"({"\ud800\u0041":1})", "low surrogate"},
      {R"({"\udc00":1})", "lone low surrogate"},
      {"{\"a\tb\":1}", "control character"},
      {"{\"abc", "unterminated string"},
  };
  for (const auto& [header, mention] : cases) {
    SCOPED_TRACE(header);
    expect_refused(file(header), mention);
  }
  // A header with an embedded NUL (std::string from the literal keeps it).
  expect_refused(file(std::string("{}\0  ", 5)), "trailing bytes");
}

TEST(Safetensors, RefusesInvalidUtf8) {
  const std::vector<std::string> bad = {
      "\xff", "\xc0\xaf",           // never valid; overlong '/'
      "\xe0\x80\xaf",               // overlong
      "\xed\xa0\x80",               // a UTF-16 surrogate encoded as UTF-8
      "\xf4\x90\x80\x80",           // above U+10FFFF
      "\xc3",                       // truncated
      "\xe2\x82",                   // truncated
      "\x80",                       // lone continuation byte
  };
  for (const std::string& b : bad) {
    SCOPED_TRACE(testing::PrintToString(b));
    expect_refused(file("{\"a" + b + "\":{\"dtype\":\"U8\",\"shape\":[0],\"data_offsets\":[0,0]}}"), "UTF-8");
    expect_refused(file("{\"__metadata__\":{\"k\":\"" + b + "\"}}"), "UTF-8");
  }
}

TEST(Safetensors, RefusesDuplicatesAndUnknownFields) {
  const std::string a = R"("a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]})";
  expect_refused(file("{" + a + "," + a + "}", kTwo), "repeated key \"a\"");
  // The same name once escaped: still the same key.
  expect_refused(file("{" + a + R"(,"\u0061":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})", kTwo),
                 "repeated key \"a\"");
  expect_refused(file(R"({"__metadata__":{},"__metadata__":{}})"), "repeated key \"__metadata__\"");
  expect_refused(file(R"({"__metadata__":{"k":"1","k":"2"}})"), "metadata \"k\": repeated key");
  expect_refused(file(R"({"a":{"dtype":"F32","dtype":"F32","shape":[2],"data_offsets":[0,8]}})", kTwo),
                 "tensor \"a\" field \"dtype\": repeated");
  expect_refused(file(R"({"a":{"dtype":"F32","shape":[2],"shape":[2],"data_offsets":[0,8]}})", kTwo),
                 "field \"shape\": repeated");
  expect_refused(file(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8],"data_offsets":[0,8]}})", kTwo),
                 "field \"data_offsets\": repeated");
  expect_refused(file(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8],"extra":1}})", kTwo),
                 "tensor \"a\": unknown field \"extra\"");
  expect_refused(file(R"({"a":{"shape":[2],"data_offsets":[0,8]}})", kTwo), "tensor \"a\": no \"dtype\"");
  expect_refused(file(R"({"a":{"dtype":"F32","data_offsets":[0,8]}})", kTwo), "tensor \"a\": no \"shape\"");
  expect_refused(file(R"({"a":{"dtype":"F32","shape":[2]}})", kTwo), "tensor \"a\": no \"data_offsets\"");
  expect_refused(file(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8,8]}})", kTwo),
                 "3 numbers, expected [begin, end]");
  expect_refused(file(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[8]}})", kTwo), "expected [begin, end]");
}

TEST(Safetensors, RefusesBadMetadata) {
  expect_refused(file(R"({"__metadata__":{"k":1}})"), "metadata \"k\": the value is not a string");
  expect_refused(file(R"({"__metadata__":{"k":null}})"), "not a string");
  expect_refused(file(R"({"__metadata__":{"k":["v"]}})"), "not a string");
  expect_refused(file(R"({"__metadata__":{"k":{"v":"w"}}})"), "not a string");
  expect_refused(file(R"({"__metadata__":"v"})"), "\"__metadata__\": expected '{'");
  expect_refused(file(R"({"__metadata__":null})"), "expected '{'");
}

TEST(Safetensors, RefusesBadNumbers) {
  auto with_shape = [](const std::string& shape) {
    return file(R"({"a":{"dtype":"U8","shape":)" + shape + R"(,"data_offsets":[0,0]}})");
  };
  expect_refused(with_shape("[-1]"), "tensor \"a\" field \"shape\": negative number");
  expect_refused(with_shape("[-0]"), "negative number");
  expect_refused(with_shape("[2.0]"), "not an integer");
  expect_refused(with_shape("[2e0]"), "not an integer");
  expect_refused(with_shape("[2E0]"), "not an integer");
  expect_refused(with_shape("[02]"), "leading zero");
  expect_refused(with_shape("[+2]"), "expected a non-negative integer");
  expect_refused(with_shape("[18446744073709551616]"), "number too large for 64 bits");
  expect_refused(with_shape("[99999999999999999999999]"), "number too large");
  // 2^64 - 1 itself parses; its byte count is then wrong.
  expect_refused(with_shape("[18446744073709551615]"), "bytes, but dtype U8 and shape need 18446744073709551615");
  expect_refused(file(R"({"a":{"dtype":"U8","shape":[0],"data_offsets":[0,-1]}})"),
                 "field \"data_offsets\": negative number");
}

TEST(Safetensors, RefusesBadSizesAndLayouts) {
  auto t = [](const std::string& name, const std::string& dtype, const std::string& shape, std::uint64_t begin,
              std::uint64_t end) {
    return "\"" + name + "\":{\"dtype\":\"" + dtype + "\",\"shape\":" + shape + ",\"data_offsets\":[" +
           std::to_string(begin) + "," + std::to_string(end) + "]}";
  };
  const std::string data16 = kTwo + kTwo;
  expect_refused(file("{" + t("a", "F33", "[2]", 0, 8) + "}", kTwo), "tensor \"a\": unknown dtype \"F33\"");
  expect_refused(file("{" + t("a", "f32", "[2]", 0, 8) + "}", kTwo), "unknown dtype \"f32\"");
  // Element count times dtype size overflows (in the order written, like the reference).
  expect_refused(file("{" + t("a", "F32", "[4294967296,4294967296]", 0, 8) + "}", kTwo),
                 "tensor \"a\" field \"shape\": the byte size overflows 64 bits");
  expect_refused(file("{" + t("a", "F32", "[4611686018427387904]", 0, 8) + "}", kTwo), "overflows");
  expect_refused(file("{" + t("a", "U8", "[4294967296,4294967296,0]", 0, 0) + "}"), "overflows");
  // Offsets against the shape.
  expect_refused(file("{" + t("a", "F32", "[3]", 0, 8) + "}", kTwo),
                 "tensor \"a\" field \"data_offsets\": 8 bytes, but dtype F32 and shape need 12");
  expect_refused(file("{" + t("a", "F32", "[2]", 8, 0) + "}", kTwo), "end 0 before begin 8");
  expect_refused(file("{" + t("a", "F32", "[2]", 8, 16) + "}", kTwo), "end 16 beyond the 8-byte data buffer");
  expect_refused(file("{" + t("a", "F32", "[2]", 18446744073709551608ull, 0) + "}", kTwo), "before begin");
  // Overlap, gap, bytes after the last tensor, data without tensors.
  expect_refused(file("{" + t("a", "F32", "[2]", 0, 8) + "," + t("b", "F32", "[2]", 4, 12) + "}", data16),
                 "tensor \"b\" field \"data_offsets\": overlaps tensor \"a\"");
  expect_refused(file("{" + t("a", "F32", "[2]", 0, 8) + "," + t("b", "F32", "[2]", 0, 8) + "}", data16),
                 "overlaps");
  expect_refused(file("{" + t("a", "F32", "[4]", 0, 16) + "," + t("e", "U8", "[0]", 4, 4) + "}", data16),
                 "tensor \"e\" field \"data_offsets\": overlaps tensor \"a\"");
  expect_refused(file("{" + t("a", "F32", "[1]", 0, 4) + "," + t("b", "F32", "[2]", 8, 16) + "}", data16),
                 "tensor \"b\" field \"data_offsets\": a gap of 4 unused bytes before it (at data offset 4)");
  expect_refused(file("{" + t("a", "F32", "[1]", 4, 8) + "}", kTwo), "a gap of 4 unused bytes");
  expect_refused(file("{" + t("a", "F32", "[1]", 0, 4) + "}", kTwo), "4 bytes after the last tensor's data");
  expect_refused(file("{}", "x"), "1 bytes after the last tensor's data");
}

// Every prefix of a valid file, and random byte changes: refused with std::invalid_argument
// or accepted with views inside the input, never another failure.
TEST(Safetensors, TruncationsAndMutationsAreRefusedCleanly) {
  const std::string good = nn::write_safetensors(
      {{"pgmate_format", "2"}}, {{"a", "F32", {2}, kTwo}, {"b", "U8", {3}, "xyz"}, {"c", "I16", {1, 1}, "!!"}});
  for (std::size_t cut = 0; cut < good.size(); ++cut) {
    SCOPED_TRACE(cut);
    EXPECT_THROW(nn::parse_safetensors(good.substr(0, cut)), std::invalid_argument);
  }
  std::mt19937 rng(3);
  int accepted = 0;
  for (int trial = 0; trial < 20000; ++trial) {
    std::string bad = good;
    const int flips = 1 + static_cast<int>(rng() % 3);
    for (int f = 0; f < flips; ++f) {
      const std::size_t at = rng() % bad.size();
      bad[at] = static_cast<char>(rng() % 2 ? rng() : " {}[],:\"0123456789-.eE\\u"[rng() % 25]);
    }
    try {
      const nn::SafetensorsView view = nn::parse_safetensors(bad);
      ++accepted;
      std::uint64_t total = 0;
      for (const auto& t : view.tensors) {
        ASSERT_LE(t.begin, t.end);
        ASSERT_LE(t.end, view.data.size());
        total += t.end - t.begin;
      }
      ASSERT_EQ(total, view.data.size());
      ASSERT_EQ(view.data.data() + view.data.size(), bad.data() + bad.size());
    } catch (const std::invalid_argument&) {
    }
  }
  EXPECT_GT(accepted, 0);  // flips in the tensor data
}

}  // namespace
