#include "mcts/search.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "chess/fen.h"
#include "chess/movegen.h"

namespace pgmate::mcts {

SearchWdl search_wdl(double value, double draw) {
  if (std::isnan(draw)) return SearchWdl{std::max(value, 0.0), 1 - std::abs(value), std::max(-value, 0.0)};
  const double d = std::clamp(draw, 0.0, 1.0);
  return SearchWdl{std::clamp((1 - d + value) / 2, 0.0, 1.0), d, std::clamp((1 - d - value) / 2, 0.0, 1.0)};
}


namespace {

struct Node {
  std::vector<Node> children;
  double value_sum = 0;         // sum of W - L, from the view of the player who moved here
  double draw_sum = 0;          // sum of draw probabilities (the same from either side)
  std::uint32_t visits = 0;
  std::uint32_t in_flight = 0;  // leaves below handed out and not yet evaluated
  float prior = 0;
  // The evaluator's value of this position, W - L from the view of the player who moved
  // here, as evaluated (or found in the cache); exact for a node that ends the game; NaN
  // until then.
  float nn_value = std::numeric_limits<float>::quiet_NaN();
  float nn_draw = 0;            // the evaluator's draw probability of this position
  chess::Move move;
  Bound bound = Bound::kNone;
  std::uint16_t bound_plies = 0;
  bool expanded = false;
  bool repetition = false;      // the bound is a repetition draw: it depends on where the root is
};

float exact_value(Bound b) { return b == Bound::kWin ? 1.0f : b == Bound::kLoss ? -1.0f : 0.0f; }
float exact_draw(Bound b) { return b == Bound::kDraw ? 1.0f : 0.0f; }

size_t count_nodes(const Node& n) {
  size_t total = 1;
  for (const Node& c : n.children) total += count_nodes(c);
  return total;
}

// Sets a node's bound from its children's, when they decide it.
void update_bound(Node& node) {
  if (node.bound != Bound::kNone || node.children.empty()) return;
  int win_plies = -1, draw_plies = -1, loss_plies = -1;
  bool all_bounded = true;
  for (const Node& c : node.children) {
    switch (c.bound) {
      case Bound::kWin:
        if (win_plies < 0 || c.bound_plies < win_plies) win_plies = c.bound_plies;
        break;
      case Bound::kDraw:
        if (draw_plies < 0 || c.bound_plies < draw_plies) draw_plies = c.bound_plies;
        break;
      case Bound::kLoss:
        if (c.bound_plies > loss_plies) loss_plies = c.bound_plies;
        break;
      case Bound::kNone: all_bounded = false; break;
    }
  }
  // A child won by the side to move here is this node lost for the player who moved here.
  if (win_plies >= 0) {
    node.bound = Bound::kLoss;
    node.bound_plies = std::uint16_t(win_plies + 1);
  } else if (all_bounded) {
    node.bound = draw_plies >= 0 ? Bound::kDraw : Bound::kWin;
    node.bound_plies = std::uint16_t((draw_plies >= 0 ? draw_plies : loss_plies) + 1);
  }
}

struct Pending {
  std::vector<Node*> path;               // root .. leaf
  chess::Board board;                    // the leaf's position
  std::vector<std::uint64_t> recent;     // keys of the positions before it (repetition)
  std::uint64_t cache_key = 0;
  size_t move_count = 0;                 // legal moves of the leaf (priors expected)
};

bool finite(float x) { return std::isfinite(x); }

// The first child that resists longest when every child is proven lost.
size_t longest_resistance(const Node& node) {
  size_t pick = 0;
  for (size_t i = 1; i < node.children.size(); ++i)
    if (node.children[i].bound_plies > node.children[pick].bound_plies) pick = i;
  return pick;
}

// A move without prior gets a logit this low instead of log 0.
constexpr float kMinPrior = 1e-30f;

int ceil_log2(int n) {
  int rounds = 0;
  while ((1 << rounds) < n) ++rounds;
  return rounds;
}

}  // namespace

const char* q_normalise_name(QNormalise q) { return q == QNormalise::kMinMax ? "minmax" : "bounds"; }

QNormalise parse_q_normalise(std::string_view text) {
  if (text == "bounds") return QNormalise::kBounds;
  if (text == "minmax") return QNormalise::kMinMax;
  throw std::invalid_argument("\"" + std::string(text.substr(0, 40)) + "\" is not bounds or minmax");
}

std::vector<std::uint32_t> sequential_halving_schedule(int considered, int simulations) {
  std::vector<std::uint32_t> schedule;
  if (simulations <= 0) return schedule;
  schedule.reserve(size_t(simulations));
  if (considered <= 1) {
    for (int k = 0; k < simulations; ++k) schedule.push_back(std::uint32_t(k));
    return schedule;
  }
  // As mctx's get_sequence_of_considered_visits: each phase gives every move still
  // considered one block of max(1, n / (ceil(log2 m) * remaining)) visits, then halves
  // them (never below two), so that the budget reaches the finalists.
  const int phases = ceil_log2(considered);
  // The moves still considered all have the same visits at every step: one count will do.
  std::uint32_t visits = 0;
  int remaining = considered;
  while (schedule.size() < size_t(simulations)) {
    const int per_move = std::max(1, simulations / (phases * remaining));
    for (int v = 0; v < per_move; ++v, ++visits) schedule.insert(schedule.end(), size_t(remaining), visits);
    remaining = std::max(2, remaining / 2);
  }
  schedule.resize(size_t(simulations));
  return schedule;
}

struct Search::Impl {
  SearchParams params;
  Rng rng;
  EvalCache* cache;

