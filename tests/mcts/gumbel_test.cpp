// The Gumbel root: sequential halving's schedule, where the visits go, the improved policy
// target, the move choice, and proven results at the root.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
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

using Schedule = std::vector<std::uint32_t>;

// Plays a schedule out: each simulation goes to the first move with the visit count asked
// for. Returns the visits per move, or an empty vector when no move had that count.
std::vector<std::uint32_t> follow(const Schedule& schedule, int considered) {
  std::vector<std::uint32_t> visits(size_t(std::max(considered, 1)), 0);
  for (std::uint32_t target : schedule) {
    const auto it = std::find(visits.begin(), visits.end(), target);
    if (it == visits.end()) return {};
    ++*it;
  }
  return visits;
}

TEST(SequentialHalving, ScheduleOfKnownCases) {
  // mctx's get_sequence_of_considered_visits, value for value. Four moves, 16 simulations:
  // a block of two visits each, then the two finalists share the rest.
  EXPECT_EQ(sequential_halving_schedule(4, 16), (Schedule{0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5}));
  // Sixteen moves, 31 simulations (32 with the root's own): one visit each, then 8, 4 and
  // the two finalists.
  Schedule expected(16, 0);
  expected.insert(expected.end(), 8, 1);
  expected.insert(expected.end(), 4, 2);
  expected.insert(expected.end(), {3, 3, 4});
  EXPECT_EQ(sequential_halving_schedule(16, 31), expected);
  EXPECT_EQ(follow(expected, 16), (std::vector<std::uint32_t>{5, 4, 3, 3, 2, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1}));
  // Two moves: one phase, half the budget each.
  EXPECT_EQ(sequential_halving_schedule(2, 6), (Schedule{0, 0, 1, 1, 2, 2}));
  // One move takes every visit.
  EXPECT_EQ(sequential_halving_schedule(1, 5), (Schedule{0, 1, 2, 3, 4}));
  EXPECT_EQ(sequential_halving_schedule(0, 3), (Schedule{0, 1, 2}));
  // Fewer simulations than moves: one visit for each of the first n.
  EXPECT_EQ(sequential_halving_schedule(16, 8), Schedule(8, 0));
  EXPECT_TRUE(sequential_halving_schedule(16, 0).empty());
  // Eight moves, 64 simulations: blocks of 2, 5 and 10 visits, the last one cut short.
  EXPECT_EQ(follow(sequential_halving_schedule(8, 64), 8), (std::vector<std::uint32_t>{21, 21, 7, 7, 2, 2, 2, 2}));
  // Halving never goes below two moves: four moves, 100 simulations end 38, 38, 12, 12.
  EXPECT_EQ(follow(sequential_halving_schedule(4, 100), 4), (std::vector<std::uint32_t>{38, 38, 12, 12}));
  // Sixteen moves, 799 simulations: the finalists get about a quarter of the budget each.
  EXPECT_EQ(follow(sequential_halving_schedule(16, 799), 16),
            (std::vector<std::uint32_t>{195, 194, 85, 85, 36, 36, 36, 36, 12, 12, 12, 12, 12, 12, 12, 12}));
}

TEST(SequentialHalving, ScheduleIsFeasibleAndSpendsTheBudget) {
  for (int m : {1, 2, 3, 4, 5, 7, 8, 16, 17, 32, 64}) {
    for (int n : {1, 2, 5, 15, 16, 31, 32, 50, 100, 199, 800}) {
      SCOPED_TRACE("m " + std::to_string(m) + ", n " + std::to_string(n));
      const Schedule s = sequential_halving_schedule(m, n);
      ASSERT_EQ(s.size(), size_t(n));
      EXPECT_TRUE(std::is_sorted(s.begin(), s.end()));
      const auto visits = follow(s, m);
      ASSERT_EQ(visits.size(), size_t(m));  // every simulation found a move at its count
      EXPECT_EQ(std::accumulate(visits.begin(), visits.end(), 0u), std::uint32_t(n));
      // Every move gets at least one visit when the budget allows, and the later phases
      // only ever add to the moves ahead.
      if (n >= m) {
        EXPECT_GT(*std::min_element(visits.begin(), visits.end()), 0u);
      }
      EXPECT_TRUE(std::is_sorted(visits.rbegin(), visits.rend()));
    }
  }
}

