#include "db.h"

#include <stdexcept>

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

}  // namespace pgmate::cli
