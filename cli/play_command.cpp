// pgmate play: a human against pure MCTS (uniform priors, random playouts) in the terminal.
// Moves are read as SAN (UCI works too) one per line, so it also runs with piped input.
#include <unistd.h>

#include <cstdint>
#include <memory>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "args.h"
#include "chess/fen.h"
#include "chess/game.h"
#include "chess/notation.h"
#include "chess/render.h"
#include "commands.h"
#include "common/random.h"
#include "mcts/rollout_evaluator.h"
#include "mcts/search.h"
#include "link/worker_evaluator.h"
#include "network_file.h"
#include "worker_connection.h"

namespace pgmate::cli {

const char* const kPlayUsage =
    "pgmate play [--color white|black] [--simulations S] [--fen FEN] [--seed N]\n"
    "            [--pure-mcts | --network-file FILE] [--worker ADDRESS]\n"
    "         (against the network pgmate ships, on a pgmate-worker of its own; pure MCTS when there is none)";

namespace {

constexpr const char* kHelp =
    "enter a move in SAN (e4, Nf3, O-O, exd8=Q) or UCI (e2e4); commands: moves (the legal moves), "
    "undo (take back your last move), fen, help, quit";

std::string trim(const std::string& s) {
  const size_t b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return "";
  const size_t e = s.find_last_not_of(" \t\r\n");
  return s.substr(b, e - b + 1);
}

// "12." before White's move, "12..." before Black's.
std::string move_number(const chess::Board& b) {
  return std::to_string(b.fullmove) + (b.side == chess::kWhite ? "." : "...");
}

// "1-0 (White mates)", "1/2-1/2 (stalemate)", ...
std::string result_text(const chess::Game& game, chess::GameStatus status) {
  if (status == chess::GameStatus::kCheckmate)
    return game.board().side == chess::kWhite ? "0-1 (Black wins by checkmate)" : "1-0 (White wins by checkmate)";
  std::string why(chess::status_name(status));  // "fifty_moves" -> "fifty moves"
  for (char& c : why)
    if (c == '_') c = ' ';
  return "1/2-1/2 (draw: " + why + ")";
}

std::string signed_value(float v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%+.2f", v);
  return buf;
}

// The engine's move and what the search thinks of it.
chess::Move engine_move(mcts::Search& search, mcts::Evaluator& evaluator, const chess::Game& game, mcts::Rng& rng,
                        std::string& note) {
  search.set_game(game);
  const mcts::RootStats stats = mcts::search_position(search, evaluator);
  const chess::Move m = search.choose_move(0, rng);  // the most visited (or a proven win)
  std::uint32_t visits = 0;
  for (size_t i = 0; i < stats.moves.size(); ++i)
    if (stats.moves[i] == m) visits = stats.visits[i];
  char share[32];
  std::snprintf(share, sizeof share, "%.0f%%", stats.total_visits ? 100.0 * visits / stats.total_visits : 0.0);
  note = std::string(share) + " of " + std::to_string(stats.total_visits) + " visits, value " +
         signed_value(stats.value);
  const std::string plies = std::to_string(stats.bound_plies) + (stats.bound_plies == 1 ? " ply" : " plies");
  if (stats.bound == mcts::Bound::kWin) note += ", wins in " + plies;
  else if (stats.bound == mcts::Bound::kLoss) note += ", loses in " + plies;
  else if (stats.bound == mcts::Bound::kDraw) note += ", a proven draw";
  return m;
}

}  // namespace

int play_command(const std::vector<std::string>& args) {
  std::string fen = "startpos", color = "white";
  mcts::SearchParams params;
  params.simulations = 400;
  std::uint64_t seed = 0;
  std::string network_file, worker_address;
  bool pure = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto value = [&]() -> const std::string& {
      if (i + 1 >= args.size()) throw UsageError(a + " needs a value");
      return args[++i];
    };
    if (a == "--color") color = value();
    else if (a == "--simulations") params.simulations = parse_count(value(), "--simulations", 1, 10000000);
    else if (a == "--fen") fen = value();
    else if (a == "--seed") seed = static_cast<std::uint64_t>(parse_count(value(), "--seed", 0, 2147483647));
    else if (a == "--pure-mcts") pure = true;
    else if (a == "--network-file") network_file = value();
    else if (a == "--worker") worker_address = value();
    else if (a.size() > 1 && a[0] == '-') throw UsageError("unknown option " + a);
    else throw UsageError("unexpected argument \"" + a + "\" (quote the FEN after --fen)");
  }
  if (color != "white" && color != "black") throw UsageError("--color must be \"white\" or \"black\", not \"" + color + "\"");
  const chess::Color human = color == "white" ? chess::kWhite : chess::kBlack;