std::vector<Move> legal(const Board& b) {
  chess::MoveList list;
  chess::legal_moves(b, list);
  return {list.begin(), list.end()};
}

Board after(Board b, Move m) {
  b.play(m);
  return b;
}

SearchParams gumbel_params(int simulations, int considered, bool noise) {
  SearchParams p;
  p.simulations = simulations;
  p.root_search = RootSearch::kGumbel;
  p.gumbel_considered = considered;
  p.root_noise = noise;
  return p;
}

struct Searched {
  RootStats stats;
  Move best;
  size_t tree = 0;
};

Searched run(std::string_view fen, const SearchParams& params, Evaluator& evaluator, std::uint64_t seed = 1) {
  Search search(params, seed);
  search.set_game(chess::Game(chess::parse_fen(fen)));
  Searched out{search_position(search, evaluator), Move(), 0};
  Rng rng(seed);
  out.best = search.choose_move(1.0f, rng);  // the temperature is ignored
  out.tree = search.tree_size();
  return out;
}

size_t index_of(const RootStats& s, std::string_view uci) {
  for (size_t i = 0; i < s.moves.size(); ++i)
    if (chess::to_uci(s.moves[i]) == uci) return i;
  ADD_FAILURE() << uci << " is not a root move";
  return 0;
}

size_t visited_moves(const RootStats& s) {
  return size_t(std::count_if(s.visits.begin(), s.visits.end(), [](std::uint32_t v) { return v > 0; }));
}

// Priors: `share` on the move named, the rest spread evenly; W - L from the material
// balance (in pawns / 10), so winning material shows in the values.
EvalResult material_favouring(const EvalRequest& r, std::string_view favoured, float share) {
  EvalResult e = uniform_evaluation(r);
  for (size_t i = 0; i < r.moves.size(); ++i)
    if (chess::to_uci(r.moves[i]) == favoured && r.moves.size() > 1)
      for (size_t j = 0; j < r.moves.size(); ++j) e.priors[j] = j == i ? share : (1 - share) / float(r.moves.size() - 1);
  const float v = std::clamp(float(material_balance(r.history.front())) / 10.0f, -1.0f, 1.0f);
  e.win = std::max(v, 0.0f);
  e.loss = std::max(-v, 0.0f);
  e.draw = 1 - e.win - e.loss;
  return e;
}

TEST(GumbelSearch, VisitsGoToTheConsideredMovesOnly) {
  FunctionEvaluator uniform(uniform_evaluation);
  for (bool noise : {false, true}) {
    for (int m : {1, 2, 4, 16}) {
      for (int simulations : {9, 33, 100}) {
        SCOPED_TRACE("noise " + std::to_string(noise) + ", m " + std::to_string(m) + ", simulations " +
                     std::to_string(simulations));
        const auto r = run(chess::kStartFen, gumbel_params(simulations, m, noise), uniform, 3);
        // One simulation expands the root, every other visits one of at most m moves.
        EXPECT_EQ(r.stats.total_visits, std::uint32_t(simulations - 1));
        EXPECT_LE(visited_moves(r.stats), size_t(m));
        // Equal values: the visits follow the schedule exactly.
        std::vector<std::uint32_t> sorted = r.stats.visits;
        std::sort(sorted.rbegin(), sorted.rend());
        sorted.resize(size_t(m));
        std::vector<std::uint32_t> expected = follow(sequential_halving_schedule(m, simulations - 1), m);
        std::sort(expected.rbegin(), expected.rend());
        EXPECT_EQ(sorted, expected);
        EXPECT_EQ(r.stats.visited[index_of(r.stats, chess::to_uci(r.best))], true);
      }
    }
  }
}

