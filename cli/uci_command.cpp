// pgmate uci: pgmate as a UCI engine, for chess GUIs, tournament managers and pgmate's own
// arena. The search is MCTS (mcts::Search) with pure-MCTS rollouts or a network of
// pgmate.networks served by pgmate-worker; the tree is kept between the moves of a game.
//
// Understood: uci, isready, ucinewgame, setoption name Simulations value N,
// position startpos|fen FEN [moves ...], go [nodes N] [movetime MS] [wtime MS btime MS
// winc MS binc MS movestogo N] [infinite], stop, quit. While searching, info lines give
// nodes (simulations), nps, score cp (from the root value W - L) and the pv's first move;
// then bestmove.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "args.h"
#include "chess/fen.h"
#include "chess/game.h"
#include "chess/movegen.h"
#include "chess/notation.h"
#include "link/worker_client.h"
#include "link/worker_evaluator.h"
#include "commands.h"
#include "common/random.h"
#include "mcts/rollout_evaluator.h"
#include "mcts/search.h"
#include "network_file.h"
#include "selfplay_store.h"
#include "worker_connection.h"

namespace pgmate::cli {

const char* const kUciUsage =
    "pgmate uci [--pure-mcts | --db CONNINFO --network ID | --network-file FILE] [--worker ADDRESS] [--simulations S]\n"
    "         (by default the network pgmate ships, on a pgmate-worker of its own unless --worker names one)";

namespace {

using Clock = std::chrono::steady_clock;

// "default" for .../pgmate_default.safetensors: how a network file names the engine.
std::string fs_stem(const std::string& path) {
  std::string name = path.substr(path.rfind('/') == std::string::npos ? 0 : path.rfind('/') + 1);
  if (const auto dot = name.rfind('.'); dot != std::string::npos) name.resize(dot);
  if (name.rfind("pgmate_", 0) == 0) name = name.substr(7);
  return name;
}
using std::chrono::milliseconds;

// One line to the GUI: the search thread (info, bestmove) and the command loop (readyok)
// both write, never into each other's lines.
void say(const std::string& line) {
  static std::mutex mutex;
  std::lock_guard lock(mutex);
  std::cout << line << "\n" << std::flush;
}

struct GoLimits {
  std::int64_t nodes = 0;
  std::int64_t movetime = 0;
  std::int64_t time[2] = {-1, -1}, increment[2] = {0, 0};  // White's, Black's clock
  std::int64_t moves_to_go = 0;
  bool infinite = false;
  // Filled in for the side to move.
  std::int64_t time_left = -1, own_increment = 0;
};

// The thinking time a move gets from the clock: a share of what is left, plus most of the
// increment, less a margin for the pipes and the GUI.
milliseconds time_budget(const GoLimits& g) {
  if (g.movetime > 0) return milliseconds(std::max<std::int64_t>(1, g.movetime - 20));
  if (g.time_left < 0) return milliseconds(0);  // no clock: nodes or infinite decide
  const std::int64_t moves = g.moves_to_go > 0 ? std::min<std::int64_t>(g.moves_to_go, 30) : 30;
  const std::int64_t budget = g.time_left / moves + g.own_increment * 3 / 4 - 30;
  return milliseconds(std::clamp<std::int64_t>(budget, 5, std::max<std::int64_t>(5, g.time_left / 2)));
}

// lc0's mapping of an expected value in [-1, 1] to centipawns.
int centipawns(float value) {
  const double v = std::clamp(double(value), -0.999, 0.999);
  return int(std::lround(111.714640912 * std::tan(1.5620688421 * v)));
}

class UciEngine {
 public:
  UciEngine(mcts::Evaluator& evaluator, int simulations, int leaves)
      : evaluator_(evaluator), simulations_(simulations), leaves_(leaves), game_(chess::parse_fen("startpos")) {
    new_search();
  }
  ~UciEngine() { stop(); }

  void set_simulations(int n) { simulations_ = n; }
  void new_game() {
    stop();
    new_search();
  }
  void set_position(const chess::Game& game) {
    stop();
    game_ = game;
  }

  void go(const GoLimits& limits) {
    stop();
    stop_ = false;
    thread_ = std::thread([this, limits] { think(limits); });
  }
  void stop() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
  }

 private:
  void new_search() {
    mcts::SearchParams params;
    params.simulations = kStep;  // raised step by step while a go runs (Search::set_simulations)
    params.root_noise = false;
    search_ = std::make_unique<mcts::Search>(params, seed_++);
  }

