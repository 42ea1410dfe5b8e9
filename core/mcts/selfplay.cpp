#include "mcts/selfplay.h"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>

#include "chess/fen.h"
#include "chess/game.h"
#include "common/json.h"
#include "common/text.h"

namespace pgmate::mcts {

namespace {

[[noreturn]] void bad_value(std::string_view name, std::string_view value, std::string_view expected) {
  throw std::invalid_argument("option " + std::string(name) + ": " + quote_input(value, 40) + " is not " +
                              std::string(expected));
}

template <class T>
T parse_number(std::string_view name, std::string_view value, T low, T high, std::string_view expected) {
  T out{};
  const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), out);
  if (ec != std::errc() || end != value.data() + value.size() || !(out >= low) || !(out <= high))
    bad_value(name, value, expected);
  return out;
}

bool parse_bool(std::string_view name, std::string_view value) {
  if (value == "true" || value == "on" || value == "1" || value == "yes") return true;
  if (value == "false" || value == "off" || value == "0" || value == "no") return false;
  bad_value(name, value, "true or false");
}

std::string number(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", x);
  return buf;
}

}  // namespace

void set_option(SelfPlayConfig& c, std::string_view raw_name, std::string_view value) {
  std::string name(raw_name);
  for (char& ch : name)
    if (ch == '-') ch = '_';
  for (const auto& [given, spelling] : c.options_given)
    if (given == name)
      throw std::invalid_argument("option " + name + " is given twice" +
                                  (spelling == raw_name ? std::string()
                                                        : ", as " + quote_input(spelling, 40) + " and " +
                                                              quote_input(raw_name, 40)));
  constexpr int kMaxInt = 1 << 30;
  if (name == "simulations")
    c.search.simulations = parse_number<int>(name, value, 1, 1000000, "an integer from 1 to 1000000");
  else if (name == "c_puct")
    c.search.c_puct = parse_number<float>(name, value, 1e-6f, 1000.0f, "a number above 0");
  else if (name == "fpu_reduction")
    c.search.fpu_reduction = parse_number<float>(name, value, 0.0f, 10.0f, "a number from 0 to 10");
  else if (name == "fpu_reduction_root")
    c.search.fpu_reduction_root = parse_number<float>(name, value, 0.0f, 10.0f, "a number from 0 to 10");
  else if (name == "noise")
    c.search.root_noise = parse_bool(name, value);
  else if (name == "dirichlet_alpha")
    c.search.dirichlet_alpha = parse_number<float>(name, value, 1e-4f, 100.0f, "a number above 0");
  else if (name == "dirichlet_weight")
    c.search.dirichlet_weight = parse_number<float>(name, value, 0.0f, 1.0f, "a number from 0 to 1");
  else if (name == "games")
    c.games = parse_number<int>(name, value, 0, kMaxInt, "a non-negative integer");
  else if (name == "parallel")
    c.parallel = parse_number<int>(name, value, 1, 100000, "an integer from 1 to 100000");
  else if (name == "leaves_per_game")
    c.leaves_per_game = parse_number<int>(name, value, 1, 1024, "an integer from 1 to 1024");
  else if (name == "temperature")
    c.temperature = parse_number<float>(name, value, 0.0f, 100.0f, "a number from 0 to 100");
  else if (name == "temperature_plies")
    c.temperature_plies = parse_number<int>(name, value, 0, kMaxInt, "a non-negative integer");
  else if (name == "final_temperature")
    c.final_temperature = parse_number<float>(name, value, 0.0f, 100.0f, "a number from 0 to 100");
  else if (name == "max_plies")
    c.max_plies = parse_number<int>(name, value, 1, 100000, "an integer from 1 to 100000");
  else if (name == "seed")
    c.seed = parse_number<std::uint64_t>(name, value, 0, ~std::uint64_t(0), "an unsigned 64-bit integer");
  else if (name == "cache_entries")
    c.cache_entries = parse_number<std::size_t>(name, value, 0, std::size_t(1) << 32, "a non-negative integer");
  else if (name == "search") {
    if (value == "puct")
      c.search.root_search = RootSearch::kPuct;
    else if (value == "gumbel")
      c.search.root_search = RootSearch::kGumbel;
    else
      bad_value(name, value, "puct or gumbel");
  } else if (name == "gumbel_considered")
    c.search.gumbel_considered = parse_number<int>(name, value, 1, 256, "an integer from 1 to 256");
  else if (name == "c_visit")
    c.search.gumbel_c_visit = parse_number<float>(name, value, 0.0f, 100000.0f, "a number from 0 to 100000");
  else if (name == "c_scale")
    c.search.gumbel_c_scale = parse_number<float>(name, value, 1e-6f, 1000.0f, "a number above 0");
  else if (name == "q_normalise") {
    if (value != "bounds" && value != "minmax") bad_value(name, value, "bounds or minmax");
    c.search.gumbel_q_normalise = parse_q_normalise(value);
  }
  else if (name == "first_game")
    // Bounded so that first_game + games cannot overflow.
    c.first_game = parse_number<std::int64_t>(name, value, 0, std::numeric_limits<std::int64_t>::max() - kMaxInt,
                                              "a non-negative integer");
  else if (name == "full_search_fraction")
    c.full_search_fraction = parse_number<float>(name, value, 0.0f, 1.0f, "a number from 0 to 1");
  else if (name == "cheap_simulations")
    c.cheap_simulations = parse_number<int>(name, value, 1, 1000000, "an integer from 1 to 1000000");
  else
    throw std::invalid_argument(
        "unknown option " + quote_input(raw_name, 40) +
        " (known: simulations, c_puct, fpu_reduction, fpu_reduction_root, noise, dirichlet_alpha, "
        "dirichlet_weight, parallel, leaves_per_game, temperature, temperature_plies, final_temperature, max_plies, "
        "seed, cache_entries, search, gumbel_considered, c_visit, c_scale, q_normalise, first_game, "
        "full_search_fraction, cheap_simulations)");
  c.options_given.emplace_back(std::move(name), raw_name);
  // The settings that follow others, unless given themselves.
  const auto given = [&](std::string_view option) {
    return std::any_of(c.options_given.begin(), c.options_given.end(),
                       [&](const auto& o) { return o.first == option; });
  };
  if (!given("fpu_reduction_root")) c.search.fpu_reduction_root = c.search.root_noise ? 0.0f : c.search.fpu_reduction;
  if (!given("cache_entries")) c.cache_entries = automatic_cache_entries(c.parallel, c.games, c.search.simulations);
  if (!given("cheap_simulations")) c.cheap_simulations = std::max(1, c.search.simulations / 4);
  // mctx's pairing: a Q rescaled over the root's moves spans [0, 1] however close the values
  // are, so it takes a tenth of the scale that values normalised by their bounds take.
  if (!given("c_scale")) c.search.gumbel_c_scale = default_c_scale(c.search.gumbel_q_normalise);
}

