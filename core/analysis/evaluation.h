// An engine's evaluation of one position, as UCI "info" lines give it, checked against the
// position: a score (centipawns or moves to mate), win/draw/loss chances, the best move and
// principal variations. Every figure is from the side to move's view, as in UCI.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "chess/board.h"

namespace pgmate::analysis {

struct Score {
  bool mate = false;
  // Centipawns; with `mate`, moves to mate: > 0 the side to move mates, <= 0 it is mated
  // (0: it is checkmated now).
  int value = 0;
  bool operator==(const Score&) const = default;
};

// Chances per mille, from the side to move's view; they sum to 1000.
struct Wdl {
  int win = 0, draw = 1000, loss = 0;
  bool operator==(const Wdl&) const = default;
};

struct PvLine {
  int multipv = 1;
  Score score;
  std::optional<Wdl> wdl;          // when the engine reports it ("wdl W D L")
  int depth = 0, seldepth = 0;
  std::int64_t nodes = 0;
  std::vector<chess::Move> pv;     // legal in turn from the position, at least one move
};

struct PositionEval {
  std::vector<PvLine> lines;       // by multipv: lines[0] is the engine's choice
  Wdl wdl;                         // lines[0]'s: the engine's, else wdl_model(score)
  bool wdl_from_engine = false;
  chess::Move best;                // null in a position without legal moves
  int depth = 0;
  std::int64_t nodes = 0;          // searched for this position (the most any line reports)
  const Score& score() const { return lines.front().score; }
};

// Limits a score must keep to be believed.
constexpr int kMaxCentipawns = 100000;
constexpr int kMaxMateMoves = 1000;

// One UCI "info" line read against the position it is about: the line with its score,
// or nullopt for a line that carries no score, a bound ("lowerbound", "upperbound") or
// no move of its principal variation. Its PV is cut at the first move that is not legal in
// turn. Throws std::invalid_argument for a score no engine could mean (a mate score of 0
// in a position with moves, an out-of-range value, WDL that does not sum to 1000).
std::optional<PvLine> parse_info_line(std::string_view line, const chess::Board& position);

// Win/draw/loss chances from a score alone (for engines that report none, and evaluations
// read from PGN comments): a logistic in centipawns,
//   win = 1 / (1 + exp(-(cp - kWdlMidpoint) / kWdlScale)),  loss = the same at -cp,
// draw = the rest. +1.00 is a 50% win chance, as Stockfish normalises its scores since
// version 15.1; the scale is fitted to Stockfish 15.1's own WDL output (bench/analysis/wdl_fit.py:
// 5,585 positions of 40 games at 5,000 nodes, mean absolute error 0.003 in the win chance).
// A mate score is a certain result.
constexpr double kWdlMidpoint = 100.0;
constexpr double kWdlScale = 19.5;
Wdl wdl_model(const Score& score);

// The evaluation of a position that needs no engine: checkmate (mated, mate 0), stalemate
// and insufficient material (a certain draw); nullopt when the position has legal moves
// and is not dead.
std::optional<PositionEval> terminal_eval(const chess::Board& position);

// The lines an engine wrote for one search, made into an evaluation. `bestmove` is the
// text after "bestmove". Throws std::invalid_argument when the engine's answer cannot be
// believed: no scored line, an illegal best move, two lines that begin with the same move.
PositionEval make_eval(const chess::Board& position, std::vector<PvLine> lines, std::string_view bestmove);

// The same position with its clocks cleared (halfmove 0, fullmove 1): what evaluations are
// keyed by, so a position reached in many games (a transposition) is analysed once.
chess::Board without_clocks(chess::Board b);

// "cp 31", "mate -3": the score as UCI writes it.
std::string to_string(const Score& s);

// One evaluation as the JSON object pgmate.save_position_evals() takes (the one format in
// which the client and the procedure store evaluations):
//   {"board": FEN, "cp": 31 | null, "mate": null | 3, "win": 60, "draw": 900, "loss": 40,
//    "wdl_source": "engine" | "model", "best": "e2e4" | null, "pv": "e2e4 e7e5" | null,
//    "depth": 20, "nodes": 100000, "lines": null | [{"move": "e2e4", "cp": 31, "mate": null,
//    "pv": "e2e4 e7e5"}, ...]}
// `lines` is given only for an analysis of more than one line.
std::string eval_json(const chess::Board& position, const PositionEval& e, bool with_lines);

// Why a stored evaluation cannot be believed of `position`, as pgmate.position_evals checks
// every row it is given, whoever wrote it ("best_move e2e5 is not legal"); "" when it can.
// The moves must be legal (the principal variation in turn, beginning with the best move),
// the score within kMaxCentipawns or kMaxMateMoves (mate 0 only when checkmated), and
// `lines_json` (the lines column as JSON text, nullopt for NULL) an array of eval_json's
// line objects, their first moves distinct, the first the best move. So what the views and
// eval_targets read from a row never fails on it.
std::string stored_eval_problem(const chess::Board& position, std::optional<Score> score, chess::Move best,
                                const std::vector<chess::Move>& pv, const std::optional<std::string>& lines_json);

// Evaluations waiting to be stored, as one pgmate.save_position_evals array: an analysis
// saves them every second or every 256 rows, whichever comes first, so that a stop loses
// at most what is in flight.
class PendingEvals {
 public:
  void add(const chess::Board& position, const PositionEval& e, bool with_lines);
  std::int64_t size() const { return rows_; }
  bool due() const;
  // The JSON array of what was added; empties the batch and starts the second again.
  std::string take();

 private:
  std::string elements_;
  std::int64_t rows_ = 0;
  std::chrono::steady_clock::time_point since_ = std::chrono::steady_clock::now();
};

// How far an analysis planned a chunk at a time has come, 0 to 1, by games: the chunk's
// games [begin, end) of `games` count by the share of its positions done.
double analysis_progress(std::size_t begin, std::size_t end, std::size_t games, std::int64_t chunk_done,
                         std::size_t chunk_positions);

// A PGN "[%eval ...]" value ("0.17", "-1.5", "#3", "#-2": pawns or moves to mate, White's
// view, as PgnGame::evals holds it) as a score from the side to move's view; nullopt when
// it cannot be read.
std::optional<Score> score_of_pgn_eval(std::string_view text, chess::Color side_to_move);
// The evaluations of a game's PGN comments (PgnGame::evals: evals[i] after moves[i]), each
// the position after its move with the model's WDL. Comments that cannot be read are left
// out. A comment after a move that ends the game gives terminal_eval's evaluation (mate 0,
// a draw), not its own.
struct PgnEval {
  chess::Board position;
  PositionEval eval;
};
std::vector<PgnEval> pgn_evals(const chess::Board& start, const std::vector<chess::Move>& moves,
                               const std::vector<std::string>& evals);
// The same as eval_json elements joined by commas (no brackets); `count` is set to how many.
std::string pgn_evals_json(const chess::Board& start, const std::vector<chess::Move>& moves,
                           const std::vector<std::string>& evals, int& count);

// The same score as PGN writes it: "0.17", "-1.50", "#3" (White's view).
std::string pgn_eval_text(const Score& s, chess::Color side_to_move);

}  // namespace pgmate::analysis
