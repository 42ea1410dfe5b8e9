// Small libpqxx helpers shared by the commands that talk to PostgreSQL.
#pragma once

#include <exception>
#include <memory>
#include <string>
#include <vector>

#include <pqxx/pqxx>

#include "chess/types.h"
#include "link/worker_client.h"

namespace pgmate::cli {

// Opens a connection. An empty conninfo uses libpq's environment (PGHOST, PGPORT,
// PGUSER, PGDATABASE, ...). Throws std::runtime_error with libpq's message on failure.
// The client encoding is set to UTF8.
std::unique_ptr<pqxx::connection> connect_db(const std::string& conninfo);

// Throws std::runtime_error "<table> does not exist: run CREATE EXTENSION pgmate" when the
// table is missing from the connected database.
void require_table(pqxx::connection& conn, const std::string& table);

// An exception's message with trailing whitespace removed (libpq ends messages with '\n').
std::string db_message(const std::exception& e);

// Runs f, turning libpqxx's errors into runtime_error with the server's message, so the
// commands report them without knowing libpqxx.
template <class F>
auto with_db_errors(F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const pqxx::broken_connection& e) {
    throw std::runtime_error("lost the database connection: " + db_message(e));
  } catch (const pqxx::sql_error& e) {
    throw std::runtime_error(db_message(e));
  }
}

// Claims `name` for this client's session (pgmate.client_claim: the claim ends with the
// session, when the client exits or is killed), so a second client of the same run or
// match stops with `busy_message`. It waits a few seconds first: a restart right after a
// kill may find the old session not yet gone.
void db_lock_name(pqxx::connection& conn, const std::string& name, const std::string& busy_message);

// The key of pgmate.networks row `id` (database, id, SHA-256 of the weights); UsageError
// when there is no such row.
worker::NetworkKey db_network_key(pqxx::connection& conn, std::int64_t id);
// Hands the worker the network's config and weights; fails when the row changed since
// db_network_key.
void db_load_network(pqxx::connection& conn, worker::WorkerClient& client, const worker::NetworkKey& key);
// The worker's address as the server knows it (pgmate.worker_socket, else the socket in
// the data directory, readable by superusers and pg_read_all_settings members only).
std::string db_worker_address(pqxx::connection& conn, const std::string& hint);

// Array literals for COPY and parameters: '{e2e4,e7e5}' (move[]: UCI needs no quoting
// inside an array), '{3,0,12}' (int[]), '{0.25,0.125}' (real[], each float written so that
// it reads back as the same value).
std::string uci_array(const std::vector<chess::Move>& moves);
std::string int_array(const std::vector<std::uint32_t>& values);
std::string real_array(const std::vector<float>& values);
// The shortest text of v that reads back as the same float.
std::string float_text(float v);

}  // namespace pgmate::cli
