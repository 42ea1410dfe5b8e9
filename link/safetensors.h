// The safetensors format (https://github.com/huggingface/safetensors): a strict reader and a
// writer. Pure data: nothing here runs code found in the bytes, and no LibTorch is needed
// (the fuzz target builds this file alone).
//
//   8 bytes    N, little-endian unsigned 64-bit
//   N bytes    a UTF-8 JSON object:
//                "__metadata__": {"key": "value", ...}        optional, string values only
//                "name": {"dtype": "F32", "shape": [2, 3], "data_offsets": [begin, end]}
//              offsets are relative to the data buffer; writers pad with spaces
//   the rest   the data buffer: every byte belongs to exactly one tensor
//
// parse_safetensors refuses, with std::invalid_argument naming the tensor or field:
// N beyond the input or above kSafetensorsMaxHeader, a header that is not UTF-8 or not one
// JSON object of that form (trailing non-whitespace, duplicate keys, unknown fields, values
// of another type, numbers that are negative, fractional, exponent-written, with leading
// zeros or above 2^64-1), an unknown dtype, a shape whose element or byte count overflows,
// offsets with end < begin, end beyond the buffer, a length other than
// product(shape) * dtype size, overlapping tensors, gaps between tensors and bytes after
// the last one.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace pgmate::worker::nn {

// The largest header accepted (the reference implementation's limit).
inline constexpr std::uint64_t kSafetensorsMaxHeader = 100'000'000;

using SafetensorsMetadata = std::vector<std::pair<std::string, std::string>>;

struct SafetensorsTensor {
  std::string name;
  std::string dtype;                 // "F32", "BF16", "I64", ...
  std::vector<std::uint64_t> shape;  // [] is a scalar (one element)
  std::uint64_t begin = 0, end = 0;  // data_offsets, relative to the data buffer

  bool operator==(const SafetensorsTensor&) const = default;
};

struct SafetensorsView {
  SafetensorsMetadata metadata;             // in header order
  std::vector<SafetensorsTensor> tensors;   // in header order
  std::string_view data;                    // the data buffer (points into the parsed bytes)

  // The tensor's bytes in `data`.
  std::string_view bytes(const SafetensorsTensor& t) const { return data.substr(t.begin, t.end - t.begin); }
  // The tensor of that name, or nullptr.
  const SafetensorsTensor* find(std::string_view name) const;
  // The metadata value of that key, or nullptr.
  const std::string* metadata_value(std::string_view key) const;
};

// Bytes per element of a dtype the format defines (BOOL, U8, I8, F8_E5M2, F8_E4M3, I16, U16,
// F16, BF16, I32, U32, F32, I64, U64, F64); 0 for anything else.
std::size_t safetensors_dtype_size(std::string_view dtype);

// Parses and checks `bytes` (see above). The view points into `bytes`.
SafetensorsView parse_safetensors(std::string_view bytes);

struct SafetensorsInput {
  std::string name;
  std::string dtype;
  std::vector<std::uint64_t> shape;
  std::string_view data;  // product(shape) * dtype size bytes, little-endian
};

// The file: tensors laid out contiguously in the order given, metadata in the order given
// (no "__metadata__" entry when empty), the header padded with spaces so that the buffer
// starts at a multiple of 8. Throws std::invalid_argument for an unknown dtype, a data size
// that does not match the shape, a repeated or reserved name, a repeated metadata key, or
// a string that is not UTF-8. Equal inputs give equal bytes.
std::string write_safetensors(const SafetensorsMetadata& metadata, const std::vector<SafetensorsInput>& tensors);

// The size of the 8-byte length plus the padded header write_safetensors would write for
// these tensors (their `data` is not looked at); the file's size is this plus the sum of
// the tensors' byte sizes.
std::uint64_t safetensors_header_size(const SafetensorsMetadata& metadata,
                                      const std::vector<SafetensorsInput>& tensors);

}  // namespace pgmate::worker::nn