  chess::Game game{chess::parse_fen(chess::kStartFen)};
  std::vector<chess::Board> game_boards;  // every position of the game, the current one last
  std::vector<std::uint64_t> game_keys;   // keys of the positions before the current one
  Node root;
  int sims_done = 0;
  bool root_prepared = false;      // root_priors recorded, noise or Gumbel samples drawn
  std::vector<float> root_priors;  // before noise
  std::vector<std::uint32_t> start_visits;  // root children's visits when this search began
  // Gumbel root: g(a) per root move, and the moves considered, best g + log prior first.
  std::vector<float> gumbel;
  std::vector<size_t> considered;
  std::vector<std::uint32_t> halving_schedule;  // for halving_budget child visits
  int halving_budget = -1;

  std::vector<Pending> pending;

  // Scratch for one descent.
  std::vector<Node*> path;
  std::vector<chess::Board> line;         // positions of the descent, root first
  std::vector<std::uint64_t> keys;        // game keys then descent keys

  Impl(const SearchParams& p, std::uint64_t seed, EvalCache* c) : params(p), rng(seed), cache(c) {}

  void reset_root() {
    root = Node{};
    root_prepared = false;
    root_priors.clear();
    start_visits.clear();
    gumbel.clear();
    considered.clear();
    halving_budget = -1;
  }

  bool gumbel_root() const { return params.root_search == RootSearch::kGumbel; }

  void rebuild_game_boards() {
    game_boards.clear();
    game_keys.clear();
    chess::Board b = game.start();
    game_boards.push_back(b);
    for (chess::Move m : game.moves()) {
      game_keys.push_back(b.key);
      b.play(m);
      game_boards.push_back(b);
    }
  }

  // Whether reaching b ends the line as a repetition draw (Stockfish's rule): b occurred
  // before strictly after the root (the repeat was chosen inside the tree, and would be
  // chosen again), or twice before counting the game and the path (a threefold
  // repetition). One earlier occurrence at or before the root is not enough: the game goes
  // on there. `before` holds the keys of the positions before b, oldest first; its last
  // `after_root` entries are positions strictly after the root. Only the reversible
  // stretch (b's halfmove clock) can repeat.
  static bool repeats(const chess::Board& b, const std::vector<std::uint64_t>& before, size_t after_root) {
    const size_t window = std::min<size_t>(b.halfmove, before.size());
    int seen = 0;
    for (size_t i = before.size() - window; i < before.size(); ++i)
      if (before[i] == b.key && (i + after_root >= before.size() || ++seen >= 2)) return true;
    return false;
  }

  // Creates the children of a node, each with its exact result when the game ends there.
  // before: keys of the positions before b (see repeats()); depth: b's plies below the root.
  void expand(Node& node, const chess::Board& b, const std::vector<std::uint64_t>& before, size_t depth,
              const EvalResult& eval) {
    chess::MoveList moves;
    chess::legal_moves(b, moves);
    if (eval.priors.size() != size_t(moves.size))
      throw std::logic_error("evaluation has " + std::to_string(eval.priors.size()) + " priors for " +
                             std::to_string(moves.size) + " legal moves");
    std::vector<std::uint64_t> with_this = before;
    with_this.push_back(b.key);
    // The positions strictly after the root: b (when it is not the root) and those before
    // it on the path, as far as the window reaches.
    const size_t after_root = std::min(depth, with_this.size());
    node.nn_value = -eval.value();
    node.nn_draw = eval.draw;
    node.children.resize(size_t(moves.size));
    for (int i = 0; i < moves.size; ++i) {
      Node& c = node.children[size_t(i)];
      c.move = moves.moves[i];
      c.prior = eval.priors[size_t(i)];
      chess::Board next = b;
      next.play(c.move);
      if (chess::count_legal_moves(next) == 0) {
        c.bound = next.in_check() ? Bound::kWin : Bound::kDraw;  // mate or stalemate
        c.bound_plies = 1;
      } else if (next.halfmove >= 100 || chess::insufficient_material(next)) {
        c.bound = Bound::kDraw;
        c.bound_plies = 1;
      } else if (repeats(next, with_this, after_root)) {
        c.bound = Bound::kDraw;
        c.bound_plies = 1;
        c.repetition = true;
      }
      if (c.bound != Bound::kNone) {
        c.nn_value = exact_value(c.bound);
        c.nn_draw = exact_draw(c.bound);
      }
    }
    node.expanded = true;
    update_bound(node);
    if (&node == &root) prepare_root();
  }

