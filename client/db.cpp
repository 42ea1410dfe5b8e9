#include "db.h"

#include <charconv>
#include <stdexcept>

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
