#include "analysis/network_analyser.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <memory>
#include <optional>
#include <stdexcept>

#include "arena/player_spec.h"
#include "chess/game.h"
#include "common/random.h"

namespace pgmate::analysis {

Score score_of_value(float value) {
  const double v = std::clamp(double(value), -0.999999, 0.999999);
  const double cp = std::log((1 + v) / (1 - v)) / 0.00368208;
  return Score{false, int(std::lround(std::clamp(cp, -1000.0, 1000.0)))};
}

NetworkAnalyser::NetworkAnalyser(mcts::Evaluator& evaluator, NetworkAnalyserConfig config)
    : evaluator_(evaluator), config_(std::move(config)) {
  config_.search.root_noise = false;
  config_.parallel = std::max(1, config_.parallel);
  config_.leaves_per_search = std::max(1, config_.leaves_per_search);
}

std::string network_engine_name(std::int64_t network, std::string_view weights_sha256_hex) {
  return "pgmate network " + std::to_string(network) + " (" + std::string(weights_sha256_hex.substr(0, 16)) + ")";
}

std::string network_limits_text(const arena::PlayerSpec& spec) {
  // display_name: "net:ID:S" and the settings that differ from the defaults, ":k=v,...".
  const std::string name = arena::display_name(spec);
  const std::string prefix = "net:" + std::to_string(spec.network) + ":" + std::to_string(spec.search.simulations);
  std::string out = "simulations=" + std::to_string(spec.search.simulations);
  if (name.size() > prefix.size() + 1) out += "," + name.substr(prefix.size() + 1);
  return out;
}

namespace {

// The search's answer as an evaluation: its WDL, a score, its move.
PositionEval eval_of(const mcts::Search& search, mcts::Rng& rng) {
  const mcts::RootStats stats = search.root_stats();
  PositionEval e;
  PvLine line;
  if (stats.bound == mcts::Bound::kWin) {
    line.score = Score{true, (stats.bound_plies + 1) / 2};
    e.wdl = Wdl{1000, 0, 0};
  } else if (stats.bound == mcts::Bound::kLoss) {
    line.score = Score{true, -(stats.bound_plies / 2)};
    e.wdl = Wdl{0, 0, 1000};
  } else {
    line.score = stats.bound == mcts::Bound::kDraw ? Score{false, 0} : score_of_value(stats.value);
    const mcts::SearchWdl w = mcts::search_wdl(stats.value, stats.draw);
    e.wdl.draw = int(std::lround(1000 * w.draw));
    e.wdl.win = std::min(1000 - e.wdl.draw, int(std::lround(1000 * w.win)));
    e.wdl.loss = 1000 - e.wdl.draw - e.wdl.win;
  }
  e.wdl_from_engine = true;  // the network's own estimate, not the score model's
  e.best = search.choose_move(0, rng);
  line.pv = {e.best};
  // Nodes: the simulations run (the root's own evaluation the first).
  line.nodes = search.simulations_done();
  e.nodes = line.nodes;
  e.lines.push_back(std::move(line));
  return e;
}

}  // namespace

void NetworkAnalyser::run(const std::vector<chess::Board>& positions, const Done& done,
                          const std::function<void()>& tick) {
  struct Active {
    std::size_t index;
    std::unique_ptr<chess::Game> game;
    mcts::Search search;
    int handed = 0;  // leaves of this round
  };
  std::deque<std::size_t> queue;
  for (std::size_t i = 0; i < positions.size(); ++i) {
    if (auto e = terminal_eval(positions[i]))
      done(i, std::move(*e));
    else
      queue.push_back(i);
  }
  mcts::Rng rng(config_.seed);
  std::vector<std::unique_ptr<Active>> active;
  std::vector<mcts::EvalRequest> requests;
  std::vector<mcts::EvalResult> results;
  while (!queue.empty() || !active.empty()) {
    while (active.size() < std::size_t(config_.parallel) && !queue.empty()) {
      const std::size_t i = queue.front();
      queue.pop_front();
      auto a = std::make_unique<Active>(Active{i, std::make_unique<chess::Game>(positions[i]),
                                               mcts::Search(config_.search, mcts::mix64(config_.seed ^ i)), 0});
      a->search.set_game(*a->game);
      active.push_back(std::move(a));
    }
    requests.clear();
    for (auto& a : active) {
      const std::size_t before = requests.size();
      a->search.gather(config_.leaves_per_search, requests);
      a->handed = int(requests.size() - before);
    }
    if (!requests.empty()) {
      results.assign(requests.size(), mcts::EvalResult{});
      evaluator_.evaluate(requests, results);
      evaluations_ += std::int64_t(requests.size());
      std::size_t at = 0;
      for (auto& a : active) {
        if (!a->handed) continue;
        a->search.deliver(std::span<const mcts::EvalResult>(results).subspan(at, std::size_t(a->handed)));
        at += std::size_t(a->handed);
      }
    }
    // Finished searches give their answer and make room.
    std::size_t finished = 0;
    for (auto& a : active) {
      if (!a->search.finished()) continue;
      done(a->index, eval_of(a->search, rng));
      a.reset();
      ++finished;
    }
    if (requests.empty() && !finished)
      throw std::logic_error("network analysis: searches that neither ask for leaves nor finish");
    active.erase(std::remove(active.begin(), active.end(), nullptr), active.end());
    if (tick) tick();
  }
}

}  // namespace pgmate::analysis
