#include "checkers/perft.h"

#include <algorithm>
#include <atomic>

#include "common/parallel.h"

namespace pgmate::checkers {

namespace {

// PDN numbers of start, landing squares: the order moves are listed in.
std::vector<int> sort_key(const Move& m) {
  std::vector<int> key{kSquareToPdn[m.from]};
  if (!m.is_capture()) {
    key.push_back(kSquareToPdn[m.to]);
  } else {
    for (int i = 0; i < m.captures; ++i) key.push_back(kSquareToPdn[m.landing(i)]);
  }
  return key;
}

}  // namespace

std::vector<Move> sorted_legal_moves(const Board& b, CaptureRule rule) {
  MoveList list;
  legal_moves(b, list, rule);
  std::vector<Move> moves(list.begin(), list.end());
  std::sort(moves.begin(), moves.end(), [](const Move& x, const Move& y) { return sort_key(x) < sort_key(y); });
  return moves;
}

std::vector<std::pair<Move, std::uint64_t>> perft_divide(const Board& b, int depth, CaptureRule rule, int threads) {
  if (depth <= 0) return {};
  const std::vector<Move> moves = sorted_legal_moves(b, rule);
  std::vector<std::pair<Move, std::uint64_t>> result(moves.size());
  for (size_t i = 0; i < moves.size(); ++i) result[i].first = moves[i];

  // Threads take root moves from a shared counter; results land in their own slots.
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i; (i = next.fetch_add(1)) < moves.size();) {
      Board child = b;
      child.play(moves[i]);
      result[i].second = perft(child, depth - 1, rule);
    }
  };
  run_on_threads(std::max(1, std::min(threads, int(moves.size()))), work);
  return result;
}

std::uint64_t perft_parallel(const Board& b, int depth, CaptureRule rule, int threads) {
  if (threads <= 1 || depth <= 1) return perft(b, depth, rule);
  std::uint64_t total = 0;
  for (const auto& [move, nodes] : perft_divide(b, depth, rule, threads)) total += nodes;
  return total;
}

}  // namespace pgmate::checkers
