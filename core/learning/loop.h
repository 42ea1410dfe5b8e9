// The learning loop's body (CALL pgmate.learn, and so pgmate learn): a run found or begun,
// held, and each iteration's self-play, training, arena round and decision. Every step is a
// call of LearningStore, whose one implementation is the extension's (SPI: its statements,
// CALLs of pgmate.selfplay, pgmate.train and pgmate.arena, and commits); what is decided
// between the steps (names, seeds, option objects, step counts, the gate, escalation, the
// run's next state) is here, typed, read once from the settings.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "learning/settings.h"

namespace pgmate::learning {

// A row of pgmate.learning_runs.
struct RunState {
  std::int64_t id = 0;
  std::string owner;  // the role, as regrole prints it
  JsonObject settings;
  std::int64_t start_network = 0, best_network = 0, current_network = 0;
  int iterations = 0, veto_level = 0;
  double pretrain_mix = 0, lr = 0, current_share = 0;
};

// A run's settings as the loop reads them, typed and read once per iteration from the
// checked settings. `json` keeps them as stored, for the values the loop passes on to
// self-play, training and the arena unchanged (1.0 stays 1.0).
struct LoopSettings {
  JsonObject json;
  std::int64_t seed = 0;
  int games = 0, simulations = 0, parallel = 0, max_plies = 0, batch = 0, sample_one_in = 1;
  std::optional<int> steps;  // fixed steps, else from samples_per_position
  double samples_per_position = 0, lr = 0, pretrain_mix = 0, kl_weight = 0, kl_warning = 0, kl_arena = 0;
  std::string kl_reference, optimizer_state, arena_search, openings;
  int arena_interval = 1, arena_games = 0, veto_games = 0, sanity_games = 0, sanity_interval = 1;
  bool has_pretrain_data = false, has_holdout = false, has_promotion_sprt = false;
};
// Throws std::out_of_range when checked settings lack one (they never do).
LoopSettings loop_settings(const JsonObject& settings);

// Who calls: the roles as regrole prints them (login empty: none) and current_user's name.
struct CallerRoles {
  std::string login, acting, current_user;
};

// The last logged row of a training run (pgmate.training_progress): nullopt where NULL.
struct TrainingLog {
  std::optional<double> policy_loss, value_loss, kl, holdout_top1;
};

// One match of an arena round (pgmate.arena's arguments and options).
struct MatchRequest {
  std::string name;
  JsonValue candidate, opponent;  // player specs
  int games = 0;
  std::int64_t seed = 0;
  int max_plies = 0, parallel = 0;
  std::string openings;
  JsonObject extra;  // more options of pgmate.arena (the promotion match's SPRT)
};

// A row of pgmate.learning_iterations.
struct IterationRow {
  std::int64_t run_id = 0;
  int iteration = 0;
  std::int64_t best_network = 0, candidate = 0, training_run = 0;
  int games = 0;
  std::int64_t positions = 0;
  std::optional<std::int64_t> window_positions;
  std::int64_t pretrain_positions = 0;
  TrainingLog log;
  std::optional<JsonObject> arena;  // nullopt: no arena round
  std::string decision, reason;
  int veto_level = 0;
  double pretrain_mix = 0, lr = 0;
  int excluded_games = 0;
  double selfplay_seconds = 0, training_seconds = 0;
  std::optional<double> arena_seconds;
};

// What the loop needs of the database. Each call is one statement or one CALL; only
// commit() ends a transaction (a CALL may commit inside).
class LearningStore {
 public:
  virtual ~LearningStore() = default;

  // --- the run
  virtual std::optional<RunState> own_run(const std::string& name) = 0;  // the caller's run of that name
  virtual std::string other_owners(const std::string& name) = 0;        // roles with a run of that name, "" none
  virtual CallerRoles caller_roles() = 0;
  virtual SettingsContext settings_context() = 0;
  virtual std::string worker_device() = 0;  // "cpu" without a worker
  virtual bool network_exists(std::int64_t network) = 0;
  virtual std::int64_t init_network(const std::string& name, const std::string& preset, std::int64_t seed) = 0;
  virtual RunState insert_run(const std::string& name, const JsonObject& settings, std::int64_t network) = 0;
  virtual RunState reload(std::int64_t run) = 0;
  // Holds the run for this statement (false: another session works on it).
  virtual bool lease(std::int64_t run) = 0;
  virtual void release(std::int64_t run) = 0;
  virtual void commit() = 0;
  virtual void notice(const std::string& message) = 0;
  virtual void warning(const std::string& message) = 0;