// Without noise, equal values and a favoured move: the m moves of highest prior are the
// ones considered (g is 0), and the favourite is among them.
TEST(GumbelSearch, WithoutNoiseTheHighestPriorsAreConsidered) {
  FunctionEvaluator favour([](const EvalRequest& r) {
    EvalResult e = uniform_evaluation(r);
    for (size_t i = 0; i < r.moves.size(); ++i) e.priors[i] = chess::to_uci(r.moves[i]) == "g1f3" ? 0.3f : 0.7f / 19;
    return e;
  });
  const auto r = run(chess::kStartFen, gumbel_params(20, 1, false), favour);
  EXPECT_EQ(r.stats.visits[index_of(r.stats, "g1f3")], 19u);
  EXPECT_EQ(chess::to_uci(r.best), "g1f3");
}

TEST(GumbelSearch, ImprovedPolicyIsADistributionOverTheLegalMoves) {
  FunctionEvaluator uniform(uniform_evaluation);
  RolloutEvaluator pure(7);
  for (Evaluator* evaluator : std::vector<Evaluator*>{&uniform, &pure}) {
    for (int simulations : {1, 2, 17, 64}) {
      SCOPED_TRACE(evaluator->name() + ", " + std::to_string(simulations) + " simulations");
      const auto r = run(chess::kStartFen, gumbel_params(simulations, 4, true), *evaluator, 5);
      ASSERT_EQ(r.stats.policy.size(), 20u);
      double sum = 0;
      for (float p : r.stats.policy) {
        EXPECT_GT(p, 0.0f);  // unvisited moves too: their Q is completed
        sum += p;
      }
      EXPECT_NEAR(sum, 1.0, 1e-5);
    }
  }
  // Before any visit the improved policy is the prior.
  const auto r = run(chess::kStartFen, gumbel_params(1, 16, true), uniform, 5);
  for (float p : r.stats.policy) EXPECT_NEAR(p, 1.0f / 20, 1e-6);
}

// Rxd5 wins the queen. The evaluator gives it a small prior; 16-32 simulations of Gumbel
// search put far more of the policy target on it, and play it without noise. With noise the
// Gumbel samples may leave it out of the considered moves or outscore it after a single
// visit: exploration, so it is played in most searches, not all.
TEST(GumbelSearch, ImprovedPolicyRaisesTheMoveThatWinsMaterial) {
  const char* fen = "4k3/8/8/3q4/8/8/3R4/4K3 w - - 0 1";
  FunctionEvaluator evaluator([](const EvalRequest& r) { return material_favouring(r, "d2d5", 0.02f); });
  int played = 0, searches = 0;
  for (int simulations : {16, 24, 32}) {
    EXPECT_EQ(chess::to_uci(run(fen, gumbel_params(simulations, 16, false), evaluator).best), "d2d5");
    for (std::uint64_t seed = 1; seed <= 8; ++seed) {
      SCOPED_TRACE(std::to_string(simulations) + " simulations, seed " + std::to_string(seed));
      const auto r = run(fen, gumbel_params(simulations, 16, true), evaluator, seed);
      const size_t capture = index_of(r.stats, "d2d5");
      EXPECT_FLOAT_EQ(r.stats.priors[capture], 0.02f);
      EXPECT_GT(r.stats.policy[capture], 0.5f);
      EXPECT_EQ(size_t(std::max_element(r.stats.policy.begin(), r.stats.policy.end()) - r.stats.policy.begin()),
                capture);
      played += chess::to_uci(r.best) == "d2d5";
      ++searches;
    }
  }
  EXPECT_GE(played, searches * 2 / 3) << played << " of " << searches;
}

TEST(GumbelSearch, WithoutNoiseTheSearchIsDeterministic) {
  const char* fen = "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3";
  FunctionEvaluator evaluator([](const EvalRequest& r) { return material_favouring(r, "f1b5", 0.2f); });
  const auto a = run(fen, gumbel_params(48, 8, false), evaluator, 1);
  const auto b = run(fen, gumbel_params(48, 8, false), evaluator, 2);
  EXPECT_EQ(a.stats.visits, b.stats.visits);
  EXPECT_EQ(a.stats.policy, b.stats.policy);
  EXPECT_EQ(a.best, b.best);
  EXPECT_LE(visited_moves(a.stats), 8u);
  EXPECT_GT(visited_moves(a.stats), 1u);
}

