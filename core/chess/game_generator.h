// Synthetic games for database benchmarks: realistic in shape (book openings, lengths,
// results, players), not in quality, and cheap. No search: after the book, moves are
// scored one ply deep by simple features, with noise that grows as the player's rating
// falls, and the best few get a look at the opponent's immediate captures and mates.
//
// Game `index` of corpus `seed` depends on (seed, index) alone, so a corpus can be made
// on any number of threads, and the first N games of a larger corpus are the corpus of N.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "chess/game.h"
#include "chess/pgn.h"
#include "chess/polyglot_book.h"

namespace pgmate::chess {

struct GeneratorOptions {
  // Each game follows the book for a random number of plies in this range (while the
  // book has the position), so popular early positions are common but not universal.
  int min_book_plies = 4;
  int max_book_plies = 24;
  // Each game draws a target length (plies) around the mean; most land in 60-120.
  int mean_plies = 90;
  int plies_spread = 18;  // standard deviation
  int min_plies = 30;
  int max_plies = 200;
  // A game that reaches its target length is won by a material lead of this many pawns
  // (P 1, N 3, B 3, R 5, Q 9), else drawn.
  int adjudication_pawns = 3;
  int first_year = 2000;
  int last_year = 2024;
};

struct GeneratedGame {
  PgnTags tags;             // Event, Site, Date, Round, White, Black, WhiteElo, BlackElo
  std::vector<Move> moves;  // from the standard start position
  std::string result;       // "1-0", "0-1" or "1/2-1/2"
  // How the game ended: a rule (checkmate, stalemate, fifty moves, repetition,
  // insufficient material), or kOngoing when it was adjudicated at its target length.
  GameStatus status = GameStatus::kOngoing;
  int book_plies = 0;    // moves taken from the book
  int target_plies = 0;  // the length it was allowed
};

// Game `index` (0-based) of the corpus `seed`. An empty book (PolyglotBook{}) means no
// book: every move is the heuristic's.
GeneratedGame generate_game(const PolyglotBook& book, std::uint64_t seed, std::uint64_t index,
                            const GeneratorOptions& options = {});

// The game in PGN export format (chess::to_pgn), ending with a newline.
std::string to_pgn(const GeneratedGame& game);

// White's material lead in pawns (P 1, N 3, B 3, R 5, Q 9); negative when Black leads.
int material_balance(const Board& b);

}  // namespace pgmate::chess
