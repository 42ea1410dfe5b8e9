// The network's input planes built on the GPU for a batch: the same encoder as
// core/nn/encoding.h (shared host+device code), one thread per position.
#pragma once

#include <vector>

#include "chess/board.h"

namespace pgmate::gpu {

// histories[i]: the position then up to 3 earlier ones, newest first (as nn::encode_batch).
// Returns histories.size() x 72 x 64 floats, equal to nn::encode_batch's output.
std::vector<float> encode_batch(const std::vector<std::vector<chess::Board>>& histories);

}  // namespace pgmate::gpu