TEST(GumbelSearch, WithNoiseTheChoiceVariesWithTheSeed) {
  FunctionEvaluator uniform(uniform_evaluation);
  std::set<std::uint16_t> chosen;
  std::set<std::vector<std::uint32_t>> visit_patterns;
  for (std::uint64_t seed = 1; seed <= 12; ++seed) {
    const auto r = run(chess::kStartFen, gumbel_params(17, 4, true), uniform, seed);
    chosen.insert(r.best.bits());
    visit_patterns.insert(r.stats.visits);
    // The same seed, the same search.
    const auto again = run(chess::kStartFen, gumbel_params(17, 4, true), uniform, seed);
    EXPECT_EQ(again.stats.visits, r.stats.visits);
    EXPECT_EQ(again.best, r.best);
  }
  EXPECT_GT(chosen.size(), 3u);
  EXPECT_GT(visit_patterns.size(), 3u);
}

TEST(GumbelSearch, SingleLegalMove) {
  // Ra1+: Kg2 is the only answer.
  const char* fen = "k7/8/8/8/8/8/7P/r6K w - - 0 1";
  ASSERT_EQ(legal(chess::parse_fen(fen)).size(), 1u);
  FunctionEvaluator uniform(uniform_evaluation);
  for (bool noise : {false, true}) {
    const auto r = run(fen, gumbel_params(10, 16, noise), uniform);
    EXPECT_EQ(chess::to_uci(r.best), "h1g2");
    EXPECT_EQ(r.stats.visits, std::vector<std::uint32_t>{9});
    EXPECT_EQ(r.stats.policy, std::vector<float>{1.0f});
  }
}

// a1a8 mates. The evaluator all but hides it (prior 0.001) and only one move is
// considered, yet the proven win is searched and played.
TEST(GumbelSearch, PlaysAProvenMateInOne) {
  const char* fen = "6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1";
  FunctionEvaluator evaluator([](const EvalRequest& r) {
    EvalResult e = uniform_evaluation(r);
    for (size_t i = 0; i < r.moves.size(); ++i)
      e.priors[i] = chess::to_uci(r.moves[i]) == "a1a8" ? 0.001f : 0.999f / float(r.moves.size() - 1);
    return e;
  });
  for (bool noise : {false, true}) {
    for (std::uint64_t seed = 1; seed <= 3; ++seed) {
      const auto r = run(fen, gumbel_params(12, 1, noise), evaluator, seed);
      EXPECT_EQ(chess::to_uci(r.best), "a1a8");
      EXPECT_EQ(r.stats.bound, Bound::kWin);
      const size_t mate = index_of(r.stats, "a1a8");
      EXPECT_EQ(r.stats.visits[mate], 11u);
      EXPECT_GT(r.stats.policy[mate], 0.99f);
    }
  }
}

