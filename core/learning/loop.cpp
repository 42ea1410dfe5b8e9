#include "learning/loop.h"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdlib>

#include "learning/gate.h"

namespace pgmate::learning {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// Members of checked settings (present, and of their kind).
std::int64_t int_setting(const JsonObject& s, const std::string& key) {
  return std::strtoll(s.at(key).text.c_str(), nullptr, 10);
}
// A string's content, another value's JSON, "" when absent (SQL's ->>).
std::string text_setting(const JsonObject& s, const std::string& key) {
  const auto it = s.find(key);
  return it == s.end() || it->second.type == JsonType::Null ? "" : it->second.text;
}
// What SQL's -> gives: the value, JSON null when absent.
JsonValue value_of(const JsonObject& s, const std::string& key) {
  const auto it = s.find(key);
  return it == s.end() ? JsonValue{} : it->second;
}

JsonValue integer(std::int64_t x) { return JsonValue::number(std::to_string(x)); }
// The shortest decimal that reads back as x (jsonb keeps it as that numeric).
JsonValue real(double x) {
  char buffer[64];
  const auto end = std::to_chars(buffer, buffer + sizeof buffer, x).ptr;
  return JsonValue::number(std::string(buffer, end));
}
JsonValue boolean(bool x) { return {JsonType::Boolean, x ? "true" : "false", x ? "true" : "false"}; }
JsonValue object(const JsonObject& o) {
  const std::string json = object_json(o);
  return {JsonType::Object, json, json};
}

// An integer as JSON or SQL text gives it ("12", "\"12\""), nullopt when it is none.
std::optional<std::int64_t> integer_in(const JsonValue& v) {
  std::int64_t x = 0;
  const std::string& t = v.text;
  const auto [end, error] = std::from_chars(t.data(), t.data() + t.size(), x);
  if (error != std::errc() || end != t.data() + t.size() || t.empty()) return std::nullopt;
  return x;
}

std::string quoted(const std::string& run) { return "\"" + run + "\""; }

// The run the call means: the caller's own, or a new one with the call's options.
RunState find_or_begin(LearningStore& store, const LearnCall& call) {
  const std::string& name = *call.run;
  std::optional<RunState> run = store.own_run(name);
  const bool no_options = call.options_type == JsonType::Object && call.options.empty();
  if (!run && no_options) {
    // no new run without options: say whose run of that name there is
    const std::string owners = store.other_owners(name);
    if (!owners.empty())
      throw LearnError(LearnError::Kind::InsufficientPrivilege,
                       "learn: run " + quoted(name) + " belongs to role " + owners + ", not to " +
                           store.caller_roles().current_user,
                       "A run goes on only in a session its owner logged in to: connect as that role, or schedule "
                       "the call with cron.schedule_in_database(..., username => 'ROLE').");
  }
  // A run's stored queries (holdout, pretrain_data) run only in a session its owner logged
  // in to: under SET ROLE (or SET SESSION AUTHORIZATION) they could go back to the role that
  // logged in (RESET ROLE) and act with its rights.
  const CallerRoles roles = store.caller_roles();
  if (roles.login != roles.acting)
    throw LearnError(LearnError::Kind::InsufficientPrivilege,
                     "learn: this session logged in as " + (roles.login.empty() ? "<NULL>" : roles.login) + ", not as " +
                         roles.current_user + ": a learning run goes on only in a session its owner logged in to",
                     "Connect as " + roles.current_user +
                         ", or schedule the call with cron.schedule_in_database(..., username => '" +
                         roles.current_user + "').");
  const auto network = call.options.find("network");
  if (run) {
    if (network != call.options.end()) {
      const auto id = integer_in(network->second);
      if (id && *id != run->start_network)
        throw LearnError(LearnError::Kind::InvalidParameter,
                         "learn option \"network\": run " + quoted(name) + " started from network " +
                             std::to_string(run->start_network) + ", not " + network->second.json);
    }
    if (call.options_type != JsonType::Object) require_object(call.options_type, call.options_json);
    check_call_against_stored(call.options, run->settings, store.settings_context());
    return *run;
  }
  require_object(call.options_type, call.options_json);
  const JsonObject settings =
      device_defaults(new_run_settings(call.options, store.settings_context()), call.options, store.worker_device());
  std::int64_t start = 0;
  if (network != call.options.end()) {
    const auto id = integer_in(network->second);
    if (!id || !store.network_exists(*id))
      throw LearnError(LearnError::Kind::InvalidParameter,
                       "learn option \"network\": network " + network->second.json + " not found in pgmate.networks");
    start = *id;
  } else {
    start = store.init_network(name + " start", text_setting(settings, "preset"), int_setting(settings, "seed"));
  }
  RunState begun = store.insert_run(name, settings, start);
  store.notice("learn: run " + quoted(name) + " (" + std::to_string(begun.id) + ") begins with network " +
               std::to_string(start));
  return begun;
}

// The iteration's training options: AdamW at the run's rate, the KL term, the held-out
// rows, the optimizer carried from the training that made the current network.
JsonObject training_options(LearningStore& store, const RunState& r, const LoopSettings& s, const std::string& name,
                            int k, int steps) {
  JsonObject o;
  o["batch"] = integer(s.batch);
  o["optimizer"] = JsonValue::string("adamw");
  o["lr"] = real(r.lr);
  o["schedule"] = JsonValue::string("constant");
  o["log_every"] = integer(std::min(steps, 50));
  o["checkpoint_every"] = integer(std::min(steps, 50));
  o["seed"] = integer(s.seed % 2147483647 + k);
  o["name"] = JsonValue::string(name + " " + std::to_string(k));
  if (s.kl_weight > 0) {
    o["kl_weight"] = value_of(s.json, "kl_weight");
    o["kl_reference"] = integer(s.kl_reference == "best" ? r.best_network : r.start_network);
  }
  if (s.has_holdout) {
    // Every network of the run but the start was measured on the held-out rows at the end
    // of the training that made it: no second measurement of the same weights.
    o["holdout"] = value_of(s.json, "holdout");
    o["holdout_at_start"] = boolean(r.current_network == r.start_network);
  }
  // The optimizer goes on from the training that made the current network, unless a veto
  // has put the best network back since (escalation starts a fresh optimizer). Runs from
  // before this setting train with a fresh one, as they began.
  std::optional<std::int64_t> optimizer_from;
  if (s.optimizer_state == "carry")
    optimizer_from = store.carried_training(r.id, k - 1, r.current_network);
  if (optimizer_from) o["optimizer_from"] = integer(*optimizer_from);
  // A fresh AdamW's first steps are sign descent (every weight moves by lr, noise or not):
  // its learning rate rises over the first steps instead.
  else
    o["warmup_steps"] = integer(std::min(steps, 20));
  return o;
}

struct ArenaRound {
  JsonObject results;  // best, older, start, random, mcts
  std::string decision, reason;
};

// The candidate against the best network, the veto matches and the sanity games; the gate.
ArenaRound arena_round(LearningStore& store, const RunState& r, const LoopSettings& s, const std::string& name, int k,
                       std::int64_t candidate) {
  const std::string label = "learn:" + std::to_string(r.id) + ":" + std::to_string(k);
  // Players are JSON objects built from checked settings, never text put together.
  JsonObject net_player{{"type", JsonValue::string("net")}, {"simulations", value_of(s.json, "arena_simulations")}};
  if (s.arena_search == "gumbel") net_player["search"] = JsonValue::string("gumbel");
  const auto net = [&](std::int64_t network) {
    JsonObject p = net_player;
    p["network"] = integer(network);
    return object(p);
  };
  const auto play = [&](const std::string& suffix, const JsonValue& opponent, int games, const JsonObject& extra) {
    MatchRequest m;
    m.name = label + ":" + suffix;
    m.candidate = net(candidate);
    m.opponent = opponent;
    m.games = games;
    m.seed = s.seed + k;
    m.max_plies = s.max_plies;
    m.parallel = s.parallel;
    m.openings = s.openings;
    m.extra = extra;
    return store.match(m);
  };
  store.notice("learn: run " + quoted(name) + " iteration " + std::to_string(k) + ": arena, network " +
               std::to_string(candidate) + " against " + std::to_string(r.best_network));
  ArenaRound round;
  JsonObject promotion_sprt;
  if (s.has_promotion_sprt)
    promotion_sprt = {{"sprt_elo0", value_of(s.json, "promotion_elo0")}, {"sprt_elo1", value_of(s.json, "promotion_elo1")}};
  const JsonObject best = play("best", net(r.best_network), s.arena_games, promotion_sprt);
  round.results["best"] = object(best);
  std::vector<MatchOutcome> vetoes;
  std::optional<JsonObject> older, start;
  std::optional<std::int64_t> older_network;
  if (s.veto_games > 0) {
    // an older best, drawn by the seed, and the start network (when not the best itself)
    older_network = store.older_best(r.id, r.best_network, r.start_network, s.seed + k);
    if (older_network) {
      older = play("older", net(*older_network), s.veto_games, {});
      round.results["older"] = object(*older);
      vetoes.push_back(match_outcome(*older));
    }
    if (r.start_network != r.best_network) {
      start = play("start", net(r.start_network), s.veto_games, {});
      round.results["start"] = object(*start);
      vetoes.push_back(match_outcome(*start));
    }
  }
  // The sanity games inform, never decide: every sanity_interval-th round only.
  if (s.sanity_games > 0 && k % (s.arena_interval * s.sanity_interval) == 0) {
    round.results["random"] = object(play("random", JsonValue::string("random"), s.sanity_games, {}));
    const JsonObject mcts{{"type", JsonValue::string("mcts")}, {"simulations", value_of(s.json, "arena_simulations")}};
    round.results["mcts"] = object(play("mcts", object(mcts), s.sanity_games, {}));
  }
  round.decision = gate_decision(match_outcome(best), vetoes, s.json);
  round.reason =
      arena_reason(best, older ? &*older : nullptr, older_network.value_or(0), start ? &*start : nullptr, s.json);
  return round;
}

}  // namespace

