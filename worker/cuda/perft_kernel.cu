#include "worker/cuda/perft_kernel.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdlib>
#include <cub/device/device_scan.cuh>
#include <stdexcept>

#include "chess/compact_board.h"
#include "chess/magic_tables.h"
#include "worker/cuda/bfs_driver.h"
#include "worker/cuda/perft_device.cuh"

namespace pgmate::gpu {

using chess::CompactBoard;
using detail::blocks_for;
using detail::cancel_requested;
using detail::CancelWord;
using detail::check;
using detail::PerftDevice;

namespace {

// Block sizes and register caps. The leaf kernel keeps a move list in local memory (520
// bytes reserved a thread; only the slots written are touched). It is built for 2, 3 or 4
// blocks of 256 per SM (sm_90, CUDA 13): 2 gives 123 registers (90 with magics) and no
// spills; 3 gives 80 registers, with 56 bytes of spills for the table-free attacks and
// none with magics; 4 gives 64 registers, with spills (82 bytes stored with magics, 138
// table-free). Which is fastest has to be measured on the GPU (BfsOptions::
// leaf_blocks_per_sm, gpu_perft_bench).
constexpr unsigned kThreads = 256;
constexpr unsigned kPerThreadThreads = 64;

// Magic slider tables in device memory (uploaded once, read through the read-only cache),
// as an alternative to the table-free attacks; which is faster is to be measured
// (BfsOptions::magic_attacks, gpu_perft_bench).
__device__ chess::MagicTableView g_magic_view;

struct DeviceMagicAttacks {
  PGMATE_HD PGMATE_FORCEINLINE static chess::Bitboard rook(chess::Square s, chess::Bitboard occ) {
#if defined(__CUDA_ARCH__)
    const chess::MagicEntry* e = g_magic_view.rook + s;
    const chess::MagicEntry entry{__ldg(&e->mask), __ldg(&e->magic), __ldg(&e->offset), __ldg(&e->shift)};
    return __ldg(g_magic_view.attacks + chess::magic_index(entry, occ));
#else
    return chess::table_free::rook_attacks(s, occ);  // never used: the host has its own tables
#endif
  }
  PGMATE_HD PGMATE_FORCEINLINE static chess::Bitboard bishop(chess::Square s, chess::Bitboard occ) {
#if defined(__CUDA_ARCH__)
    const chess::MagicEntry* e = g_magic_view.bishop + s;
    const chess::MagicEntry entry{__ldg(&e->mask), __ldg(&e->magic), __ldg(&e->offset), __ldg(&e->shift)};
    return __ldg(g_magic_view.attacks + chess::magic_index(entry, occ));
#else
    return chess::table_free::bishop_attacks(s, occ);
#endif
  }
  PGMATE_HD PGMATE_FORCEINLINE static chess::Bitboard between(chess::Square a, chess::Square b) {
#if defined(__CUDA_ARCH__)
    return __ldg(g_magic_view.between + a * 64 + b);
#else
    return chess::table_free::between_and_target(a, b);
#endif
  }
};
using MagicBoard = chess::BasicCompactBoard<DeviceMagicAttacks>;


__global__ void __launch_bounds__(kPerThreadThreads) perft_thread_kernel(const CompactBoard* boards, int n, int depth,
                                                                          CancelWord cancel,
                                                                          unsigned long long* counts) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  counts[i] = chess::perft_iterative<kMaxPerThreadDepth>(boards[i], depth, [&] { return cancel_requested(cancel); });
}

// counts[i] = legal moves of boards[i] (the sizes the prefix sum turns into child offsets).
// B: the board type whose lookup policy the kernel uses (levels are stored as CompactBoard).
template <class B>
__global__ void __launch_bounds__(kThreads) count_moves_kernel(const CompactBoard* boards, std::size_t n,
                                                               unsigned long long* counts) {
  const std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) counts[i] = unsigned(chess::count_legal_moves(B::rebind(boards[i])));
}

