// libFuzzer target: parse_safetensors (the network weights reader) on arbitrary bytes. It
// must refuse with std::invalid_argument or return views that lie inside the input and
// cover the data buffer exactly; what it accepts must write back (write_safetensors) to a
// file that parses to the same metadata, tensors and bytes, and writes back identically.
#include <algorithm>
#include <numeric>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "fuzz_common.h"
#include "link/safetensors.h"

using namespace pgmate::fuzz;
using pgmate::worker::nn::parse_safetensors;
using pgmate::worker::nn::safetensors_dtype_size;
using pgmate::worker::nn::safetensors_header_size;
using pgmate::worker::nn::SafetensorsInput;
using pgmate::worker::nn::SafetensorsView;
using pgmate::worker::nn::write_safetensors;

namespace {

// The tensors in data order (ties in header order), as writer input.
std::vector<SafetensorsInput> inputs_in_data_order(const SafetensorsView& view) {
  std::vector<std::size_t> order(view.tensors.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return view.tensors[a].begin < view.tensors[b].begin;
  });
  std::vector<SafetensorsInput> out;
  for (std::size_t i : order) {
    const auto& t = view.tensors[i];
    out.push_back({t.name, t.dtype, t.shape, view.bytes(t)});
  }
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  SafetensorsView view;
  try {
    view = parse_safetensors(bytes);
  } catch (const std::invalid_argument&) {
    return 0;
  }

  // Views inside the input; every data byte in exactly one tensor; names and keys unique.
  FUZZ_CHECK(view.data.data() + view.data.size() == bytes.data() + bytes.size());
  std::uint64_t covered = 0;
  std::set<std::string> names;
  for (const auto& t : view.tensors) {
    FUZZ_CHECK(t.begin <= t.end && t.end <= view.data.size());
    FUZZ_CHECK(safetensors_dtype_size(t.dtype) != 0);
    FUZZ_CHECK(t.name != "__metadata__");
    FUZZ_CHECK(names.insert(t.name).second);
    covered += t.end - t.begin;
  }
  FUZZ_CHECK(covered == view.data.size());
  std::set<std::string> keys;
  for (const auto& kv : view.metadata) FUZZ_CHECK(keys.insert(kv.first).second);

  // Write back, read again: the same content; a second write is identical.
  const std::vector<SafetensorsInput> inputs = inputs_in_data_order(view);
  std::string written;
  try {
    written = write_safetensors(view.metadata, inputs);
  } catch (const std::invalid_argument& e) {
    fail_with("write_safetensors refused what parse_safetensors accepted", e.what());
  }
  FUZZ_CHECK(safetensors_header_size(view.metadata, inputs) + view.data.size() == written.size());
  SafetensorsView again;
  try {
    again = parse_safetensors(written);
  } catch (const std::invalid_argument& e) {
    fail_with("parse_safetensors refused write_safetensors output", e.what());
  }
  FUZZ_CHECK(again.metadata == view.metadata);
  FUZZ_CHECK(again.tensors.size() == inputs.size());
  std::uint64_t offset = 0;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const auto& t = again.tensors[i];
    FUZZ_CHECK(t.name == inputs[i].name && t.dtype == inputs[i].dtype && t.shape == inputs[i].shape);
    FUZZ_CHECK(t.begin == offset);
    FUZZ_CHECK(again.bytes(t) == inputs[i].data);
    offset = t.end;
  }
  FUZZ_CHECK(write_safetensors(again.metadata, inputs_in_data_order(again)) == written);
  return 0;
}