std::vector<GameRange> missing_game_ranges(int games, int best_games, std::vector<int> stored) {
  std::sort(stored.begin(), stored.end());
  std::vector<GameRange> ranges;
  for (int x = 0; x < games; ++x) {
    if (std::binary_search(stored.begin(), stored.end(), x)) continue;
    const bool by_best = x < best_games;
    if (!ranges.empty() && ranges.back().first + ranges.back().games == x && ranges.back().by_best == by_best)
      ++ranges.back().games;
    else
      ranges.push_back({x, 1, by_best});
  }
  return ranges;
}

LoopSettings loop_settings(const JsonObject& json) {
  LoopSettings s;
  s.json = json;
  const auto int_of = [&](const char* key) { return int(int_setting(json, key)); };
  s.seed = int_setting(json, "seed");
  s.games = int_of("games");
  s.simulations = int_of("simulations");
  s.parallel = int_of("parallel");
  s.max_plies = int_of("max_plies");
  s.batch = int_of("batch");
  s.sample_one_in = int_of("sample_one_in");
  if (json.count("steps")) s.steps = int_of("steps");
  s.samples_per_position = number_of(json, "samples_per_position");
  s.lr = number_of(json, "lr");
  s.pretrain_mix = number_of(json, "pretrain_mix");
  s.kl_weight = number_of(json, "kl_weight");
  s.kl_warning = number_of(json, "kl_warning");
  s.kl_arena = number_of(json, "kl_arena");
  s.kl_reference = text_setting(json, "kl_reference");
  s.optimizer_state = text_setting(json, "optimizer_state");
  s.arena_search = text_setting(json, "arena_search");
  s.openings = text_setting(json, "openings");
  s.arena_interval = int_of("arena_interval");
  s.arena_games = int_of("arena_games");
  s.veto_games = int_of("veto_games");
  s.sanity_games = int_of("sanity_games");
  if (json.count("sanity_interval")) s.sanity_interval = int_of("sanity_interval");
  s.has_pretrain_data = json.count("pretrain_data") > 0;
  s.has_holdout = json.count("holdout") > 0;
  s.has_promotion_sprt = json.count("promotion_elo1") > 0;
  return s;
}

