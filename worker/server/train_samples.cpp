#include "worker/server/train_samples.h"

#include <stdexcept>
#include <string>

#include "chess/fen.h"
#include "chess/movegen.h"
#include "chess/notation.h"
#include "nn/encoding.h"
#include "nn/policy.h"

namespace pgmate::worker {

namespace {

constexpr std::size_t kPlaneFloats = std::size_t(::pgmate::nn::kInputSize);

[[noreturn]] void bad_sample(std::size_t index, const std::string& what) {
  throw std::invalid_argument("sample " + std::to_string(index) + ": " + what);
}

}  // namespace

nn::TrainBatch make_train_batch(const std::vector<protocol::TrainSample>& samples) {
  const std::size_t n = samples.size();
  nn::TrainBatch batch;
  batch.size = int(n);
  batch.planes.resize(n * kPlaneFloats);
  batch.legal_slots.resize(n);
  batch.policy.resize(n);
  batch.wdl.resize(n * 3);
  batch.weight.resize(n);
  chess::MoveList legal;
  for (std::size_t i = 0; i < n; ++i) {
    const protocol::TrainSample& s = samples[i];
    if (s.history.empty() || s.history.size() > std::size_t(protocol::kMaxHistory))
      bad_sample(i, "a history of " + std::to_string(s.history.size()) + " positions (1..4)");
    if (s.policy.size() != s.moves.size())
      bad_sample(i, std::to_string(s.policy.size()) + " probabilities for " + std::to_string(s.moves.size()) +
                        " target moves");
    const chess::Board& b = s.history.front();
    ::pgmate::nn::encode(s.history.data(), int(s.history.size()), batch.planes.data() + i * kPlaneFloats,
                         s.repetitions);

    chess::legal_moves(b, legal);
    auto& slots = batch.legal_slots[i];
    slots.resize(std::size_t(legal.size));
    ::pgmate::nn::policy_slots(legal, b.side, slots.data());

    // The target over the legal moves: each sample move to the legal move it names.
    auto& target = batch.policy[i];
    target.assign(std::size_t(legal.size), 0.0f);
    std::vector<bool> given(std::size_t(legal.size), false);
    double sum = 0;
    for (std::size_t k = 0; k < s.moves.size(); ++k) {
      const chess::Move wanted = chess::board_free(s.moves[k]);
      int found = -1;
      for (int j = 0; j < legal.size && found < 0; ++j)
        if (chess::board_free(legal.moves[j]) == wanted) found = j;
      if (found < 0)
        bad_sample(i, "the target move " + chess::to_uci(s.moves[k]) + " is not legal in " + chess::to_fen(b));
      if (given[std::size_t(found)])
        bad_sample(i, "the target move " + chess::to_uci(s.moves[k]) + " is given twice");
      given[std::size_t(found)] = true;
      target[std::size_t(found)] = s.policy[k];
      sum += s.policy[k];
    }
    if (!(sum > 0)) bad_sample(i, "the target move probabilities sum to 0");
    for (float& p : target) p = float(p / sum);

    const double wdl_sum = double(s.wdl[0]) + s.wdl[1] + s.wdl[2];
    if (!(wdl_sum > 0)) bad_sample(i, "the WDL target sums to 0");
    for (int k = 0; k < 3; ++k) batch.wdl[i * 3 + std::size_t(k)] = float(s.wdl[k] / wdl_sum);
    batch.weight[i] = s.weight;
  }
  return batch;
}

}  // namespace pgmate::worker
