// Importing PGN into pgmate.games, for the commands that make games (pgmate generate --db).
#pragma once

#include <string>

namespace pgmate::cli {

// What `pgmate import --db CONNINFO PATH` does with its defaults (every move checked, a bad
// game stops it, batches of 10,000 over a connection per core), including its messages;
// returns its exit code. PATH may be a pipe (/dev/fd/N).
int import_pgn(const std::string& conninfo, const std::string& path);

}  // namespace pgmate::cli
