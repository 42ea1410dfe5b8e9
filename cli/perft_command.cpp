#include <unistd.h>

#include <chrono>
#include <fstream>
#include <iostream>
#include <sstream>
#include <thread>

#include "args.h"
#include "checkers/fen.h"
#include "checkers/notation.h"
#include "checkers/perft.h"
#include "chess/notation.h"
#include "chess/perft.h"
#include "commands.h"

namespace pgmate::cli {

const char* const kPerftUsage =
    "pgmate perft [--divide] [--threads N] [--stats] FEN|startpos DEPTH\n"
    "         pgmate perft --game checkers [--rule any|longest] [--divide] [--threads N] [--stats] FEN|startpos DEPTH\n"
    "         pgmate perft --epd FILE [--max-depth D] [--threads N]";

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// Checks every "FEN ;D1 n ;D2 n ..." line of an EPD perft file up to max_depth.
int check_epd(const std::string& path, int max_depth, int threads) {
  std::ifstream in(path);
  if (!in) throw UsageError("cannot open EPD file \"" + path + "\"");
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);)
    if (line.find_first_not_of(" \t\r") != std::string::npos) lines.push_back(line);

  const bool progress = isatty(STDERR_FILENO);
  int positions = 0, checked = 0, mismatches = 0;
  std::uint64_t nodes = 0;
  const auto t0 = Clock::now();
  for (size_t n = 0; n < lines.size(); ++n) {
    const std::string& line = lines[n];
    const size_t semi = line.find(';');
    const std::string where = path + ":" + std::to_string(n + 1);
    if (semi == std::string::npos) {
      std::cout << where << ": no ';Dn count' fields\n";
      ++mismatches;
      continue;
    }
    chess::Board board;
    try {
      board = chess::parse_fen(line.substr(0, semi));
    } catch (const chess::ParseError& e) {
      std::cout << where << ": " << e.what() << '\n';
      ++mismatches;
      continue;
    }
    ++positions;
    std::istringstream fields(line.substr(semi));
    for (std::string field; std::getline(fields, field, ';');) {
      std::istringstream f(field);
      std::string label;
      std::uint64_t expected = 0;
      if (!(f >> label >> expected) || label.size() < 2 || label[0] != 'D') continue;
      const int depth = std::atoi(label.c_str() + 1);
      if (depth < 1 || depth > max_depth) continue;
      const std::uint64_t got = chess::perft_parallel(board, depth, threads);
      nodes += got;
      ++checked;
      if (got != expected) {
        ++mismatches;
        std::cout << "MISMATCH " << where << " depth " << depth << ": expected " << expected << ", got " << got
                  << "  " << chess::to_fen(board) << '\n';
      }
    }
    if (progress) std::cerr << "\r[" << (n + 1) << "/" << lines.size() << "] positions checked" << std::flush;
  }
  if (progress) std::cerr << '\n';
  const double secs = seconds_since(t0);
  std::cout << positions << " positions, " << checked << " counts checked up to depth " << max_depth << ", "
            << mismatches << " mismatches, " << nodes << " nodes in " << secs << " s\n";
  return mismatches ? 1 : 0;
}

// Checkers perft: the position is a PDN FEN ("B:W21,...:B1,...") or startpos.
std::uint64_t checkers_perft(const std::string& fen, int depth, checkers::CaptureRule rule, bool divide,
                             int threads) {
  const checkers::Board board = checkers::parse_fen(fen);
  if (!divide) return checkers::perft_parallel(board, depth, rule, threads);
  std::uint64_t total = 0;
  for (const auto& [move, nodes] : checkers::perft_divide(board, depth, rule, threads)) {
    std::cout << checkers::to_text(move) << ": " << nodes << '\n';
    total += nodes;
  }
  std::cout << '\n';
  return total;
}

}  // namespace

int perft_command(const std::vector<std::string>& args) {
  bool divide = false, stats = false;
  int threads = 1, max_depth = 6;
  std::string epd, game = "chess", rule_name;
  std::vector<std::string> positional;
  const int max_threads = int(std::max(1u, std::thread::hardware_concurrency())) * 4;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto value = [&]() -> const std::string& {
      if (i + 1 >= args.size()) throw UsageError(a + " needs a value");
      return args[++i];
    };
    if (a == "--divide") divide = true;
    else if (a == "--stats") stats = true;
    else if (a == "--threads") threads = parse_count(value(), "--threads", 1, max_threads);
    else if (a == "--epd") epd = value();
    else if (a == "--game") game = value();
    else if (a == "--rule") rule_name = value();
    else if (a == "--max-depth") max_depth = parse_count(value(), "--max-depth", 1, 20);
    else if (a.size() > 1 && a[0] == '-' && a[1] == '-') throw UsageError("unknown option " + a);
    else positional.push_back(a);
  }
  if (game != "chess" && game != "checkers")
    throw UsageError("--game must be chess or checkers, not \"" + game + "\"");
  if (!rule_name.empty() && game != "checkers") throw UsageError("--rule is for --game checkers");
  if (!rule_name.empty() && rule_name != "any" && rule_name != "longest")
    throw UsageError("--rule must be any or longest, not \"" + rule_name + "\"");
  if (!epd.empty()) {
    if (game != "chess") throw UsageError("--epd is for chess");
    if (!positional.empty()) throw UsageError("--epd takes no position or depth");
    return check_epd(epd, max_depth, threads);
  }
  if (positional.size() < 2) throw UsageError("a position and a depth are required");
  const int depth = parse_count(positional.back(), "DEPTH", 0, game == "checkers" ? 30 : 20);
  if (game == "checkers") {
    const auto rule = rule_name == "longest" ? checkers::CaptureRule::kLongest : checkers::CaptureRule::kAny;
    const auto t0 = Clock::now();
    const std::uint64_t total =
        checkers_perft(join(positional, 0, positional.size() - 1), depth, rule, divide, threads);
    const double secs = seconds_since(t0);
    if (stats)
      std::cerr << "checkers perft depth " << depth << ": " << total << " nodes in " << secs * 1000 << " ms, "
                << static_cast<std::uint64_t>(secs > 0 ? total / secs : 0) << " nodes/s, " << threads
                << " thread(s)\n";
    std::cout << total << '\n';
    return 0;
  }
  const chess::Board board = chess::parse_fen(join(positional, 0, positional.size() - 1));

  const auto t0 = Clock::now();
  std::uint64_t total = 0;
  if (divide) {
    for (const auto& [move, nodes] : chess::perft_divide(board, depth, threads)) {
      std::cout << chess::to_uci(move) << ": " << nodes << '\n';
      total += nodes;
    }
    std::cout << '\n';
  } else {
    total = chess::perft_parallel(board, depth, threads);
  }
  const double secs = seconds_since(t0);
  if (stats)
    std::cerr << "perft depth " << depth << ": " << total << " nodes in " << secs * 1000 << " ms, "
              << static_cast<std::uint64_t>(secs > 0 ? total / secs : 0) << " nodes/s, " << threads << " thread(s)\n";
  std::cout << total << '\n';
  return 0;
}

}  // namespace pgmate::cli
