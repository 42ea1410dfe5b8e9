// pgmate selfplay's database side: the run's state, the networks and the finished games in
// PostgreSQL. Implemented with libpqxx (selfplay_store.cpp); a pgmate built without it
// has only open_selfplay_store, which says so (no_database.cpp).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "link/worker_client.h"
#include "mcts/selfplay.h"

namespace pgmate::cli {

inline constexpr const char* kWorkerHint =
    "pass --worker with the worker's Unix socket (e.g. --worker /path/to/pgdata/pgmate_worker.sock) "
    "or tcp://HOST:PORT";

// Games already stored for a run, and the index the next game gets. Games finish out of
// order, so an interrupted run may have stored indexes 0 and 2 but not 1: going on from
// the highest stored index + 1 (not from the count) never plays a seed twice.
struct RunState {
  std::int64_t stored = 0;
  std::int64_t next_index = 0;
};

// Database errors come out as std::runtime_error with the server's message.
class SelfplayStore {
 public:
  virtual ~SelfplayStore() = default;

  // Takes the run for this client (a second client on the same run stops: both would
  // play the same seeds) and reads how far it got.
  virtual RunState claim_run(const std::string& run) = 0;
  // The key of pgmate.networks row `id` (database, id, SHA-256 of the weights), read once:
  // the run uses that version throughout.
  virtual worker::NetworkKey network_key(std::int64_t id) = 0;
  // Hands the worker the network's config and weights (tens of MB, read only when the
  // worker does not hold it); fails when the row changed since network_key.
  virtual void load_network(worker::WorkerClient& client, const worker::NetworkKey& key) = 0;
  // The worker's address as the server knows it (pgmate.worker_socket, else the socket in
  // the data directory).
  virtual std::string worker_address() = 0;
  // One game in one transaction: its pgmate.games row (the server's date) and its
  // positions, or nothing.
  virtual void store_game(const mcts::FinishedGame& game, const mcts::SelfPlayConfig& config,
                          const std::string& evaluator, std::int64_t network_id, const std::string& run) = 0;
};

// Connects (an empty conninfo uses libpq's environment) and checks that the tables exist.
// Throws NotBuiltIn in a pgmate built without libpqxx.
std::unique_ptr<SelfplayStore> open_selfplay_store(const std::string& conninfo);

}  // namespace pgmate::cli
