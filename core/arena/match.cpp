#include "arena/match.h"

#include <algorithm>
#include <optional>
#include <stdexcept>
#include <thread>

#include "arena/uci_engine.h"
#include "chess/game.h"
#include "chess/movegen.h"
#include "chess/notation.h"
#include "common/text.h"
#include "common/random.h"
#include "mcts/rollout_evaluator.h"
#include "mcts/search.h"

namespace pgmate::arena {
namespace {

using Clock = std::chrono::steady_clock;

// A player's side of one game. The runner calls start_move when it is the player's turn,
// then each round gather/deliver (search players) and decide until a move comes back.
class GamePlayer {
 public:
  virtual ~GamePlayer() = default;
  virtual void start_move(const chess::Game& game) = 0;
  virtual int gather(std::vector<mcts::EvalRequest>&) { return 0; }
  virtual void deliver(std::span<const mcts::EvalResult>) {}
  // The move once decided. Throws Forfeit when the player cannot move properly.
  virtual std::optional<chess::Move> decide(const chess::Game& game) = 0;
  // Whether the player gives up (search players with resignation on).
  virtual bool resigns() const { return false; }
};

struct Forfeit : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class RandomPlayer final : public GamePlayer {
 public:
  explicit RandomPlayer(std::uint64_t seed) : rng_(seed) {}
  void start_move(const chess::Game&) override {}
  std::optional<chess::Move> decide(const chess::Game& game) override {
    chess::MoveList list;
    chess::legal_moves(game.board(), list);
    return list.moves[rng_.below(std::uint32_t(list.size))];
  }

 private:
  mcts::Rng rng_;
};

class SearchPlayer final : public GamePlayer {
 public:
  SearchPlayer(const PlayerSpec& spec, const MatchConfig& config, std::uint64_t seed, int opening_plies)
      : spec_(spec), search_(spec.search, seed), rng_(mcts::mix64(seed ^ 0x5bd1e995)), opening_plies_(opening_plies),
        resign_value_(config.resign_value), resign_plies_(config.resign_plies) {}
  void start_move(const chess::Game& game) override { search_.set_game(game); }
  int gather(std::vector<mcts::EvalRequest>& out) override { return queued_ = search_.gather(1, out); }
  void deliver(std::span<const mcts::EvalResult> results) override {
    search_.deliver(results);
    queued_ = 0;
  }
  std::optional<chess::Move> decide(const chess::Game& game) override {
    if (queued_ || !search_.finished()) return std::nullopt;
    const int ply = int(game.moves().size()) - opening_plies_;
    const float temperature = ply < spec_.temperature_plies ? spec_.temperature : 0.0f;
    const mcts::RootStats root = search_.root_stats();
    losing_moves_ = resign_value_ > 0 && root.value <= -resign_value_ ? losing_moves_ + 1 : 0;
    return search_.choose_move(temperature, rng_);
  }
  bool resigns() const override { return resign_value_ > 0 && losing_moves_ >= resign_plies_; }

 private:
  const PlayerSpec& spec_;
  mcts::Search search_;
  mcts::Rng rng_;
  int opening_plies_;
  float resign_value_;
  int resign_plies_;
  int queued_ = 0;
  int losing_moves_ = 0;
};

class UciPlayer final : public GamePlayer {
 public:
  UciPlayer(UciEngine& engine, const PlayerSpec& spec, std::chrono::milliseconds deadline)
      : engine_(engine), spec_(spec), deadline_(deadline) {}
  void start_move(const chess::Game& game) override {
    try {
      if (!started_) {
        engine_.new_game();
        started_ = true;
      }
      engine_.go(game.start(), game.moves(), spec_.limits);
    } catch (const UciError& e) {
      throw Forfeit(e.what());
    }
    asked_ = Clock::now();
  }
  std::optional<chess::Move> decide(const chess::Game& game) override {
    std::optional<std::string> text;
    try {
      text = engine_.poll_bestmove();
    } catch (const UciError& e) {
      throw Forfeit(e.what());
    }
    if (!text) {
      if (Clock::now() - asked_ > deadline_)
        throw Forfeit("UCI engine " + engine_.name() + " gave no move within " + std::to_string(deadline_.count()) +
                      " ms");
      return std::nullopt;
    }
    try {
      return chess::parse_uci(game.board(), *text);
    } catch (const std::exception&) {
      throw Forfeit("UCI engine " + engine_.name() + " played an illegal move " + quote_input(*text, 16) + " in " +
                    chess::to_fen(game.board()));
    }
  }