// Any rook move off the first rank allows ...Ra1 mate: once proven lost, such a move is
// neither chosen nor in the policy target.
TEST(GumbelSearch, AvoidsProvenLosses) {
  const char* fen = "r5k1/5ppp/8/8/8/8/5PPP/1R4K1 w - - 0 1";
  const Board b = chess::parse_fen(fen);
  // The losing rook moves get the highest priors, so they are the moves considered first.
  FunctionEvaluator evaluator([](const EvalRequest& r) {
    EvalResult e = uniform_evaluation(r);
    float sum = 0;
    for (size_t i = 0; i < r.moves.size(); ++i) {
      const std::string uci = chess::to_uci(r.moves[i]);
      e.priors[i] = uci[0] == 'b' && uci[1] == '1' && uci[3] != '1' ? 10.0f : 1.0f;
      sum += e.priors[i];
    }
    for (float& p : e.priors) p /= sum;
    return e;
  });
  for (int m : {2, 4, 16}) {
    SCOPED_TRACE("m " + std::to_string(m));
    const auto r = run(fen, gumbel_params(200, m, false), evaluator);
    int lost = 0;
    for (size_t i = 0; i < r.stats.moves.size(); ++i) {
      if (r.stats.bounds[i] != Bound::kLoss) continue;
      ++lost;
      EXPECT_EQ(r.stats.policy[i], 0.0f) << chess::to_uci(r.stats.moves[i]);
      EXPECT_NE(r.stats.moves[i], r.best);
    }
    EXPECT_GE(lost, 2);
    EXPECT_NEAR(std::accumulate(r.stats.policy.begin(), r.stats.policy.end(), 0.0), 1.0, 1e-5);
    const Board next = after(b, r.best);
    const auto mated = [&](Move reply) {
      const Board end = after(next, reply);
      return end.in_check() && legal(end).empty();
    };
    const std::vector<Move> replies = legal(next);
    EXPECT_TRUE(std::none_of(replies.begin(), replies.end(), mated)) << chess::to_uci(r.best);
  }
}

// Without noise the tree is not reused under Gumbel: every search starts from a fresh root.
TEST(GumbelSearch, EverySearchStartsAfresh) {
  FunctionEvaluator uniform(uniform_evaluation);
  Search search(gumbel_params(40, 4, false), 1);
  chess::Game game(chess::parse_fen(chess::kStartFen));
  search.set_game(game);
  search_position(search, uniform);
  Rng rng(1);
  game.play(search.choose_move(0, rng));
  search.set_game(game);
  EXPECT_EQ(search.tree_size(), 1u);
  const RootStats s = search_position(search, uniform);
  EXPECT_EQ(s.total_visits, 39u);
  EXPECT_EQ(s.search_visits, s.visits);
  // The same position again: afresh too.
  search.set_game(game);
  EXPECT_EQ(search.tree_size(), 1u);
}

// Several leaves in flight at once: the schedule counts them, so the visits still go to
// at most m moves and add up.
TEST(GumbelSearch, BatchedLeavesFollowTheSchedule) {
  FunctionEvaluator uniform(uniform_evaluation);
  for (int leaves : {2, 8}) {
    Search search(gumbel_params(65, 8, true), 4);
    search.set_game(chess::Game(chess::parse_fen(chess::kStartFen)));
    const RootStats s = search_position(search, uniform, leaves);
    EXPECT_EQ(s.total_visits, 64u);
    EXPECT_LE(visited_moves(s), 8u);
  }
}

// Values that differ by a little noise between positions (W - L within +-0.02, the spread
// of a few visits' means), uniform priors: the moves are as good as each other.
EvalResult noisy_values(const EvalRequest& r) {
  EvalResult e = uniform_evaluation(r);
  const float v = float(int(r.history.front().key % 41) - 20) / 1000.0f;
  e.win = 0.3f + v / 2;
  e.loss = 0.3f - v / 2;
  e.draw = 0.4f;
  return e;
}

float most_probable(const RootStats& s) { return *std::max_element(s.policy.begin(), s.policy.end()); }

