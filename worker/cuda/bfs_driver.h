// The host side of the breadth-first chess perft, independent of CUDA: which levels are
// stored, how a level that does not fit is split over its parents, how launches are
// sized, and overflow-checked sums. perft_kernel.cu runs it with a CUDA backend; the tests
// run it on the host with a backend of plain loops, so the splitting logic is checked
// without a GPU.
//
// A Backend provides (all on the same in-order queue; `ends` are inclusive prefix sums):
//   void count_moves(const CompactBoard* level, std::size_t n, unsigned long long* ends);
//   std::size_t scan_temp_bytes(unsigned long long* ends, std::size_t n);
//   void inclusive_scan(void* temp, std::size_t temp_bytes, unsigned long long* ends, std::size_t n);
//   std::pair<std::uint64_t, std::uint64_t> read_ends(const unsigned long long* ends, std::size_t begin,
//                                                     std::size_t end);  // ends[begin-1] (0 if none), ends[end-1]
//   void expand(const CompactBoard* parents, std::size_t begin, std::size_t n, const unsigned long long* ends,
//               unsigned long long base, CompactBoard* children);
//   std::uint64_t leaves(const CompactBoard* level, std::size_t n, int plies, unsigned long long* scratch);
//   void throw_if_cancelled();
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <stdexcept>

#include "chess/compact_board.h"

namespace pgmate::gpu::detail {

// Most nodes one leaf launch should count: about 40 ms at 100 G nodes/s, so the network's
// high-priority stream gets the SMs back often and a launch never runs for long.
constexpr double kTargetNodesPerLaunch = 4e9;
constexpr std::size_t kMaxBoardsPerLaunch = std::size_t(1) << 24;
constexpr std::size_t kMaxParentsPerExpand = std::size_t(1) << 22;

inline std::uint64_t add_checked(std::uint64_t a, std::uint64_t b) {
  std::uint64_t sum;
  if (__builtin_add_overflow(a, b, &sum)) throw std::overflow_error("perft node count exceeds 2^64 - 1");
  return sum;
}

template <class Backend>
class BfsDriver {
 public:
  using Board = chess::CompactBoard;

  // `arena` (capacity bytes, 256-byte aligned) holds every level; nothing else is allocated.
  BfsDriver(Backend& backend, char* arena, std::size_t capacity)
      : backend_(backend), arena_(arena), capacity_(capacity) {}

  // Nodes `remaining` plies below the n boards at `level`; `branching` estimates moves per
  // board (it sizes the leaf launches).
  std::uint64_t subtree(const Board* level, std::size_t n, int remaining, double branching) {
    if (remaining <= 0) return n;
    if (remaining <= 2) return leaves(level, n, remaining, branching);
    const std::size_t mark = used_;
    auto* ends = alloc<unsigned long long>(n);
    for (std::size_t at = 0; at < n; at += kMaxBoardsPerLaunch)
      backend_.count_moves(level + at, std::min(kMaxBoardsPerLaunch, n - at), ends + at);
    const std::size_t temp_bytes = backend_.scan_temp_bytes(ends, n);
    void* temp = alloc<char>(temp_bytes);
    backend_.inclusive_scan(temp, temp_bytes, ends, n);
    const std::uint64_t nodes = parents(level, ends, 0, n, remaining);
    used_ = mark;
    return nodes;
  }

  std::size_t launches() const { return launches_; }
  std::size_t splits() const { return splits_; }

 private:
  template <class T>
  T* alloc(std::size_t n) {
    const std::size_t start = (used_ + 255) & ~std::size_t(255);
    const std::size_t bytes = n * sizeof(T);
    if (start + bytes > capacity_) throw std::runtime_error("GPU perft: level does not fit the device memory budget");
    used_ = start + bytes;
    return reinterpret_cast<T*>(arena_ + start);
  }
  std::size_t free_bytes() const { return capacity_ - std::min(capacity_, used_ + 256); }

  // Children of parents [begin, end) and everything below them: expanded in one piece when
  // they (and room for the levels below) fit, else split in halves.
  std::uint64_t parents(const Board* level, const unsigned long long* ends, std::size_t begin, std::size_t end,
                        int remaining) {
    backend_.throw_if_cancelled();
    const auto [base, top] = backend_.read_ends(ends, begin, end);
    const std::uint64_t children = top - base;
    if (children == 0) return 0;
    const int child_remaining = remaining - 1;
    // A level that will be expanded again takes at most half of what is free, so the
    // levels below it get room too; the last stored level may take it all.
    const std::size_t per_child = sizeof(Board) + (child_remaining > 2 ? sizeof(unsigned long long) : 0);
    const std::size_t budget = child_remaining > 2 ? free_bytes() / 2 : free_bytes();
    // The scan's temporary storage when the children are expanded again, the leaf total,
    // alignment.
    const std::size_t slack = (child_remaining > 2 ? backend_.scan_temp_bytes(nullptr, children) + 512 : 0) + 1024;
    if (children <= (budget > slack ? (budget - slack) / per_child : 0)) {
      const std::size_t mark = used_;
      Board* next = alloc<Board>(children);
      for (std::size_t at = begin; at < end; at += kMaxParentsPerExpand) {
        backend_.expand(level, at, std::min(kMaxParentsPerExpand, end - at), ends, base, next);
        ++launches_;
      }
      const std::uint64_t nodes = subtree(next, children, child_remaining, double(children) / double(end - begin));
      used_ = mark;
      return nodes;
    }
    if (end - begin == 1) throw std::runtime_error("GPU perft: the device memory budget is too small");
    ++splits_;
    const std::size_t mid = begin + (end - begin) / 2;
    const std::uint64_t first = parents(level, ends, begin, mid, remaining);
    return add_checked(first, parents(level, ends, mid, end, remaining));
  }

  std::uint64_t leaves(const Board* level, std::size_t n, int plies, double branching) {
    const double per_board = plies == 2 ? branching * branching : branching;
    const auto per_launch = std::size_t(
        std::clamp(kTargetNodesPerLaunch / std::max(per_board, 1.0), 1024.0, double(kMaxBoardsPerLaunch)));
    const std::size_t mark = used_;
    auto* scratch = alloc<unsigned long long>(1);
    std::uint64_t nodes = 0;
    for (std::size_t at = 0; at < n; at += per_launch) {
      backend_.throw_if_cancelled();
      nodes = add_checked(nodes, backend_.leaves(level + at, std::min(per_launch, n - at), plies, scratch));
      ++launches_;
    }
    used_ = mark;
    return nodes;
  }

  Backend& backend_;
  char* arena_;
  std::size_t capacity_;
  std::size_t used_ = 0;
  std::size_t launches_ = 0;
  std::size_t splits_ = 0;
};

}  // namespace pgmate::gpu::detail
