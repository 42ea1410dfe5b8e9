// Monte Carlo tree search with PUCT, as in AlphaZero, for one game.
//
// - Selection: Q + c_puct * P * sqrt(N) / (1 + n). Values are W - L, from the point of
//   view of the player who made the move into a node, so they change sign each ply.
//   Unvisited moves get first-play urgency: the parent's Q minus fpu_reduction (at the
//   root: fpu_reduction_root) times the square root of the prior mass already visited.
// - Exact values: when a node is expanded every child's game status is computed, so mate,
//   stalemate, fifty moves, insufficient material and repetition are known before any
//   evaluation. A repetition ends a line of the tree when the position occurred before
//   strictly after the root (a repeat chosen inside the tree), or twice before counting
//   the game and the path (Stockfish's rule); a single earlier occurrence at or before the
//   root does not end the game, so it does not end the line either. Proven wins and losses
//   propagate up (MCTS-solver): a position with a winning move is won, one whose moves all
//   lose is lost. Forced mates are therefore found and never given away.
// - Batching: gather() hands out several leaves at once, using virtual loss to spread
//   them; the caller evaluates them (with leaves of other games) and calls deliver().
// - Tree reuse: without root noise, play() keeps the subtree of the move played. With
//   root noise (self-play) every move's search starts from a fresh root, so the visit
//   counts, the policy target and the move sample come from this search only, with its
//   noise; the evaluation cache makes the repeated evaluations cheap.
// - Dirichlet noise on the root priors, for self-play.
// - Gumbel root (RootSearch::kGumbel; Danihelka et al. 2022, "Policy improvement by
//   planning with Gumbel", as in DeepMind's mctx): below the root the search stays PUCT.
//   When the root is expanded each legal move a gets g(a), a Gumbel(0, 1) sample with root
//   noise on (the exploration: no Dirichlet noise then) and 0 without it; the top
//   gumbel_considered moves by g + log prior are considered, and sequential halving shares
//   the simulations among them (sequential_halving_schedule), each simulation going to the
//   move that maximises g + log prior + sigma(q) among those with the visit count the
//   schedule asks for. sigma(q) = (c_visit + most visits) * c_scale * q, q being the
//   completed Q (a visited move's mean value, an unvisited one's the mixed value of the
//   root's evaluation and its visited moves' values) brought to [0, 1]: by the value bounds
//   ((q + 1) / 2, the paper's, with c_scale 1) or rescaled over the root's legal moves
//   (mctx's rescale_values, with its c_scale 0.1; see QNormalise). The policy target is
//   softmax(log prior + sigma(q)) over all legal moves, and the root value the policy
//   target's mean of the completed Q (the mean of all visits would lean toward the poor
//   moves sequential halving visits on purpose), and
//   the move played the most visited considered move (ties: the same score), without
//   temperature. Proven results come first: a proven win is searched and played at once,
//   a proven loss is neither visited nor played while another move is not lost. Every
//   search starts from a fresh root (no tree reuse, noise or not): the considered moves
//   and the halving belong to one search.
#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "chess/game.h"
#include "mcts/eval_cache.h"
#include "mcts/evaluator.h"
#include "common/random.h"

