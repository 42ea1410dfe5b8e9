// MCTS evaluation by the network that pgmate-worker serves: one request per batch of
// leaves, over the worker's socket. Used by `pgmate selfplay` and CALL pgmate.selfplay.
#pragma once

#include <cstdint>
#include <functional>

#include "client/worker_client.h"
#include "mcts/evaluator.h"

namespace pgmate::worker {

class WorkerEvaluator final : public mcts::Evaluator {
 public:
  // load_network(id) makes the worker serve the network; it is called when the worker
  // answers that the network is not loaded (first use, after a worker restart, or when
  // another session switched networks), then the batch is sent again once.
  WorkerEvaluator(WorkerClient& client, std::int64_t network_id, std::function<void(std::int64_t)> load_network);
  void evaluate(std::span<const mcts::EvalRequest> requests, std::span<mcts::EvalResult> results) override;
  std::string name() const override;

 private:
  WorkerClient& client_;
  std::int64_t network_id_;
  std::function<void(std::int64_t)> load_network_;
};

}  // namespace pgmate::worker
