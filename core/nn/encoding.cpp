// The 72-plane network input (see encoding.h for the plane table).
//
// Every position is first turned into the side to move's frame (bitboards byte-swapped for
// Black, colours swapped so index 0 is "us"); the features are then computed once, as if
// White were to move, and written straight into the output. The body is in
// encoding_impl.h, which CUDA kernels share.
#include "nn/encoding.h"

#include <algorithm>
#include <cstring>

#include "nn/encoding_impl.h"

namespace pgmate::nn {

using namespace pgmate::chess;

void encode(const Board* history, int count, float* out, int repetitions) {
  detail::encode_position(history, count, out, repetitions);
}

void encode_batch(const std::vector<std::vector<Board>>& histories, float* out) {
  for (std::size_t k = 0; k < histories.size(); ++k) {
    const std::vector<Board>& h = histories[k];
    float* dst = out + k * std::size_t(kInputSize);
    if (h.empty()) {
      std::memset(dst, 0, sizeof(float) * kInputSize);
      continue;
    }
    int repetitions = 0;
    // Only positions since the last irreversible move can repeat the current one.
    const std::size_t reach = std::min<std::size_t>(h.size() - 1, h[0].halfmove);
    for (std::size_t i = 2; i <= reach; i += 2)
      if (detail::same_position(h[0], h[i])) ++repetitions;
    encode(h.data(), int(std::min<std::size_t>(h.size(), kHistoryPositions)), dst, repetitions);
  }
}

}  // namespace pgmate::nn
