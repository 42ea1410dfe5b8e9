// MCTS evaluation by the network that pgmate-worker serves: one request per batch of
// leaves, over the worker's socket. Used by `pgmate selfplay` and CALL pgmate.selfplay.
#pragma once

#include <cstdint>
#include <functional>

#include "link/worker_client.h"
#include "mcts/evaluator.h"

namespace pgmate::worker {

class WorkerEvaluator final : public mcts::Evaluator {
 public:
  // load_network(key) hands the worker the network; it is called when the worker answers
  // that it does not hold it (first use, evicted, after a worker restart), then the batch
  // is sent again once.
  WorkerEvaluator(WorkerClient& client, NetworkKey network, std::function<void(const NetworkKey&)> load_network);
  void evaluate(std::span<const mcts::EvalRequest> requests, std::span<mcts::EvalResult> results) override;
  std::string name() const override;

 private:
  WorkerClient& client_;
  NetworkKey network_;
  std::function<void(const NetworkKey&)> load_network_;
};

}  // namespace pgmate::worker