int cheap_simulations_of(const SelfPlayConfig& c) {
  return c.cheap_simulations > 0 ? c.cheap_simulations : std::max(1, c.search.simulations / 4);
}

std::size_t cache_entries_of(const SelfPlayConfig& c) {
  return c.cache_entries == SelfPlayConfig::kAutomaticCacheEntries
             ? automatic_cache_entries(c.parallel, c.games, c.search.simulations)
             : c.cache_entries;
}

std::string config_json(const SelfPlayConfig& c) {
  return "{\"simulations\": " + std::to_string(c.search.simulations) + ", \"c_puct\": " + number(c.search.c_puct) +
         ", \"fpu_reduction\": " + number(c.search.fpu_reduction) +
         ", \"fpu_reduction_root\": " + number(c.search.fpu_reduction_root) +
         ", \"noise\": " + (c.search.root_noise ? "true" : "false") +
         ", \"dirichlet_alpha\": " + number(c.search.dirichlet_alpha) +
         ", \"dirichlet_weight\": " + number(c.search.dirichlet_weight) +
         ", \"parallel\": " + std::to_string(c.parallel) + ", \"leaves_per_game\": " + std::to_string(c.leaves_per_game) +
         ", \"temperature\": " + number(c.temperature) + ", \"temperature_plies\": " + std::to_string(c.temperature_plies) +
         ", \"final_temperature\": " + number(c.final_temperature) + ", \"max_plies\": " + std::to_string(c.max_plies) +
         ", \"seed\": " + std::to_string(c.seed) +
         ", \"search\": " + (c.search.root_search == RootSearch::kGumbel ? "\"gumbel\"" : "\"puct\"") +
         ", \"gumbel_considered\": " + std::to_string(c.search.gumbel_considered) +
         ", \"c_visit\": " + number(c.search.gumbel_c_visit) + ", \"c_scale\": " + number(c.search.gumbel_c_scale) +
         ", \"q_normalise\": \"" + q_normalise_name(c.search.gumbel_q_normalise) + "\"" +
         ", \"full_search_fraction\": " + number(c.full_search_fraction) +
         ", \"cheap_simulations\": " + std::to_string(cheap_simulations_of(c)) + "}";
}

