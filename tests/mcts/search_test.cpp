// MCTS on positions with a known answer, and the mechanics: virtual loss, tree reuse,
// the evaluation cache, noise, determinism.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <set>
#include <stdexcept>

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

Searched search_fen(std::string_view fen, int simulations, Evaluator& evaluator, std::uint64_t seed = 1,
                    SearchParams params = {}) {
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

// The same mate with the colours swapped: Black to move wins, so the root value, the bound
// and the stored sign are Black's (the side to move's).
TEST(Search, FindsMateInOneForBlack) {
  const Board b = chess::parse_fen("r5k1/8/8/8/8/8/5PPP/6K1 b - - 0 1");
  for (std::uint64_t seed = 1; seed <= 5; ++seed) {
    RolloutEvaluator pure(seed);
    const auto r = search_fen("r5k1/8/8/8/8/8/5PPP/6K1 b - - 0 1", 30, pure, seed);
    EXPECT_EQ(chess::to_uci(r.best), "a8a1");
    EXPECT_TRUE(is_mate(after(b, r.best)));
    EXPECT_EQ(r.stats.bound, Bound::kWin);
    EXPECT_EQ(r.stats.bound_plies, 1);
    EXPECT_FLOAT_EQ(r.stats.value, 1.0f);
    const auto i = size_t(std::find(r.stats.moves.begin(), r.stats.moves.end(), r.best) - r.stats.moves.begin());
    EXPECT_EQ(r.stats.bounds[i], Bound::kWin);
    EXPECT_FLOAT_EQ(r.stats.q[i], 1.0f);
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

size_t index_of(const RootStats& s, const Board& b, std::string_view uci) {
  const Move m = chess::parse_uci(b, uci);
  const auto it = std::find(s.moves.begin(), s.moves.end(), m);
  EXPECT_NE(it, s.moves.end()) << uci;
  return size_t(it - s.moves.begin());
}

// Priors: `share` on the move named in `favoured` (the first that is legal), the rest
// spread evenly; the value is a draw.
EvalResult favouring(const EvalRequest& r, const std::vector<std::string>& favoured, float share) {
  EvalResult e = uniform_evaluation(r);
  size_t pick = r.moves.size();
  for (const std::string& uci : favoured) {
    for (size_t i = 0; i < r.moves.size() && pick == r.moves.size(); ++i)
      if (chess::to_uci(r.moves[i]) == uci) pick = i;
    if (pick < r.moves.size()) break;
  }
  if (pick == r.moves.size() || r.moves.size() < 2) return e;
  for (size_t i = 0; i < r.moves.size(); ++i)
    e.priors[i] = i == pick ? share : (1 - share) / float(r.moves.size() - 1);
  return e;
}

// F8: one NaN in an evaluation used to spread to the root and make selection dereference
// a null child. Now deliver() refuses it, and nothing of the batch enters the tree or the
// cache: the search goes on once the evaluator behaves.
TEST(Search, NonFiniteEvaluationIsAnErrorNotACrash) {
  const auto broken = [](int bad_call, std::function<void(EvalResult&)> spoil) {
    return [bad_call, spoil, calls = 0](const EvalRequest& r) mutable {
      EvalResult e = uniform_evaluation(r);
      e.win = 0.3f;
      e.draw = 0.5f;
      e.loss = 0.2f;
      if (++calls == bad_call) spoil(e);
      return e;
    };
  };
  const std::vector<std::function<void(EvalResult&)>> spoils = {
      [](EvalResult& e) { e.win = std::nanf(""); },
      [](EvalResult& e) { e.loss = std::numeric_limits<float>::infinity(); },
      [](EvalResult& e) { e.priors[0] = std::nanf(""); },
      [](EvalResult& e) { e.priors.back() = -std::numeric_limits<float>::infinity(); }};
  for (size_t k = 0; k < spoils.size(); ++k) {
    for (int leaves : {1, 4}) {
      SCOPED_TRACE("spoil " + std::to_string(k) + ", leaves " + std::to_string(leaves));
      FunctionEvaluator evaluator(broken(5, spoils[k]));
      SearchParams params;
      params.simulations = 50;
      EvalCache cache;
      Search search(params, 1, &cache);
      search.set_game(chess::Game(chess::parse_fen(chess::kStartFen)));
      EXPECT_THROW(search_position(search, evaluator, leaves), std::invalid_argument);
      // Only the good results before the bad batch were cached: 4 single leaves, or the
      // root alone before a batch of 4.
      EXPECT_EQ(cache.size(), leaves == 1 ? 4u : 1u);
      // The search is still sound: it finishes with good evaluations.
      FunctionEvaluator good(broken(0, nullptr));
      const RootStats s = search_position(search, good, leaves);
      EXPECT_TRUE(search.finished());
      EXPECT_TRUE(std::isfinite(s.value));
      for (float q : s.q) EXPECT_TRUE(std::isfinite(q));
      EXPECT_EQ(s.total_visits, std::uint32_t(search.simulations_done() - 1));
    }
  }
}

// F1: with root noise the tree is not reused: after a move the new search starts from an
// empty root, so every visit it reports was made under its own noise. The cache answers
// the positions the previous search evaluated.
TEST(Search, RootNoiseSearchesEveryMoveAfresh) {
  SearchParams params;
  params.simulations = 200;
  params.root_noise = true;
  int calls = 0;
  FunctionEvaluator counting([&](const EvalRequest& r) {
    ++calls;
    return favouring(r, {"e2e4", "e7e5", "g1f3"}, 0.5f);
  });
  EvalCache cache;
  Search search(params, 7, &cache);
  chess::Game game(chess::parse_fen(chess::kStartFen));
  search.set_game(game);
  search_position(search, counting);
  EXPECT_EQ(calls, 200);
  for (int move = 0; move < 3; ++move) {
    Rng rng(1);
    game.play(search.choose_move(0, rng));
    search.set_game(game);
    EXPECT_EQ(search.tree_size(), 1u);
    EXPECT_EQ(search.root_stats().total_visits, 0u);
    const int before = calls;
    const RootStats s = search_position(search, counting);
    // One simulation expands the root; every other one visits a child (a move proven lost
    // reports none: after 1. e4 e5 2. Qh5, ...Ke7 is met by Qxe5 mate).
    EXPECT_EQ(s.total_visits, std::accumulate(s.visits.begin(), s.visits.end(), 0u));
    EXPECT_LE(s.total_visits, std::uint32_t(params.simulations - 1));
    if (std::find(s.bounds.begin(), s.bounds.end(), Bound::kLoss) == s.bounds.end())
      EXPECT_EQ(s.total_visits, std::uint32_t(params.simulations - 1));
    EXPECT_EQ(s.search_visits, s.visits);
    EXPECT_LT(calls - before, params.simulations);  // the previous search's positions come from the cache
  }
}

// F5: a position seen once before the root does not end a line of the tree (the game goes
// on there), a repeat strictly after the root does, and so does a third occurrence.
TEST(Search, RepetitionDrawsFollowTheGameRule) {
  // Knights out and back: every position has one knight move with almost all the prior,
  // so the search follows the shuffle.
  const std::vector<std::string> shuffle = {"g1f3", "f3g1", "g8f6", "f6g8"};
  const Board start = chess::parse_fen(chess::kStartFen);
  chess::Game game(start);
  std::vector<std::uint64_t> keys{start.key};  // S, A, B, C: the four positions of the cycle
  for (int i = 0; i < 3; ++i) {
    game.play(chess::parse_uci(game.board(), shuffle[i == 0 ? 0 : i == 1 ? 2 : 1]));
    keys.push_back(game.board().key);
  }
  const auto run = [&](const chess::Game& g, int simulations) {
    std::map<std::uint64_t, std::vector<int>> requested;  // key -> repetitions of each request
    FunctionEvaluator evaluator([&](const EvalRequest& r) {
      requested[r.history.front().key].push_back(r.repetitions);
      return favouring(r, shuffle, 0.99f);
    });
    SearchParams params;
    params.simulations = simulations;
    Search search(params, 1);
    search.set_game(g);
    search_position(search, evaluator);
    return std::pair{search.root_stats(), requested};
  };

  // Root S, a fresh game: S A B C S' A'. S' repeats only the root: not a draw, evaluated.
  // A' repeats A, which lies strictly after the root: a draw, not evaluated.
  {
    const auto [stats, requested] = run(chess::Game(start), 12);
    ASSERT_EQ(requested.count(keys[0]), 1u);
    EXPECT_EQ(requested.at(keys[0]), (std::vector<int>{0, 1}));
    EXPECT_EQ(requested.at(keys[1]), (std::vector<int>{0}));
    EXPECT_EQ(stats.bound, Bound::kNone);
  }
  // Root C after Nf3 Nf6 Ng1: S (seen once, at the start of the game) is not a draw; nor
  // are A and B (once each, before the root), nor C' (the root); S'' repeats S, which is
  // now also strictly after the root: a draw.
  {
    const auto [stats, requested] = run(game, 12);
    EXPECT_EQ(stats.bounds[index_of(stats, game.board(), "f6g8")], Bound::kNone);
    ASSERT_EQ(requested.count(keys[0]), 1u);
    EXPECT_EQ(requested.at(keys[0]), (std::vector<int>{1}));
    EXPECT_EQ(requested.at(keys[1]), (std::vector<int>{1}));
    EXPECT_EQ(requested.at(keys[2]), (std::vector<int>{1}));
    EXPECT_EQ(requested.at(keys[3]), (std::vector<int>{0, 1}));
  }
  // Root C after Nf3 Nf6 Ng1 Ng8 Nf3 Nf6 Ng1: S has occurred twice, a third time is a
  // threefold repetition, a draw at once.
  {
    chess::Game twice = game;
    for (const char* uci : {"f6g8", "g1f3", "g8f6", "f3g1"}) twice.play(chess::parse_uci(twice.board(), uci));
    ASSERT_EQ(twice.board().key, keys[3]);
    const auto [stats, requested] = run(twice, 12);
    EXPECT_EQ(stats.bounds[index_of(stats, twice.board(), "f6g8")], Bound::kDraw);
    EXPECT_EQ(requested.count(keys[0]), 0u);
  }
}

// F5 with tree reuse: a repeat found below the old root may no longer end the line once
// the root has moved past the first occurrence.
TEST(Search, ReusedTreeLiftsRepetitionDrawsThatNoLongerHold) {
  const std::vector<std::string> shuffle = {"g1f3", "f3g1", "g8f6", "f6g8"};
  FunctionEvaluator evaluator([&](const EvalRequest& r) { return favouring(r, shuffle, 0.99f); });
  SearchParams params;
  params.simulations = 12;
  Search search(params, 1);
  chess::Game game(chess::parse_fen(chess::kStartFen));
  search.set_game(game);
  search_position(search, evaluator);  // the tree holds S A B C S' A', A' a draw
  for (const char* uci : {"g1f3", "g8f6", "f3g1", "f6g8"}) game.play(chess::parse_uci(game.board(), uci));
  search.set_game(game);  // root S': A' now repeats A, once, before the root
  ASSERT_GT(search.tree_size(), 1u);  // the subtree was kept
  const RootStats kept = search.root_stats();
  EXPECT_EQ(kept.bounds[index_of(kept, game.board(), "g1f3")], Bound::kNone);
  EXPECT_TRUE(std::isnan(kept.child_value[index_of(kept, game.board(), "g1f3")]));
  // Searching on, it is evaluated like any other position.
  const RootStats s = search_position(search, evaluator);
  EXPECT_EQ(s.bounds[index_of(s, game.board(), "g1f3")], Bound::kNone);
  EXPECT_FALSE(std::isnan(s.child_value[index_of(s, game.board(), "g1f3")]));
}

// F6: the root has its own first-play urgency reduction.
TEST(Search, FpuReductionRootAppliesAtTheRoot) {
  FunctionEvaluator uniform(uniform_evaluation);
  const auto visited_moves = [](const RootStats& s) {
    return std::count_if(s.visits.begin(), s.visits.end(), [](std::uint32_t v) { return v > 0; });
  };
  SearchParams params;
  params.simulations = 60;
  params.fpu_reduction = 5;
  params.fpu_reduction_root = 0;
  // No reduction at the root: with equal priors and values every move is tried.
  Search open(params, 1);
  chess::Game game(chess::parse_fen(chess::kStartFen));
  open.set_game(game);
  EXPECT_EQ(visited_moves(search_position(open, uniform)), 20);
  // A large one at the root keeps the search on the first move tried...
  params.fpu_reduction = 0;
  params.fpu_reduction_root = 5;
  Search narrow(params, 1);
  narrow.set_game(game);
  const RootStats s = search_position(narrow, uniform);
  EXPECT_EQ(visited_moves(s), 1);
  // ... while below the root (no reduction there) all of that move's replies are tried.
  game.play(s.moves[size_t(std::max_element(s.visits.begin(), s.visits.end()) - s.visits.begin())]);
  narrow.set_game(game);
  EXPECT_EQ(visited_moves(narrow.root_stats()), 20);
}

// F9: visits^(1/T) overflowed for T just above 0.01 with thousands of visits, and the
// sample fell through to the last move generated.
TEST(Search, LowTemperatureStaysOnTheMostVisitedMove) {
  FunctionEvaluator sharp([](const EvalRequest& r) { return favouring(r, {"e2e4"}, 0.9f); });
  SearchParams params;
  params.simulations = 4000;
  Search search(params, 1);
  search.set_game(chess::Game(chess::parse_fen(chess::kStartFen)));
  const RootStats s = search_position(search, sharp);
  const auto most = size_t(std::max_element(s.visits.begin(), s.visits.end()) - s.visits.begin());
  ASSERT_GT(s.visits[most], 2500u);  // most^(1/0.011) is beyond double's range
  Rng rng(5);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(search.choose_move(0.011f, rng), s.moves[most]);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(search.choose_move(0.02f, rng), s.moves[most]);
}

// F10: a move proven lost keeps the visits it had before the proof in the tree, but they
// are no advice: the reported visits and the policy target give it nothing.
TEST(Search, ProvenLostMovesGetNoVisitsInTheTarget) {
  // Any rook move off the first rank allows ...Ra1 mate.
  const char* fen = "r5k1/5ppp/8/8/8/8/5PPP/1R4K1 w - - 0 1";
  const Board b = chess::parse_fen(fen);
  FunctionEvaluator uniform(uniform_evaluation);
  SearchParams params;
  params.fpu_reduction_root = 0;  // every move gets tried
  const auto r = search_fen(fen, 300, uniform, 1, params);
  const RootStats& s = r.stats;
  int lost = 0;
  for (size_t i = 0; i < s.moves.size(); ++i) {
    if (forced_mate_within(after(b, s.moves[i]), 1)) {
      EXPECT_EQ(s.bounds[i], Bound::kLoss) << chess::to_uci(s.moves[i]);
      EXPECT_TRUE(s.visited[i]) << chess::to_uci(s.moves[i]);  // visited once, then proven
    }
    if (s.bounds[i] != Bound::kLoss) continue;  // (some lose later: Rb2 Ra1+ Rb1 Rxb1#)
    ++lost;
    EXPECT_EQ(s.visits[i], 0u) << chess::to_uci(s.moves[i]);
    EXPECT_EQ(s.search_visits[i], 0u);
    EXPECT_EQ(s.policy[i], 0.0f);
    EXPECT_FLOAT_EQ(s.q[i], -1.0f);
  }
  EXPECT_GE(lost, 6);
  EXPECT_EQ(s.total_visits, std::accumulate(s.visits.begin(), s.visits.end(), 0u));
  EXPECT_NEAR(std::accumulate(s.policy.begin(), s.policy.end(), 0.0), 1.0, 1e-5);
  EXPECT_FALSE(forced_mate_within(after(b, r.best), 1));
}

// F12: with equal visits the most visited move is the one the evaluator preferred, not the
// one the noise happened to boost.
TEST(Search, TieBreakUsesThePriorsBeforeNoise) {
  const Board start = chess::parse_fen(chess::kStartFen);
  FunctionEvaluator evaluator([](const EvalRequest& r) { return favouring(r, {"a2a3"}, 0.5f); });
  for (std::uint64_t seed = 1; seed <= 10; ++seed) {
    SearchParams params;
    params.simulations = 1;  // the root is evaluated, no move is visited: all tie at 0
    params.root_noise = true;
    params.dirichlet_weight = 1;  // the search sees the noise only
    Search search(params, seed);
    search.set_game(chess::Game(start));
    const RootStats s = search_position(search, evaluator);
    ASSERT_EQ(s.total_visits, 0u);
    Rng rng(seed);
    EXPECT_EQ(chess::to_uci(search.choose_move(0, rng)), "a2a3") << "seed " << seed;
    EXPECT_EQ(chess::to_uci(search.choose_move(1, rng)), "a2a3") << "seed " << seed;
  }
}

// F13 and what a Gumbel root needs: visited moves told apart from unvisited ones, the
// evaluator's own value per move and for the root, the policy target, and this search's
// visits when the tree was reused.
TEST(Search, RootStatsReportValuesPolicyAndThisSearchsVisits) {
  // A value that depends on the position: W - L = (key % 97) / 100 - 0.3.
  const auto value_of = [](const Board& b) { return float(b.key % 97) / 100.0f - 0.3f; };
  FunctionEvaluator evaluator([&](const EvalRequest& r) {
    EvalResult e = favouring(r, {"e2e4", "d2d4"}, 0.6f);
    const float v = value_of(r.history.front());
    e.win = v > 0 ? v : 0;
    e.loss = v < 0 ? -v : 0;
    e.draw = 1 - e.win - e.loss;
    return e;
  });
  // Mate in one is on the board: a1a8 ends the game, so its value is known exactly.
  const char* fen = "6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1";
  const Board b = chess::parse_fen(fen);
  SearchParams params;
  params.simulations = 6;
  Search search(params, 1);
  chess::Game game(b);
  search.set_game(game);
  const RootStats s = search_position(search, evaluator);
  EXPECT_FLOAT_EQ(s.network_value, value_of(b));
  int unvisited = 0;
  for (size_t i = 0; i < s.moves.size(); ++i) {
    const Board next = after(b, s.moves[i]);
    EXPECT_EQ(s.visited[i], s.visits[i] > 0);
    if (chess::to_uci(s.moves[i]) == "a1a8") {
      EXPECT_EQ(s.bounds[i], Bound::kWin);
      EXPECT_FLOAT_EQ(s.child_value[i], 1.0f);
    } else if (s.visited[i]) {
      EXPECT_FLOAT_EQ(s.child_value[i], -value_of(next));  // the mover's view
    } else {
      ++unvisited;
      EXPECT_TRUE(std::isnan(s.child_value[i]));
      EXPECT_EQ(s.q[i], 0.0f);
    }
  }
  EXPECT_GT(unvisited, 0);

  // From the start position, no noise: the tree is reused.
  game = chess::Game(chess::parse_fen(chess::kStartFen));
  params.simulations = 300;
  Search reuse(params, 1);
  reuse.set_game(game);
  const RootStats first = search_position(reuse, evaluator);
  double sum = 0;
  for (size_t i = 0; i < first.moves.size(); ++i) {
    EXPECT_EQ(first.visited[i], first.visits[i] > 0);
    if (first.visited[i])
      EXPECT_FLOAT_EQ(first.child_value[i], -value_of(after(game.board(), first.moves[i])));
    else
      EXPECT_TRUE(std::isnan(first.child_value[i]));
    EXPECT_FLOAT_EQ(first.policy[i], float(double(first.visits[i]) / first.total_visits));
    sum += first.policy[i];
  }
  EXPECT_NEAR(sum, 1.0, 1e-5);
  EXPECT_EQ(first.search_visits, first.visits);
  Rng rng(1);
  const Move m = reuse.choose_move(0, rng);
  game.play(m);
  reuse.set_game(game);
  const RootStats kept = reuse.root_stats();
  ASSERT_GT(kept.total_visits, 0u);
  EXPECT_EQ(kept.search_visits, std::vector<std::uint32_t>(kept.moves.size(), 0u));
  const RootStats second = search_position(reuse, evaluator);
  for (size_t i = 0; i < second.moves.size(); ++i)
    EXPECT_EQ(second.search_visits[i], second.visits[i] - kept.visits[i]);
  // A reused root is already expanded: every simulation of this search visits a move.
  EXPECT_EQ(std::accumulate(second.search_visits.begin(), second.search_visits.end(), 0u), 300u);
  EXPECT_FLOAT_EQ(second.network_value, value_of(game.board()));
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
