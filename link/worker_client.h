// Client side of the worker protocol: what the extension, the CLI and tests use to talk to
// pgmate-worker. Pure C++ (no PostgreSQL, no Torch, no CUDA headers).
//
// Every call sends one framed request and waits for its reply. Waiting is bounded: a
// worker that is down, dies mid-request or does not answer within the timeout gives a
// WorkerUnavailable error; a poll hook runs every few milliseconds while waiting, so a
// PostgreSQL backend can honour query cancel (the hook may throw, which closes the
// connection).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "checkers/board.h"
#include "chess/board.h"
#include "chess/packed.h"
#include "link/protocol.h"

namespace pgmate::worker {

// The worker could not be reached, closed the connection, or timed out.
class WorkerUnavailable : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The worker answered with an error (bad request, unknown network, ...).
class WorkerError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// EVALUATE named a network the worker does not hold (first use, evicted, worker
// restarted): send it with load_network and ask again.
class NetworkNotLoaded : public WorkerError {
 public:
  using WorkerError::WorkerError;
};

using protocol::NetworkKey;

enum class Device { kAuto, kCpu, kGpu };

struct EvalInput {
  // The position to evaluate first, then up to 3 previous positions, newest first (the
  // network's history planes; missing ones are zero planes).
  std::vector<chess::Board> history;
  int repetitions = 0;  // earlier occurrences of the position in its game (0..2; more is 2)
};

struct EvalOutput {
  float win = 0, draw = 0, loss = 0;  // from the side to move's point of view
  std::vector<chess::Move> moves;     // the legal moves, in generation order
  std::vector<float> priors;          // softmax over the legal moves' policy logits
};

struct EvalReply {
  NetworkKey network;  // the network that answered (always the one asked for)
  std::vector<EvalOutput> outputs;
};

struct TrainSessionInfo {
  std::uint32_t session = 0;
  std::int64_t steps_done = 0;
  std::string device;  // where it trains: "cpu", "cuda:0"
};

struct TrainSaved {
  std::int64_t steps_done = 0;
  std::string weights, state;  // each empty unless asked for
};

struct ClientOptions {
  // Unix socket path ("/path/to/socket") or "tcp://host:port".
  std::string address;
  std::string token;  // required by the worker on TCP
  std::chrono::milliseconds connect_timeout{2000};
  std::chrono::milliseconds request_timeout{60000};
  // TRAIN_START, TRAIN_STEP, TRAIN_SAVE: a step on a large batch, or one queued behind other
  // sessions' steps, may take minutes.
  std::chrono::milliseconds train_timeout{600000};
  std::function<void()> poll;  // called every ~10 ms while waiting; may throw
};

class WorkerClient {
 public:
  explicit WorkerClient(ClientOptions options);  // connects; throws WorkerUnavailable
  ~WorkerClient();
  WorkerClient(WorkerClient&&) noexcept;
  WorkerClient& operator=(WorkerClient&&) noexcept;

  std::uint64_t perft(const chess::Board& b, int depth, Device device = Device::kAuto);
  // Checkers perft (CHECKERS_PERFT) under a capture rule. Throws WorkerError for a depth
  // beyond 0..20 or an invalid position (checked here, before anything is sent), and when
  // the worker refuses (device kGpu without a GPU: "no GPU available (...)").
  std::uint64_t checkers_perft(const checkers::Board& b, int depth,
                               checkers::CaptureRule rule = checkers::CaptureRule::kAny,
                               Device device = Device::kAuto);
  std::vector<std::vector<chess::Move>> legal_moves_batch(const std::vector<chess::Board>& boards);
  // Evaluates with exactly this network (every chunk of a large call too); throws
  // NetworkNotLoaded when the worker does not hold it.
  EvalReply evaluate(const std::vector<EvalInput>& inputs, const NetworkKey& network);
  // Hands the worker a network (its config and weights as stored in pgmate.networks); the
  // worker keeps several, least recently used first out.
  void load_network(const NetworkKey& network, const std::string& config_json, const std::string& weights);
  // Randomly initialised weights for a configuration (for pgmate.init_network).
  std::string init_network_weights(const std::string& config_json, std::uint64_t seed);
  // JSON: device, networks held (only database `database`'s when not 0), queue depth,
  // batches run, mean batch size, positions/s, training sessions, ...
  std::string status_json(std::uint32_t database = 0);

  // Training sessions belong to this connection: they end when it closes (the client
  // reconnects after a lost connection, but the sessions are gone: resume from a saved
  // state). Calls wait up to ClientOptions::train_timeout; the poll hook runs meanwhile.
  //
  // Opens a session. config/weights: the network to train; reference: weights for the KL
  // term; options_json: TrainOptions JSON (nn/train_options.h); state: a checkpoint to
  // resume from (config and weights are then ignored; options replace the saved ones, ""
  // keeps them); optimizer (without a state): a checkpoint of an earlier run whose optimizer
  // the new session continues. WorkerError for bad input or when the worker has no training
  // (or already trains its maximum of sessions).
  TrainSessionInfo train_start(const std::string& config_json, const std::string& weights,
                               const std::optional<std::string>& reference_weights, const std::string& options_json,
                               const std::optional<std::string>& state,
                               const std::optional<std::string>& optimizer = std::nullopt);
  // samples: each one encode_train_sample's bytes (pre-encoded by the caller), sent in one
  // request (1..protocol::kMaxTrainSamples of them). One optimizer step, or with
  // evaluate_only the samples' losses in eval mode (step -1; nothing changes). WorkerError
  // for a bad sample ("sample 12: ...") or a failed step (a non-finite loss): the session
  // stays as it was and usable.
  protocol::TrainMetrics train_step(std::uint32_t session, const std::vector<std::span<const std::uint8_t>>& samples,
                                    bool evaluate_only = false);
  // The session's step count, and its weights and/or state when asked; close: end the
  // session after answering.
  TrainSaved train_save(std::uint32_t session, bool weights, bool state, bool close = false);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace pgmate::worker
