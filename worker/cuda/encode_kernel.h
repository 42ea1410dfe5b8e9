// The network's input planes built on the GPU for a batch: the same encoder as
// core/nn/encoding.h (shared host+device code), one thread per position.
#pragma once

#include <cstdint>
#include <vector>

#include "chess/board.h"

namespace pgmate::gpu {

// histories[i]: the position then up to 3 earlier ones, newest first (as nn::encode_batch).
// Returns histories.size() x 72 x 64 floats, equal to nn::encode_batch's output.
std::vector<float> encode_batch(const std::vector<std::vector<chess::Board>>& histories);

// The encoder writing straight into device memory, queued on `stream` (a cudaStream_t) with
// nothing waited for: input i reads boards[4i .. 4i + counts[i] - 1] (newest first) and
// repetitions[i], all on the device, and writes planes[i * 72 * 64 ...] (device floats),
// as nn::encode(boards + 4i, counts[i], ..., repetitions[i]) would. Throws as gpu::check_cuda
// does when the launch fails (gpu_errors.h).
void encode_on_device(const chess::Board* boards, const std::uint8_t* counts, const std::uint8_t* repetitions, int n,
                      float* planes, void* stream);

}  // namespace pgmate::gpu
