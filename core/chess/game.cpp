#include "chess/game.h"

#include <algorithm>
#include <stdexcept>

#include "chess/notation.h"

namespace pgmate::chess {

std::string_view status_name(GameStatus s) {
  switch (s) {
    case GameStatus::kOngoing: return "ongoing";
    case GameStatus::kCheckmate: return "checkmate";
    case GameStatus::kStalemate: return "stalemate";
    case GameStatus::kFiftyMoves: return "fifty_moves";
    case GameStatus::kThreefoldRepetition: return "threefold_repetition";
    case GameStatus::kInsufficientMaterial: return "insufficient_material";
  }
  return "unknown";
}

bool insufficient_material(const Board& b) {
  if (b.pieces(kPawn) | b.pieces(kRook) | b.pieces(kQueen)) return false;
  const Bitboard knights = b.pieces(kKnight), bishops = b.pieces(kBishop);
  const int minors = popcount(knights | bishops);
  if (minors <= 1) return true;
  // Only bishops, all on one square colour: no mate is possible.
  if (knights == 0 && ((bishops & kDarkSquares) == 0 || (bishops & ~kDarkSquares) == 0)) return true;
  return false;
}

GameStatus board_status(const Board& b) {
  if (count_legal_moves(b) == 0) return b.in_check() ? GameStatus::kCheckmate : GameStatus::kStalemate;
  if (insufficient_material(b)) return GameStatus::kInsufficientMaterial;
  if (b.halfmove >= 100) return GameStatus::kFiftyMoves;
  return GameStatus::kOngoing;
}

Game::Game(const Board& start) : start_(start), board_(start) {}

void Game::play(Move m) {
  Board next = board_;
  play_checked(next, m);
  previous_.push_back(board_);
  moves_.push_back(m);
  board_ = next;
}

void Game::undo() {
  if (previous_.empty()) throw std::logic_error("Game::undo with no move played");
  board_ = previous_.back();
  previous_.pop_back();
  moves_.pop_back();
}

int Game::repetitions() const {
  int count = 0;
  // Only positions with the same side to move, inside the reversible stretch, can repeat.
  int limit = std::min<int>(board_.halfmove, int(previous_.size()));
  for (int back = 2; back <= limit; back += 2)
    if (previous_[previous_.size() - back].key == board_.key) ++count;
  return count;
}

GameStatus Game::status() const {
  GameStatus s = board_status(board_);
  if (s == GameStatus::kCheckmate || s == GameStatus::kStalemate) return s;
  if (repetitions() >= 2) return GameStatus::kThreefoldRepetition;
  return s;
}

}  // namespace pgmate::chess