  void prepare_root() {
    if (root_prepared || !root.expanded) return;
    root_prepared = true;
    root_priors.clear();
    for (const Node& c : root.children) root_priors.push_back(c.prior);
    if (gumbel_root()) {
      consider_root_moves();
      return;
    }
    if (!params.root_noise || root.children.size() < 2) return;
    const std::vector<float> noise = rng.dirichlet(int(root.children.size()), params.dirichlet_alpha);
    for (size_t i = 0; i < root.children.size(); ++i)
      root.children[i].prior =
          (1 - params.dirichlet_weight) * root.children[i].prior + params.dirichlet_weight * noise[i];
  }

  // Draws the Gumbel samples (none without root noise: the search is then deterministic)
  // and keeps the gumbel_considered moves of highest g + log prior.
  void consider_root_moves() {
    const size_t n = root.children.size();
    gumbel.assign(n, 0.0f);
    if (params.root_noise)
      for (float& g : gumbel) {
        double u = rng.uniform();
        while (u == 0) u = rng.uniform();
        g = float(-std::log(-std::log(u)));
      }
    considered.resize(n);
    for (size_t i = 0; i < n; ++i) considered[i] = i;
    std::stable_sort(considered.begin(), considered.end(),
                     [&](size_t a, size_t b) { return gumbel[a] + logit(a) > gumbel[b] + logit(b); });
    considered.resize(std::min(n, size_t(std::max(1, params.gumbel_considered))));
  }

  float raw_prior(size_t i) const {
    return std::max(i < root_priors.size() ? root_priors[i] : root.children[i].prior, kMinPrior);
  }
  float logit(size_t i) const { return std::log(raw_prior(i)); }

  // The completed Q of each root move, mover's view: exact for a proven move, the mean
  // value for a visited one, and for the others the mixed value: the root's evaluation
  // averaged with the prior-weighted Q of the visited moves, weighted by their visits.
  // With draws, the same for the draw probability (for the root value's estimate).
  std::vector<float> completed_q(std::vector<float>* draws = nullptr) const {
    const float evaluated = finite(root.nn_value) ? -root.nn_value : 0.0f;
    double visits = 0, visited_prior = 0, weighted_q = 0, weighted_d = 0;
    std::vector<float> q(root.children.size(), 0.0f);
    // Draws only when asked for: sequential halving calls this at every root visit.
    std::vector<float> d(draws ? root.children.size() : 0, 0.0f);
    for (size_t i = 0; i < root.children.size(); ++i) {
      const Node& c = root.children[i];
      if (c.bound != Bound::kNone) {
        q[i] = exact_value(c.bound);
        if (draws) d[i] = exact_draw(c.bound);
      } else if (c.visits > 0) {
        q[i] = float(c.value_sum / c.visits);
        if (draws) d[i] = float(c.draw_sum / c.visits);
      }
      if (c.visits == 0) continue;
      const double prior = raw_prior(i);
      visits += c.visits;
      visited_prior += prior;
      weighted_q += prior * q[i];
      if (draws) weighted_d += prior * d[i];
    }
    const bool mix = visits > 0 && visited_prior > 0;
    const float mixed = mix ? float((evaluated + visits * weighted_q / visited_prior) / (1 + visits)) : evaluated;
    const float mixed_draw =
        mix ? float((root.nn_draw + visits * weighted_d / visited_prior) / (1 + visits)) : root.nn_draw;
    for (size_t i = 0; i < root.children.size(); ++i)
      if (root.children[i].bound == Bound::kNone && root.children[i].visits == 0) {
        q[i] = mixed;
        if (draws) d[i] = mixed_draw;
      }
    if (draws) *draws = std::move(d);
    return q;
  }

