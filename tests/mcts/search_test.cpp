// MCTS on positions with a known answer, and the mechanics: virtual loss, tree reuse,
// the evaluation cache, noise, determinism.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "chess/fen.h"
#include "chess/game.h"
#include "chess/movegen.h"
#include "chess/notation.h"
#include "mcts/rollout_evaluator.h"
#include "mcts/search.h"

namespace pgmate::mcts {
namespace {

using chess::Board;
using chess::Move;

std::vector<Move> legal(const Board& b) {
  chess::MoveList list;
  chess::legal_moves(b, list);
  return {list.begin(), list.end()};
}

bool is_mate(const Board& b) { return legal(b).empty() && b.in_check(); }
bool is_stalemate(const Board& b) { return legal(b).empty() && !b.in_check(); }

Board after(Board b, Move m) {
  b.play(m);
  return b;
}

// Brute force, independent of the search: can the side to move force mate within n moves?
bool forced_mate_within(const Board& b, int n) {
  if (n == 0) return false;
  for (Move m : legal(b)) {
    const Board next = after(b, m);
    if (is_mate(next)) return true;
    const auto replies = legal(next);
    if (replies.empty()) continue;  // stalemate
    bool all = true;
    for (Move r : replies)
      if (!forced_mate_within(after(next, r), n - 1)) {
        all = false;
        break;
      }
    if (all) return true;
  }
  return false;
}

struct Searched {
  RootStats stats;
  Move best;
};

Searched search_fen(std::string_view fen, int simulations, Evaluator& evaluator, std::uint64_t seed = 1) {
  SearchParams params;
  params.simulations = simulations;
  Search search(params, seed);
  search.set_game(chess::Game(chess::parse_fen(fen)));
  Searched out{search_position(search, evaluator), Move()};
  Rng rng(seed);
  out.best = search.choose_move(0, rng);
  return out;
}

TEST(Search, FindsMateInOne) {
  const Board b = chess::parse_fen("6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1");
  for (std::uint64_t seed = 1; seed <= 5; ++seed) {
    RolloutEvaluator pure(seed);
    const auto r = search_fen("6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1", 30, pure, seed);
    EXPECT_EQ(chess::to_uci(r.best), "a1a8");
    EXPECT_TRUE(is_mate(after(b, r.best)));
    EXPECT_EQ(r.stats.bound, Bound::kWin);
    EXPECT_EQ(r.stats.bound_plies, 1);
    EXPECT_FLOAT_EQ(r.stats.value, 1.0f);
  }
}

// Mate in two: found and proven (the root is a win in three plies), and the move chosen
// keeps the forced mate. The endgames take pure MCTS a few hundred simulations; the
// sacrifice (1. Nf6+ gxf6 2. Bxf7#) more, as random playouts make it look bad at first.
TEST(Search, FindsMateInTwo) {
  const std::vector<std::pair<const char*, int>> cases = {
      {"7k/8/8/8/8/8/R7/1R4K1 w - - 0 1", 1000},
      {"1k6/8/2K5/8/8/8/8/7Q w - - 0 1", 1000},
      {"7k/8/8/6K1/8/8/8/1Q6 w - - 0 1", 1000},
      {"k7/8/2K5/8/8/8/8/1R6 w - - 0 1", 1000},
      {"r2qkb1r/pp2nppp/3p4/2pNN1B1/2BnP3/3P4/PPP2PPP/R2bK2R w KQkq - 1 1", 2500}};
  for (const auto& [fen, simulations] : cases) {
    const Board b = chess::parse_fen(fen);
    ASSERT_TRUE(forced_mate_within(b, 2)) << fen;
    ASSERT_FALSE(forced_mate_within(b, 1)) << fen;
    for (std::uint64_t seed = 1; seed <= 3; ++seed) {
      SCOPED_TRACE(std::string(fen) + " seed " + std::to_string(seed));
      RolloutEvaluator pure(seed);
      const auto r = search_fen(fen, simulations, pure, seed);
      EXPECT_EQ(r.stats.bound, Bound::kWin);
      EXPECT_EQ(r.stats.bound_plies, 3);
      const Board next = after(b, r.best);
      ASSERT_FALSE(legal(next).empty());
      for (Move reply : legal(next)) EXPECT_TRUE(forced_mate_within(after(next, reply), 1)) << chess::to_uci(reply);
    }
  }
}

TEST(Search, DefendsAgainstMateInOne) {
  // Black to move must stop Ra8 mate: only ...h6, ...g6, ...g5, ...h5 or a king move do.
  const Board b = chess::parse_fen("6k1/5ppp/8/8/8/8/8/R5K1 b - - 0 1");
  RolloutEvaluator pure(3);
  const auto r = search_fen("6k1/5ppp/8/8/8/8/8/R5K1 b - - 0 1", 300, pure, 3);
  EXPECT_FALSE(forced_mate_within(after(b, r.best), 1)) << chess::to_uci(r.best);
}

TEST(Search, AvoidsStalemateWhenWinning) {
  // Kb6?? stalemates; an evaluator that loves White's material must not tempt the search.
  const char* fen = "k7/2Q5/8/1K6/8/8/8/8 w - - 0 1";
  const Board b = chess::parse_fen(fen);
  ASSERT_TRUE(is_stalemate(after(b, chess::parse_uci(b, "b5b6"))));
  FunctionEvaluator material([](const EvalRequest& r) {
    EvalResult e = uniform_evaluation(r);
    const float v = float(material_balance(r.history.front())) / 10.0f;
    e.win = std::max(v, 0.0f);
    e.loss = std::max(-v, 0.0f);
    e.draw = 1 - e.win - e.loss;
    return e;
  });
  for (std::uint64_t seed = 1; seed <= 5; ++seed) {
    const auto r = search_fen(fen, 200, material, seed);
    EXPECT_FALSE(is_stalemate(after(b, r.best))) << chess::to_uci(r.best);
    const auto it = std::find(r.stats.moves.begin(), r.stats.moves.end(), chess::parse_uci(b, "b5b6"));
    ASSERT_NE(it, r.stats.moves.end());
    EXPECT_FLOAT_EQ(r.stats.q[size_t(it - r.stats.moves.begin())], 0.0f);  // known exactly: a draw
  }
}

TEST(Search, TakesHangingQueen) {
  const char* fen = "4k3/8/8/3q4/8/8/3R4/4K3 w - - 0 1";
  for (std::uint64_t seed = 1; seed <= 5; ++seed) {
    RolloutEvaluator pure(seed);
    const auto r = search_fen(fen, 200, pure, seed);
    EXPECT_EQ(chess::to_uci(r.best), "d2d5");
    EXPECT_GT(r.stats.value, 0.1f);  // a rook up after the capture
  }
}

TEST(Search, VirtualLossSpreadsLeaves) {
  SearchParams params;
  params.simulations = 100;
  Search search(params, 1);
  search.set_game(chess::Game(chess::parse_fen(chess::kStartFen)));
  std::vector<EvalRequest> requests;
  // The unexpanded root is one leaf; asking again before it is evaluated is a collision.
  EXPECT_EQ(search.gather(8, requests), 1);
  std::vector<EvalResult> results{uniform_evaluation(requests[0])};
  search.deliver(results);
  requests.clear();
  EXPECT_EQ(search.gather(8, requests), 8);
  std::set<std::uint64_t> keys;
  for (const auto& r : requests) keys.insert(r.history.front().key);
  EXPECT_EQ(keys.size(), 8u);
  for (const auto& r : requests) {
    EXPECT_EQ(r.history.size(), 2u);  // the leaf and the start position
    EXPECT_EQ(r.moves.size(), 20u);
  }
  results.assign(requests.size(), EvalResult{});
  for (size_t i = 0; i < requests.size(); ++i) results[i] = uniform_evaluation(requests[i]);
  search.deliver(results);
  EXPECT_EQ(search.simulations_done(), 9);
  EXPECT_EQ(search.root_stats().total_visits, 8u);
}

TEST(Search, ReusesTheSubtreeOfTheMovePlayed) {
  SearchParams params;
  params.simulations = 300;
  Search search(params, 1);
  chess::Game game(chess::parse_fen(chess::kStartFen));
  search.set_game(game);
  RolloutEvaluator pure(5);
  search_position(search, pure);
  const RootStats before = search.root_stats();
  Rng rng(1);
  const Move m = search.choose_move(0, rng);
  const auto i = size_t(std::find(before.moves.begin(), before.moves.end(), m) - before.moves.begin());
  game.play(m);
  search.set_game(game);
  const RootStats kept = search.root_stats();
  // The child had visits[i] visits, one of which expanded it.
  EXPECT_EQ(kept.total_visits, before.visits[i] - 1);
  EXPECT_GT(kept.total_visits, 0u);
  EXPECT_EQ(search.simulations_done(), 0);
  EXPECT_FALSE(search.finished());
  // A position that is not a continuation starts a fresh tree.
  search.set_game(chess::Game(chess::parse_fen("4k3/8/8/8/8/8/8/4K2R w K - 0 1")));
  EXPECT_EQ(search.tree_size(), 1u);
}

TEST(Search, CacheSavesEvaluations) {
  int calls = 0;
  FunctionEvaluator counting([&](const EvalRequest& r) {
    ++calls;
    return uniform_evaluation(r);
  });
  SearchParams params;
  params.simulations = 200;
  EvalCache cache;
  for (int round = 0; round < 2; ++round) {
    Search search(params, 1, &cache);
    search.set_game(chess::Game(chess::parse_fen(chess::kStartFen)));
    search_position(search, counting);
  }
  EXPECT_EQ(calls, 200);  // the second search was answered from the cache
  EXPECT_EQ(cache.hits(), 200u);
}

TEST(Search, NoiseChangesTheSearchNotTheReportedPriors) {
  SearchParams params;
  params.simulations = 200;
  params.root_noise = true;
  FunctionEvaluator uniform(uniform_evaluation);
  Search a(params, 1), b(params, 2), c(params, 1);
  for (Search* s : {&a, &b, &c}) {
    s->set_game(chess::Game(chess::parse_fen(chess::kStartFen)));
    search_position(*s, uniform);
  }
  for (float p : a.root_stats().priors) EXPECT_FLOAT_EQ(p, 1.0f / 20);
  EXPECT_NE(a.root_stats().visits, b.root_stats().visits);  // different noise
  EXPECT_EQ(a.root_stats().visits, c.root_stats().visits);  // same seed, same search
}

TEST(Search, ChooseMoveFollowsTemperature) {
  SearchParams params;
  params.simulations = 400;
  Search search(params, 1);
  search.set_game(chess::Game(chess::parse_fen(chess::kStartFen)));
  RolloutEvaluator pure(2);
  const RootStats s = search_position(search, pure);
  const auto most = size_t(std::max_element(s.visits.begin(), s.visits.end()) - s.visits.begin());
  Rng rng(3);
  for (int i = 0; i < 20; ++i) EXPECT_EQ(search.choose_move(0, rng), s.moves[most]);
  std::set<std::uint16_t> sampled;
  for (int i = 0; i < 200; ++i) sampled.insert(search.choose_move(1.0f, rng).bits());
  EXPECT_GT(sampled.size(), 3u);
  for (std::uint16_t bits : sampled) {  // only visited moves are ever sampled
    const auto j = size_t(std::find(s.moves.begin(), s.moves.end(), Move(bits)) - s.moves.begin());
    EXPECT_GT(s.visits[j], 0u);
  }
}

TEST(Random, DirichletIsADistribution) {
  Rng rng(42);
  double mean_first = 0;
  for (int i = 0; i < 2000; ++i) {
    const auto d = rng.dirichlet(10, 0.3);
    double sum = 0;
    for (float x : d) {
      EXPECT_GE(x, 0.0f);
      sum += x;
    }
    EXPECT_NEAR(sum, 1.0, 1e-5);
    mean_first += d[0];
  }
  EXPECT_NEAR(mean_first / 2000, 0.1, 0.02);  // symmetric: each component averages 1/n
}

}  // namespace
}  // namespace pgmate::mcts
