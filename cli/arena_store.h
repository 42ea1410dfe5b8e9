// pgmate arena's database side: the match row, its games, ECO openings and networks in
// PostgreSQL. Implemented with libpqxx (arena_store.cpp); a pgmate built without it has
// only open_arena_store, which says so (no_database.cpp).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "arena/match.h"
#include "link/worker_client.h"

namespace pgmate::cli {

struct StoredMatch {
  std::int64_t id = 0;
  bool created = false;                                // a new row, not a resumed match
  std::vector<std::pair<std::int64_t, double>> games;  // the stored games: (index, A's score)
};

// Database errors come out as std::runtime_error with the server's message.
class ArenaStore {
 public:
  virtual ~ArenaStore() = default;
  // Creates match `name`, or takes up the stored one when its players and options are the
  // same (else an error naming what differs; `games` may grow). A second client on the
  // same match stops (a claim of the name for the session: pgmate.client_claim).
  virtual StoredMatch claim_match(const std::string& name, const std::string& a_json, const std::string& b_json,
                                  const std::string& options_json, int games) = 0;
  // The lines of pgmate.openings, in id order.
  virtual std::vector<arena::Opening> eco_openings() = 0;
  virtual worker::NetworkKey network_key(std::int64_t id) = 0;
  virtual void load_network(worker::WorkerClient& client, const worker::NetworkKey& key) = 0;
  virtual std::string worker_address() = 0;
  // One game, one transaction: its pgmate.games row (source 'arena'; the server's date).
  virtual void store_game(std::int64_t match_id, const arena::MatchGame& game,
                          const std::vector<std::pair<std::string, std::string>>& tags,
                          const std::string& arena_json) = 0;
  // status: running (stopped before its end), finished, or the SPRT's verdict.
  virtual void end_match(std::int64_t match_id, const std::string& status, double seconds) = 0;
};

std::unique_ptr<ArenaStore> open_arena_store(const std::string& conninfo);

}  // namespace pgmate::cli