  // log prior + sigma(completed Q brought to [0, 1], see QNormalise), plus g when
  // with_gumbel: the score sequential halving and the move choice maximise; without g the
  // logits of the improved policy. A min-max range leaves out proven losses when a move is
  // not lost (they are never chosen: their -1 would only squeeze the others' differences).
  std::vector<float> gumbel_scores(bool with_gumbel) const {
    const std::vector<float> q = completed_q();
    std::vector<float> scores(q.size(), 0.0f);
    if (q.empty()) return scores;
    std::uint32_t most_visits = 0;
    for (const Node& c : root.children) most_visits = std::max(most_visits, c.visits);
    const float scale = (params.gumbel_c_visit + float(most_visits)) * params.gumbel_c_scale;
    const auto g = [&](size_t i) { return with_gumbel && i < gumbel.size() ? gumbel[i] : 0.0f; };
    if (params.gumbel_q_normalise == QNormalise::kBounds) {
      for (size_t i = 0; i < q.size(); ++i) scores[i] = logit(i) + scale * (q[i] + 1.0f) / 2.0f + g(i);
      return scores;
    }
    const bool any_open = std::any_of(root.children.begin(), root.children.end(),
                                      [](const Node& c) { return c.bound != Bound::kLoss; });
    float low = std::numeric_limits<float>::infinity(), high = -low;
    for (size_t i = 0; i < q.size(); ++i)
      if (!any_open || root.children[i].bound != Bound::kLoss) {
        low = std::min(low, q[i]);
        high = std::max(high, q[i]);
      }
    const float range = high - low;
    for (size_t i = 0; i < q.size(); ++i) {
      // All alike: no move stands out, any constant will do.
      const float rescaled = range > 1e-8f ? std::max(0.0f, (q[i] - low) / range) : 0.5f;
      scores[i] = logit(i) + scale * rescaled + g(i);
    }
    return scores;
  }

  // The root moves a Gumbel root may choose: the considered ones not proven lost; when all
  // of them are, any move not proven lost; when every move is, all.
  std::vector<size_t> gumbel_candidates() const {
    std::vector<size_t> out;
    for (size_t i : considered)
      if (root.children[i].bound != Bound::kLoss) out.push_back(i);
    for (size_t i = 0; out.empty() && i < root.children.size(); ++i)
      if (root.children[i].bound != Bound::kLoss) out.push_back(i);
    for (size_t i = 0; out.empty() && i < root.children.size(); ++i) out.push_back(i);
    return out;
  }

  // Sequential halving: the candidate with the visit count the schedule asks for at this
  // simulation (leaves in flight count) and the highest score.
  Node* select_gumbel_root() {
    const int budget = std::max(1, params.simulations - 1);  // the first simulation expands the root
    if (budget != halving_budget) {
      halving_schedule = sequential_halving_schedule(int(considered.size()), budget);
      halving_budget = budget;
    }
    const auto count = [&](size_t i) { return root.children[i].visits + root.children[i].in_flight; };
    std::uint32_t simulation = 0;
    for (size_t i = 0; i < root.children.size(); ++i) simulation += count(i);
    const std::vector<size_t> candidates = gumbel_candidates();
    std::uint32_t target = simulation < halving_schedule.size() ? halving_schedule[simulation] : 0;
    // A budget raised mid-search, or a considered move proven lost, can leave no candidate
    // at that count: the least visited go on.
    if (simulation >= halving_schedule.size() ||
        std::none_of(candidates.begin(), candidates.end(), [&](size_t i) { return count(i) == target; })) {
      target = count(candidates.front());
      for (size_t i : candidates) target = std::min(target, count(i));
    }
    const std::vector<float> scores = gumbel_scores(true);
    size_t best = root.children.size();
    for (size_t i : candidates)
      if (count(i) == target && (best == root.children.size() || scores[i] > scores[best])) best = i;
    return &root.children[best];
  }

  // After the root moved down a reused tree: a repetition draw found below the old root
  // may rest on an occurrence that is now at or before the root, where one occurrence no
  // longer ends the line (see repeats()). Such draws are lifted, and the bounds derived
  // from them recomputed. (A new root never adds draws: fewer positions lie after it.)
  void recheck_repetitions() {
    if (!root.expanded) return;
    std::vector<std::uint64_t> k(game_keys.end() - std::ptrdiff_t(std::min<size_t>(game_keys.size(), 100)),
                                 game_keys.end());
    recheck(root, game_boards.back(), k, 0);
  }
  // keys: the positions before b (game, then path); depth: b's plies below the root.
  // Returns whether node's bound changed.
  bool recheck(Node& node, const chess::Board& b, std::vector<std::uint64_t>& keys, size_t depth) {
    keys.push_back(b.key);
    const size_t after_root = std::min(depth, keys.size());
    bool changed = false;
    for (Node& c : node.children) {
      if (!c.expanded && !c.repetition) continue;
      chess::Board next = b;
      next.play(c.move);
      if (c.expanded) {
        changed |= recheck(c, next, keys, depth + 1);
      } else if (!repeats(next, keys, after_root)) {
        c.bound = Bound::kNone;
        c.bound_plies = 0;
        c.repetition = false;
        c.nn_value = std::numeric_limits<float>::quiet_NaN();
        changed = true;
      }
    }
    keys.pop_back();
    if (!changed) return false;
    // An expanded node's bound always comes from its children: derive it afresh.
    const Bound old = node.bound;
    const std::uint16_t old_plies = node.bound_plies;
    node.bound = Bound::kNone;
    node.bound_plies = 0;
    update_bound(node);
    return node.bound != old || node.bound_plies != old_plies;
  }

