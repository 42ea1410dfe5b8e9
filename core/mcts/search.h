// Monte Carlo tree search with PUCT, as in AlphaZero, for one game.
//
// - Selection: Q + c_puct * P * sqrt(N) / (1 + n). Values are W - L, from the point of
//   view of the player who made the move into a node, so they change sign each ply.
//   Unvisited moves get first-play urgency: the parent's Q minus fpu_reduction times the
//   square root of the prior mass already visited.
// - Exact values: when a node is expanded every child's game status is computed, so mate,
//   stalemate, fifty moves, insufficient material and repetition (a position seen before,
//   in the game or on the path) are known before any evaluation. Proven wins and losses
//   propagate up (MCTS-solver): a position with a winning move is won, one whose moves all
//   lose is lost. Forced mates are therefore found and never given away.
// - Batching: gather() hands out several leaves at once, using virtual loss to spread
//   them; the caller evaluates them (with leaves of other games) and calls deliver().
// - Tree reuse: play() keeps the subtree of the move played.
// - Dirichlet noise on the root priors, for self-play.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "chess/game.h"
#include "mcts/eval_cache.h"
#include "mcts/evaluator.h"
#include "mcts/random.h"

namespace pgmate::mcts {

struct SearchParams {
  int simulations = 800;          // new simulations per move
  float c_puct = 1.5f;
  float fpu_reduction = 0.25f;
  bool root_noise = false;        // Dirichlet noise at the root (self-play)
  float dirichlet_alpha = 0.3f;
  float dirichlet_weight = 0.25f;
};

// A proven outcome, from the point of view of the player who moved into the node.
enum class Bound : std::uint8_t { kNone, kWin, kDraw, kLoss };

// What the search says about the root.
struct RootStats {
  std::vector<chess::Move> moves;       // legal moves, generation order
  std::vector<std::uint32_t> visits;    // per move
  std::vector<float> priors;            // evaluator priors, before noise
  std::vector<float> q;                 // per move, mover's view (0 when unvisited)
  float value = 0;                      // root value W - L for the side to move
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

  // Starts searching the game's current position. The subtree is kept when the game is
  // the previous one plus the moves played since (see play()).
  void set_game(const chess::Game& game);
  const chess::Game& game() const;

  // Appends up to max_leaves positions to evaluate. Visits that need no evaluation
  // (proven nodes, cache hits) are completed here. Returns how many were appended; 0
  // means the search for this move is finished (or waits on leaves handed out already).
  int gather(int max_leaves, std::vector<EvalRequest>& out);
  // Results for the leaves of the last gather(), in order.
  void deliver(std::span<const EvalResult> results);

  // True once this move's simulations are done or the root is proven.
  bool finished() const;
  int simulations_done() const;  // this move's simulations so far

  RootStats root_stats() const;
  // Chooses the move to play: a proven win (the quickest) when there is one, else a
  // sample from visits^(1/temperature) avoiding proven losses; temperature <= 0.01
  // takes the most visited move.
  chess::Move choose_move(float temperature, Rng& rng) const;
  // Plays a move in the game and keeps its subtree.
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