std::size_t estimated_memory_bytes(const SelfPlayConfig& c) {
  constexpr double kTreeBytesPerSimulation = 2 * 40 * 72.0;  // reuse x children x node (72 bytes)
  constexpr double kCacheBytesPerEntry = 320.0;              // priors of ~35 moves, map and queue
  const double in_progress = double(std::max<std::int64_t>(0, std::min<std::int64_t>(c.parallel, c.games)));
  const int simulations = std::max(c.search.simulations, c.full_search_fraction < 1 ? cheap_simulations_of(c) : 0);
  const double bytes = in_progress * double(std::max(simulations, 0)) * kTreeBytesPerSimulation +
                       double(cache_entries_of(c)) * kCacheBytesPerEntry;
  return bytes >= 1.8e19 ? std::numeric_limits<std::size_t>::max() : std::size_t(bytes);
}

std::string game_parameters_json(const SelfPlayConfig& config, const FinishedGame& game, std::string_view evaluator,
                                 std::string_view run, GameSeconds seconds) {
  std::string json = config_json(config);
  json.pop_back();  // the closing brace
  json += ", \"evaluator\": " + json_string(evaluator) + ", \"run\": " + json_string(run) +
          ", \"index\": " + std::to_string(game.index) + ", \"game_seed\": " + std::to_string(game.seed);
  if (seconds == GameSeconds::kInclude) json += ", \"seconds\": " + number(game.seconds);
  return json + "}";
}

namespace {

using Clock = std::chrono::steady_clock;

// One game in progress.
struct Slot {
  Slot(const SelfPlayConfig& config, std::int64_t index, EvalCache* cache, const chess::Board& start)
      : seed(mix64(config.seed + std::uint64_t(index))),
        search(config.search, seed, cache),
        game(start),
        rng(mix64(seed ^ 0x5bd1e995u)),
        playout_cap_rng(mix64(seed ^ 0x2545f491u)),
        started(Clock::now()) {
    record.index = index;
    record.seed = seed;
    record.start = start;
    start_search(config);
  }

  // Starts the search of the game's position, full or cheap (playout cap randomization).
  void start_search(const SelfPlayConfig& config) {
    search.set_game(game);
    if (config.full_search_fraction >= 1) return;  // draws nothing: the games stay those of a run without it
    full_search = playout_cap_rng.uniform() < double(config.full_search_fraction);
    search.set_simulations(full_search ? config.search.simulations : cheap_simulations_of(config));
  }

  std::uint64_t seed;
  Search search;
  chess::Game game;
  Rng rng;              // the move choice
  Rng playout_cap_rng;  // full or cheap searches, apart so the move choice's stream is the same
  bool full_search = true;
  FinishedGame record;
  Clock::time_point started;
  int queued = 0;  // leaves in this round's batch
};

std::string result_of(const chess::Game& game, chess::GameStatus status) {
  if (status != chess::GameStatus::kCheckmate) return "1/2-1/2";
  return game.board().side == chess::kWhite ? "0-1" : "1-0";  // the side to move is mated
}

}  // namespace