  Node* select_child(Node& node, bool at_root) {
    const bool any_open = std::any_of(node.children.begin(), node.children.end(),
                                      [](const Node& c) { return c.bound != Bound::kLoss; });
    if (at_root) {
      // A proven root still gets its simulations (they cost no evaluation), so the visit
      // counts, the policy target, show the quickest win.
      Node* best_win = nullptr;
      for (Node& c : node.children)
        if (c.bound == Bound::kWin && (!best_win || c.bound_plies < best_win->bound_plies)) best_win = &c;
      if (best_win) return best_win;
      if (gumbel_root() && !considered.empty()) return select_gumbel_root();
    }
    const float sqrt_n = std::sqrt(float(std::max<std::uint32_t>(1, node.visits + node.in_flight)));
    const float parent_q = node.visits ? float(-node.value_sum / node.visits) : 0.0f;
    float visited_policy = 0;
    for (const Node& c : node.children)
      if (c.visits + c.in_flight > 0) visited_policy += c.prior;
    const float reduction = at_root ? params.fpu_reduction_root : params.fpu_reduction;
    const float fpu = parent_q - reduction * std::sqrt(visited_policy);

    Node* best = nullptr;
    float best_score = -std::numeric_limits<float>::infinity();
    for (Node& c : node.children) {
      if (c.bound == Bound::kLoss && any_open) continue;
      const std::uint32_t n = c.visits + c.in_flight;
      float q;
      if (c.bound != Bound::kNone)
        q = exact_value(c.bound);
      else if (n > 0)
        q = float((c.value_sum - double(c.in_flight)) / double(n));  // in-flight visits count as losses
      else
        q = fpu;
      const float score = q + params.c_puct * c.prior * sqrt_n / float(1 + n);
      if (score > best_score) {
        best_score = score;
        best = &c;
      }
    }
    // Only scores that are NaN or -infinity for every child leave no choice; deliver()
    // refuses the non-finite evaluations that could cause that.
    if (!best)
      throw std::logic_error("search: no move of a node with " + std::to_string(node.children.size()) +
                             " children has a usable score (non-finite values in the tree)");
    return best;
  }

  // value: W - L from the view of the player who moved into the last node of the path;
  // draw: the leaf's draw probability (the same for both sides).
  void backup(const std::vector<Node*>& p, float value, float draw, bool virtual_loss) {
    for (size_t i = p.size(); i-- > 0;) {
      Node& n = *p[i];
      if (i + 1 < p.size() && p[i + 1]->bound != Bound::kNone) update_bound(n);
      n.visits += 1;
      n.value_sum += value;
      n.draw_sum += draw;
      if (virtual_loss) n.in_flight -= 1;
      value = -value;
    }
    ++sims_done;
  }

  float leaf_value(const Node& leaf, const EvalResult& eval) {
    return leaf.bound != Bound::kNone ? exact_value(leaf.bound) : -eval.value();
  }
  float leaf_draw(const Node& leaf, const EvalResult& eval) {
    return leaf.bound != Bound::kNone ? exact_draw(leaf.bound) : eval.draw;
  }

  enum class Descent { kQueued, kDone, kCollision };