  if (pure && !network_file.empty()) throw UsageError("give --pure-mcts or --network-file, not both");
  if (!pure && network_file.empty()) network_file = shipped_network_path();

  chess::Game game(chess::parse_fen(fen));
  mcts::Search search(params, seed);
  // The opponent: the network (on a worker of its own unless --worker names one), or pure MCTS.
  NetworkFile file;
  std::unique_ptr<PrivateWorker> private_worker;
  std::unique_ptr<worker::WorkerClient> client;
  std::unique_ptr<mcts::Evaluator> evaluator;
  if (!network_file.empty()) {
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
    evaluator = std::make_unique<mcts::RolloutEvaluator>(mcts::mix64(seed));
  }
  mcts::Rng rng(seed);
  const bool interactive = isatty(0);

  std::cout << "pgmate play: you are " << color << ", pgmate is "
            << (network_file.empty() ? std::string("pure MCTS") : "the network " + network_file) << " with "
            << params.simulations << " simulations a move; type help for commands\n";
  bool show_board = true;
  for (;;) {
    const chess::Board& board = game.board();
    if (show_board) std::cout << '\n' << chess::board_diagram(board);
    show_board = true;
    const chess::GameStatus status = game.status();
    if (status != chess::GameStatus::kOngoing) {
      std::cout << "game over: " << result_text(game, status) << '\n';
      return 0;
    }
    if (board.side != human) {
      std::string note;
      const chess::Move m = engine_move(search, *evaluator, game, rng, note);
      std::cout << "pgmate plays " << move_number(board) << ' ' << chess::to_san(board, m) << " ("
                << note << ")\n";
      game.play(m);
      continue;
    }
    std::cout << "your move " << move_number(board) << " > " << std::flush;
    std::string line;
    if (!std::getline(std::cin, line)) {
      std::cout << "\nend of input: game abandoned\n";
      return 0;
    }
    if (!interactive) std::cout << line << '\n';  // echo piped input, so transcripts read well
    const std::string text = trim(line);
    show_board = false;
    if (text.empty()) continue;
    if (text == "quit" || text == "exit" || text == "resign") {
      std::cout << "bye\n";
      return 0;
    }
    if (text == "help" || text == "?") {
      std::cout << kHelp << '\n';
      continue;
    }
    if (text == "fen") {
      std::cout << chess::to_fen(board) << '\n';
      continue;
    }
    if (text == "moves") {
      chess::MoveList list;
      chess::legal_moves(board, list);
      std::string s;
      for (const chess::Move m : list) {
        if (!s.empty()) s += ' ';
        s += chess::to_san(board, m);
      }
      std::cout << list.size << " legal moves: " << s << '\n';
      continue;
    }
    if (text == "undo") {
      // On the human's turn the last move was the engine's: take back it and the human's.
      if (game.moves().size() < 2) {
        std::cout << "nothing to undo\n";
      } else {
        game.undo();
        game.undo();
        show_board = true;
      }
      continue;
    }
    try {
      const chess::Move m = chess::parse_san(board, text);
      game.play(m);
      show_board = true;
    } catch (const chess::ParseError& e) {
      std::cout << e.what() << " (type moves for the legal moves, help for commands)\n";
    }
  }
}

}  // namespace pgmate::cli
