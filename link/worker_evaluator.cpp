#include "link/worker_evaluator.h"

#include <cmath>
#include <stdexcept>
#include <string>
#include <utility>

namespace pgmate::worker {

WorkerEvaluator::WorkerEvaluator(WorkerClient& client, NetworkKey network,
                                 std::function<void(const NetworkKey&)> load_network)
    : client_(client), network_(network), load_network_(std::move(load_network)) {}

std::string WorkerEvaluator::name() const { return "network " + std::to_string(network_.id); }

void WorkerEvaluator::evaluate(std::span<const mcts::EvalRequest> requests, std::span<mcts::EvalResult> results) {
  std::vector<EvalInput> inputs(requests.size());
  for (size_t i = 0; i < requests.size(); ++i) {
    inputs[i].history = requests[i].history;
    inputs[i].repetitions = requests[i].repetitions;
  }
  std::vector<EvalOutput> outputs;
  try {
    outputs = client_.evaluate(inputs, network_).outputs;
  } catch (const NetworkNotLoaded&) {
    if (!load_network_) throw;
    load_network_(network_);
    outputs = client_.evaluate(inputs, network_).outputs;
  }
  if (outputs.size() != requests.size())
    throw WorkerError("worker answered " + std::to_string(outputs.size()) + " evaluations for " +
                      std::to_string(requests.size()) + " positions");
  for (size_t i = 0; i < requests.size(); ++i) {
    const EvalOutput& o = outputs[i];
    const mcts::EvalRequest& r = requests[i];
    mcts::EvalResult& out = results[i];
    // A broken answer (fp16 overflow turning a softmax into NaN, say) must not reach the
    // search: refuse the batch, naming the position.
    const auto refuse = [&](const std::string& what) {
      throw WorkerError("worker answered " + what + " for position " + std::to_string(i) + " of " +
                        std::to_string(requests.size()) + " (win " + std::to_string(o.win) + ", draw " +
                        std::to_string(o.draw) + ", loss " + std::to_string(o.loss) + ")");
    };
    if (!std::isfinite(o.win) || !std::isfinite(o.draw) || !std::isfinite(o.loss))
      refuse("a win/draw/loss that is not finite");
    if (o.win < 0 || o.draw < 0 || o.loss < 0) refuse("a negative win/draw/loss");
    if (std::fabs(double(o.win) + double(o.draw) + double(o.loss) - 1.0) > 1e-3)
      refuse("a win/draw/loss not summing to 1");
    for (float p : o.priors)
      if (!std::isfinite(p)) refuse("a prior that is not finite");
    out.win = o.win;
    out.draw = o.draw;
    out.loss = o.loss;
    out.priors.assign(r.moves.size(), 0.0f);
    // The worker lists the legal moves in the same generation order; match by move anyway,
    // so a different order can never misattribute priors.
    if (o.moves == r.moves) {
      for (size_t j = 0; j < o.priors.size() && j < out.priors.size(); ++j) out.priors[j] = o.priors[j];
    } else {
      for (size_t j = 0; j < o.moves.size() && j < o.priors.size(); ++j)
        for (size_t k = 0; k < r.moves.size(); ++k)
          if (r.moves[k] == o.moves[j]) out.priors[k] = o.priors[j];
    }
    float sum = 0;
    for (float p : out.priors) sum += p;
    if (sum > 0) {
      for (float& p : out.priors) p /= sum;
    } else {
      for (float& p : out.priors) p = 1.0f / float(out.priors.size());
    }
  }
}

}  // namespace pgmate::worker
