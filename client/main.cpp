// pgmate: the command-line front end (perft, moves, import, selfplay, play; later arena).
#include <cstring>
#include <iostream>

#include "args.h"
#include "chess/fen.h"
#include "commands.h"

namespace {

void print_help(std::ostream& out) {
  out << "usage: pgmate COMMAND [ARGS]\n\n"
      << "commands:\n"
      << "  " << pgmate::cli::kPerftUsage << "\n"
      << "  " << pgmate::cli::kMovesUsage << "\n"
      << "  " << pgmate::cli::kImportUsage << "\n"
      << "  " << pgmate::cli::kSelfplayUsage << "\n"
      << "  " << pgmate::cli::kPlayUsage << "\n"
      << "  " << pgmate::cli::kArenaUsage << "\n"
      << "  " << pgmate::cli::kUciUsage << "\n"
#ifndef PGMATE_HAVE_PQXX
      << "\nThis pgmate was built without libpqxx: import and selfplay --db are not available.\n"
#endif
      << "\nFEN may be given as one quoted argument or as separate fields; 'startpos' is the start position.\n";
}

}  // namespace

int main(int argc, char** argv) {
  using namespace pgmate::cli;
  if (argc < 2 || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h") || !std::strcmp(argv[1], "help")) {
    print_help(argc < 2 ? std::cerr : std::cout);
    return argc < 2 ? 2 : 0;
  }
  const std::string command = argv[1];
  const std::vector<std::string> args(argv + 2, argv + argc);
  const char* usage = command == "perft" ? kPerftUsage : kMovesUsage;
  if (command == "import") usage = kImportUsage;
  if (command == "selfplay") usage = kSelfplayUsage;
  if (command == "play") usage = kPlayUsage;
  if (command == "arena") usage = kArenaUsage;
  if (command == "uci") usage = kUciUsage;
  try {
    if (command == "perft") return perft_command(args);
    if (command == "moves") return moves_command(args);
    if (command == "import") return import_command(args);
    if (command == "selfplay") return selfplay_command(args);
    if (command == "play") return play_command(args);
    if (command == "arena") return arena_command(args);
    if (command == "uci") return uci_command(args);
    std::cerr << "pgmate: unknown command \"" << command << "\"\n";
    print_help(std::cerr);
    return 2;
  } catch (const UsageError& e) {
    std::cerr << "pgmate " << command << ": " << e.what() << "\nusage: " << usage << "\n";
    return 2;
  } catch (const NotBuiltIn& e) {
    std::cerr << "pgmate " << command << ": " << e.what() << "\n";
    return 2;
  } catch (const pgmate::chess::ParseError& e) {
    std::cerr << "pgmate " << command << ": " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "pgmate " << command << ": " << e.what() << "\n";
    return 1;
  }
}
