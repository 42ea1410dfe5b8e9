// pgmate arena's matches and games in PostgreSQL (libpqxx): the match row first, then each
// finished game in its own transaction, so a client killed at any moment leaves whole
// games, and the same command resumes the match by its name.
#include "arena_store.h"

#include <chrono>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <pqxx/pqxx>

#include "args.h"
#include "chess/fen.h"
#include "link/game_rows.h"
#include "chess/notation.h"
#include "common/json.h"
#include "db.h"
#include "selfplay_store.h"

namespace pgmate::cli {
namespace {


// Test hook, as pgmate selfplay's: PGMATE_ARENA_STALL_MS=N sleeps N ms inside each
// game's transaction, before its commit.
int stall_ms() {
  const char* s = std::getenv("PGMATE_ARENA_STALL_MS");
  return s && *s ? parse_count(s, "PGMATE_ARENA_STALL_MS", 0, 3600000) : 0;
}

std::vector<chess::Move> parse_move_array(const std::string& text) {
  // '{e2e4,e7e5}' as the server writes move[].
  std::vector<chess::Move> moves;
  std::string word;
  for (char c : text) {
    if (c == '{' || c == '}' || c == ',') {
      if (!word.empty()) moves.push_back(chess::parse_uci_syntax(word));
      word.clear();
    } else {
      word += c;
    }
  }
  return moves;
}

class PqxxArenaStore final : public ArenaStore {
 public:
  explicit PqxxArenaStore(const std::string& conninfo) : stall_(stall_ms()) {
    with_db_errors([&] {
      conn_ = connect_db(conninfo);
      require_table(*conn_, "pgmate.games");
      require_table(*conn_, "pgmate.matches");
    });
  }

  StoredMatch claim_match(const std::string& name, const std::string& a_json, const std::string& b_json,
                          const std::string& options_json, int games) override {
    db_lock_name(*conn_, "pgmate arena " + name,
                 "match " + name + " is being played by another client; wait for it, or choose another --name");
    return with_db_errors([&] {
      pqxx::nontransaction tx(*conn_);
      StoredMatch m;
      pqxx::result r = tx.exec_params(
          "SELECT id, a = $2::jsonb, b = $3::jsonb, options = $4::jsonb, a::text, b::text, options::text "
          "FROM pgmate.matches WHERE name = $1 AND owner = pgmate.acting_role()",
          name, a_json, b_json, options_json);
      if (r.empty()) {
        r = tx.exec_params(rows::kInsertMatch, name, a_json, b_json, options_json, games);
        m.id = r[0][0].as<std::int64_t>();
        m.created = true;
        return m;
      }
      m.id = r[0][0].as<std::int64_t>();
      const auto differs = [&](int column, const char* what, int stored) {
        if (!r[0][column].as<bool>())
          throw UsageError("match " + name + " exists with another " + what + " (" + r[0][stored].as<std::string>() +
                           "): resume it with the same settings, or choose another --name");
      };
      differs(1, "player A", 4);
      differs(2, "player B", 5);
      differs(3, "set of options", 6);
      tx.exec_params("UPDATE pgmate.matches SET games = greatest(games, $2), status = 'running', finished_at = NULL "
                     "WHERE id = $1",
                     m.id, games);
      for (const auto& row : tx.exec_params(
               "SELECT (arena->>'index')::bigint, result, (arena->>'a_white')::bool FROM pgmate.games "
               "WHERE match_id = $1",
               m.id)) {
        const std::string result = row[1].as<std::string>();
        const bool a_white = row[2].as<bool>();
        const double score = result == "1/2-1/2" ? 0.5 : (result == "1-0") == a_white ? 1.0 : 0.0;
        m.games.emplace_back(row[0].as<std::int64_t>(), score);
      }
      return m;
    });
  }

  std::vector<arena::Opening> eco_openings() override {
    return with_db_errors([&] {
      pqxx::nontransaction tx(*conn_);
      std::vector<arena::Opening> out;
      const chess::Board start = chess::parse_fen("startpos");
      for (const auto& row : tx.exec("SELECT eco, name, variation, moves::text FROM pgmate.openings ORDER BY id")) {
        arena::Opening o;
        o.name = row[0].as<std::string>() + " " + row[1].as<std::string>() +
                 (row[2].is_null() ? "" : ": " + row[2].as<std::string>());
        o.start = start;
        chess::Board b = start;
        for (chess::Move m : parse_move_array(row[3].as<std::string>())) {
          const chess::Move legal = chess::resolve_move(b, m);
          b.play(legal);
          o.moves.push_back(legal);
        }
        out.push_back(std::move(o));
      }
      if (out.empty())
        throw std::runtime_error("pgmate.openings is empty: load the ECO lines with pgmate import --openings, or use "
                                 "--openings startpos or a file");
      return out;
    });
  }

  worker::NetworkKey network_key(std::int64_t id) override { return db_network_key(*conn_, id); }
  void load_network(worker::WorkerClient& client, const worker::NetworkKey& key) override {
    db_load_network(*conn_, client, key);
  }
  std::string worker_address() override { return db_worker_address(*conn_, kWorkerHint); }

  void store_game(std::int64_t match_id, const arena::MatchGame& game,
                  const std::vector<std::pair<std::string, std::string>>& tags,
                  const std::string& arena_json) override {
    const rows::ArenaGameTags t = rows::arena_game_tags(tags);
    with_db_errors([&] {
      pqxx::work tx(*conn_, "pgmate_arena");
      tx.exec_params(rows::kInsertArenaGame, t.event, t.round, t.white, t.black, game.result, game.termination,
                     chess::to_fen(game.start), uci_array(game.moves), t.json, match_id, arena_json);
      if (stall_ > 0) std::this_thread::sleep_for(std::chrono::milliseconds(stall_));
      tx.commit();
    });
  }

  void end_match(std::int64_t match_id, const std::string& status, double seconds) override {
    with_db_errors([&] {
      pqxx::nontransaction tx(*conn_);
      tx.exec_params(
          "UPDATE pgmate.matches SET status = $2, seconds = seconds + $3, "
          "finished_at = CASE WHEN $2 = 'running' THEN NULL ELSE now() END WHERE id = $1",
          match_id, status, seconds);
    });
  }

 private:
  std::unique_ptr<pqxx::connection> conn_;
  int stall_;
};

}  // namespace

std::unique_ptr<ArenaStore> open_arena_store(const std::string& conninfo) {
  return std::make_unique<PqxxArenaStore>(conninfo);
}

}  // namespace pgmate::cli