  // --- self-play
  virtual std::vector<int> stored_game_indices(std::int64_t run, int iteration) = 0;
  virtual void selfplay(int games, int simulations, std::int64_t network, int parallel, const JsonObject& options) = 0;

  // --- training
  // The newest finished training of `network` on `data_query` by `owner`: its network and run.
  virtual std::optional<std::pair<std::int64_t, std::int64_t>> finished_training(std::int64_t network,
                                                                                 const std::string& data_query,
                                                                                 const std::string& owner) = 0;
  virtual std::int64_t new_full_search_positions(std::int64_t run, int iteration) = 0;
  // The training run of iteration `iteration` when it made `candidate` and was not vetoed.
  virtual std::optional<std::int64_t> carried_training(std::int64_t run, int iteration, std::int64_t candidate) = 0;
  // CALL pgmate.train under the caller's search path (its queries are the owner's): the new network.
  virtual std::int64_t train(std::int64_t network, const std::string& data_query, int steps,
                             const JsonObject& options) = 0;
  virtual std::int64_t training_run_of(std::int64_t network, const std::string& owner) = 0;
  virtual TrainingLog last_log(std::int64_t training_run) = 0;

  // --- arena
  // The caller's finished match of that name, else pgmate.arena plays (or resumes) it: its
  // result from the candidate's side (match, match_id, opponent, games, wins, draws, losses,
  // score, elo, elo_lower, elo_upper, los, sprt; NULLs left out).
  virtual JsonObject match(const MatchRequest& request) = 0;
  // An earlier best of the run, neither `best` nor `start`, drawn by a hash of `draw`.
  virtual std::optional<std::int64_t> older_best(std::int64_t run, std::int64_t best, std::int64_t start,
                                                 std::int64_t draw) = 0;

  // --- the iteration's end
  struct PlayedGames {
    int games = 0;
    std::int64_t plies = 0;
  };
  virtual PlayedGames played_games(std::int64_t run, int iteration) = 0;
  virtual std::optional<std::int64_t> training_samples(std::int64_t training_run) = 0;
  // pgmate.learning_data's pretraining rows (under the caller's search path).
  virtual std::int64_t pretrain_rows(std::int64_t run, int iteration) = 0;
  // Excludes the newest `share` of the games of the iteration's window: how many.
  virtual int exclude_newest(std::int64_t run, int iteration, double share) = 0;
  // The run's new state and the iteration's row (one transaction with the commit after).
  virtual void finish_iteration(const RunState& run, const IterationRow& row) = 0;
};

// A refusal of the loop itself (bad options are OptionError, 22023).
class LearnError : public std::runtime_error {
 public:
  enum class Kind { InvalidParameter, InsufficientPrivilege, LockNotAvailable };
  LearnError(Kind kind, const std::string& message, std::string hint = "")
      : std::runtime_error(message), kind_(kind), hint_(std::move(hint)) {}
  Kind kind() const { return kind_; }
  const std::string& hint() const { return hint_; }

 private:
  Kind kind_;
  std::string hint_;
};

// CALL pgmate.learn(run, iterations, options): the options as given (type and text for
// messages, members when an object).
struct LearnCall {
  std::optional<std::string> run;
  std::optional<int> iterations;
  JsonType options_type = JsonType::Object;
  std::string options_json = "{}";
  JsonObject options;
};
void learn(LearningStore& store, const LearnCall& call);

// Contiguous ranges of the game indices 0 .. games-1 not in `stored`, split where the best
// network's share ends (indices below best_games are the best network's).
struct GameRange {
  int first = 0, games = 0;
  bool by_best = false;
};
std::vector<GameRange> missing_game_ranges(int games, int best_games, std::vector<int> stored);

// Training steps that draw each new position about samples_per_position times while it is
// in the window (KataGo's fixed ratio of samples to new data), or the run's fixed steps.
int training_steps(const LoopSettings& settings, std::int64_t new_positions, double pretrain_mix);

}  // namespace pgmate::learning
