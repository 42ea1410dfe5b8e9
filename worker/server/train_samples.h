// TRAIN_STEP's samples as the trainer's batch, built on the worker (no LibTorch): the input
// planes of each history (core/nn/encoding.h), the policy slots of the position's legal
// moves (core/nn/policy.h) and the targets over those slots.
#pragma once

#include <vector>

#include "worker/backend/train_batch.h"
#include "link/protocol.h"

namespace pgmate::worker {

// Per sample: planes from history and repetitions; legal_slots the slots of every legal
// move of history[0], in generation order; policy the sample's probabilities put on the
// slots of its moves (matched by from, to and promotion: chess::board_free) and 0 on the
// other legal moves; policy and WDL normalised to sum 1; the weight as given. Throws
// std::invalid_argument naming the sample for a target move that is not legal ("sample 12:
// the target move e2e5 is not legal in <FEN>"), a move given twice, or targets that sum to
// 0 (the decoder refuses those already).
nn::TrainBatch make_train_batch(const std::vector<protocol::TrainSample>& samples);

}  // namespace pgmate::worker
