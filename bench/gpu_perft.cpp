// GPU perft against one CPU thread: chess (breadth-first kernels) and checkers (host split
// plus per-thread kernels). Prints a table and, with --out FILE, one TSV line per row.
// The CPU rate is measured on a sample of the position's subtrees two plies down (every
// k-th, in order, until --cpu-seconds have passed); the table says how many were timed.
// Exits 0 with a message when no CUDA device is present; 1 when a GPU count is wrong.
#include <cuda_runtime_api.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "../tests/checkers/perft_counts.h"
#include "checkers/fen.h"
#include "checkers/movegen.h"
#include "checkers/perft.h"
#include "chess/fen.h"
#include "chess/movegen.h"
#include "worker/cuda/checkers_perft_kernel.h"
#include "worker/cuda/perft_kernel.h"

namespace {

using Clock = std::chrono::steady_clock;
using namespace pgmate;

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

struct Row {
  std::string game, position;
  int depth = 0;
  std::uint64_t gpu_nodes = 0, expected = 0;
  double gpu_seconds = 0;
  std::uint64_t cpu_nodes = 0;
  double cpu_seconds = 0;
  std::string cpu_method;
};

// One CPU thread on every k-th subtree two plies down (in order) until the budget is spent.
template <class Position, class Children, class Perft>
void time_cpu(const Position& root, int depth, double budget, Children children, Perft perft, Row& row) {
  std::vector<Position> level{root}, next;
  for (int ply = 0; ply < 2 && depth - ply > 1; ++ply) {
    next.clear();
    for (const auto& b : level) children(b, next);
    level.swap(next);
  }
  const int sub_depth = depth - (depth > 2 ? 2 : depth > 1 ? 1 : 0);
  // Spread the sample over the root moves: a stride prime to the count visits each once.
  std::size_t stride = 1;
  for (std::size_t p : {7, 11, 13})
    if (level.size() >= 64 && level.size() % p != 0) {
      stride = p;
      break;
    }
  std::size_t timed = 0;
  const auto start = Clock::now();
  for (std::size_t k = 0; k < level.size(); ++k) {
    const std::size_t i = (k * stride) % level.size();
    row.cpu_nodes += perft(level[i], sub_depth);
    ++timed;
    if (seconds_since(start) > budget) break;
  }
  row.cpu_seconds = seconds_since(start);
  row.cpu_method = timed == level.size() ? "full depth " + std::to_string(depth)
                                         : "sample: " + std::to_string(timed) + " of " + std::to_string(level.size()) +
                                               " subtrees of depth " + std::to_string(sub_depth);
}

}  // namespace