// Children of parents [begin, begin + n): parent i's go to children[ends[i-1] - base ...].
template <class B>
__global__ void __launch_bounds__(kThreads) expand_kernel(const CompactBoard* parents, std::size_t begin,
                                                          std::size_t n, const unsigned long long* ends,
                                                          unsigned long long base, CompactBoard* children) {
  const std::size_t t = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (t >= n) return;
  const std::size_t i = begin + t;
  const CompactBoard parent = parents[i];
  CompactBoard* out = children + ((i ? ends[i - 1] : 0) - base);
  chess::MoveList list;
  chess::legal_moves(B::rebind(parent), list);
  for (int k = 0; k < list.size; ++k) {
    CompactBoard child = parent;
    child.play(list.moves[k]);
    out[k] = child;
  }
}

// Sum over boards of perft(board, Plies) for Plies 1 or 2 (the fused last two plies:
// each move made and its replies counted). One cancel read per warp, one atomic per warp.
template <class B, int Plies, int MinBlocks>
__global__ void __launch_bounds__(kThreads, MinBlocks) leaf_kernel(const CompactBoard* boards, std::size_t n,
                                                            CancelWord cancel, unsigned long long* total) {
  const std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  unsigned stop = 0;
  if ((threadIdx.x & 31) == 0) stop = *cancel;
  stop = __shfl_sync(0xffffffffu, stop, 0);
  unsigned long long nodes = 0;
  if (i < n && !stop) {
    if constexpr (Plies == 1)
      nodes = unsigned(chess::count_legal_moves(B::rebind(boards[i])));
    else
      nodes = chess::perft_two_plies(B::rebind(boards[i]));
  }
  detail::warp_add(total, nodes);
}

__global__ void __launch_bounds__(128) legal_moves_kernel(const CompactBoard* boards, int n, unsigned short* moves,
                                                          int* counts) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  chess::MoveList list;
  chess::legal_moves(boards[i], list);
  counts[i] = list.size;
  for (int k = 0; k < list.size; ++k) moves[std::size_t(i) * chess::kMaxMoves + k] = list.moves[k].bits();
}

std::vector<CompactBoard> compact(const std::vector<chess::Board>& boards) {
  std::vector<CompactBoard> out;
  out.reserve(boards.size());
  for (const auto& b : boards) out.push_back(CompactBoard::from(b));
  return out;
}

// Buffers kept between runs (guarded by PerftDevice::mutex()).
struct ChessBuffers {
  detail::DeviceBuffer<CompactBoard> boards;
  detail::DeviceBuffer<unsigned long long> counts;
  detail::DeviceBuffer<unsigned short> moves;
  detail::DeviceBuffer<int> move_counts;
  detail::DeviceBuffer<char> arena;
  detail::DeviceBuffer<chess::MagicEntry> magic_entries;
  detail::DeviceBuffer<chess::Bitboard> magic_attacks;
  detail::DeviceBuffer<chess::Bitboard> magic_between;
  bool magic_ready = false;
  detail::PinnedBuffer<unsigned long long> readback{4};
};
ChessBuffers& buffers() {
  static ChessBuffers* b = new ChessBuffers();  // never destroyed: CUDA may be torn down first at exit
  return *b;
}

// The breadth-first driver's (bfs_driver.h) operations as kernels on the perft stream.
class CudaBfsBackend {
 public:
  CudaBfsBackend(PerftDevice& device, const std::function<bool()>& cancelled, int leaf_blocks, bool magic)
      : dev_(device), cancelled_(cancelled), readback_(buffers().readback), leaf_blocks_(leaf_blocks), magic_(magic) {}

