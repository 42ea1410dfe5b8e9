// Small libpqxx helpers shared by the commands that talk to PostgreSQL.
#pragma once

#include <exception>
#include <memory>
#include <string>
#include <vector>

#include <pqxx/pqxx>

#include "chess/types.h"

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

// Array literals for COPY and parameters: '{e2e4,e7e5}' (move[]: UCI needs no quoting
// inside an array), '{3,0,12}' (int[]), '{0.25,0.125}' (real[], each float written so that
// it reads back as the same value).
std::string uci_array(const std::vector<chess::Move>& moves);
std::string int_array(const std::vector<std::uint32_t>& values);
std::string real_array(const std::vector<float>& values);
// The shortest text of v that reads back as the same float.
std::string float_text(float v);

}  // namespace pgmate::cli
