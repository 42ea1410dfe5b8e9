// pgmate: the command-line front end (perft, moves, import, export, analyse, selfplay, play, arena,
// uci, train, learn, report, generate).
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
      << "  " << pgmate::cli::kExportUsage << "\n"
      << "  " << pgmate::cli::kAnalyseUsage << "\n"
      << "  " << pgmate::cli::kSelfplayUsage << "\n"
      << "  " << pgmate::cli::kPlayUsage << "\n"
      << "  " << pgmate::cli::kArenaUsage << "\n"
      << "  " << pgmate::cli::kUciUsage << "\n"
      << "  " << pgmate::cli::kTrainUsage << "\n"
      << "  " << pgmate::cli::kLearnUsage << "\n"
      << "  " << pgmate::cli::kReportUsage << "\n"
      << "  " << pgmate::cli::kGenerateUsage << "\n"
#ifndef PGMATE_HAVE_PQXX
      << "\nThis pgmate was built without libpqxx: import, export, analyse and selfplay --db are not available.\n"
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
  struct Command {
    const char* name;
    const char* usage;
    int (*run)(const std::vector<std::string>&);
  };
  const Command commands[] = {{"perft", kPerftUsage, perft_command},          {"moves", kMovesUsage, moves_command},
                              {"import", kImportUsage, import_command},       {"selfplay", kSelfplayUsage, selfplay_command},
                              {"play", kPlayUsage, play_command},             {"arena", kArenaUsage, arena_command},
                              {"uci", kUciUsage, uci_command},                {"train", kTrainUsage, train_command},
                              {"learn", kLearnUsage, learn_command},          {"report", kReportUsage, report_command},
                              {"generate", kGenerateUsage, generate_command}, {"export", kExportUsage, export_command},
                              {"analyse", kAnalyseUsage, analyse_command}};
  const Command* found = nullptr;
  for (const Command& c : commands)
    if (command == c.name) found = &c;
  if (!found) {
    std::cerr << "pgmate: unknown command \"" << command << "\"\n";
    print_help(std::cerr);
    return 2;
  }
  // Every command answers --help (or -h) anywhere among its arguments.
  for (const std::string& a : args)
    if (a == "--help" || a == "-h") {
      std::cout << "usage: " << found->usage << "\n";
      return 0;
    }
  const char* usage = found->usage;
  try {
    return found->run(args);
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
