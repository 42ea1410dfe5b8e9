// TRAIN_STEP's samples as the trainer's batch (server/train_samples.h): planes and legal
// slots as the evaluation encodes them, targets put on the right slots and normalised,
// target moves matched without their kind bits, illegal ones refused naming the sample.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "chess/fen.h"
#include "chess/movegen.h"
#include "chess/notation.h"
#include "nn/encoding.h"
#include "nn/policy.h"
#include "worker/server/train_samples.h"

namespace pgmate::worker {
namespace {

using chess::Board;
using chess::Move;
using chess::parse_fen;
using protocol::TrainSample;

// White to move: b7b8 promotes, e5xd6 is en passant, e1g1 castles.
const char* kWhite = "r3k2r/1P6/8/3pP3/8/8/8/R3K2R w KQkq d6 0 2";
const char* kWhiteBefore = "r3k2r/1P1p4/8/4P3/8/8/8/R3K2R b KQkq - 0 1";
const char* kBlack = "r3k2r/8/8/8/3pP3/8/1p6/R3K2R b KQkq e3 0 2";

std::vector<Move> legal(const Board& b) {
  chess::MoveList list;
  chess::legal_moves(b, list);
  return {list.begin(), list.end()};
}

// The index of m among b's legal moves (compared with their kind bits).
std::size_t index_of(const Board& b, Move m) {
  const auto moves = legal(b);
  for (std::size_t i = 0; i < moves.size(); ++i)
    if (moves[i] == m) return i;
  ADD_FAILURE() << chess::to_uci(m) << " is not legal";
  return 0;
}

TEST(TrainSamples, PlanesSlotsAndNormalisedTargets) {
  const Board white = parse_fen(kWhite), before = parse_fen(kWhiteBefore), black = parse_fen(kBlack);
  TrainSample a;
  a.history = {white, before};
  a.repetitions = 1;
  const Move queen(49, 57, chess::kPromotion, chess::kQueen), knight(49, 57, chess::kPromotion, chess::kKnight);
  const Move ep(36, 43, chess::kEnPassant), castle(4, 6, chess::kCastling);
  // The kind bits a board-free move lacks (en passant, castling) are not needed.
  a.moves = {queen, Move(36, 43), Move(4, 6), knight};
  a.policy = {2, 1, 0.5f, 0.5f};
  a.wdl[0] = 3;
  a.wdl[1] = 1;
  a.wdl[2] = 0;
  a.weight = 0.25f;
  TrainSample b;
  b.history = {black};
  b.moves = {Move(9, 0, chess::kPromotion, chess::kRook), Move(27, 20, chess::kEnPassant), Move(60, 58, chess::kCastling)};
  b.policy = {1, 1, 2};

  const nn::TrainBatch batch = make_train_batch({a, b});
  ASSERT_EQ(batch.size, 2);
  ASSERT_EQ(batch.planes.size(), 2u * ::pgmate::nn::kInputSize);
  std::vector<float> planes(::pgmate::nn::kInputSize);
  ::pgmate::nn::encode(a.history.data(), 2, planes.data(), 1);
  EXPECT_TRUE(std::equal(planes.begin(), planes.end(), batch.planes.begin()));
  EXPECT_EQ(batch.planes[::pgmate::nn::kPlaneRepetitions * 64], 0.5f);
  ::pgmate::nn::encode(b.history.data(), 1, planes.data(), 0);
  EXPECT_TRUE(std::equal(planes.begin(), planes.end(), batch.planes.begin() + ::pgmate::nn::kInputSize));

  for (int i = 0; i < 2; ++i) {
    const Board& board = i == 0 ? white : black;
    const auto moves = legal(board);
    ASSERT_EQ(batch.legal_slots[std::size_t(i)].size(), moves.size());
    ASSERT_EQ(batch.policy[std::size_t(i)].size(), moves.size());
    for (std::size_t k = 0; k < moves.size(); ++k)
      EXPECT_EQ(batch.legal_slots[std::size_t(i)][k], ::pgmate::nn::policy_slot(moves[k], board.side));
  }
  const auto& pa = batch.policy[0];
  std::vector<float> want(pa.size(), 0.0f);
  want[index_of(white, queen)] = 0.5f;
  want[index_of(white, ep)] = 0.25f;
  want[index_of(white, castle)] = 0.125f;
  want[index_of(white, knight)] = 0.125f;
  EXPECT_EQ(pa, want);
  const auto& pb = batch.policy[1];
  want.assign(pb.size(), 0.0f);
  want[index_of(black, Move(9, 0, chess::kPromotion, chess::kRook))] = 0.25f;
  want[index_of(black, Move(27, 20, chess::kEnPassant))] = 0.25f;
  want[index_of(black, Move(60, 58, chess::kCastling))] = 0.5f;
  EXPECT_EQ(pb, want);
  EXPECT_EQ(batch.wdl, (std::vector<float>{0.75f, 0.25f, 0.0f, 0.0f, 1.0f, 0.0f}));
  EXPECT_EQ(batch.weight, (std::vector<float>{0.25f, 1.0f}));
}

TEST(TrainSamples, RefusesIllegalAndRepeatedTargetMovesNamingTheSample) {
  TrainSample good;
  good.history = {parse_fen(chess::kStartFen)};
  good.moves = {Move(12, 28)};
  good.policy = {1};
  TrainSample bad = good;
  bad.history = {parse_fen(kWhite)};
  bad.moves = {Move(4, 6, chess::kCastling), Move(12, 36)};  // e2e5: no piece there, and no such move
  bad.policy = {1, 1};
  try {
    make_train_batch({good, good, bad});
    ADD_FAILURE() << "accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()), std::string("sample 2: the target move e2e5 is not legal in ") + kWhite);
  }
  // A promotion matches only its own piece: b7b8 without a piece is not a legal move.
  bad.moves = {Move(49, 57)};
  bad.policy = {1};
  EXPECT_THROW(make_train_batch({bad}), std::invalid_argument);
  TrainSample twice = good;
  twice.moves = {Move(12, 28), Move(6, 21), Move(12, 28)};
  twice.policy = {1, 1, 1};
  try {
    make_train_batch({twice});
    ADD_FAILURE() << "accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()), "sample 0: the target move e2e4 is given twice");
  }
  // A checkmated position has no legal move to aim at.
  TrainSample mated = good;
  mated.history = {parse_fen("rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - 1 3")};
  EXPECT_THROW(make_train_batch({mated}), std::invalid_argument);
  // Targets summing to 0 (the decoder refuses them; a direct caller may not).
  TrainSample zero = good;
  zero.policy = {0};
  EXPECT_THROW(make_train_batch({zero}), std::invalid_argument);
  zero = good;
  zero.wdl[1] = 0;
  EXPECT_THROW(make_train_batch({zero}), std::invalid_argument);
}

}  // namespace
}  // namespace pgmate::worker
