// pgmate selfplay's games in PostgreSQL (libpqxx): each finished game stored in one
// transaction, its pgmate.games row, then one pgmate.selfplay_positions row per searched
// position, then COMMIT. A client killed at any moment leaves whole games only.
#include "selfplay_store.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <pqxx/pqxx>

#include "args.h"
#include "chess/fen.h"
#include "link/game_rows.h"
#include "chess/notation.h"
#include "db.h"

namespace pgmate::cli {
namespace {


// Test hook: PGMATE_SELFPLAY_STALL_MS=N sleeps N ms after a game's row is inserted and
// before its positions and the commit, so tests can kill the client inside the
// transaction (it shows as 'idle in transaction' in pg_stat_activity meanwhile).
int stall_ms() {
  const char* s = std::getenv("PGMATE_SELFPLAY_STALL_MS");
  return s && *s ? parse_count(s, "PGMATE_SELFPLAY_STALL_MS", 0, 3600000) : 0;
}

const std::vector<std::string> kPositionColumns = {"game_id", "ply",    "board",  "moves",  "visits",
                                                   "priors",  "value",  "played", "policy", "repetitions",
                                                   "full_search", "draw"};

class PqxxSelfplayStore final : public SelfplayStore {
 public:
  explicit PqxxSelfplayStore(const std::string& conninfo) : stall_(stall_ms()) {
    with_db_errors([&] {
      conn_ = connect_db(conninfo);
      require_table(*conn_, "pgmate.games");
      require_table(*conn_, "pgmate.selfplay_positions");
    });
  }

  // Two clients on one run would both take the next indexes and play the same seeds: the
  // first claims the run name for its session (pgmate.client_claim, which ends when the
  // client exits or is killed), a second one stops. It waits a few seconds first, so a
  // restart right after a kill does not race the server noticing the dead connection.
  RunState claim_run(const std::string& run) override {
    db_lock_name(*conn_, "pgmate selfplay " + run,
                 "run " + run + " is being played by another pgmate selfplay client; wait for it, or choose another --run");
    return with_db_errors([&] {
      pqxx::nontransaction tx(*conn_);
      const pqxx::result r = tx.exec_params(
          "SELECT count(*), coalesce(max((selfplay->>'index')::bigint) + 1, 0) FROM pgmate.games "
          "WHERE source = 'selfplay' AND selfplay->>'run' = $1",
          run);
      RunState s;
      s.stored = r[0][0].as<std::int64_t>();
      s.next_index = std::max(s.stored, r[0][1].as<std::int64_t>());
      return s;
    });
  }

  worker::NetworkKey network_key(std::int64_t id) override { return db_network_key(*conn_, id); }
  void load_network(worker::WorkerClient& client, const worker::NetworkKey& key) override {
    db_load_network(*conn_, client, key);
  }
  std::string worker_address() override { return db_worker_address(*conn_, kWorkerHint); }

  void store_game(const mcts::FinishedGame& game, const mcts::SelfPlayConfig& config, const std::string& evaluator,
                  std::int64_t network_id, const std::string& run) override {
    with_db_errors([&] {
      pqxx::work tx(*conn_, "pgmate_selfplay");
      const std::string player = "pgmate " + evaluator;
      const pqxx::result r = tx.exec_params(
          rows::kInsertSelfplayGame, std::to_string(game.index + 1), player, game.result, game.termination,
          chess::to_fen(game.start), uci_array(game.moves), network_id,
          mcts::game_parameters_json(config, game, evaluator, run));
      const std::string game_id = r[0][0].as<std::string>();
      if (stall_ > 0) std::this_thread::sleep_for(std::chrono::milliseconds(stall_));
      {
        pqxx::stream_to copy(tx, "pgmate.selfplay_positions", kPositionColumns);
        for (size_t ply = 0; ply < game.plies.size(); ++ply) {
          const mcts::PlyRecord& p = game.plies[ply];
          copy << std::array<std::string, 12>{game_id,
                                             std::to_string(ply),
                                             chess::to_fen(p.board),
                                             uci_array(p.moves),
                                             int_array(p.visits),
                                             real_array(p.priors),
                                             float_text(p.value),
                                             chess::to_uci(p.played),
                                             real_array(p.policy),
                                             std::to_string(p.repetitions),
                                             p.full_search ? "t" : "f",
                                             float_text(p.draw)};
        }
        copy.complete();
      }
      tx.commit();
    });
  }

 private:
  std::unique_ptr<pqxx::connection> conn_;
  int stall_;
};

}  // namespace

std::unique_ptr<SelfplayStore> open_selfplay_store(const std::string& conninfo) {
  return std::make_unique<PqxxSelfplayStore>(conninfo);
}

}  // namespace pgmate::cli
