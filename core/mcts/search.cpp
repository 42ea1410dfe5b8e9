#include "mcts/search.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "chess/fen.h"
#include "chess/movegen.h"

namespace pgmate::mcts {

namespace {

struct Node {
  std::vector<Node> children;
  double value_sum = 0;         // sum of W - L, from the view of the player who moved here
  std::uint32_t visits = 0;
  std::uint32_t in_flight = 0;  // leaves below handed out and not yet evaluated
  float prior = 0;
  chess::Move move;
  Bound bound = Bound::kNone;
  std::uint16_t bound_plies = 0;
  bool expanded = false;
};

float exact_value(Bound b) { return b == Bound::kWin ? 1.0f : b == Bound::kLoss ? -1.0f : 0.0f; }

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
};

}  // namespace

struct Search::Impl {
  SearchParams params;
  Rng rng;
  EvalCache* cache;

  chess::Game game{chess::parse_fen(chess::kStartFen)};
  std::vector<chess::Board> game_boards;  // every position of the game, the current one last
  std::vector<std::uint64_t> game_keys;   // keys of the positions before the current one
  Node root;
  int sims_done = 0;
  bool noise_applied = false;
  std::vector<float> root_priors;  // before noise

  std::vector<Pending> pending;

  // Scratch for one descent.
  std::vector<Node*> path;
  std::vector<chess::Board> line;         // positions of the descent, root first
  std::vector<std::uint64_t> keys;        // game keys then descent keys

  Impl(const SearchParams& p, std::uint64_t seed, EvalCache* c) : params(p), rng(seed), cache(c) {}

  void reset_root() {
    root = Node{};
    noise_applied = false;
    root_priors.clear();
  }

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

  // Twofold repetition: the position occurred before within the reversible stretch.
  static bool repeats(const chess::Board& b, const std::vector<std::uint64_t>& before) {
    const size_t window = std::min<size_t>(b.halfmove, before.size());
    for (size_t i = before.size() - window; i < before.size(); ++i)
      if (before[i] == b.key) return true;
    return false;
  }

  // Creates the children of a node, each with its exact result when the game ends there.
  void expand(Node& node, const chess::Board& b, const std::vector<std::uint64_t>& before,
              const EvalResult& eval) {
    chess::MoveList moves;
    chess::legal_moves(b, moves);
    if (eval.priors.size() != size_t(moves.size))
      throw std::logic_error("evaluation has " + std::to_string(eval.priors.size()) + " priors for " +
                             std::to_string(moves.size) + " legal moves");
    std::vector<std::uint64_t> with_this = before;
    with_this.push_back(b.key);
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
      } else if (next.halfmove >= 100 || chess::insufficient_material(next) || repeats(next, with_this)) {
        c.bound = Bound::kDraw;
        c.bound_plies = 1;
      }
    }
    node.expanded = true;
    update_bound(node);
    if (&node == &root) apply_root_noise();
  }

  void apply_root_noise() {
    if (noise_applied || !root.expanded) return;
    noise_applied = true;
    root_priors.clear();
    for (const Node& c : root.children) root_priors.push_back(c.prior);
    if (!params.root_noise || root.children.size() < 2) return;
    const std::vector<float> noise = rng.dirichlet(int(root.children.size()), params.dirichlet_alpha);
    for (size_t i = 0; i < root.children.size(); ++i)
      root.children[i].prior =
          (1 - params.dirichlet_weight) * root.children[i].prior + params.dirichlet_weight * noise[i];
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
    }
    const float sqrt_n = std::sqrt(float(std::max<std::uint32_t>(1, node.visits + node.in_flight)));
    const float parent_q = node.visits ? float(-node.value_sum / node.visits) : 0.0f;
    float visited_policy = 0;
    for (const Node& c : node.children)
      if (c.visits + c.in_flight > 0) visited_policy += c.prior;
    const float fpu = parent_q - params.fpu_reduction * std::sqrt(visited_policy);

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
    return best;
  }

  // value: W - L from the view of the player who moved into the last node of the path.
  void backup(const std::vector<Node*>& p, float value, bool virtual_loss) {
    for (size_t i = p.size(); i-- > 0;) {
      Node& n = *p[i];
      if (i + 1 < p.size() && p[i + 1]->bound != Bound::kNone) update_bound(n);
      n.visits += 1;
      n.value_sum += value;
      if (virtual_loss) n.in_flight -= 1;
      value = -value;
    }
    ++sims_done;
  }

  float leaf_value(const Node& leaf, const EvalResult& eval) {
    return leaf.bound != Bound::kNone ? exact_value(leaf.bound) : -eval.value();
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
        backup(path, exact_value(node->bound), false);
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
        expand(*node, b, recent, result);
        backup(path, leaf_value(*node, result), false);
        return Descent::kDone;
      }
    }
    for (Node* n : path) n->in_flight += 1;
    pending.push_back(Pending{path, b, std::move(recent), cache_key});
    out.push_back(std::move(request));
    return Descent::kQueued;
  }

  bool finished() const { return pending.empty() && sims_done >= params.simulations; }

  void advance_root(chess::Move m) {
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
    apply_root_noise();
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
  if (extends) {
    for (size_t i = old_moves.size(); i < new_moves.size(); ++i) s.advance_root(new_moves[i]);
  } else {
    s.reset_root();
  }
  s.game = game;
  s.rebuild_game_boards();
  s.sims_done = 0;
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
  for (size_t i = 0; i < results.size(); ++i) {
    Pending& p = s.pending[i];
    Node& leaf = *p.path.back();
    if (s.cache) s.cache->insert(p.cache_key, results[i]);
    s.expand(leaf, p.board, p.recent, results[i]);
    s.backup(p.path, s.leaf_value(leaf, results[i]), true);
  }
  s.pending.clear();
}

