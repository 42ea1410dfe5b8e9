// A game in progress: the board plus the key history needed for repetition, and the
// game-ending rules (mate, stalemate, fifty moves, repetition, insufficient material).
#pragma once

#include <string_view>
#include <vector>

#include "chess/movegen.h"

namespace pgmate::chess {

enum class GameStatus {
  kOngoing,
  kCheckmate,
  kStalemate,
  kFiftyMoves,            // 100 plies without capture or pawn move (claimable draw)
  kThreefoldRepetition,   // the position has occurred three times (claimable draw)
  kInsufficientMaterial,  // neither side can mate by any series of legal moves
};

std::string_view status_name(GameStatus s);  // "ongoing", "checkmate", ...

// No sequence of legal moves can end in mate: K v K, K+minor v K, and bishops (any
// number, both sides) all on squares of one colour.
bool insufficient_material(const Board& b);

// Status from the board alone (no repetition history).
GameStatus board_status(const Board& b);

class Game {
 public:
  explicit Game(const Board& start);

  const Board& board() const { return board_; }
  const Board& start() const { return start_; }
  const std::vector<Move>& moves() const { return moves_; }

  // Plays a legal move (through play_checked: IllegalMove past move 65535).
  void play(Move m);
  // Undoes the last move (the previous boards are kept: copy-make).
  void undo();

  // How often the current position occurred before (same key, within the reversible
  // stretch since the last capture or pawn move).
  int repetitions() const;
  GameStatus status() const;

 private:
  Board start_;
  Board board_;
  std::vector<Board> previous_;
  std::vector<Move> moves_;
};

}  // namespace pgmate::chess
