// PGN parsing speed: PgnReader on one thread against pgn-extract over the same file.
//
//   pgn_parse --generate N FILE [--seed S]   writes N random legal games (to_pgn)
//   pgn_parse FILE [--runs R] [--peer-runs P] [--pgn-extract PATH|none]
//
// The file is read into memory first, then fed to a PgnReader in 1 MiB chunks (as
// `pgmate import` does): every tag read, every main-line move checked. The best of R runs
// is reported as games/s, moves/s and MB/s, by CPU time (the thread's) and by wall time.
// The peer is `pgn-extract -s -r FILE` (reads and checks every move, writes nothing) and
// `pgn-extract -s -o /dev/null FILE` (also writes every game back out), each run as a
// whole process (reading the file included), best of R, timed by its CPU time (user +
// system) and by wall time, best of P runs (default R: on a large file, where one run of
// the peer takes minutes, fewer). Ratios are of CPU times: pgmate's speed on one core over
// pgn-extract's; on a busy machine wall times wander, CPU times much less.
// Generated games: 60 to 100 plies of uniformly random legal moves from the start position
// (a game ends early at mate or stalemate), the Seven Tag Roster plus WhiteElo, BlackElo,
// ECO and PlyCount.
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <random>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "chess/fen.h"
#include "chess/movegen.h"
#include "chess/pgn.h"

using namespace pgmate::chess;
using Clock = std::chrono::steady_clock;

namespace {

[[noreturn]] void usage(const std::string& why) {
  std::cerr << "pgn_parse: " << why
            << "\nusage: pgn_parse --generate N FILE [--seed S]\n"
               "       pgn_parse FILE [--runs R] [--peer-runs P] [--pgn-extract PATH|none]\n";
  std::exit(2);
}

int generate(long count, const std::string& path, unsigned seed) {
  std::ofstream out(path, std::ios::binary);
  if (!out) usage("cannot write " + path);
  std::mt19937_64 rng(seed);
  const char* kNames[] = {"Carlsen, Magnus", "Nakamura, Hikaru", "Caruana, Fabiano", "Ding, Liren",
                          "Nepomniachtchi, Ian", "Firouzja, Alireza", "So, Wesley", "Giri, Anish",
                          "Aronian, Levon", "Vachier-Lagrave, Maxime", "Rapport, Richard", "Duda, Jan-Krzysztof"};
  const char* kEvents[] = {"Tata Steel Masters", "Norway Chess", "Sinquefield Cup", "Candidates Tournament",
                           "Grand Chess Tour Rapid", "Olympiad"};
  const char* kResults[] = {"1-0", "0-1", "1/2-1/2"};
  const Board start = parse_fen(kStartFen);
  long plies_total = 0;
  for (long i = 0; i < count; ++i) {
    Board b = start;
    std::vector<Move> moves;
    MoveList list;
    const int plies = 60 + int(rng() % 41);
    for (int p = 0; p < plies; ++p) {
      legal_moves(b, list);
      if (list.size == 0) break;
      const Move m = list.moves[rng() % list.size];
      moves.push_back(m);
      b.play(m);
    }
    plies_total += long(moves.size());
    char date[16], eco[8];
    std::snprintf(date, sizeof date, "%04d.%02d.%02d", 2000 + int(rng() % 25), 1 + int(rng() % 12),
                  1 + int(rng() % 28));
    std::snprintf(eco, sizeof eco, "%c%02d", char('A' + rng() % 5), int(rng() % 100));
    const std::string result = kResults[rng() % 3];
    const PgnTags tags = {{"Event", kEvents[rng() % 6]},
                          {"Site", "?"},
                          {"Date", date},
                          {"Round", std::to_string(1 + rng() % 13)},
                          {"White", kNames[rng() % 12]},
                          {"Black", kNames[rng() % 12]},
                          {"Result", result},
                          {"WhiteElo", std::to_string(2600 + rng() % 250)},
                          {"BlackElo", std::to_string(2600 + rng() % 250)},
                          {"ECO", eco},
                          {"PlyCount", std::to_string(moves.size())}};
    if (i) out << '\n';
    out << to_pgn(tags, start, moves, result);
  }
  std::cout << "wrote " << count << " games, " << plies_total << " plies (" << double(plies_total) / double(count)
            << " per game) to " << path << "\n";
  return out ? 0 : 1;
}

struct Run {
  double seconds, wall;  // CPU time of the thread, wall time
  long games, moves;
};

double thread_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}