  void info(const mcts::RootStats& root, int done, double seconds) {
    std::size_t best = 0;
    for (std::size_t i = 1; i < root.visits.size(); ++i)
      if (root.visits[i] > root.visits[best]) best = i;
    std::string line = "info nodes " + std::to_string(done) + " nps " +
                       std::to_string(std::int64_t(seconds > 0 ? done / seconds : 0)) + " time " +
                       std::to_string(std::int64_t(seconds * 1000)) + " score cp " + std::to_string(centipawns(root.value));
    if (!root.moves.empty()) line += " pv " + chess::to_uci(root.moves[best]);
    say(line);
  }

  void think(GoLimits limits) {
    const auto started = Clock::now();
    const int side = game_.board().side == chess::kWhite ? 0 : 1;
    limits.time_left = limits.time[side];
    limits.own_increment = limits.increment[side];
    const chess::MoveList legal = [&] {
      chess::MoveList l;
      chess::legal_moves(game_.board(), l);
      return l;
    }();
    if (legal.size == 0) {
      say("bestmove 0000");  // mate or stalemate: nothing to play
      return;
    }
    search_->set_game(game_);  // keeps the subtree when the game went on from the last search
    const int start = search_->simulations_done();
    // Without nodes, movetime, a clock or infinite: the Simulations option.
    const std::int64_t node_limit =
        limits.nodes > 0 ? limits.nodes : (limits.infinite || limits.movetime > 0 || limits.time_left >= 0 ? 0 : simulations_);
    const milliseconds budget = limits.infinite ? milliseconds(0) : time_budget(limits);
    std::vector<mcts::EvalRequest> requests;
    std::vector<mcts::EvalResult> results;
    auto last_info = started;
    search_->set_simulations(start + int(node_limit > 0 ? std::min<std::int64_t>(node_limit, kStep) : kStep));
    for (;;) {
      const int done = search_->simulations_done() - start;
      const auto elapsed = Clock::now() - started;
      // At least one simulation, which expands the root: a stop (or the end of the input)
      // that comes first still gets a move.
      if (done > 0 && (stop_ || (node_limit > 0 && done >= node_limit) || (budget.count() > 0 && elapsed >= budget)))
        break;
      if (search_->finished()) {
        const std::int64_t next = done + kStep;
        search_->set_simulations(start + int(node_limit > 0 ? std::min(node_limit, next) : next));
      }
      requests.clear();
      const int n = search_->gather(leaves_, requests);
      if (n > 0) {
        results.assign(requests.size(), mcts::EvalResult{});
        evaluator_.evaluate(requests, results);
        search_->deliver(results);
      }
      if (Clock::now() - last_info > milliseconds(500)) {
        last_info = Clock::now();
        info(search_->root_stats(), search_->simulations_done() - start,
             std::chrono::duration<double>(Clock::now() - started).count());
      }
    }
    // go infinite: the move is given only after stop.
    while (limits.infinite && !stop_) std::this_thread::sleep_for(milliseconds(2));
    const mcts::RootStats root = search_->root_stats();
    info(root, search_->simulations_done() - start, std::chrono::duration<double>(Clock::now() - started).count());
    const chess::Move move = search_->choose_move(0.0f, rng_);
    say("bestmove " + chess::to_uci(move));
  }

  static constexpr int kStep = 256;  // simulations between checks of the limits
  mcts::Evaluator& evaluator_;
  int simulations_;
  int leaves_;
  chess::Game game_;
  std::unique_ptr<mcts::Search> search_;
  std::uint64_t seed_ = 1;
  mcts::Rng rng_{7};
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

// "position startpos|fen FEN [moves m1 m2 ...]" -> the game (throws on bad input).
chess::Game parse_position(std::istringstream& in) {
  std::string word;
  in >> word;
  chess::Board start;
  if (word == "startpos") {
    start = chess::parse_fen("startpos");
    in >> word;
  } else if (word == "fen") {
    std::string fen, field;
    while (in >> field && field != "moves") fen += (fen.empty() ? "" : " ") + field;
    start = chess::parse_fen(fen);
    word = field;
  } else {
    throw std::invalid_argument("position needs startpos or fen");
  }
  chess::Game game(start);
  if (word == "moves") {
    std::string m;
    while (in >> m) game.play(chess::parse_uci(game.board(), m));
  }
  return game;
}

}  // namespace

int uci_command(const std::vector<std::string>& args) {
  std::string conninfo, worker_address, network_file;
  std::int64_t network = 0;
  bool pure = false, db = false;
  int simulations = 800;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto value = [&]() -> const std::string& {
      if (i + 1 >= args.size()) throw UsageError(a + " needs a value");
      return args[++i];
    };
    if (a == "--pure-mcts") pure = true;
    else if (a == "--db") conninfo = value(), db = true;
    else if (a == "--network") network = parse_count(value(), "--network", 1, 2000000000);
    else if (a == "--network-file") network_file = value();
    else if (a == "--worker") worker_address = value();
    else if (a == "--simulations") simulations = parse_count(value(), "--simulations", 1, 100000000);
    else throw UsageError("unknown argument " + a);
  }
  if (int(pure) + int(network != 0) + int(!network_file.empty()) > 1)
    throw UsageError("give one of --pure-mcts, --db CONNINFO with --network ID, and --network-file FILE");
  if (network && !db) throw UsageError("--network needs --db (the networks are rows of pgmate.networks)");
  if (!pure && !network && network_file.empty()) {
    network_file = shipped_network_path();
    if (network_file.empty())
      throw UsageError("no network found (networks/pgmate_default.safetensors, make install, or $PGMATE_NETWORK): "
                       "give --pure-mcts, --db CONNINFO with --network ID, or --network-file FILE");
  }