int training_steps(const LoopSettings& s, std::int64_t new_positions, double pretrain_mix) {
  if (s.steps) return *s.steps;
  const double steps = std::ceil(s.samples_per_position * double(new_positions) / double(s.sample_one_in) /
                                 (double(s.batch) * (1 - pretrain_mix)));
  return int(std::min(10000000.0, std::max(1.0, steps)));
}

void learn(LearningStore& store, const LearnCall& call) {
  if (!call.run || !call.iterations || *call.iterations < 0)
    throw LearnError(LearnError::Kind::InvalidParameter, "learn: run must be a name and iterations a number >= 0");
  const std::string& name = *call.run;
  const std::string stop_after =
      call.options_type == JsonType::Object ? text_setting(call.options, "stop_after") : std::string();
  RunState r = find_or_begin(store, call);
  // The run is held by this statement (a lease): it is free again when the statement ends,
  // however it ends.
  if (!store.lease(r.id))
    throw LearnError(LearnError::Kind::LockNotAvailable,
                     "learn: run " + quoted(name) + " is being worked on by another session");
  store.commit();

  for (int round_no = 1; round_no <= *call.iterations; ++round_no) {
    r = store.reload(r.id);
    const LoopSettings s = loop_settings(r.settings);
    const int k = r.iterations + 1;
    const std::string label = "learn:" + std::to_string(r.id) + ":" + std::to_string(k);
    const std::string iteration = "learn: run " + quoted(name) + " iteration " + std::to_string(k);
    const int n = s.games;
    IterationRow row;
    row.run_id = r.id;
    row.iteration = k;
    row.best_network = r.best_network;

    // 1. Self-play: games 0 .. n-1 of the iteration, each seeded by its index; the first
    // best_games with the best network, the rest with the current one (escalation level 3).
    // Those already stored are skipped, so a resumed iteration plays the same games.
    auto t0 = Clock::now();
    const int best_games = n - int(std::floor(n * r.current_share));
    JsonObject selfplay_options{
        {"run", JsonValue::string(label)},
        {"seed", integer((s.seed + std::int64_t(k) * 1000003) % 9000000000000000000LL)},
        {"search", value_of(s.json, "search")},
        {"max_plies", integer(s.max_plies)},
        {"full_search_fraction", value_of(s.json, "full_search_fraction")},
        {"cheap_simulations", value_of(s.json, "cheap_simulations")}};
    for (const GameRange& missing : missing_game_ranges(n, best_games, store.stored_game_indices(r.id, k))) {
      store.notice(iteration + ": self-play games " + std::to_string(missing.first + 1) + " to " +
                   std::to_string(missing.first + missing.games) + " of " + std::to_string(n));
      JsonObject options = selfplay_options;
      options["first_game"] = integer(missing.first);
      store.selfplay(missing.games, s.simulations, missing.by_best ? r.best_network : r.current_network, s.parallel,
                     options);
    }
    row.selfplay_seconds = seconds_since(t0);
    if (stop_after == "selfplay") {
      store.notice(iteration + " stops after self-play, as asked");
      break;
    }

    // 2. Training: the current network on the iteration's rows; a training run of them that
    // already finished is not repeated.
    t0 = Clock::now();
    const std::string data_query =
        "SELECT * FROM pgmate.learning_data(" + std::to_string(r.id) + ", " + std::to_string(k) + ")";
    if (const auto done = store.finished_training(r.current_network, data_query, r.owner)) {
      row.candidate = done->first;
      row.training_run = done->second;
    } else {
      const int steps =
          training_steps(s, s.steps ? 0 : store.new_full_search_positions(r.id, k), r.pretrain_mix);
      const JsonObject options = training_options(store, r, s, name, k, steps);
      store.notice(iteration + ": training network " + std::to_string(r.current_network) + " for " +
                   std::to_string(steps) + " steps");
      row.candidate = store.train(r.current_network, data_query, steps, options);
      row.training_run = store.training_run_of(row.candidate, r.owner);
    }
    row.training_seconds = seconds_since(t0);
    row.log = store.last_log(row.training_run);
    if (row.log.kl && *row.log.kl > s.kl_warning)
      store.warning(iteration + ": KL to the start network is " + round_decimal(*row.log.kl, 3) + " (above " +
                    s.json.at("kl_warning").json + ")");
    if (stop_after == "training") {
      store.notice(iteration + " stops after training (candidate " + std::to_string(row.candidate) + "), as asked");
      break;
    }

    // 3. Arena, every arena_interval iterations or when the KL is too high.
    t0 = Clock::now();
    const bool arena = k % s.arena_interval == 0 || (row.log.kl && *row.log.kl > s.kl_arena);
    if (arena) {
      ArenaRound round = arena_round(store, r, s, name, k, row.candidate);
      row.arena = std::move(round.results);
      row.decision = round.decision;
      row.reason = round.reason;
      row.arena_seconds = seconds_since(t0);
    } else {
      row.decision = "trained";
      row.reason = "no arena round (every " + std::to_string(s.arena_interval) + " iterations)";
    }

    // 4. The decision, the iteration's row and the run's new state: one transaction.
    const LearningStore::PlayedGames played = store.played_games(r.id, k);
    row.games = played.games;
    row.positions = played.plies;
    // pretrain_data again, under the owner's search path (see the training step)
    row.pretrain_positions = r.pretrain_mix > 0 ? store.pretrain_rows(r.id, k) : 0;
    if (const auto window = store.training_samples(row.training_run)) row.window_positions = *window - row.pretrain_positions;
    row.pretrain_mix = r.pretrain_mix;
    row.lr = r.lr;
    RunState next = r;
    next.iterations = k;
    if (row.decision == "vetoed") {
      next.veto_level = std::min(r.veto_level + 1, 4);
      const Escalation esc = escalation(next.veto_level, r.pretrain_mix, r.lr, r.current_share);
      if (esc.exclude_share > 0) row.excluded_games = store.exclude_newest(r.id, k, esc.exclude_share);
      next.current_network = r.best_network;
      if (s.has_pretrain_data) next.pretrain_mix = esc.new_pretrain_mix;
      next.lr = esc.new_lr;
      next.current_share = esc.new_current_share;
    } else {
      next.current_network = row.candidate;
      if (row.decision == "promoted") {
        // a promotion undoes what escalation changed
        next.best_network = row.candidate;
        next.veto_level = 0;
        next.lr = s.lr;
        next.pretrain_mix = s.pretrain_mix;
        next.current_share = 0;
      }
    }
    row.veto_level = next.veto_level;
    store.finish_iteration(next, row);
    store.notice(iteration + " " + row.decision + ": " + row.reason);
    store.commit();
  }
  store.release(r.id);
  store.commit();
}

}  // namespace pgmate::learning
