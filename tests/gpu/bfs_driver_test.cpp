// The breadth-first GPU perft's host logic (worker/cuda/bfs_driver.h: level storage,
// splitting a level over its parents when it does not fit, launch sizing, overflow-checked
// sums) run on the host with a backend of plain loops in place of the kernels. Pure host:
// always runs, so the driver is checked on machines without a GPU.
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "chess/fen.h"
#include "chess/movegen.h"
#include "worker/cuda/bfs_driver.h"
#include "worker/cuda/gpu_errors.h"

namespace pgmate::gpu::detail {
namespace {

using chess::CompactBoard;

// What each kernel does, one loop iteration per thread.
struct HostBackend {
  std::size_t leaf_launches = 0, max_leaf_boards = 0, cancel_after_reads = 0, reads = 0;
  std::uint64_t fake_leaf_nodes = 0;  // when nonzero, every leaf launch reports this

  void count_moves(const CompactBoard* level, std::size_t n, unsigned long long* ends) {
    for (std::size_t i = 0; i < n; ++i) ends[i] = unsigned(chess::count_legal_moves(level[i]));
  }
  std::size_t scan_temp_bytes(unsigned long long*, std::size_t n) { return n / 256 + 16; }
  void inclusive_scan(void*, std::size_t, unsigned long long* ends, std::size_t n) {
    for (std::size_t i = 1; i < n; ++i) ends[i] += ends[i - 1];
  }
  std::pair<std::uint64_t, std::uint64_t> read_ends(const unsigned long long* ends, std::size_t begin,
                                                    std::size_t end) {
    ++reads;
    return {begin ? ends[begin - 1] : 0, ends[end - 1]};
  }
  void expand(const CompactBoard* parents, std::size_t begin, std::size_t n, const unsigned long long* ends,
              unsigned long long base, CompactBoard* children) {
    for (std::size_t i = begin; i < begin + n; ++i) {
      CompactBoard* out = children + ((i ? ends[i - 1] : 0) - base);
      chess::MoveList list;
      chess::legal_moves(parents[i], list);
      for (int k = 0; k < list.size; ++k) {
        out[k] = parents[i];
        out[k].play(list.moves[k]);
      }
    }
  }
  std::uint64_t leaves(const CompactBoard* level, std::size_t n, int plies, unsigned long long* scratch) {
    *scratch = 0;  // the driver must hand a writable slot
    ++leaf_launches;
    max_leaf_boards = std::max(max_leaf_boards, n);
    if (fake_leaf_nodes) return fake_leaf_nodes;
    std::uint64_t nodes = 0;
    for (std::size_t i = 0; i < n; ++i)
      nodes += plies == 2 ? chess::perft_two_plies(level[i]) : std::uint64_t(chess::count_legal_moves(level[i]));
    return nodes;
  }
  void throw_if_cancelled() {
    if (cancel_after_reads && reads >= cancel_after_reads) throw PerftCancelled();
  }
};

struct DriverRun {
  HostBackend backend;
  std::size_t splits = 0, launches = 0;
  std::uint64_t operator()(const chess::Board& root, int depth, std::size_t memory) {
    std::vector<std::max_align_t> storage(memory / sizeof(std::max_align_t) + 1);
    char* arena = reinterpret_cast<char*>(storage.data());
    const CompactBoard start = CompactBoard::from(root);
    std::memcpy(arena, &start, sizeof start);
    BfsDriver<HostBackend> driver(backend, arena + 256, memory - 256);
    const std::uint64_t nodes = driver.subtree(reinterpret_cast<const CompactBoard*>(arena), 1, depth, 32.0);
    splits = driver.splits();
    launches = driver.launches();
    return nodes;
  }
};

constexpr std::size_t kRoomy = std::size_t(64) << 20;

TEST(GpuBfsDriverOnHost, StartPositionMatchesCpuPerftWithRoomyAndTinyMemory) {
  const chess::Board start = chess::parse_fen("startpos");
  for (int depth = 1; depth <= 5; ++depth) {
    DriverRun roomy;
    EXPECT_EQ(roomy(start, depth, kRoomy), chess::perft(start, depth)) << "depth " << depth;
    EXPECT_EQ(roomy.splits, 0u) << "depth " << depth;
  }
  // 64 KiB: about 1,000 boards; ply 3 (8,902 boards) must be split many times.
  DriverRun tiny;
  EXPECT_EQ(tiny(start, 5, 64 << 10), 4865609u);
  EXPECT_GT(tiny.splits, 10u);
}

TEST(GpuBfsDriverOnHost, SuiteToDepth4WithSmallMemoryMatchesCpuPerft) {
  std::ifstream in(std::string(PGMATE_TEST_DATA_DIR) + "/perftsuite.epd");
  int positions = 0;
  std::size_t splits = 0;
  for (std::string line; std::getline(in, line);) {
    if (line.empty()) continue;
    const chess::Board b = chess::parse_fen(line.substr(0, line.find(';')));
    for (int depth = 3; depth <= 4; ++depth) {
      DriverRun run;
      EXPECT_EQ(run(b, depth, 20 << 10), chess::perft(b, depth)) << line << " depth " << depth;
      splits += run.splits;
    }
    ++positions;
  }
  EXPECT_EQ(positions, 127);
  EXPECT_GT(splits, 50u);
}

TEST(GpuBfsDriverOnHost, LeafLaunchesAreBoundedByEstimatedNodes) {
  // Kiwipete depth 5: about 48^2 nodes per board at the two-ply leaf, so at most
  // kTargetNodesPerLaunch / 2300 boards per launch (never fewer than 1024).
  DriverRun run;
  EXPECT_EQ(run(chess::parse_fen("r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1"), 5, kRoomy),
            193690690u);
  EXPECT_LE(double(run.backend.max_leaf_boards) * 40.0 * 40.0, kTargetNodesPerLaunch * 1.01);
}

TEST(GpuBfsDriverOnHost, NodeCountOverflowIsAnErrorNotAWrap) {
  DriverRun run;
  run.backend.fake_leaf_nodes = std::numeric_limits<std::uint64_t>::max() / 2 + 1;
  // 8 KiB: the 400 boards of ply 2 come in several ranges, so several leaf launches add up.
  EXPECT_THROW(run(chess::parse_fen("startpos"), 4, 8 << 10), std::overflow_error);
  EXPECT_GE(run.backend.leaf_launches, 2u);
}

TEST(GpuBfsDriverOnHost, BudgetTooSmallForOneParentsChildrenIsAnError) {
  DriverRun run;
  EXPECT_THROW(run(chess::parse_fen("startpos"), 4, 1024), std::runtime_error);
}

TEST(GpuBfsDriverOnHost, CancellationPropagatesBetweenRanges) {
  DriverRun run;
  run.backend.cancel_after_reads = 3;
  EXPECT_THROW(run(chess::parse_fen("startpos"), 5, 64 << 10), PerftCancelled);
  EXPECT_EQ(run.backend.reads, 3u);
}

}  // namespace
}  // namespace pgmate::gpu::detail