  Descent descend(std::vector<EvalRequest>& out) {
    path.clear();
    line.clear();
    // Repetitions reach back at most 100 plies (a node at the fifty-move limit is a draw,
    // never searched below), so only the game's last 100 keys matter.
    keys.assign(game_keys.end() - std::ptrdiff_t(std::min<size_t>(game_keys.size(), 100)), game_keys.end());
    Node* node = &root;
    chess::Board b = game_boards.back();
    path.push_back(node);
    line.push_back(b);
    for (;;) {
      if (node != &root && node->bound != Bound::kNone) {
        backup(path, exact_value(node->bound), exact_draw(node->bound), false);
        return Descent::kDone;
      }
      if (!node->expanded) break;
      node = select_child(*node, node == &root);
      keys.push_back(b.key);
      b.play(node->move);
      path.push_back(node);
      line.push_back(b);
    }
    if (node->in_flight > 0) return Descent::kCollision;

    EvalRequest request;
    request.history.push_back(b);
    for (size_t i = line.size() - 1; i-- > 0 && request.history.size() < 4;) request.history.push_back(line[i]);
    for (size_t i = game_boards.size() - 1; i-- > 0 && request.history.size() < 4;)
      request.history.push_back(game_boards[i]);
    chess::MoveList moves;
    chess::legal_moves(b, moves);
    if (moves.size == 0) throw std::logic_error("search started on a finished game");
    request.moves.assign(moves.begin(), moves.end());
    const size_t window = std::min<size_t>(b.halfmove, keys.size());
    std::vector<std::uint64_t> recent(keys.end() - std::ptrdiff_t(window), keys.end());
    request.repetitions = int(std::count(recent.begin(), recent.end(), b.key));

    const std::uint64_t cache_key = cache ? EvalCache::key_of(request) : 0;
    if (cache) {
      if (const EvalResult* hit = cache->find(cache_key, request.moves.size())) {
        const EvalResult result = *hit;
        expand(*node, b, recent, path.size() - 1, result);
        backup(path, leaf_value(*node, result), leaf_draw(*node, result), false);
        return Descent::kDone;
      }
    }
    for (Node* n : path) n->in_flight += 1;
    pending.push_back(Pending{path, b, std::move(recent), cache_key, request.moves.size()});
    out.push_back(std::move(request));
    return Descent::kQueued;
  }

  bool finished() const { return pending.empty() && sims_done >= params.simulations; }

  // Drops the leaves handed out and not delivered: their virtual losses go, nothing else
  // of them reached the tree.
  void cancel_pending() {
    for (const Pending& p : pending)
      for (Node* n : p.path) n->in_flight -= 1;
    pending.clear();
  }

