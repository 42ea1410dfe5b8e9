// The database commands of a pgmate built without libpqxx: they say so and exit 2.
#include "args.h"
#include "arena_store.h"
#include "commands.h"
#include "import.h"
#include "selfplay_store.h"

namespace pgmate::cli {

int import_command(const std::vector<std::string>&) {
  throw NotBuiltIn(
      "pgmate import writes to PostgreSQL; install libpqxx (pkg-config libpqxx) and build again to use it");
}

int import_pgn(const std::string&, const std::string&) {
  throw NotBuiltIn("--db writes to PostgreSQL; use --out FILE, or install libpqxx (pkg-config libpqxx) and build again");
}

int export_command(const std::vector<std::string>&) {
  throw NotBuiltIn("pgmate export reads games from PostgreSQL; install libpqxx (pkg-config libpqxx) and build again to use it");
}

int analyse_command(const std::vector<std::string>&) {
  throw NotBuiltIn("pgmate analyse stores evaluations in PostgreSQL; install libpqxx (pkg-config libpqxx) and build again to use it");
}

int train_command(const std::vector<std::string>&) {
  throw NotBuiltIn("pgmate train reads its rows from PostgreSQL; install libpqxx (pkg-config libpqxx) and build again to use it");
}

int learn_command(const std::vector<std::string>&) {
  throw NotBuiltIn("pgmate learn runs CALL pgmate.learn in PostgreSQL; install libpqxx (pkg-config libpqxx) and build again to use it");
}

int report_command(const std::vector<std::string>&) {
  throw NotBuiltIn("pgmate report reads a learning run from PostgreSQL; install libpqxx (pkg-config libpqxx) and build again to use it");
}

std::unique_ptr<SelfplayStore> open_selfplay_store(const std::string&) {
  throw NotBuiltIn(
      "selfplay --db needs PostgreSQL; use --pgn FILE to write the games to a file, or install libpqxx "
      "(pkg-config libpqxx) and build again");
}

std::unique_ptr<ArenaStore> open_arena_store(const std::string&) {
  throw NotBuiltIn(
      "arena --db needs PostgreSQL; use --pgn FILE to write the games to a file, or install libpqxx "
      "(pkg-config libpqxx) and build again");
}

}  // namespace pgmate::cli