  void count_moves(const CompactBoard* level, std::size_t n, unsigned long long* ends) {
    if (magic_)
      count_moves_kernel<MagicBoard><<<blocks_for(n, kThreads), kThreads, 0, dev_.stream()>>>(level, n, ends);
    else
      count_moves_kernel<CompactBoard><<<blocks_for(n, kThreads), kThreads, 0, dev_.stream()>>>(level, n, ends);
    check(cudaGetLastError(), "launch count kernel");
  }
  std::size_t scan_temp_bytes(unsigned long long* ends, std::size_t n) {
    std::size_t bytes = 0;
    check(cub::DeviceScan::InclusiveSum(nullptr, bytes, ends, ends, n, dev_.stream()), "size prefix sum");
    return bytes;
  }
  void inclusive_scan(void* temp, std::size_t temp_bytes, unsigned long long* ends, std::size_t n) {
    check(cub::DeviceScan::InclusiveSum(temp, temp_bytes, ends, ends, n, dev_.stream()), "prefix sum");
  }
  std::pair<std::uint64_t, std::uint64_t> read_ends(const unsigned long long* ends, std::size_t begin,
                                                    std::size_t end) {
    readback_[0] = 0;
    if (begin)
      check(cudaMemcpyAsync(&readback_[0], ends + begin - 1, 8, cudaMemcpyDeviceToHost, dev_.stream()), "read offsets");
    check(cudaMemcpyAsync(&readback_[1], ends + end - 1, 8, cudaMemcpyDeviceToHost, dev_.stream()), "read offsets");
    dev_.wait(cancelled_, "read offsets");
    return {readback_[0], readback_[1]};
  }
  void expand(const CompactBoard* parents, std::size_t begin, std::size_t n, const unsigned long long* ends,
              unsigned long long base, CompactBoard* children) {
    if (magic_)
      expand_kernel<MagicBoard><<<blocks_for(n, kThreads), kThreads, 0, dev_.stream()>>>(parents, begin, n, ends, base,
                                                                                       children);
    else
      expand_kernel<CompactBoard><<<blocks_for(n, kThreads), kThreads, 0, dev_.stream()>>>(parents, begin, n, ends,
                                                                                         base, children);
    check(cudaGetLastError(), "launch expand kernel");
  }
  std::uint64_t leaves(const CompactBoard* level, std::size_t n, int plies, unsigned long long* total) {
    check(cudaMemsetAsync(total, 0, sizeof *total, dev_.stream()), "clear total");
    if (magic_)
      launch_leaf<MagicBoard>(level, n, plies, total);
    else
      launch_leaf<CompactBoard>(level, n, plies, total);
    check(cudaGetLastError(), "launch leaf kernel");
    check(cudaMemcpyAsync(&readback_[2], total, 8, cudaMemcpyDeviceToHost, dev_.stream()), "read total");
    dev_.wait(cancelled_, "run leaf kernel");
    return readback_[2];
  }
  void throw_if_cancelled() { dev_.throw_if_cancelled(cancelled_); }

 private:
  template <class B>
  void launch_leaf(const CompactBoard* level, std::size_t n, int plies, unsigned long long* total) {
    const unsigned blocks = blocks_for(n, kThreads);
    CancelWord cancel = dev_.device_cancel_word();
    const cudaStream_t stream = dev_.stream();
    if (plies == 1)
      leaf_kernel<B, 1, 3><<<blocks, kThreads, 0, stream>>>(level, n, cancel, total);
    else if (leaf_blocks_ >= 4)
      leaf_kernel<B, 2, 4><<<blocks, kThreads, 0, stream>>>(level, n, cancel, total);
    else if (leaf_blocks_ == 3)
      leaf_kernel<B, 2, 3><<<blocks, kThreads, 0, stream>>>(level, n, cancel, total);
    else
      leaf_kernel<B, 2, 2><<<blocks, kThreads, 0, stream>>>(level, n, cancel, total);
  }

  PerftDevice& dev_;
  const std::function<bool()>& cancelled_;
  detail::PinnedBuffer<unsigned long long>& readback_;
  int leaf_blocks_;
  bool magic_;
};