// Sigma consistent with the normalisation of Q. Rescaled over the root's moves, noise of
// +-0.02 spans the whole [0, 1] range, and at c_scale 1 the improved policy is nearly
// one-hot on the luckiest move; by the value bounds (c_scale 1) or rescaled at mctx's
// c_scale 0.1 the noise moves the policy a little.
TEST(GumbelSearch, TheImprovedPolicyDoesNotTurnNoiseIntoCertainty) {
  FunctionEvaluator noisy(noisy_values);
  SearchParams minmax_unscaled = gumbel_params(32, 16, false);
  minmax_unscaled.gumbel_q_normalise = QNormalise::kMinMax;
  minmax_unscaled.gumbel_c_scale = 1.0f;
  EXPECT_GT(most_probable(run(chess::kStartFen, minmax_unscaled, noisy).stats), 0.75f);
  SearchParams bounds = gumbel_params(32, 16, false);
  bounds.gumbel_q_normalise = QNormalise::kBounds;
  bounds.gumbel_c_scale = default_c_scale(QNormalise::kBounds);
  EXPECT_LT(most_probable(run(chess::kStartFen, bounds, noisy).stats), 0.3f);
  const SearchParams minmax = gumbel_params(32, 16, false);  // the default
  EXPECT_EQ(minmax.gumbel_q_normalise, QNormalise::kMinMax);
  EXPECT_FLOAT_EQ(minmax.gumbel_c_scale, default_c_scale(QNormalise::kMinMax));
  EXPECT_LT(most_probable(run(chess::kStartFen, minmax, noisy).stats), 0.5f);
  // Real differences still count: the queen capture takes most of the policy either way.
  FunctionEvaluator material([](const EvalRequest& r) { return material_favouring(r, "d2d5", 0.02f); });
  for (const SearchParams& p : {bounds, minmax}) {
    const auto r = run("4k3/8/8/3q4/8/8/3R4/4K3 w - - 0 1", p, material);
    EXPECT_GT(r.stats.policy[index_of(r.stats, "d2d5")], 0.5f);
  }
  EXPECT_EQ(parse_q_normalise("minmax"), QNormalise::kMinMax);
  EXPECT_STREQ(q_normalise_name(parse_q_normalise("bounds")), "bounds");
  EXPECT_THROW(parse_q_normalise("zscore"), std::invalid_argument);
}

// The root value of a Gumbel search is the improved policy's mean of the completed Q:
// sequential halving visits poor moves on purpose, and the mean of all visits would count
// them as if they were to be played.
TEST(GumbelSearch, RootValueIsThatOfTheImprovedPolicy) {
  FunctionEvaluator material([](const EvalRequest& r) { return material_favouring(r, "d2d5", 0.02f); });
  const auto r = run("4k3/8/8/3q4/8/8/3R4/4K3 w - - 0 1", gumbel_params(32, 16, false), material);
  double visits = 0, visit_mean = 0;
  for (size_t i = 0; i < r.stats.moves.size(); ++i) {
    visits += r.stats.visits[i];
    visit_mean += r.stats.visits[i] * double(r.stats.q[i]);
  }
  visit_mean /= visits;
  const float capture = r.stats.q[index_of(r.stats, "d2d5")];
  EXPECT_GT(r.stats.value, float(visit_mean) + 0.05f);
  EXPECT_LE(r.stats.value, capture + 1e-5f);  // no move is better than the capture
}

// The search backs up the evaluator's draw probability beside W - L: with the same
// win/draw/loss everywhere, the root's draw probability is the evaluator's, and with the
// value a win/draw/loss that sums to 1. A position that is a proven draw has draw 1.
TEST(SearchDraw, TheRootDrawIsTheMeanOfTheEvaluatorsDraws) {
  FunctionEvaluator constant([](const EvalRequest& r) {
    EvalResult e = uniform_evaluation(r);
    e.win = 0.25f;
    e.draw = 0.6f;
    e.loss = 0.15f;
    return e;
  });
  SearchParams puct;
  puct.simulations = 50;
  for (const SearchParams& p : {puct, gumbel_params(50, 16, false)}) {
    const auto r = run(chess::kStartFen, p, constant);
    EXPECT_NEAR(r.stats.draw, 0.6f, 1e-5);
    EXPECT_GE((1 - r.stats.draw + r.stats.value) / 2, 0.0f);
    EXPECT_GE((1 - r.stats.draw - r.stats.value) / 2, 0.0f);
  }
  // Kings only after the capture: every line is a draw by insufficient material.
  const auto drawn = run("8/8/8/3k4/8/8/3q4/3K4 w - - 0 1", puct, constant);
  EXPECT_EQ(drawn.stats.bound, Bound::kDraw);
  EXPECT_FLOAT_EQ(drawn.stats.draw, 1.0f);
  EXPECT_FLOAT_EQ(drawn.stats.value, 0.0f);
}

}  // namespace
}  // namespace pgmate::mcts