namespace pgmate::mcts {

// How the root shares the simulations among its moves (below the root: always PUCT).
enum class RootSearch : std::uint8_t { kPuct, kGumbel };

// How a Gumbel root brings the completed Q into [0, 1] before sigma scales it.
// - kBounds: (q + 1) / 2, by the values' known bounds, as the paper does with c_scale 1. A
//   difference in Q counts the same at every root, so two moves that a few noisy visits
//   put close together stay close in the improved policy.
// - kMinMax: (q - min) / (max - min) over the root's legal moves, as mctx does by default,
//   where it pairs it with c_scale 0.1: the best and the worst move are always 1 apart,
//   however close their values, so c_scale 1 would make the policy nearly one-hot.
enum class QNormalise : std::uint8_t { kBounds, kMinMax };
// The c_scale that goes with a normalisation: 1 with kBounds (the paper), 0.1 with kMinMax
// (mctx's default).
constexpr float default_c_scale(QNormalise q) { return q == QNormalise::kMinMax ? 0.1f : 1.0f; }

struct SearchParams {
  int simulations = 800;          // new simulations per move
  float c_puct = 1.5f;
  float fpu_reduction = 0.25f;    // first-play urgency reduction below the root
  // The same at the root. With root_noise set it to 0 (as Leela Zero does at a noised
  // root): a move the noise boosted then gets its first visit from its prior alone, instead
  // of first having to overcome the reduction, which would damp the exploration the noise
  // is there for. SelfPlayConfig's default search does so.
  float fpu_reduction_root = 0.25f;
  // Dirichlet noise at the root (self-play). It also turns tree reuse off (see play()).
  bool root_noise = false;
  float dirichlet_alpha = 0.3f;
  float dirichlet_weight = 0.25f;
  // Gumbel root (see the top of this file). Under it root_noise draws the Gumbel samples
  // instead of the Dirichlet noise, and the root is never reused.
  RootSearch root_search = RootSearch::kPuct;
  int gumbel_considered = 16;     // m: moves considered at the root (fewer when fewer are legal)
  float gumbel_c_visit = 50.0f;   // sigma(q) = (c_visit + most visits) * c_scale * q
  // mctx's pairing, which played better than the paper's at 32 simulations on the recipe's
  // network (bench/RESULTS.md, "Gumbel root").
  QNormalise gumbel_q_normalise = QNormalise::kMinMax;
  float gumbel_c_scale = default_c_scale(QNormalise::kMinMax);
};

// The spec and option names of the normalisations ("bounds", "minmax"), and back
// (std::invalid_argument naming the text for another).
const char* q_normalise_name(QNormalise q);
QNormalise parse_q_normalise(std::string_view text);

// Sequential halving's schedule (mctx's get_sequence_of_considered_visits): for each of
// the `simulations` visits of the root's moves, the visit count a considered move must
// have to be chosen. Phases of ceil(log2 considered) rounds; in a round each move still
// considered gets max(1, simulations / (ceil(log2 considered) * still considered)) visits;
// after a phase half the moves remain (never fewer than 2), until the budget is spent.
// One considered move: 0, 1, 2, ... (it gets them all).
std::vector<std::uint32_t> sequential_halving_schedule(int considered, int simulations);

// A proven outcome, from the point of view of the player who moved into the node.
enum class Bound : std::uint8_t { kNone, kWin, kDraw, kLoss };

// The search's win/draw/loss estimate from its value (W - L) and draw probability, as lc0
// keeps Q and D: ((1 - d + q) / 2, d, (1 - d - q) / 2), each in [0, 1]. Without a draw
// probability (NaN: self-play positions stored before 0.9.0) q = 0 is a certain draw:
// (max(q, 0), 1 - |q|, max(-q, 0)). The one formula for the analyser and the learning
// window's value targets (pgmate.search_wdl).
struct SearchWdl {
  double win = 0, draw = 1, loss = 0;
};
SearchWdl search_wdl(double value, double draw);

// What the search says about the root. Per-move vectors are in the order of `moves`; the
// "mover" is the side to move at the root.
struct RootStats {
  std::vector<chess::Move> moves;       // legal moves, generation order
  // Visits per move in the tree: this search's, plus those of earlier searches when the
  // tree was reused (never with root noise). A proven-lost move counts 0 when a move not
  // proven lost has visits: its own visits came before the proof and are no advice.
  std::vector<std::uint32_t> visits;
  // This search's visits only (visits minus what the move had when set_game started the
  // search; equal to visits when the root was fresh). A scheduler that gives each move a
  // quota per search (Gumbel sequential halving) counts these.
  std::vector<std::uint32_t> search_visits;
  std::vector<float> priors;            // evaluator priors, before noise
  // Mean value per move, mover's view: exact (1, 0, -1) when bounds[i] is proven, the mean
  // of the backed-up values when visited[i], and 0 otherwise: an unvisited move's 0 says
  // nothing (it is not a draw); check visited and bounds before using it.
  std::vector<float> q;
  std::vector<bool> visited;            // the move has at least one visit in the tree
  std::vector<Bound> bounds;            // proven result of the move, mover's view (kWin: it wins)
  // The evaluator's own value of the position after the move (W - L, mover's view), as
  // given when the position was evaluated (or found in the cache); the exact value for a
  // move that ends the game; NaN when the position has not been evaluated.
  std::vector<float> child_value;
  // The policy target of this search, summing to 1 (all 0 when no move has a visit). For
  // PUCT the shares of `visits` (when the root is fresh, as in self-play, this search's
  // visits); when every move is proven lost, all of it on the move choose_move plays (the
  // longest resistance). A Gumbel root puts its improved policy here instead:
  // softmax(log prior + sigma(completed Q)) over every legal move (see the top of this
  // file), proven-lost moves 0 when a move is not, summing to 1 even before any visit;
  // all of it on the quickest proven win when there is one.
  std::vector<float> policy;
  // Root value W - L for the side to move: the mean of the root's visits (PUCT), or the
  // improved policy's mean of the completed Q (Gumbel); exact when the root is proven.
  float value = 0;
  // The search's draw probability at the root, averaged the same way from the evaluator's
  // draw probabilities (1 or 0 for a proven result): with value, a win/draw/loss estimate
  // of the search ((1 - draw + value) / 2, draw, (1 - draw - value) / 2).
  float draw = 0;
  // The evaluator's own value of the root, side to move's view (NaN before it is evaluated).
  float network_value = std::numeric_limits<float>::quiet_NaN();
  Bound bound = Bound::kNone;           // proven result of the root for the side to move
                                        // (kWin: the side to move wins)
  int bound_plies = 0;                  // plies to that result when proven
  std::uint32_t total_visits = 0;
};

class Search {
 public:
  Search(const SearchParams& params, std::uint64_t seed, EvalCache* cache = nullptr);
  ~Search();
  Search(Search&&) noexcept;
  Search& operator=(Search&&) noexcept;

