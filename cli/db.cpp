#include "db.h"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <thread>
#include <stdexcept>

#include "args.h"
#include "chess/notation.h"

namespace pgmate::cli {

std::string db_message(const std::exception& e) {
  std::string m = e.what();
  while (!m.empty() && (m.back() == '\n' || m.back() == ' ' || m.back() == '\t' || m.back() == '\r')) m.pop_back();
  return m;
}

std::unique_ptr<pqxx::connection> connect_db(const std::string& conninfo) {
  std::unique_ptr<pqxx::connection> conn;
  try {
    conn = std::make_unique<pqxx::connection>(conninfo);
    conn->set_client_encoding("UTF8");
  } catch (const pqxx::failure& e) {
    throw std::runtime_error("cannot connect to the database: " + db_message(e));
  }
  return conn;
}

void require_table(pqxx::connection& conn, const std::string& table) {
  pqxx::nontransaction tx(conn);
  const pqxx::result r = tx.exec_params("SELECT to_regclass($1) IS NOT NULL", table);
  if (!r[0][0].as<bool>()) throw std::runtime_error(table + " does not exist: run CREATE EXTENSION pgmate");
}

void db_lock_name(pqxx::connection& conn, const std::string& name, const std::string& busy_message) {
  with_db_errors([&] {
    pqxx::nontransaction tx(conn);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (!tx.exec_params("SELECT pgmate.client_claim($1)", name)[0][0].as<bool>()) {
      if (std::chrono::steady_clock::now() > deadline) throw std::runtime_error(busy_message);
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  });
}

worker::NetworkKey db_network_key(pqxx::connection& conn, std::int64_t id) {
  return with_db_errors([&] {
    require_table(conn, "pgmate.networks");
    pqxx::nontransaction tx(conn);
    const pqxx::result r = tx.exec_params(
        "SELECT (SELECT oid FROM pg_database WHERE datname = current_database())::bigint, weights_sha256 "
        "FROM pgmate.networks WHERE id = $1",
        id);
    if (r.empty())
      throw UsageError("no network with id " + std::to_string(id) +
                       " in pgmate.networks (SELECT id, name FROM pgmate.networks lists them)");
    worker::NetworkKey key;
    key.database = static_cast<std::uint32_t>(r[0][0].as<std::int64_t>());
    key.id = id;
    const pqxx::binarystring sha256(r[0][1]);
    if (sha256.size() != key.sha256.size()) throw std::runtime_error("network " + std::to_string(id) + " has no weights_sha256");
    std::copy(sha256.begin(), sha256.end(), key.sha256.begin());
    return key;
  });
}

void db_load_network(pqxx::connection& conn, worker::WorkerClient& client, const worker::NetworkKey& key) {
  std::string config, weights;
  with_db_errors([&] {
    pqxx::nontransaction tx(conn);
    const pqxx::result r =
        tx.exec_params("SELECT config::text, weights, weights_sha256 FROM pgmate.networks WHERE id = $1", key.id);
    if (r.empty()) throw std::runtime_error("network " + std::to_string(key.id) + " was deleted from pgmate.networks");
    const pqxx::binarystring stored_weights(r[0][1]), sha256(r[0][2]);
    if (sha256.str() != std::string(key.sha256.begin(), key.sha256.end()))
      throw std::runtime_error("network " + std::to_string(key.id) + " changed while in use (its weights were updated)");
    config = r[0][0].as<std::string>();
    weights = stored_weights.str();
  });
  client.load_network(key, config, weights);
}

std::string db_worker_address(pqxx::connection& conn, const std::string& hint) {
  return with_db_errors([&] {
    pqxx::nontransaction tx(conn);
    const pqxx::result r = tx.exec("SELECT current_setting('pgmate.worker_socket', true)");
    if (!r[0][0].is_null() && !r[0][0].as<std::string>().empty()) return r[0][0].as<std::string>();
    try {
      return tx.exec("SELECT current_setting('data_directory') || '/pgmate_worker.sock'")[0][0].as<std::string>();
    } catch (const pqxx::sql_error& e) {
      throw std::runtime_error(
          "cannot find the worker's socket: pgmate.worker_socket is not set and the server's data_directory "
          "cannot be read (" + db_message(e) + "); " + hint);
    }
  });
}

namespace {

template <class T, class Text>
std::string array_literal(const std::vector<T>& values, Text text) {
  std::string s = "{";
  for (size_t i = 0; i < values.size(); ++i) {
    if (i) s += ',';
    s += text(values[i]);
  }
  return s + "}";
}

}  // namespace

std::string float_text(float v) {
  char buf[32];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  return ec == std::errc() ? std::string(buf, end) : "0";
}

std::string uci_array(const std::vector<chess::Move>& moves) { return array_literal(moves, chess::to_uci); }
std::string int_array(const std::vector<std::uint32_t>& values) {
  return array_literal(values, [](std::uint32_t v) { return std::to_string(v); });
}
std::string real_array(const std::vector<float>& values) { return array_literal(values, float_text); }

}  // namespace pgmate::cli