bool Search::finished() const { return impl_->finished(); }
int Search::simulations_done() const { return impl_->sims_done; }
size_t Search::tree_size() const { return count_nodes(impl_->root); }

RootStats Search::root_stats() const {
  const Impl& s = *impl_;
  RootStats r;
  const Node& root = s.root;
  for (size_t i = 0; i < root.children.size(); ++i) {
    const Node& c = root.children[i];
    r.moves.push_back(c.move);
    r.visits.push_back(c.visits);
    r.priors.push_back(i < s.root_priors.size() ? s.root_priors[i] : c.prior);
    r.q.push_back(c.bound != Bound::kNone ? exact_value(c.bound) : c.visits ? float(c.value_sum / c.visits) : 0.0f);
    r.total_visits += c.visits;
  }
  if (root.bound != Bound::kNone) {
    // The root's bound is for the player who moved into it; report it for the side to move.
    r.bound = root.bound == Bound::kWin ? Bound::kLoss : root.bound == Bound::kLoss ? Bound::kWin : Bound::kDraw;
    r.bound_plies = root.bound_plies - 1;
    r.value = -exact_value(root.bound);
  } else if (root.visits) {
    r.value = float(-root.value_sum / root.visits);
  }
  return r;
}

chess::Move Search::choose_move(float temperature, Rng& rng) const {
  const Node& root = impl_->root;
  if (root.children.empty()) throw std::logic_error("choose_move before any search");
  const Node* pick = nullptr;
  for (const Node& c : root.children)  // the quickest proven win
    if (c.bound == Bound::kWin && (!pick || c.bound_plies < pick->bound_plies)) pick = &c;
  if (pick) return pick->move;
  const bool all_lost = std::all_of(root.children.begin(), root.children.end(),
                                    [](const Node& c) { return c.bound == Bound::kLoss; });
  if (all_lost) {  // resist as long as possible
    for (const Node& c : root.children)
      if (!pick || c.bound_plies > pick->bound_plies) pick = &c;
    return pick->move;
  }
  std::vector<const Node*> open;
  for (const Node& c : root.children)
    if (c.bound != Bound::kLoss) open.push_back(&c);
  auto more_visited = [](const Node* a, const Node* b) {
    if (a->visits != b->visits) return a->visits > b->visits;
    return a->prior > b->prior;
  };
  if (temperature <= 0.01f) return (*std::min_element(open.begin(), open.end(), more_visited))->move;
  std::vector<double> weights;
  double total = 0;
  for (const Node* c : open) {
    weights.push_back(std::pow(double(c->visits), 1.0 / double(temperature)));
    total += weights.back();
  }
  if (!(total > 0)) return (*std::min_element(open.begin(), open.end(), more_visited))->move;
  double x = rng.uniform() * total;
  for (size_t i = 0; i < open.size(); ++i) {
    if (x < weights[i]) return open[i]->move;
    x -= weights[i];
  }
  return open.back()->move;
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
