#include "analysis/analyser.h"

#include <poll.h>

#include <algorithm>
#include <deque>
#include <map>
#include <stdexcept>

#include "chess/notation.h"
#include "common/text.h"

namespace pgmate::analysis {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

std::string limits_text(const arena::UciLimits& limits, int multipv, bool warm) {
  std::string out;
  const auto add = [&](const char* key, std::int64_t value) {
    if (!out.empty()) out += ',';
    out.append(key).append("=").append(std::to_string(value));
  };
  if (limits.nodes) add("nodes", limits.nodes);
  if (limits.depth) add("depth", limits.depth);
  if (limits.movetime_ms) add("movetime", limits.movetime_ms);
  if (multipv > 1) add("multipv", multipv);
  if (warm) out += ",warm";
  return out;
}

AnalyserConfig analyser_config(const arena::PlayerSpec& spec) {
  if (spec.type != arena::PlayerType::kUci)
    throw std::invalid_argument("engine spec: analysis takes a UCI engine (uci:COMMAND[:KEY=VALUE,...])");
  AnalyserConfig c;
  c.command = spec.command;
  c.limits = spec.limits;
  c.uci_options = spec.uci_options;
  return c;
}

// One engine and the position it is working on.
struct Analyser::Slot {
  std::unique_ptr<arena::UciEngine> engine;
  std::size_t index = 0;        // into the positions of run()
  bool busy = false;
  Clock::time_point deadline{};
  std::map<int, PvLine> lines;  // by multipv: the last scored line of each
  std::string bad_info;         // the first info line that could not be believed
};

Analyser::Analyser(AnalyserConfig config) : config_(std::move(config)) {
  if (config_.jobs < 1 || config_.jobs > 256) throw std::invalid_argument("jobs must be 1 to 256");
  if (config_.multipv < 1 || config_.multipv > 64) throw std::invalid_argument("multipv must be 1 to 64");
  if (!config_.limits.nodes && !config_.limits.depth && !config_.limits.movetime_ms)
    throw std::invalid_argument("an analysis needs a limit: nodes, depth or movetime");
  auto first = std::make_unique<Slot>();
  first->engine = start_engine();
  engine_name_ = first->engine->name();
  slots_.push_back(std::move(first));
}

Analyser::~Analyser() {
  // Ask every engine to quit first, so they stop in parallel.
  for (auto& s : slots_)
    if (s->engine) s->engine->request_quit();
}

std::unique_ptr<arena::UciEngine> Analyser::start_engine() {
  auto engine = std::make_unique<arena::UciEngine>(config_.command, std::vector<std::pair<std::string, std::string>>{},
                                                   config_.start_timeout, config_.interrupt_check);
  // Evaluations are stored under the engine's name: a replacement must be the same engine.
  if (!engine_name_.empty() && engine->name() != engine_name_)
    throw arena::UciError("UCI engine " + quote_input(config_.command, 80) + " restarted as " + engine->name() + ", not " + engine_name_);
  // The analysis defaults, then what the spec says (it may override them).
  std::vector<std::pair<std::string, std::string>> options;
  if (engine->has_option("Threads")) options.emplace_back("Threads", "1");
  if (engine->has_option("Hash")) options.emplace_back("Hash", std::to_string(config_.hash_mb));
  if (engine->has_option("UCI_ShowWDL")) options.emplace_back("UCI_ShowWDL", "true");
  if (config_.multipv > 1) {
    if (!engine->has_option("MultiPV"))
      throw arena::UciError("UCI engine " + engine->name() + " has no MultiPV option: analyse with multipv 1");
    options.emplace_back("MultiPV", std::to_string(config_.multipv));
  }
  for (const auto& o : config_.uci_options) options.push_back(o);
  for (const auto& [name, value] : options) engine->set_option(name, value, config_.start_timeout);
  return engine;
}

void Analyser::run(const std::vector<chess::Board>& positions, const Done& done, const Failed& failed,
                   const std::function<void()>& tick) {
  std::deque<std::size_t> queue;
  std::vector<int> tries(positions.size(), 0);
  for (std::size_t i = 0; i < positions.size(); ++i) {
    if (auto e = terminal_eval(positions[i])) {
      done(i, std::move(*e));
      ++stats_.evaluated;
    } else {
      queue.push_back(i);
    }
  }
  const std::size_t want = std::min<std::size_t>(std::size_t(config_.jobs), queue.size());
  const milliseconds move_deadline =
      config_.move_deadline.count() ? config_.move_deadline : arena::UciEngine::move_deadline(config_.limits);
  auto last_tick = Clock::now();
  int failed_starts = 0;

  // An engine that cannot be believed: stopped, its position queued again or given up.
  const auto give_up_engine = [&](Slot& s, const std::string& why) {
    s.engine.reset();  // kills its process group
    ++stats_.restarts;
    if (!s.busy) return;
    s.busy = false;
    if (++tries[s.index] >= config_.attempts) {
      ++stats_.failed;
      failed(s.index, why);
      // An engine that fails on every position would otherwise cost attempts x deadline each.
      if (++failures_in_a_row_ >= config_.max_failures_in_a_row && config_.max_failures_in_a_row > 0)
        throw arena::UciError("UCI engine " + engine_name_ + ": " + std::to_string(failures_in_a_row_) +
                              " positions in a row given up, the analysis is stopped; the last: " + why);
    } else {
      queue.push_front(s.index);
    }
  };
  const auto start = [&](Slot& s) {
    const std::size_t i = queue.front();
    queue.pop_front();
    s.index = i;
    s.busy = true;
    s.lines.clear();
    s.bad_info.clear();
    const chess::Board& board = positions[i];
    // A fresh engine state (hash, histories) for every position: an evaluation is keyed by
    // position, engine and limits, so it must not depend on what this engine searched before.
    if (!config_.warm) s.engine->new_game(config_.start_timeout);
    s.engine->set_info_sink([&s, &board](const std::string& line) {
      if (!s.bad_info.empty()) return;
      try {
        if (auto l = parse_info_line(line, board)) s.lines[l->multipv] = std::move(*l);
      } catch (const std::invalid_argument& e) {
        s.bad_info = e.what();
      }
    });
    s.engine->go(board, {}, config_.limits);
    s.deadline = Clock::now() + move_deadline;
  };

  for (;;) {
    // Engines for the jobs (again after a failure), then work for every idle one.
    while (slots_.size() < want) slots_.push_back(std::make_unique<Slot>());
    bool any_busy = false;
    for (auto& sp : slots_) {
      Slot& s = *sp;
      if (!s.busy && !queue.empty()) {
        if (!s.engine) {
          try {
            s.engine = start_engine();
            failed_starts = 0;
          } catch (const arena::UciError&) {
            // An engine that starts now and then (a crashing build) is tried again; one
            // that never starts ends the run.
            if (++failed_starts >= 3) throw;
            continue;
          }
        }
        try {
          start(s);
        } catch (const arena::UciError& e) {
          give_up_engine(s, e.what());
          continue;
        }
      }
      any_busy |= s.busy;
    }
    if (!any_busy && queue.empty()) break;

    // Read what has come, without waiting.
    bool progressed = false;
    for (auto& sp : slots_) {
      Slot& s = *sp;
      if (!s.busy) continue;
      std::optional<std::string> best;
      try {
        best = s.engine->poll_bestmove(milliseconds(0));
      } catch (const arena::UciError& e) {
        give_up_engine(s, e.what());
        progressed = true;
        continue;
      }
      if (!s.bad_info.empty()) {
        give_up_engine(s, "UCI engine " + engine_name_ + ": " + s.bad_info);
        progressed = true;
        continue;
      }
      if (best) {
        progressed = true;
        s.engine->set_info_sink({});  // it points at this run's position
        std::vector<PvLine> lines;
        for (auto& [k, l] : s.lines)
          if (k <= config_.multipv) lines.push_back(std::move(l));
        PositionEval eval;
        try {
          eval = make_eval(positions[s.index], std::move(lines), *best);
        } catch (const std::invalid_argument& e) {
          give_up_engine(s, "UCI engine " + engine_name_ + " on " + chess::to_fen(positions[s.index]) + ": " + e.what());
          continue;
        }
        s.busy = false;
        failures_in_a_row_ = 0;
        stats_.nodes += eval.nodes;
        ++stats_.evaluated;
        done(s.index, std::move(eval));
      } else if (Clock::now() >= s.deadline) {
        give_up_engine(s, "UCI engine " + engine_name_ + " did not answer within " +
                              std::to_string(move_deadline.count()) + " ms on " + chess::to_fen(positions[s.index]));
        progressed = true;
      }
    }
    if (Clock::now() - last_tick >= milliseconds(100) || progressed) {
      if (tick) tick();
      if (config_.interrupt_check) config_.interrupt_check();
      last_tick = Clock::now();
    }
    if (progressed) continue;
    // Nothing yet: wait for any engine's output, at most until the next tick.
    std::vector<pollfd> fds;
    for (auto& sp : slots_)
      if (sp->busy && sp->engine && sp->engine->output_fd() >= 0) fds.push_back(pollfd{sp->engine->output_fd(), POLLIN, 0});
    ::poll(fds.data(), fds.size(), 100);
  }
}

}  // namespace pgmate::analysis