// Builds the flat magic tables on the host and copies them to the device once (about
// 900 KB); the kernels find them through g_magic_view.
void upload_magic_tables(PerftDevice& dev, ChessBuffers& buf) {
  const chess::MagicTables tables = chess::MagicTables::build();
  std::vector<chess::MagicEntry> entries(tables.rook);
  entries.insert(entries.end(), tables.bishop.begin(), tables.bishop.end());
  chess::MagicEntry* d_entries = buf.magic_entries.reserve(entries.size(), dev.stream());
  chess::Bitboard* d_attacks = buf.magic_attacks.reserve(tables.attacks.size(), dev.stream());
  chess::Bitboard* d_between = buf.magic_between.reserve(tables.between.size(), dev.stream());
  check(cudaMemcpyAsync(d_entries, entries.data(), entries.size() * sizeof entries[0], cudaMemcpyHostToDevice,
                        dev.stream()),
        "copy magic entries");
  check(cudaMemcpyAsync(d_attacks, tables.attacks.data(), tables.attacks.size() * sizeof(chess::Bitboard),
                        cudaMemcpyHostToDevice, dev.stream()),
        "copy magic attacks");
  check(cudaMemcpyAsync(d_between, tables.between.data(), tables.between.size() * sizeof(chess::Bitboard),
                        cudaMemcpyHostToDevice, dev.stream()),
        "copy between table");
  const chess::MagicTableView view{d_entries, d_entries + 64, d_attacks, d_between};
  check(cudaMemcpyToSymbolAsync(g_magic_view, &view, sizeof view, 0, cudaMemcpyHostToDevice, dev.stream()),
        "set magic tables");
  dev.wait({}, "upload magic tables");  // the host vectors go out of scope
  buf.magic_ready = true;
}

std::size_t default_bfs_memory() {
  std::size_t cap = kDefaultBfsMemory;
  if (const char* env = std::getenv("PGMATE_GPU_PERFT_MEMORY_MB")) cap = std::size_t(std::strtoull(env, nullptr, 10)) << 20;
  return cap;
}

}  // namespace

bool cuda_device_available(std::string* why) {
  int count = 0;
  cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    if (why) *why = std::string("no usable CUDA device: ") + cudaGetErrorString(err);
    cudaGetLastError();
    return false;
  }
  if (count == 0) {
    if (why) *why = "no CUDA device found";
    return false;
  }
  return true;
}

std::vector<std::uint64_t> perft_batch(const std::vector<chess::Board>& boards, int depth,
                                       const std::function<bool()>& cancelled) {
  if (depth > kMaxPerThreadDepth)
    throw std::invalid_argument("perft_batch: depth " + std::to_string(depth) + " is over " +
                                std::to_string(kMaxPerThreadDepth));
  const std::size_t n = boards.size();
  std::vector<std::uint64_t> counts(n);
  if (n == 0) return counts;
  if (n > (std::size_t(1) << 30)) throw std::invalid_argument("perft_batch: too many boards for one launch");
  PerftDevice& dev = PerftDevice::instance();
  std::lock_guard lock(dev.mutex());
  dev.reset_cancel();
  auto& buf = buffers();
  const auto host = compact(boards);
  CompactBoard* d_boards = buf.boards.reserve(n, dev.stream());
  unsigned long long* d_counts = buf.counts.reserve(n, dev.stream());
  check(cudaMemcpyAsync(d_boards, host.data(), n * sizeof(CompactBoard), cudaMemcpyHostToDevice, dev.stream()),
        "copy boards");
  perft_thread_kernel<<<blocks_for(n, kPerThreadThreads), kPerThreadThreads, 0, dev.stream()>>>(
      d_boards, int(n), depth, dev.device_cancel_word(), d_counts);
  check(cudaGetLastError(), "launch perft kernel");
  // Wait (polling the cancel hook) before copying to pageable memory: that copy would
  // block the host until the kernel ends.
  dev.wait(cancelled, "run perft kernel");
  check(cudaMemcpyAsync(counts.data(), d_counts, n * sizeof(unsigned long long), cudaMemcpyDeviceToHost, dev.stream()),
        "copy counts");
  dev.wait({}, "copy counts");
  return counts;
}