double children_cpu_seconds() {
  rusage ru{};
  getrusage(RUSAGE_CHILDREN, &ru);
  return double(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) + double(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-6;
}

Run parse_once(const std::string& text) {
  constexpr size_t kChunk = 1 << 20;
  const auto t0 = Clock::now();
  const double c0 = thread_cpu_seconds();
  PgnReader reader(PgnErrorMode::kFail);
  PgnGame g;
  long games = 0, moves = 0;
  for (size_t i = 0; i < text.size(); i += kChunk) {
    reader.feed(std::string_view(text).substr(i, kChunk));
    while (reader.next(g)) {
      ++games;
      moves += long(g.moves.size());
    }
  }
  reader.finish();
  while (reader.next(g)) {
    ++games;
    moves += long(g.moves.size());
  }
  return {thread_cpu_seconds() - c0, std::chrono::duration<double>(Clock::now() - t0).count(), games, moves};
}

// CPU and wall seconds one command takes (run through the shell, which counts too, for
// well under a millisecond); negative when it fails.
std::pair<double, double> time_command(const std::string& command) {
  const double c0 = children_cpu_seconds();
  const auto t0 = Clock::now();
  const int status = std::system(command.c_str());
  const double wall = std::chrono::duration<double>(Clock::now() - t0).count();
  if (status != 0) return {-1, -1};
  return {children_cpu_seconds() - c0, wall};
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (!args.empty() && args[0] == "--generate") {
    if (args.size() != 3 && args.size() != 5) usage("--generate takes N FILE [--seed S]");
    unsigned seed = 1;
    if (args.size() == 5) {
      if (args[3] != "--seed") usage("unknown option " + args[3]);
      seed = unsigned(std::stoul(args[4]));
    }
    return generate(std::stol(args[1]), args[2], seed);
  }
  std::string path, peer = "/usr/games/pgn-extract";
  int runs = 3, peer_runs = 0;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--runs" && i + 1 < args.size()) runs = std::max(1, std::stoi(args[++i]));
    else if (args[i] == "--peer-runs" && i + 1 < args.size()) peer_runs = std::max(1, std::stoi(args[++i]));
    else if (args[i] == "--pgn-extract" && i + 1 < args.size()) peer = args[++i];
    else if (!args[i].empty() && args[i][0] == '-') usage("unknown option " + args[i]);
    else if (path.empty()) path = args[i];
    else usage("one input file only");
  }
  if (path.empty()) usage("a PGN file is required");
  if (peer_runs == 0) peer_runs = runs;

  std::ifstream in(path, std::ios::binary);
  if (!in) usage("cannot read " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string text = ss.str();
  const double mb = double(text.size()) / 1e6;

  Run best{1e300, 1e300, 0, 0};
  double best_wall = 1e300;
  try {
    for (int r = 0; r < runs; ++r) {
      const Run run = parse_once(text);
      if (run.seconds < best.seconds) best = run;
      best_wall = std::min(best_wall, run.wall);
    }
  } catch (const PgnError& e) {
    std::cerr << "pgn_parse: " << e.what() << "\n";
    return 1;
  }
  std::printf("input: %s, %.1f MB, %ld games, %ld moves (%.1f per game)\n", path.c_str(), mb, best.games,
              best.moves, double(best.moves) / double(std::max(1L, best.games)));
  std::printf("pgmate PgnReader, 1 thread (best of %d): CPU %.3f s: %.0f games/s  %.0f moves/s  %.1f MB/s;"
              "  wall %.3f s: %.0f games/s\n",
              runs, best.seconds, best.games / best.seconds, best.moves / best.seconds, mb / best.seconds, best_wall,
              best.games / best_wall);

  if (peer == "none") return 0;
  const std::string quoted_path = "'" + path + "'";
  struct Peer {
    const char* label;
    std::string command;
  } peers[] = {
      {"pgn-extract -s -r (read, check)", "exec " + peer + " -s -r " + quoted_path + " > /dev/null 2>&1"},
      {"pgn-extract -s -o /dev/null (read, check, write)",
       "exec " + peer + " -s -o /dev/null " + quoted_path + " > /dev/null 2>&1"},
  };
  for (const Peer& p : peers) {
    double peer_cpu = 1e300, peer_wall = 1e300;
    for (int r = 0; r < peer_runs; ++r) {
      const auto [cpu, wall] = time_command(p.command);
      if (cpu < 0) {
        std::printf("%s: failed (%s)\n", p.label, p.command.c_str());
        peer_cpu = -1;
        break;
      }
      peer_cpu = std::min(peer_cpu, cpu);
      peer_wall = std::min(peer_wall, wall);
    }
    if (peer_cpu < 0) continue;
    std::printf("%s (best of %d): CPU %.3f s: %.0f games/s  %.1f MB/s;  wall %.3f s;  ratio pgmate/pgn-extract %.2f\n",
                p.label, peer_runs, peer_cpu, best.games / peer_cpu, mb / peer_cpu, peer_wall, peer_cpu / best.seconds);
  }
  return 0;
}
