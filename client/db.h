// Small libpqxx helpers shared by the commands that talk to PostgreSQL.
#pragma once

#include <exception>
#include <memory>
#include <string>

#include <pqxx/pqxx>

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

}  // namespace pgmate::cli
