#include "chess/perft.h"

#include <algorithm>
#include <atomic>

#include "common/parallel.h"

namespace pgmate::chess {

std::vector<std::pair<Move, std::uint64_t>> perft_divide(const Board& b, int depth, int threads) {
  MoveList list;
  legal_moves(b, list);
  std::vector<std::pair<Move, std::uint64_t>> result(list.size);
  for (int i = 0; i < list.size; ++i) result[i].first = list.moves[i];
  if (depth <= 0) return {};

  // Threads take root moves from a shared counter; results land in their own slots.
  std::atomic<int> next{0};
  auto work = [&] {
    for (int i; (i = next.fetch_add(1)) < list.size;) {
      Board child = b;
      child.play<false>(list.moves[i]);
      result[i].second = perft(child, depth - 1);
    }
  };
  run_on_threads(std::max(1, std::min(threads, list.size)), work);
  return result;
}

std::uint64_t perft_parallel(const Board& b, int depth, int threads) {
  if (threads <= 1 || depth <= 1) return perft(b, depth);
  std::uint64_t total = 0;
  for (const auto& [move, nodes] : perft_divide(b, depth, threads)) total += nodes;
  return total;
}

}  // namespace pgmate::chess
