// Many self-play games at once, one evaluator for all of them (the lc0/KataGo pattern):
// each round takes leaves from every game in progress, evaluates them in one batch and
// hands the results back, so the evaluator sees batches of about `parallel` positions
// (times leaves_per_game). Single-threaded and deterministic for a given seed and a
// deterministic evaluator.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "chess/board.h"
#include "mcts/search.h"

namespace pgmate::mcts {

// The evaluation cache size that self-play needs: 2 x (games in progress) x simulations.
// With root noise every move's search starts from a fresh root and finds the positions the
// previous search evaluated in the cache; with parallel games sharing a cache that evicts
// its oldest entries first, the cache must hold about two moves' worth of every game in
// progress. Capped at 2^32 entries (the cache_entries option's bound).
constexpr std::size_t automatic_cache_entries(int parallel, int games, int simulations) {
  const std::size_t in_progress = std::size_t(std::max(1, std::min(parallel, games)));
  const std::size_t entries = 2 * in_progress * std::size_t(std::max(simulations, 1));
  return std::min(entries, std::size_t(1) << 32);
}

struct SelfPlayConfig {
  // Root noise on, so no tree reuse and no FPU reduction at the root (see SearchParams).
  // With search.root_search = RootSearch::kGumbel the noise is the Gumbel samples, and the
  // move played is the search's own choice: the temperatures below are then ignored.
  SearchParams search{.simulations = 100, .fpu_reduction_root = 0.0f, .root_noise = true};
  int games = 1;                   // games to play
  int parallel = 8;                // games in progress at once
  // Leaves per game per evaluation round. Above 1 the game's search hands out several
  // leaves before any is evaluated, spreading them with virtual loss (a leaf in flight
  // counts as a loss on its path). That fills batches with fewer games in progress, but
  // it widens the search: the visit counts, the policy target, get flatter as it grows
  // (400 simulations from the start position: 67, 56, 48 of 399 visits on the top move at
  // 1, 8, 32 leaves). Prefer 1 and more games through `parallel`; if raised for
  // throughput, keep it small next to the simulations.
  int leaves_per_game = 1;
  float temperature = 1.0f;        // move choice temperature for the first temperature_plies
  int temperature_plies = 30;
  float final_temperature = 0.1f;  // ... and after
  int max_plies = 512;             // longer games end as draws ("max_plies")
  std::uint64_t seed = 0;          // game i uses mix64(seed + i)
  std::int64_t first_game = 0;     // index of the first game (a restarted run goes on)
  // Playout cap randomization (KataGo): each move's search is a full one
  // (search.simulations) with probability full_search_fraction, drawn from a random stream
  // of the game's own (none is drawn at 1, so the games are those of a run without it), and
  // a cheap one of cheap_simulations otherwise. Every position is stored, the cheap ones
  // flagged (PlyRecord::full_search) for the trainer to leave out of the policy loss, as
  // KataGo does. KataGo also turns the root noise off in cheap searches; here it stays on
  // (the move played then explores as in a full search). 0 in cheap_simulations (the
  // default) stands for max(1, search.simulations / 4), which set_option keeps as a number
  // in step with simulations until cheap_simulations is given (see cheap_simulations_of).
  float full_search_fraction = 1.0f;
  int cheap_simulations = 0;
  // Entries of the evaluation cache the run's games share (used only with a deterministic
  // evaluator); 0: no cache. kAutomaticCacheEntries, the default, takes
  // automatic_cache_entries(parallel, games, simulations) when the run starts (see
  // cache_entries_of). set_option keeps a concrete value there instead, in step with
  // parallel, games and simulations, until cache_entries itself is given (an explicit
  // size, which then stays).
  static constexpr std::size_t kAutomaticCacheEntries = ~std::size_t(0);
  std::size_t cache_entries = kAutomaticCacheEntries;
  // Options set through set_option: (name, spelling as given), so none is set twice.
  std::vector<std::pair<std::string, std::string>> options_given;
};

// Sets one option by name, as the CLI flags and the procedure's options jsonb spell them:
// simulations, c_puct, fpu_reduction, fpu_reduction_root, noise (true/false),
// dirichlet_alpha, dirichlet_weight, parallel, leaves_per_game, temperature,
// temperature_plies, final_temperature, max_plies, seed, cache_entries, search (puct or
// gumbel), gumbel_considered, c_visit, c_scale, q_normalise (SearchParams' gumbel_c_visit,
// gumbel_c_scale and gumbel_q_normalise: bounds or minmax), first_game, full_search_fraction, cheap_simulations ('-' may stand for
// '_': max-plies). Throws std::invalid_argument naming the option and the value, or naming
// both spellings when the option was already set on this config (max_plies and max-plies
// in one call): an option is given once, so no value silently wins over another.
// Options not given follow those given: fpu_reduction_root is 0 with noise and
// fpu_reduction without it; cache_entries is automatic_cache_entries(parallel, games,
// simulations); cheap_simulations is max(1, simulations / 4); c_scale is
// default_c_scale(q_normalise).
void set_option(SelfPlayConfig& config, std::string_view name, std::string_view value);
// The simulations of a cheap search (resolves cheap_simulations' 0).
int cheap_simulations_of(const SelfPlayConfig& config);
// The cache size a run with this configuration uses (resolves kAutomaticCacheEntries).
std::size_t cache_entries_of(const SelfPlayConfig& config);
// The search parameters as a JSON object (stored with every game).
std::string config_json(const SelfPlayConfig& config);

// The most memory a run with this configuration takes, roughly: the search trees of the
// games in progress (each simulation expands one node of about 40 children; the subtree
// kept from the last move may double that) and a full evaluation cache. A process that
// runs self-play beside other work (a PostgreSQL backend) refuses configurations above
// its budget before anything is built.
std::size_t estimated_memory_bytes(const SelfPlayConfig& config);

// One position of a finished game: the training target.
struct PlyRecord {
  chess::Board board;
  std::vector<chess::Move> moves;     // root moves, generation order
  std::vector<std::uint32_t> visits;  // per move
  std::vector<float> priors;          // evaluator priors (before noise)
  float value = 0;                    // root value W - L, side to move
  chess::Move played;
  std::vector<float> policy;          // the policy target per move (RootStats::policy)
  int repetitions = 0;                // earlier occurrences of the board in the game (a network input)
  // Searched with the full simulations; false for a cheap search (playout cap
  // randomization), whose policy target is weak.
  bool full_search = true;
  float draw = 0;                     // the search's draw probability at the root (RootStats::draw)
};

struct FinishedGame {
  std::int64_t index = 0;              // config.first_game + i
  std::uint64_t seed = 0;
  chess::Board start;
  std::vector<chess::Move> moves;
  std::string result;                  // "1-0", "0-1", "1/2-1/2"
  std::string termination;             // chess::status_name() of the final position
                                       // ("checkmate", "fifty_moves", ...) or "max_plies"
  std::vector<PlyRecord> plies;
  double seconds = 0;
};

struct SelfPlayStats {
  std::int64_t games_done = 0;
  std::int64_t white_wins = 0, draws = 0, black_wins = 0;
  std::int64_t plies = 0;              // moves played
  std::int64_t evaluations = 0;        // positions sent to the evaluator
  std::int64_t cache_hits = 0;
  std::int64_t batches = 0;            // evaluator calls
  double seconds = 0;
  double mean_batch() const { return batches ? double(evaluations) / double(batches) : 0; }
  double positions_per_second() const { return seconds > 0 ? double(evaluations) / seconds : 0; }
};

// The games.selfplay jsonb of a finished game: the search parameters, plus evaluator,
// run name, game index, game seed and seconds taken. Without the seconds the text depends
// only on the run's settings and the game's seed (a PGN file that the same command
// writes the same way twice).
enum class GameSeconds { kInclude, kOmit };
std::string game_parameters_json(const SelfPlayConfig& config, const FinishedGame& game,
                                 std::string_view evaluator, std::string_view run,
                                 GameSeconds seconds = GameSeconds::kInclude);

class SelfPlayRunner {
 public:
  SelfPlayRunner(const SelfPlayConfig& config, Evaluator& evaluator);

  // Plays config.games games. on_game receives each finished game (to store it); on_round
  // runs after every evaluation round (progress, cancellation). Either may throw to stop:
  // games not yet handed to on_game are dropped.
  void run(const std::function<void(FinishedGame&)>& on_game,
           const std::function<void(const SelfPlayStats&)>& on_round = {});
  const SelfPlayStats& stats() const { return stats_; }

 private:
  SelfPlayConfig config_;
  Evaluator& evaluator_;
  SelfPlayStats stats_;
};

}  // namespace pgmate::mcts