  void advance_root(chess::Move m) {
    if (params.root_noise || gumbel_root()) {
      // The old tree's visits were gathered without this root's noise (and would also
      // enter the policy target), or outside this root's sequential halving: search
      // afresh, the cache answering what it can.
      reset_root();
      return;
    }
    Node next;
    bool found = false;
    for (Node& c : root.children)
      if (c.move == m) {
        next = std::move(c);
        found = true;
        break;
      }
    reset_root();
    // A position that ended the line inside the tree (a repetition, say) may go on in the
    // real game: search it afresh.
    if (found && (next.expanded || next.bound == Bound::kNone)) root = std::move(next);
    prepare_root();
  }
};

Search::Search(const SearchParams& params, std::uint64_t seed, EvalCache* cache)
    : impl_(std::make_unique<Impl>(params, seed, cache)) {
  impl_->rebuild_game_boards();
}
Search::~Search() = default;
Search::Search(Search&&) noexcept = default;
Search& Search::operator=(Search&&) noexcept = default;

const chess::Game& Search::game() const { return impl_->game; }

void Search::set_game(const chess::Game& game) {
  Impl& s = *impl_;
  if (!s.pending.empty()) throw std::logic_error("set_game with evaluations outstanding");
  const auto& old_moves = s.game.moves();
  const auto& new_moves = game.moves();
  const bool extends = s.game.start().key == game.start().key && new_moves.size() >= old_moves.size() &&
                       std::equal(old_moves.begin(), old_moves.end(), new_moves.begin());
  const bool moved_on = extends && new_moves.size() > old_moves.size();
  if (extends && !s.gumbel_root()) {
    for (size_t i = old_moves.size(); i < new_moves.size(); ++i) s.advance_root(new_moves[i]);
  } else {
    s.reset_root();
  }
  s.game = game;
  s.rebuild_game_boards();
  if (moved_on) s.recheck_repetitions();
  s.sims_done = 0;
  s.start_visits.clear();
  for (const Node& c : s.root.children) s.start_visits.push_back(c.visits);
}

int Search::gather(int max_leaves, std::vector<EvalRequest>& out) {
  Impl& s = *impl_;
  int queued = 0;
  while (queued < max_leaves && s.sims_done + int(s.pending.size()) < s.params.simulations) {
    const Impl::Descent d = s.descend(out);
    if (d == Impl::Descent::kCollision) break;
    if (d == Impl::Descent::kQueued) ++queued;
  }
  return queued;
}

void Search::deliver(std::span<const EvalResult> results) {
  Impl& s = *impl_;
  if (results.size() != s.pending.size())
    throw std::logic_error("deliver: " + std::to_string(results.size()) + " results for " +
                           std::to_string(s.pending.size()) + " leaves");
  // Check the whole batch first: a bad result must reach neither the tree nor the cache.
  for (size_t i = 0; i < results.size(); ++i) {
    const EvalResult& r = results[i];
    const auto where = [&] { return "deliver: result " + std::to_string(i) + " of " + std::to_string(results.size()); };
    if (r.priors.size() != s.pending[i].move_count) {
      const std::string message = where() + " has " + std::to_string(r.priors.size()) + " priors for " +
                                  std::to_string(s.pending[i].move_count) + " legal moves";
      s.cancel_pending();
      throw std::logic_error(message);
    }
    const bool wdl_ok = finite(r.win) && finite(r.draw) && finite(r.loss);
    const bool priors_ok = std::all_of(r.priors.begin(), r.priors.end(), finite);
    if (!wdl_ok || !priors_ok) {
      const std::string message =
          where() + (wdl_ok ? " has a prior that is not finite" : " has a win/draw/loss that is not finite") +
          " (win " + std::to_string(r.win) + ", draw " + std::to_string(r.draw) + ", loss " + std::to_string(r.loss) + ")";
      s.cancel_pending();
      throw std::invalid_argument(message);
    }
  }
  for (size_t i = 0; i < results.size(); ++i) {
    Pending& p = s.pending[i];
    Node& leaf = *p.path.back();
    if (s.cache) s.cache->insert(p.cache_key, results[i]);
    s.expand(leaf, p.board, p.recent, p.path.size() - 1, results[i]);
    s.backup(p.path, s.leaf_value(leaf, results[i]), s.leaf_draw(leaf, results[i]), true);
  }
  s.pending.clear();
}

bool Search::finished() const { return impl_->finished(); }
int Search::simulations_done() const { return impl_->sims_done; }
void Search::set_simulations(int simulations) { impl_->params.simulations = std::max(1, simulations); }
size_t Search::tree_size() const { return count_nodes(impl_->root); }

RootStats Search::root_stats() const {
  const Impl& s = *impl_;
  RootStats r;
  const Node& root = s.root;
  const bool any_open = std::any_of(root.children.begin(), root.children.end(),
                                    [](const Node& c) { return c.bound != Bound::kLoss; });
  const bool open_visited = std::any_of(root.children.begin(), root.children.end(),
                                        [](const Node& c) { return c.bound != Bound::kLoss && c.visits > 0; });
  for (size_t i = 0; i < root.children.size(); ++i) {
    const Node& c = root.children[i];
    // The visits a proven-lost move had before its proof are no advice when an open move
    // has visits of its own (with fewer, they are all there is: the target stays one).
    const bool dropped = c.bound == Bound::kLoss && open_visited;
    const std::uint32_t before = i < s.start_visits.size() ? s.start_visits[i] : 0;
    r.moves.push_back(c.move);
    r.visits.push_back(dropped ? 0 : c.visits);
    r.search_visits.push_back(dropped ? 0 : c.visits - std::min(before, c.visits));
    r.priors.push_back(i < s.root_priors.size() ? s.root_priors[i] : c.prior);
    r.q.push_back(c.bound != Bound::kNone ? exact_value(c.bound) : c.visits ? float(c.value_sum / c.visits) : 0.0f);
    r.visited.push_back(c.visits > 0);
    r.bounds.push_back(c.bound);
    r.child_value.push_back(c.nn_value);
    r.total_visits += r.visits.back();
  }
  r.policy.assign(root.children.size(), 0.0f);
  size_t quickest_win = root.children.size();
  for (size_t i = 0; i < root.children.size(); ++i)
    if (root.children[i].bound == Bound::kWin &&
        (quickest_win == root.children.size() || root.children[i].bound_plies < root.children[quickest_win].bound_plies))
      quickest_win = i;
  if (!root.children.empty() && !any_open) {
    r.policy[longest_resistance(root)] = 1.0f;
  } else if (s.gumbel_root() && quickest_win < root.children.size()) {
    // A proven win is what to learn, whatever the unvisited moves' completed values say.
    r.policy[quickest_win] = 1.0f;
  } else if (s.gumbel_root() && !root.children.empty()) {
    // The improved policy: softmax of the scores without g, proven losses left out.
    const std::vector<float> logits = s.gumbel_scores(false);
    float top = -std::numeric_limits<float>::infinity();
    for (size_t i = 0; i < logits.size(); ++i)
      if (root.children[i].bound != Bound::kLoss) top = std::max(top, logits[i]);
    double sum = 0;
    std::vector<double> weights(logits.size(), 0.0);
    for (size_t i = 0; i < logits.size(); ++i)
      if (root.children[i].bound != Bound::kLoss) sum += weights[i] = std::exp(double(logits[i] - top));
    for (size_t i = 0; i < logits.size(); ++i) r.policy[i] = float(weights[i] / sum);
  } else if (r.total_visits > 0) {
    for (size_t i = 0; i < r.visits.size(); ++i) r.policy[i] = float(double(r.visits[i]) / double(r.total_visits));
  }
  r.network_value = -root.nn_value;
  if (root.bound != Bound::kNone) {
    // The root's bound is for the player who moved into it; report it for the side to move.
    r.bound = root.bound == Bound::kWin ? Bound::kLoss : root.bound == Bound::kLoss ? Bound::kWin : Bound::kDraw;
    r.bound_plies = root.bound_plies - 1;
    r.value = -exact_value(root.bound);
    r.draw = exact_draw(root.bound);
  } else if (s.gumbel_root() && !root.children.empty() && root.visits) {
    // Sequential halving visits poor moves on purpose: the mean of all visits would lean
    // toward them. The improved policy's mean of the completed values does not.
    std::vector<float> draws;
    const std::vector<float> q = s.completed_q(&draws);
    double value = 0, draw = 0;
    for (size_t i = 0; i < q.size(); ++i) {
      value += double(r.policy[i]) * q[i];
      draw += double(r.policy[i]) * draws[i];
    }
    r.value = float(value);
    r.draw = float(draw);
  } else if (root.visits) {
    r.value = float(-root.value_sum / root.visits);
    r.draw = float(root.draw_sum / root.visits);
  }
  return r;
}

chess::Move Search::choose_move(float temperature, Rng& rng) const {
  const Impl& s = *impl_;
  const Node& root = s.root;
  if (root.children.empty()) throw std::logic_error("choose_move before any search");
  const Node* pick = nullptr;
  for (const Node& c : root.children)  // the quickest proven win
    if (c.bound == Bound::kWin && (!pick || c.bound_plies < pick->bound_plies)) pick = &c;
  if (pick) return pick->move;
  const bool all_lost = std::all_of(root.children.begin(), root.children.end(),
                                    [](const Node& c) { return c.bound == Bound::kLoss; });
  if (all_lost) return root.children[longest_resistance(root)].move;  // resist as long as possible
  if (s.gumbel_root()) {
    // The most visited candidate, ties to the highest score; no temperature: the Gumbel
    // samples were the exploration.
    const std::vector<float> scores = s.gumbel_scores(true);
    const std::vector<size_t> candidates = s.gumbel_candidates();
    size_t best = candidates.front();
    for (size_t i : candidates) {
      const Node& c = root.children[i];
      const Node& b = root.children[best];
      if (c.visits > b.visits || (c.visits == b.visits && scores[i] > scores[best])) best = i;
    }
    return root.children[best].move;
  }
  std::vector<const Node*> open;
  for (const Node& c : root.children)
    if (c.bound != Bound::kLoss) open.push_back(&c);
  // Ties go to the evaluator's prior, not the noised one.
  const auto raw_prior = [&](const Node* c) {
    const size_t i = size_t(c - root.children.data());
    return i < s.root_priors.size() ? s.root_priors[i] : c->prior;
  };
  auto more_visited = [&](const Node* a, const Node* b) {
    if (a->visits != b->visits) return a->visits > b->visits;
    return raw_prior(a) > raw_prior(b);
  };
  const Node* most = *std::min_element(open.begin(), open.end(), more_visited);
  if (temperature <= 0.01f || most->visits == 0) return most->move;
  // (visits / most visits)^(1/T): in [0, 1], so it cannot overflow at low temperatures.
  std::vector<double> weights;
  double total = 0;
  for (const Node* c : open) {
    weights.push_back(std::pow(double(c->visits) / double(most->visits), 1.0 / double(temperature)));
    total += weights.back();
  }
  if (!(total > 0)) return most->move;
  double x = rng.uniform() * total;
  for (size_t i = 0; i < open.size(); ++i) {
    if (x < weights[i]) return open[i]->move;
    x -= weights[i];
  }
  return most->move;
}

void Search::play(chess::Move m) {
  chess::Game next = impl_->game;
  next.play(m);
  set_game(next);
}

RootStats search_position(Search& search, Evaluator& evaluator, int leaves_per_batch) {
  std::vector<EvalRequest> requests;
  std::vector<EvalResult> results;
  while (!search.finished()) {
    requests.clear();
    if (search.gather(leaves_per_batch, requests) == 0) {
      if (!search.finished()) throw std::logic_error("search made no progress");
      break;
    }
    results.assign(requests.size(), EvalResult{});
    evaluator.evaluate(requests, results);
    search.deliver(results);
  }
  return search.root_stats();
}

}  // namespace pgmate::mcts