 private:
  UciEngine& engine_;
  const PlayerSpec& spec_;
  std::chrono::milliseconds deadline_;
  Clock::time_point asked_;
  bool started_ = false;
};

std::string result_of(const chess::Game& game, chess::GameStatus status) {
  if (status != chess::GameStatus::kCheckmate) return "1/2-1/2";
  return game.board().side == chess::kWhite ? "0-1" : "1-0";  // the side to move is mated
}

}  // namespace

struct MatchRunner::Impl {
  MatchConfig config;
  PlayerSpec specs[2];  // A, B
  std::vector<Opening> openings;
  mcts::Evaluator* evaluators[2] = {nullptr, nullptr};
  std::unique_ptr<mcts::RolloutEvaluator> rollouts[2];
  // UCI engines: one per game slot and UCI side, started once and kept for the match
  // (ucinewgame between games), so a slow-starting engine pays its start-up once.
  std::vector<std::unique_ptr<UciEngine>> engines[2];

  std::unique_ptr<UciEngine> start_engine(int p) const {
    return std::make_unique<UciEngine>(specs[p].command, specs[p].uci_options, config.uci_start_timeout,
                                       config.interrupt_check);
  }
  // Every engine is asked to quit first, so that they stop in parallel: one second of grace
  // in all, not one per engine.
  ~Impl() {
    for (auto& side : engines)
      for (auto& engine : side)
        if (engine) engine->request_quit();
  }

