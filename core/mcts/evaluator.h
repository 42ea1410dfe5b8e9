// What MCTS asks of an evaluator: for a batch of positions, a win/draw/loss estimate and a
// prior over the legal moves. Implementations: the network in pgmate-worker
// (link/worker_evaluator.h), uniform priors with random rollouts
// (rollout_evaluator.h, "pure MCTS") and any function (FunctionEvaluator, for tests).
#pragma once

#include <functional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "chess/board.h"

namespace pgmate::mcts {

struct EvalRequest {
  // The position first, then up to 3 earlier positions of the game, newest first.
  std::vector<chess::Board> history;
  // The legal moves of history[0], in generation order (never empty: the search resolves
  // mate and stalemate itself).
  std::vector<chess::Move> moves;
  // How often history[0] occurred before in the game (the network's repetition plane).
  int repetitions = 0;
};

struct EvalResult {
  float win = 0, draw = 1, loss = 0;  // from the side to move's point of view
  std::vector<float> priors;           // one per request move, same order, summing to 1
  float value() const { return win - loss; }
};

class Evaluator {
 public:
  virtual ~Evaluator() = default;
  // results.size() == requests.size(); results[i] answers requests[i].
  virtual void evaluate(std::span<const EvalRequest> requests, std::span<EvalResult> results) = 0;
  // Short description for logs and the stored game parameters ("pure-mcts", "network 3").
  virtual std::string name() const = 0;
  // Whether equal inputs give equal outputs, so results may be cached.
  virtual bool deterministic() const { return true; }
};

// Any function of one request: the in-process evaluator of unit tests and of small tools.
class FunctionEvaluator final : public Evaluator {
 public:
  using Function = std::function<EvalResult(const EvalRequest&)>;
  explicit FunctionEvaluator(Function f, std::string name = "function")
      : f_(std::move(f)), name_(std::move(name)) {}
  void evaluate(std::span<const EvalRequest> requests, std::span<EvalResult> results) override {
    for (size_t i = 0; i < requests.size(); ++i) results[i] = f_(requests[i]);
    ++batches_;
  }
  std::string name() const override { return name_; }
  int batches() const { return batches_; }

 private:
  Function f_;
  std::string name_;
  int batches_ = 0;
};

// Uniform priors and a draw: the "know nothing" evaluator.
EvalResult uniform_evaluation(const EvalRequest& request);

}  // namespace pgmate::mcts
