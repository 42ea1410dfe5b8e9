// How well a side played, from engine evaluations, by lichess's published formulas
// (lila, modules/analyse: WinPercent.scala, AccuracyPercent.scala, Advice.scala; explained
// at https://lichess.org/page/accuracy):
//
//   win%(cp)         = 50 + 50 * (2 / (1 + exp(-0.00368208 * cp)) - 1), cp clamped to +-1000,
//                      a mate score counted as +-1000 (from the side's own view)
//   move accuracy %  = 103.1668100711649 * exp(-0.04354415386753951 * (win%before - win%after))
//                      - 3.166924740191411 + 1, clamped to [0, 100]; 100 when win% did not drop
//   class            = by the drop in winning chances (win% / 50 - 1, in [-1, 1]) the move
//                      caused: >= 0.3 blunder, >= 0.2 mistake, >= 0.1 inaccuracy; where a
//                      mate score is before or after the move, by lichess's mate rules: a
//                      move into a forced mate against the mover is an inaccuracy from below
//                      -9.99, a mistake from below -7.00, else a blunder; a move that loses
//                      the mover's forced mate is an inaccuracy when it still leaves more than
//                      +9.99, a mistake above +7.00, else a blunder
//   game accuracy    = per side, the mean of (a) the mean of its moves' accuracies, each weighted
//                      by the standard deviation of win% (White's view) over a window of
//                      positions around it, clamped to [0.5, 12], and (b) their harmonic mean
//                      (each accuracy at least 1 there). The window is n/10 positions long,
//                      2 to 8 (n: the moves analysed), and the first moves share the first window.
//   ACPL             = the mean over a side's moves of max(0, cp before - cp after), both from
//                      the mover's view, clamped to +-1000, mates as +-1000.
#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include "analysis/evaluation.h"

namespace pgmate::analysis {

constexpr int kCpCeiling = 1000;

// The score as centipawns clamped to +-kCpCeiling, a mate as +-kCpCeiling.
int clamped_cp(const Score& s);
double win_percent(int cp);                             // cp from the side's own view
double move_accuracy(double win_before, double win_after);  // both from the mover's view
// "blunder", "mistake", "inaccuracy" or "" for a move that lost this many winning chances
// (in [-1, 1] units: win% / 50).
std::string_view move_class(double chances_lost);
// The same for a move from its scores before and after, both from the mover's view (a mate
// score > 0: the mover mates; after a move that mates, mate 0), with the mate rules.
std::string_view move_class(const Score& before, const Score& after);

struct SideAccuracy {
  double accuracy = 0;     // percent
  double acpl = 0;         // average centipawn loss
  int moves = 0;
};
struct GameAccuracy {
  std::optional<SideAccuracy> white, black;  // nullopt: the side made no move
};

// `cps`: the clamped evaluation (White's view) of every position of a game, the start
// first; `white_first`: whether White made the first move.
GameAccuracy game_accuracy(const std::vector<int>& cps, bool white_first);

}  // namespace pgmate::analysis
