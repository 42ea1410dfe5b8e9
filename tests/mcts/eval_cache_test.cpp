// The evaluation cache's key against the network input it stands for: equal keys must mean
// equal inputs, or one position's evaluation answers another's.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "chess/fen.h"
#include "chess/game.h"
#include "chess/notation.h"
#include "mcts/eval_cache.h"
#include "nn/encoding.h"

namespace pgmate::mcts {
namespace {

static_assert(EvalCache::kHistoryPositions == size_t(nn::kHistoryPositions));

std::vector<float> input_of(const EvalRequest& r) {
  std::vector<float> planes(nn::kInputSize);
  nn::encode(r.history.data(), int(r.history.size()), planes.data(), r.repetitions);
  return planes;
}

// F2: the key used to leave out the halfmove clock and the fullmove number (planes 55 and
// 49). Over variants of the clocks, the history length and the repetition count: equal keys
// exactly when the encoder's inputs are equal, byte for byte.
TEST(EvalCache, KeyCoversExactlyWhatTheNetworkReads) {
  chess::Game game(chess::parse_fen(chess::kStartFen));
  std::vector<chess::Board> boards{game.board()};
  for (const char* uci : {"e2e4", "e7e5", "g1f3", "b8c6", "f1b5"}) {
    game.play(chess::parse_uci(game.board(), uci));
    boards.push_back(game.board());
  }
  std::vector<EvalRequest> requests;
  for (int length = 1; length <= 5; ++length)  // a fifth board is beyond what the network sees
    for (int halfmove : {-1, 7, 100, 130})    // -1: as played
      for (int fullmove : {-1, 40, 200, 250})
        for (int repetitions : {0, 1, 2, 3}) {
          EvalRequest r;
          for (int i = 0; i < length; ++i) r.history.push_back(boards[boards.size() - 1 - size_t(i)]);
          if (halfmove >= 0) r.history[0].halfmove = std::uint16_t(halfmove);
          if (fullmove >= 0) r.history[0].fullmove = std::uint16_t(fullmove);
          if (length > 1) r.history[1].halfmove = std::uint16_t(halfmove + 20);  // not read: no difference
          r.repetitions = repetitions;
          requests.push_back(r);
        }
  std::vector<std::vector<float>> inputs;
  std::vector<std::uint64_t> keys;
  for (const EvalRequest& r : requests) {
    inputs.push_back(input_of(r));
    keys.push_back(EvalCache::key_of(r));
  }
  int equal_pairs = 0, different_pairs = 0;
  for (size_t a = 0; a < requests.size(); ++a)
    for (size_t b = a + 1; b < requests.size(); ++b) {
      const bool same_input = std::memcmp(inputs[a].data(), inputs[b].data(), inputs[a].size() * sizeof(float)) == 0;
      const bool same_key = keys[a] == keys[b];
      ASSERT_EQ(same_key, same_input) << "requests " << a << " and " << b;
      (same_input ? equal_pairs : different_pairs) += 1;
    }
  // Both kinds occur: clocks beyond the clip, repetitions beyond 2 and a fifth board change
  // nothing; everything else does.
  EXPECT_GT(equal_pairs, 0);
  EXPECT_GT(different_pairs, 0);
}

}  // namespace
}  // namespace pgmate::mcts
