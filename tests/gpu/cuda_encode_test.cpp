// The GPU encoder must produce exactly the host encoder's planes (runs only with a GPU).
#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include "chess/fen.h"
#include "chess/movegen.h"
#include "worker/cuda/encode_kernel.h"
#include "worker/cuda/perft_kernel.h"
#include "nn/encoding.h"

namespace pgmate::chess {
namespace {

TEST(CudaEncode, MatchesHostEncoderOnThePerftSuite) {
  std::string why;
  if (!gpu::cuda_device_available(&why)) GTEST_SKIP() << "skipped: " << why;
  std::vector<std::vector<Board>> histories;
  std::ifstream in(std::string(PGMATE_TEST_DATA_DIR) + "/perftsuite.epd");
  for (std::string line; std::getline(in, line);) {
    if (line.empty()) continue;
    const Board root = parse_fen(line.substr(0, line.find(';')));
    histories.push_back({root});
    MoveList list;
    legal_moves(root, list);
    for (Move m : list) {  // children with their parent as history
      Board child = root;
      child.play(m);
      histories.push_back({child, root});
    }
  }
  std::vector<float> host(histories.size() * nn::kInputSize);
  nn::encode_batch(histories, host.data());
  const std::vector<float> device = gpu::encode_batch(histories);
  ASSERT_EQ(device.size(), host.size());
  for (size_t i = 0; i < host.size(); ++i)
    ASSERT_EQ(device[i], host[i]) << "input " << i / nn::kInputSize << " plane " << (i % nn::kInputSize) / 64;
}

}  // namespace
}  // namespace pgmate::chess
