// The pgmate subcommands. Each takes the arguments after its name and returns the
// process exit code (0 ok, 1 a check failed, 2 bad input).
#pragma once

#include <string>
#include <vector>

namespace pgmate::cli {

int perft_command(const std::vector<std::string>& args);
int moves_command(const std::vector<std::string>& args);
int import_command(const std::vector<std::string>& args);
int selfplay_command(const std::vector<std::string>& args);
int play_command(const std::vector<std::string>& args);
int arena_command(const std::vector<std::string>& args);
int uci_command(const std::vector<std::string>& args);
int train_command(const std::vector<std::string>& args);
int learn_command(const std::vector<std::string>& args);
int report_command(const std::vector<std::string>& args);
int generate_command(const std::vector<std::string>& args);
int export_command(const std::vector<std::string>& args);
int analyse_command(const std::vector<std::string>& args);

extern const char* const kPerftUsage;
extern const char* const kMovesUsage;
extern const char* const kSelfplayUsage;
extern const char* const kPlayUsage;
extern const char* const kArenaUsage;
extern const char* const kUciUsage;
extern const char* const kGenerateUsage;
// Here rather than in import_command.cpp, which is built only with libpqxx.
inline constexpr const char* kImportUsage =
    "pgmate import [--db CONNINFO] [--on-error fail|skip] [--batch N] [--jobs J] [--duplicates keep|skip] FILE.pgn|-\n"
    "         pgmate import --openings [--db CONNINFO] [FILE]";
inline constexpr const char* kTrainUsage =
    "pgmate train [--db CONNINFO] --network ID --data QUERY [--holdout QUERY] [--steps N] [--batch B]\n"
    "             [--lr X] [--name NAME] [--option KEY=VALUE ...] [--worker ADDRESS]";
inline constexpr const char* kLearnUsage =
    "pgmate learn [--db CONNINFO] --run NAME --iterations N|--more N [--network ID] [--option KEY=VALUE ...]\n"
    "             (--iterations: until the run has N; --more: N more; the options: SELECT name, description\n"
    "             FROM pgmate.learning_options)";
inline constexpr const char* kExportUsage =
    "pgmate export [--db CONNINFO] [--where CONDITION] [--out FILE.pgn|-] [--evals [--engine NAME] [--limits LIMITS]]";
inline constexpr const char* kAnalyseUsage =
    "pgmate analyse [--db CONNINFO] [--where CONDITION] --engine uci:COMMAND[:KEY=VALUE,...] [--jobs J]\n"
    "             [--nodes N | --depth D | --movetime MS] [--multipv K] [--hash MB] [--chunk GAMES] [--warm]\n"
    "         pgmate analyse [--db CONNINFO] [--where CONDITION] --engine net:ID:S[:KEY=VALUE,...] [--parallel P]\n"
    "             [--worker ADDRESS] [--chunk GAMES]";
inline constexpr const char* kReportUsage = "pgmate report [--db CONNINFO] --run NAME --out FILE.html";

}  // namespace pgmate::cli