int main(int argc, char** argv) {
  std::string out_path;
  double cpu_budget = 5.0;
  bool quick = false;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--out") && i + 1 < argc) out_path = argv[++i];
    else if (!std::strcmp(argv[i], "--cpu-seconds") && i + 1 < argc) cpu_budget = std::atof(argv[++i]);
    else if (!std::strcmp(argv[i], "--quick")) quick = true;  // smaller depths, for a smoke run
    else {
      std::fprintf(stderr, "usage: %s [--out FILE.tsv] [--cpu-seconds S] [--quick]\n", argv[0]);
      return 2;
    }
  }
  std::string why;
  if (!gpu::cuda_device_available(&why)) {
    std::printf("gpu_perft_bench: no CUDA device (%s); nothing measured.\n", why.c_str());
    return 0;
  }
  cudaDeviceProp prop{};
  cudaGetDeviceProperties(&prop, 0);
  std::printf("device: %s, %d SMs\n", prop.name, prop.multiProcessorCount);

  std::vector<Row> rows;
  auto chess_children = [](const chess::Board& b, std::vector<chess::Board>& out) {
    chess::MoveList list;
    chess::legal_moves(b, list);
    for (chess::Move m : list) {
      chess::Board c = b;
      c.play<false>(m);
      out.push_back(c);
    }
  };
  auto checkers_children = [](const checkers::Board& b, std::vector<checkers::Board>& out) {
    checkers::MoveList list;
    checkers::legal_moves(b, list);
    for (const checkers::Move& m : list) {
      checkers::Board c = b;
      c.play(m);
      out.push_back(c);
    }
  };
  // Warm-up: device initialisation, module loading and the magic table upload stay out of
  // the timings.
  gpu::perft_bfs(chess::parse_fen("startpos"), 4);
  {
    gpu::BfsOptions magic;
    magic.magic_attacks = true;
    gpu::perft_bfs(chess::parse_fen("startpos"), 4, magic);
  }
  gpu::checkers_perft_split(checkers::Board::start(), 8);

  struct ChessCase {
    const char* name;
    const char* fen;
    int depth;
    std::uint64_t expected;
    int leaf_blocks = 0;  // register cap of the two-ply leaf kernel (0: the default)
    bool magics = false;  // slider attacks from device magic tables
  };
  constexpr const char* kKiwipete = "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1";
  std::vector<ChessCase> chess_cases = {{"start", "startpos", 7, 3195901860ULL},
                                        {"start", "startpos", 8, 84998978956ULL},
                                        {"kiwipete", kKiwipete, 6, 8031647685ULL},
                                        // The leaf kernel capped at 80 and 64 registers (3 and
                                        // 4 blocks of 256 per SM).
                                        {"start/leaf3", "startpos", 7, 3195901860ULL, 3},
                                        {"start/leaf4", "startpos", 7, 3195901860ULL, 4},
                                        {"kiwipete/leaf3", kKiwipete, 6, 8031647685ULL, 3},
                                        // Slider attacks from magic tables in device memory.
                                        {"start/magic", "startpos", 7, 3195901860ULL, 0, true},
                                        {"start/magic3", "startpos", 7, 3195901860ULL, 3, true},
                                        {"start/magic4", "startpos", 7, 3195901860ULL, 4, true},
                                        {"start/magic3", "startpos", 8, 84998978956ULL, 3, true},
                                        {"kiwipete/magic", kKiwipete, 6, 8031647685ULL, 0, true},
                                        {"kiwipete/magic3", kKiwipete, 6, 8031647685ULL, 3, true},
                                        {"kiwipete/magic4", kKiwipete, 6, 8031647685ULL, 4, true}};
  if (quick)
    chess_cases = {{"start", "startpos", 6, 119060324ULL},
                   {"kiwipete", kKiwipete, 5, 193690690ULL},
                   {"start/magic", "startpos", 6, 119060324ULL, 0, true}};
  std::map<std::string, Row> cpu_timed;
  for (const auto& c : chess_cases) {
    Row row;
    row.game = "chess";
    row.position = c.name;
    row.depth = c.depth;
    row.expected = c.expected;
    const chess::Board b = chess::parse_fen(c.fen);
    gpu::BfsOptions options;
    options.leaf_blocks_per_sm = c.leaf_blocks;
    options.magic_attacks = c.magics;
    const auto t = Clock::now();
    row.gpu_nodes = gpu::perft_bfs(b, c.depth, options);
    row.gpu_seconds = seconds_since(t);
    // The CPU side once per position and depth (the variants share it).
    const std::string key = std::string(c.fen) + "/" + std::to_string(c.depth);
    if (!cpu_timed.count(key)) {
      Row cpu;
      time_cpu(b, c.depth, cpu_budget, chess_children, [](const chess::Board& x, int d) { return chess::perft(x, d); },
               cpu);
      cpu_timed[key] = cpu;
    }
    row.cpu_nodes = cpu_timed[key].cpu_nodes;
    row.cpu_seconds = cpu_timed[key].cpu_seconds;
    row.cpu_method = cpu_timed[key].cpu_method;
    rows.push_back(row);
  }
  std::vector<int> checkers_depths = quick ? std::vector<int>{11, 12} : std::vector<int>{12, 13, 14};
  for (int depth : checkers_depths) {
    Row row;
    row.game = "checkers";
    row.position = "start";
    row.depth = depth;
    row.expected = checkers::testing::kStartPerft[depth - 1];
    const auto t = Clock::now();
    row.gpu_nodes = gpu::checkers_perft_split(checkers::Board::start(), depth);
    row.gpu_seconds = seconds_since(t);
    time_cpu(checkers::Board::start(), depth, cpu_budget, checkers_children,
             [](const checkers::Board& x, int d) { return checkers::perft(x, d); }, row);
    rows.push_back(row);
  }

  std::FILE* tsv = nullptr;
  if (!out_path.empty()) {
    tsv = std::fopen(out_path.c_str(), "w");
    if (!tsv) {
      std::perror(out_path.c_str());
      return 2;
    }
    std::fprintf(tsv, "device\tgame\tposition\tdepth\tgpu_nodes\tcorrect\tgpu_seconds\tgpu_nodes_per_s\tcpu_nodes\t"
                      "cpu_seconds\tcpu_nodes_per_s\tcpu_method\tratio\n");
  }
  bool all_correct = true;
  std::printf("\n%-9s %-14s %5s %16s %8s %10s %14s %14s %9s  %s\n", "game", "position", "depth", "gpu nodes", "correct",
              "gpu s", "gpu nodes/s", "cpu nodes/s", "ratio", "cpu timing");
  for (const Row& r : rows) {
    const bool correct = r.gpu_nodes == r.expected;
    all_correct &= correct;
    const double gpu_nps = r.gpu_nodes / r.gpu_seconds, cpu_nps = r.cpu_nodes / r.cpu_seconds;
    std::printf("%-9s %-14s %5d %16llu %8s %10.3f %14.4g %14.4g %9.1f  %s\n", r.game.c_str(), r.position.c_str(),
                r.depth, (unsigned long long)r.gpu_nodes, correct ? "yes" : "NO", r.gpu_seconds, gpu_nps, cpu_nps,
                gpu_nps / cpu_nps, r.cpu_method.c_str());
    if (tsv)
      std::fprintf(tsv, "%s\t%s\t%s\t%d\t%llu\t%d\t%.6f\t%.6g\t%llu\t%.6f\t%.6g\t%s\t%.3f\n", prop.name, r.game.c_str(),
                   r.position.c_str(), r.depth, (unsigned long long)r.gpu_nodes, int(correct), r.gpu_seconds, gpu_nps,
                   (unsigned long long)r.cpu_nodes, r.cpu_seconds, cpu_nps, r.cpu_method.c_str(), gpu_nps / cpu_nps);
  }
  if (tsv) std::fclose(tsv);
  if (!all_correct) std::printf("\nA GPU count differs from the published count.\n");
  return all_correct ? 0 : 1;
}