  // Starts searching the game's current position. Without root noise the subtree is kept
  // when the game is the previous one plus the moves played since (see play()); a Gumbel
  // root always starts afresh.
  void set_game(const chess::Game& game);
  const chess::Game& game() const;

  // Appends up to max_leaves positions to evaluate. Visits that need no evaluation
  // (proven nodes, cache hits) are completed here. Returns how many were appended; 0
  // means the search for this move is finished (or waits on leaves handed out already).
  int gather(int max_leaves, std::vector<EvalRequest>& out);
  // Results for the leaves of the last gather(), in order. A result with a value or prior
  // that is not finite (NaN, infinity) is refused with std::invalid_argument before any of
  // the batch enters the tree or the cache: the batch's leaves are dropped (the search
  // stays usable, they are handed out again by the next gather()).
  void deliver(std::span<const EvalResult> results);

  // True once this move's simulations are done and no evaluation is outstanding. A proven
  // root still runs all its simulations (they need no evaluation), so that the visit
  // counts, the policy target, show the quickest win.
  bool finished() const;
  int simulations_done() const;  // this move's simulations so far
  // Changes this move's simulation budget (SearchParams::simulations) from now on. A
  // search under a clock raises it step by step: gather() completes visits that need no
  // evaluation (a proven root's) up to the budget, so a budget far ahead would spin there.
  // A Gumbel root plans its halving for the budget of the moment: raised, the visits
  // already made stay and the rest follow the schedule of the new budget.
  void set_simulations(int simulations);

  RootStats root_stats() const;
  // Chooses the move to play: a proven win (the quickest) when there is one, else a
  // sample from visits^(1/temperature) avoiding proven losses; temperature <= 0.01
  // takes the most visited move (ties: the higher evaluator prior, before noise). A
  // Gumbel root ignores temperature and rng (its Gumbel samples are the exploration): the
  // most visited considered move not proven lost, ties to g + log prior + sigma(q).
  chess::Move choose_move(float temperature, Rng& rng) const;
  // Plays a move in the game; without root noise its subtree is kept (tree reuse), except
  // under a Gumbel root.
  void play(chess::Move m);

  // Node count of the current tree (for tests and statistics).
  size_t tree_size() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Runs one search to the end with a single evaluator, leaves_per_batch at a time.
RootStats search_position(Search& search, Evaluator& evaluator, int leaves_per_batch = 1);

}  // namespace pgmate::mcts