std::uint64_t perft_bfs(const chess::Board& root, int depth, const BfsOptions& options) {
  if (depth <= 0) return 1;
  PerftDevice& dev = PerftDevice::instance();
  std::lock_guard lock(dev.mutex());
  dev.reset_cancel();
  auto& buf = buffers();
  std::size_t budget = options.memory_bytes;
  if (budget == 0) {
    std::size_t free = 0, total = 0;
    check(cudaMemGetInfo(&free, &total), "query device memory");
    // What this process already holds for the levels counts as free for the next run.
    budget = std::min(default_bfs_memory(), (free + buf.arena.capacity()) / 2);
  }
  budget = std::max<std::size_t>(budget, std::size_t(1) << 20);
  if (buf.arena.capacity() < budget) {
    buf.arena.release(dev.stream());
    // Shrink on failure (other processes or LibTorch may hold memory cudaMemGetInfo saw free).
    while (true) {
      try {
        buf.arena.reserve(budget, dev.stream());
        break;
      } catch (const DeviceFault&) {
        throw;
      } catch (const std::exception&) {
        cudaGetLastError();
        if (budget <= (std::size_t(64) << 20)) throw;
        budget /= 2;
      }
    }
  }
  char* arena = buf.arena.get();
  const CompactBoard start = CompactBoard::from(root);
  check(cudaMemcpyAsync(arena, &start, sizeof start, cudaMemcpyHostToDevice, dev.stream()), "copy root");
  // The root occupies the arena's first bytes; the run allocates after it.
  int leaf_blocks = options.leaf_blocks_per_sm;
  if (leaf_blocks == 0)
    if (const char* env = std::getenv("PGMATE_GPU_LEAF_BLOCKS")) leaf_blocks = std::atoi(env);
  bool magic = options.magic_attacks;
  if (const char* env = std::getenv("PGMATE_GPU_MAGICS")) magic = magic || std::atoi(env) != 0;
  if (magic && !buf.magic_ready) upload_magic_tables(dev, buf);
  CudaBfsBackend backend(dev, options.cancelled, leaf_blocks, magic);
  detail::BfsDriver<CudaBfsBackend> driver(backend, arena + 256, budget - 256);
  // The root's branching is a guess (host move generation is not built into this file);
  // every later estimate is measured from the level sizes.
  const std::uint64_t nodes = driver.subtree(reinterpret_cast<const CompactBoard*>(arena), 1, depth, 32.0);
  dev.throw_if_cancelled(options.cancelled);
  return nodes;
}

std::vector<std::vector<chess::Move>> legal_moves_batch(const std::vector<chess::Board>& boards) {
  const std::size_t n = boards.size();
  std::vector<std::vector<chess::Move>> result(n);
  if (n == 0) return result;
  if (n > (std::size_t(1) << 24)) throw std::invalid_argument("legal_moves_batch: too many boards for one launch");
  PerftDevice& dev = PerftDevice::instance();
  std::lock_guard lock(dev.mutex());
  auto& buf = buffers();
  const auto host = compact(boards);
  CompactBoard* d_boards = buf.boards.reserve(n, dev.stream());
  unsigned short* d_moves = buf.moves.reserve(n * chess::kMaxMoves, dev.stream());
  int* d_counts = buf.move_counts.reserve(n, dev.stream());
  check(cudaMemcpyAsync(d_boards, host.data(), n * sizeof(CompactBoard), cudaMemcpyHostToDevice, dev.stream()),
        "copy boards");
  legal_moves_kernel<<<blocks_for(n, 128), 128, 0, dev.stream()>>>(d_boards, int(n), d_moves, d_counts);
  check(cudaGetLastError(), "launch legal moves kernel");
  dev.wait({}, "run legal moves kernel");  // sleeps on the event; a pageable copy would spin
  std::vector<unsigned short> moves(n * chess::kMaxMoves);
  std::vector<int> counts(n);
  check(cudaMemcpyAsync(counts.data(), d_counts, n * sizeof(int), cudaMemcpyDeviceToHost, dev.stream()), "copy counts");
  check(cudaMemcpyAsync(moves.data(), d_moves, moves.size() * sizeof(unsigned short), cudaMemcpyDeviceToHost,
                        dev.stream()),
        "copy moves");
  dev.wait({}, "copy moves");
  for (std::size_t i = 0; i < n; ++i)
    for (int k = 0; k < counts[i]; ++k) result[i].push_back(chess::Move(moves[i * chess::kMaxMoves + k]));
  return result;
}

}  // namespace pgmate::gpu