  NetworkFile file;
  std::unique_ptr<PrivateWorker> private_worker;  // outlives the client that talks to it
  std::unique_ptr<SelfplayStore> store;
  std::unique_ptr<worker::WorkerClient> client;
  std::unique_ptr<mcts::Evaluator> evaluator;
  if (network) {
    store = open_selfplay_store(conninfo);
    const worker::NetworkKey key = store->network_key(network);
    if (worker_address.empty()) worker_address = store->worker_address();
    worker::ClientOptions co;
    co.address = worker_address;
    if (const char* token = std::getenv("PGMATE_WORKER_TOKEN")) co.token = token;
    client = std::make_unique<worker::WorkerClient>(co);
    worker::WorkerClient& c = *client;
    SelfplayStore& s = *store;
    evaluator = std::make_unique<worker::WorkerEvaluator>(c, key, [&c, &s](const worker::NetworkKey& k) { s.load_network(c, k); });
  } else if (!network_file.empty()) {
    file = read_network_file(network_file);
    if (worker_address.empty()) {
      private_worker = std::make_unique<PrivateWorker>();
      worker_address = private_worker->address();
    }
    client = connect_worker(worker_address);
    worker::WorkerClient& c = *client;
    const NetworkFile& f = file;
    evaluator = std::make_unique<worker::WorkerEvaluator>(
        c, f.key, [&c, &f](const worker::NetworkKey& k) { c.load_network(k, f.config, f.weights); });
  } else {
    evaluator = std::make_unique<mcts::RolloutEvaluator>(mcts::mix64(1));
  }
  const bool uses_network = network || !network_file.empty();
  const std::string name = network ? "pgmate network " + std::to_string(network)
                           : uses_network ? "pgmate " + fs_stem(network_file)
                                          : "pgmate pure-mcts";
  UciEngine engine(*evaluator, simulations, uses_network ? 8 : 1);

  std::string line;
  while (std::getline(std::cin, line)) {
    std::istringstream in(line);
    std::string command;
    in >> command;
    try {
      if (command == "uci") {
        say("id name " + name + "\nid author the pgmate developers\noption name Simulations type spin default " +
            std::to_string(simulations) + " min 1 max 100000000\nuciok");
      } else if (command == "isready") {
        say("readyok");
      } else if (command == "ucinewgame") {
        engine.new_game();
      } else if (command == "setoption") {
        std::string word, option, value;
        in >> word;  // name
        while (in >> word && word != "value") option += (option.empty() ? "" : " ") + word;
        in >> value;
        if (option == "Simulations") engine.set_simulations(parse_count(value, "Simulations", 1, 100000000));
      } else if (command == "position") {
        engine.set_position(parse_position(in));
      } else if (command == "go") {
        GoLimits g;
        std::string word;
        while (in >> word) {
          const auto number = [&]() {
            std::int64_t v = 0;
            in >> v;
            return v;
          };
          if (word == "nodes") g.nodes = number();
          else if (word == "movetime") g.movetime = number();
          else if (word == "wtime") g.time[0] = number();
          else if (word == "btime") g.time[1] = number();
          else if (word == "winc") g.increment[0] = number();
          else if (word == "binc") g.increment[1] = number();
          else if (word == "movestogo") g.moves_to_go = number();
          else if (word == "infinite") g.infinite = true;
          else if (word == "depth") g.nodes = std::int64_t(1) << std::min<std::int64_t>(number() + 4, 30);
        }
        engine.go(g);
      } else if (command == "stop") {
        engine.stop();
      } else if (command == "quit") {
        break;
      }
    } catch (const std::exception& e) {
      say(std::string("info string error: ") + e.what());
    }
  }
  engine.stop();
  return 0;
}

}  // namespace pgmate::cli