SelfPlayRunner::SelfPlayRunner(const SelfPlayConfig& config, Evaluator& evaluator)
    : config_(config), evaluator_(evaluator) {}

void SelfPlayRunner::run(const std::function<void(FinishedGame&)>& on_game,
                         const std::function<void(const SelfPlayStats&)>& on_round) {
  stats_ = SelfPlayStats{};
  const auto begun = Clock::now();
  const chess::Board start = chess::parse_fen(chess::kStartFen);
  // Only a deterministic evaluator's answers may be reused.
  std::unique_ptr<EvalCache> cache;
  const std::size_t cache_entries = cache_entries_of(config_);
  if (evaluator_.deterministic() && cache_entries > 0) cache = std::make_unique<EvalCache>(cache_entries);

  std::vector<std::unique_ptr<Slot>> slots;
  std::int64_t next = 0;
  auto start_game = [&]() -> std::unique_ptr<Slot> {
    if (next >= config_.games) return nullptr;
    return std::make_unique<Slot>(config_, config_.first_game + next++, cache.get(), start);
  };
  for (int i = 0; i < config_.parallel; ++i) {
    auto slot = start_game();
    if (!slot) break;
    slots.push_back(std::move(slot));
    if (on_round && i % 64 == 63) on_round(stats_);  // many games take a while to set up: let the caller cancel
  }

  std::vector<EvalRequest> requests;
  std::vector<EvalResult> results;
  while (!slots.empty()) {
    requests.clear();
    for (auto& slot : slots) slot->queued = slot->search.gather(config_.leaves_per_game, requests);
    if (!requests.empty()) {
      results.assign(requests.size(), EvalResult{});
      evaluator_.evaluate(requests, results);
      stats_.evaluations += std::int64_t(requests.size());
      stats_.batches += 1;
      size_t offset = 0;
      for (auto& slot : slots) {
        if (slot->queued == 0) continue;
        slot->search.deliver(std::span<const EvalResult>(results).subspan(offset, size_t(slot->queued)));
        offset += size_t(slot->queued);
      }
    }
    if (cache) stats_.cache_hits = std::int64_t(cache->hits());

    // Play a move in every game whose search is done; finished games make room for new ones.
    for (size_t i = 0; i < slots.size();) {
      Slot& s = *slots[i];
      if (!s.search.finished()) {
        ++i;
        continue;
      }
      const RootStats root = s.search.root_stats();
      const int ply = int(s.game.moves().size());
      const float temperature = ply < config_.temperature_plies ? config_.temperature : config_.final_temperature;
      const chess::Move move = s.search.choose_move(temperature, s.rng);
      s.record.plies.push_back(PlyRecord{s.game.board(), root.moves, root.visits, root.priors, root.value, move,
                                         root.policy, s.game.repetitions(), s.full_search, root.draw});
      s.game.play(move);
      s.start_search(config_);
      ++stats_.plies;

      const chess::GameStatus status = s.game.status();
      const bool too_long = int(s.game.moves().size()) >= config_.max_plies;
      if (status == chess::GameStatus::kOngoing && !too_long) {
        ++i;
        continue;
      }
      s.record.moves = s.game.moves();
      s.record.result = result_of(s.game, status);
      s.record.termination = status == chess::GameStatus::kOngoing ? "max_plies" : std::string(chess::status_name(status));
      s.record.seconds = std::chrono::duration<double>(Clock::now() - s.started).count();
      ++stats_.games_done;
      if (s.record.result == "1-0")
        ++stats_.white_wins;
      else if (s.record.result == "0-1")
        ++stats_.black_wins;
      else
        ++stats_.draws;
      on_game(s.record);
      if (auto fresh = start_game()) {
        slots[i] = std::move(fresh);
        ++i;
      } else {
        slots.erase(slots.begin() + std::ptrdiff_t(i));
      }
    }
    stats_.seconds = std::chrono::duration<double>(Clock::now() - begun).count();
    if (on_round) on_round(stats_);
  }
}

}  // namespace pgmate::mcts