  struct Slot {
    MatchGame record;
    chess::Game game{chess::Board{}};
    std::unique_ptr<GamePlayer> players[2];  // A, B
    int engine_slot = 0;
    bool thinking = false;  // start_move was called for the side to move
    int queued = 0;
    Clock::time_point started;
    int side_of(bool a) const { return a ? 0 : 1; }
    // 0 (A) or 1 (B): who is to move.
    int mover() const { return (game.board().side == chess::kWhite) == record.a_white ? 0 : 1; }
  };
};

MatchRunner::MatchRunner(MatchConfig config, PlayerSpec a, PlayerSpec b, std::vector<Opening> openings,
                         EvaluatorFor evaluator_for)
    : impl_(std::make_unique<Impl>()) {
  if (openings.empty()) throw std::invalid_argument("a match needs at least one opening");
  if (config.parallel < 1) throw std::invalid_argument("parallel must be at least 1");
  impl_->config = config;
  impl_->specs[0] = std::move(a);
  impl_->specs[1] = std::move(b);
  impl_->openings = std::move(openings);
  for (int p = 0; p < 2; ++p) {
    const PlayerSpec& spec = impl_->specs[p];
    if (spec.type == PlayerType::kNetwork) {
      if (!evaluator_for) throw std::invalid_argument("a net player needs a network evaluator (pgmate-worker)");
      impl_->evaluators[p] = &evaluator_for(spec);
    } else if (spec.type == PlayerType::kMcts) {
      impl_->rollouts[p] = std::make_unique<mcts::RolloutEvaluator>(mcts::mix64(config.seed ^ (0x9e37u + p)));
      impl_->evaluators[p] = impl_->rollouts[p].get();
    } else if (spec.type == PlayerType::kUci) {
      impl_->engines[p].push_back(impl_->start_engine(p));
    }
  }
}

MatchRunner::~MatchRunner() = default;

void MatchRunner::run(const std::vector<std::int64_t>& indexes, const std::function<void(MatchGame&)>& on_game,
                      const std::function<void(const MatchStats&)>& on_round) {
  Impl& m = *impl_;
  stats_ = MatchStats{};
  const auto begun = Clock::now();
  using Slot = Impl::Slot;

  // Engines for the slots in use, started before any game (a program that does not exist
  // fails the match here, not as forfeits).
  const int slots_needed = int(std::min<std::size_t>(std::size_t(m.config.parallel), indexes.size()));
  for (int p = 0; p < 2; ++p) {
    if (m.specs[p].type != PlayerType::kUci) continue;
    while (int(m.engines[p].size()) < slots_needed) m.engines[p].push_back(m.start_engine(p));
  }

  std::size_t next = 0;
  std::vector<int> free_engine_slots;
  for (int i = slots_needed - 1; i >= 0; --i) free_engine_slots.push_back(i);
  auto start_game = [&]() -> std::unique_ptr<Slot> {
    if (next >= indexes.size()) return nullptr;
    const std::int64_t index = indexes[next++];
    auto s = std::make_unique<Slot>();
    s->record.index = index;
    s->record.pair = index / 2;
    s->record.a_white = index % 2 == 0;
    const Opening& opening = m.openings[std::size_t(s->record.pair) % m.openings.size()];
    s->record.opening = opening.name;
    s->record.start = opening.start;
    s->record.opening_plies = int(opening.moves.size());
    s->game = chess::Game(opening.start);
    for (const chess::Move mv : opening.moves) s->game.play(mv);
    s->engine_slot = free_engine_slots.back();
    free_engine_slots.pop_back();
    const std::uint64_t seed = mcts::mix64(m.config.seed ^ mcts::mix64(std::uint64_t(index)));
    for (int p = 0; p < 2; ++p) {
      const PlayerSpec& spec = m.specs[p];
      const std::uint64_t player_seed = mcts::mix64(seed + std::uint64_t(p) + 1);
      switch (spec.type) {
        case PlayerType::kRandom: s->players[p] = std::make_unique<RandomPlayer>(player_seed); break;
        case PlayerType::kMcts:
        case PlayerType::kNetwork:
          s->players[p] = std::make_unique<SearchPlayer>(spec, m.config, player_seed, s->record.opening_plies);
          break;
        case PlayerType::kUci: {
          const auto deadline = m.config.uci_move_deadline.count() ? m.config.uci_move_deadline
                                                                    : UciEngine::move_deadline(spec.limits);
          s->players[p] = std::make_unique<UciPlayer>(*m.engines[p][std::size_t(s->engine_slot)], spec, deadline);
          break;
        }
      }
    }
    s->started = Clock::now();
    return s;
  };

  // Records a finished game and hands it over.
  auto record = [&](Slot& s, std::string result, std::string termination) {
    s.record.moves = s.game.moves();
    s.record.result = std::move(result);
    s.record.termination = std::move(termination);
    s.record.seconds = std::chrono::duration<double>(Clock::now() - s.started).count();
    ++stats_.games_done;
    const double score = s.record.a_score();
    if (score == 1.0) ++stats_.a_wins;
    else if (score == 0.0) ++stats_.a_losses;
    else ++stats_.draws;
    free_engine_slots.push_back(s.engine_slot);
    on_game(s.record);
  };
  std::vector<std::unique_ptr<Slot>> slots(static_cast<std::size_t>(slots_needed));
  // Puts the next game in slot i, or removes the slot when no game is left (then false). A
  // game whose opening already ended it (a mate in the line: two of the ECO lines end so)
  // is over at once, and the next one takes its place: no player is asked to move in it.
  auto refill = [&](std::size_t i) {
    for (;;) {
      std::unique_ptr<Slot> fresh = start_game();
      if (!fresh) {
        slots.erase(slots.begin() + std::ptrdiff_t(i));
        return false;
      }
      slots[i] = std::move(fresh);
      const chess::GameStatus status = slots[i]->game.status();
      if (status == chess::GameStatus::kOngoing) return true;
      record(*slots[i], result_of(slots[i]->game, status), std::string(chess::status_name(status)));
    }
  };
  for (std::size_t i = 0; i < slots.size();)
    if (refill(i)) ++i;

  // Ends a game: records it, hands it over, and puts the next game in its place.
  auto finish = [&](std::size_t i, std::string result, std::string termination) {
    record(*slots[i], std::move(result), std::move(termination));
    return refill(i);
  };
  // The mover loses: its side's loss as a result string.
  auto loss_for_mover = [](const Slot& s) { return s.game.board().side == chess::kWhite ? "0-1" : "1-0"; };

  std::vector<mcts::EvalRequest> requests;
  std::vector<mcts::EvalResult> results;
  while (!slots.empty()) {
    bool progressed = false;
    // Each player to move starts thinking; search players hand out leaves.
    for (int p = 0; p < 2; ++p) {
      if (!m.evaluators[p]) continue;
      requests.clear();
      for (auto& slot : slots) {
        slot->queued = 0;
        if (slot->mover() != p) continue;
        if (!slot->thinking) {
          slot->players[p]->start_move(slot->game);
          slot->thinking = true;
        }
        slot->queued = slot->players[p]->gather(requests);
      }
      if (requests.empty()) continue;
      results.assign(requests.size(), mcts::EvalResult{});
      m.evaluators[p]->evaluate(requests, results);
      stats_.evaluations += std::int64_t(requests.size());
      ++stats_.batches;
      std::size_t offset = 0;
      for (auto& slot : slots) {
        if (slot->mover() != p || slot->queued == 0) continue;
        slot->players[p]->deliver(std::span<const mcts::EvalResult>(results).subspan(offset, std::size_t(slot->queued)));
        offset += std::size_t(slot->queued);
      }
      progressed = true;
    }
    // Moves that are ready are played; finished games make room for new ones.
    for (std::size_t i = 0; i < slots.size();) {
      Slot& s = *slots[i];
      const int p = s.mover();
      GamePlayer& player = *s.players[p];
      std::optional<chess::Move> move;
      try {
        if (!s.thinking) {
          player.start_move(s.game);
          s.thinking = true;
        }
        move = player.decide(s.game);
      } catch (const Forfeit& e) {
        progressed = true;
        // The engine that failed is not trusted with another game.
        auto& engine = m.engines[p][std::size_t(s.engine_slot)];
        engine.reset();
        engine = m.start_engine(p);
        if (finish(i, loss_for_mover(s), std::string("forfeit: ") + e.what())) ++i;
        continue;
      }
      if (!move) {
        ++i;
        continue;
      }
      progressed = true;
      if (player.resigns()) {
        if (finish(i, loss_for_mover(s), "resignation")) ++i;
        continue;
      }
      s.game.play(*move);
      s.thinking = false;
      ++stats_.plies;
      const chess::GameStatus status = s.game.status();
      if (status != chess::GameStatus::kOngoing) {
        if (finish(i, result_of(s.game, status), std::string(chess::status_name(status)))) ++i;
      } else if (int(s.game.moves().size()) >= m.config.max_plies) {
        if (finish(i, "1/2-1/2", "max_plies")) ++i;
      } else {
        ++i;
      }
    }
    stats_.seconds = std::chrono::duration<double>(Clock::now() - begun).count();
    if (on_round) on_round(stats_);
    // Only engines in other processes are thinking: wait for them without spinning.
    if (!progressed) std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  stats_.seconds = std::chrono::duration<double>(Clock::now() - begun).count();
}

}  // namespace pgmate::arena
