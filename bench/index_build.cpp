// Building the position index's runs, the two steps the insert trigger takes for each
// statement: sorting its entries (gamedb::sort_entries) and cutting them into blocks
// (gamedb::BlockBuilder), on the entries of real games.
//
//   index_build FILE [--games N] [--batch B] [--runs R]
//
// The first N games of FILE (default 20,000) are replayed once for their entries (as a
// stored game's summary gives them), numbered game by game, and cut into statements of B
// games (default 10,000, pgmate import's batch). Each step is timed over every statement,
// best of R runs (default 15), in nanoseconds an entry. The peers, in the same run:
// std::sort followed by std::unique for the sort; decoding the same blocks
// (gamedb::decode_block, what a search or a merge does with them) for the blocks.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "chess/pgn.h"
#include "gamedb/game_search.h"
#include "gamedb/position_index.h"

using namespace pgmate;
using gamedb::PositionEntry;

namespace {

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: index_build FILE [--games N] [--batch B] [--runs R]\n";
    return 2;
  }
  std::size_t games = 20000, batch = 10000;
  int runs = 15;
  for (int i = 2; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    const long value = std::strtol(argv[i + 1], nullptr, 10);
    if (value <= 0) {
      std::cerr << "index_build: " << flag << " needs a positive number, not '" << argv[i + 1] << "'\n";
      return 2;
    }
    if (flag == "--games") games = static_cast<std::size_t>(value);
    else if (flag == "--batch") batch = static_cast<std::size_t>(value);
    else if (flag == "--runs") runs = static_cast<int>(value);
    else {
      std::cerr << "index_build: unknown option " << flag << "\n";
      return 2;
    }
  }
  std::ifstream in(argv[1], std::ios::binary);
  if (!in) {
    std::cerr << "index_build: cannot read " << argv[1] << "\n";
    return 1;
  }
  std::stringstream text;
  text << in.rdbuf();

  // The statements' entries, in the order the trigger collects them: game by game.
  chess::PgnReader reader(chess::PgnErrorMode::kFail);
  reader.feed(text.str());
  reader.finish();
  std::vector<std::vector<PositionEntry>> statements;
  std::vector<PositionEntry> game_entries;
  chess::PgnGame g;
  std::size_t read = 0, total = 0;
  while (read < games && reader.next(g)) {
    if (read % batch == 0) statements.emplace_back();
    game_entries.clear();
    gamedb::summarize(g.start, g.moves, &game_entries);
    ++read;
    for (PositionEntry e : game_entries) {
      e.game = static_cast<std::uint32_t>(read);
      statements.back().push_back(e);
    }
    total += game_entries.size();
  }
  if (total == 0) {
    std::cerr << "index_build: no games in " << argv[1] << "\n";
    return 1;
  }

  // Sorting: sort_entries (its buffer kept from statement to statement, as the trigger
  // keeps it) against std::sort and std::unique, alternating run by run.
  double sort_best = 1e300, peer_best = 1e300;
  std::vector<PositionEntry> work, scratch;
  std::vector<std::vector<PositionEntry>> sorted(statements.size());
  for (int r = 0; r < runs; ++r) {
    double s = 0, p = 0;
    for (std::size_t k = 0; k < statements.size(); ++k) {
      work = statements[k];
      auto t = std::chrono::steady_clock::now();
      gamedb::sort_entries(work, scratch);
      s += seconds_since(t);
      sorted[k] = work;
      work = statements[k];
      t = std::chrono::steady_clock::now();
      std::sort(work.begin(), work.end());
      work.erase(std::unique(work.begin(), work.end()), work.end());
      p += seconds_since(t);
      if (work != sorted[k]) {
        std::cerr << "index_build: sort_entries and std::sort disagree on statement " << k << "\n";
        return 1;
      }
    }
    sort_best = std::min(sort_best, s);
    peer_best = std::min(peer_best, p);
  }

  // Blocks: built from each sorted statement, then decoded back.
  double build_best = 1e300, decode_best = 1e300;
  std::size_t blocks = 0, bytes = 0, decoded = 0;
  std::vector<std::string> made;
  std::vector<PositionEntry> out;
  for (int r = 0; r < runs; ++r) {
    made.clear();
    auto t = std::chrono::steady_clock::now();
    for (const auto& run : sorted) {
      gamedb::BlockBuilder builder;
      for (const PositionEntry& e : run) {
        if (!builder.add(e)) {
          made.push_back(builder.take());
          builder.add(e);
        }
      }
      if (!builder.empty()) made.push_back(builder.take());
    }
    build_best = std::min(build_best, seconds_since(t));
    decoded = 0;
    t = std::chrono::steady_clock::now();
    for (const std::string& b : made) {
      gamedb::decode_block(b.data(), b.size(), out);
      decoded += out.size();
    }
    decode_best = std::min(decode_best, seconds_since(t));
  }
  blocks = made.size();
  for (const std::string& b : made) bytes += b.size();
  std::size_t kept = 0;
  for (const auto& run : sorted) kept += run.size();
  if (decoded != kept) {
    std::cerr << "index_build: the blocks hold " << decoded << " entries, not " << kept << "\n";
    return 1;
  }

  const auto ns = [&](double s, std::size_t n) { return s * 1e9 / static_cast<double>(n); };
  std::printf("%zu games, %zu statements of up to %zu games, %zu entries (%zu after duplicates), best of %d\n", read,
              statements.size(), batch, total, kept, runs);
  std::printf("sort_entries: %.2f ns an entry; std::sort + std::unique (peer): %.2f; ratio peer/pgmate %.2f\n",
              ns(sort_best, total), ns(peer_best, total), peer_best / sort_best);
  std::printf("blocks: %zu of %.2f bytes an entry; built %.2f ns an entry; decoded (reference) %.2f; ratio %.2f\n",
              blocks, static_cast<double>(bytes) / static_cast<double>(kept), ns(build_best, kept),
              ns(decode_best, kept), decode_best / build_best);
  return 0;
}
