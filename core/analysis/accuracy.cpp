#include "analysis/accuracy.h"

#include <algorithm>
#include <cmath>

namespace pgmate::analysis {

int clamped_cp(const Score& s) {
  if (s.mate) return s.value > 0 ? kCpCeiling : -kCpCeiling;
  return std::clamp(s.value, -kCpCeiling, kCpCeiling);
}

double win_percent(int cp) {
  const double c = std::clamp(cp, -kCpCeiling, kCpCeiling);
  return 50 + 50 * (2 / (1 + std::exp(-0.00368208 * c)) - 1);
}

double move_accuracy(double win_before, double win_after) {
  if (win_after >= win_before) return 100;
  const double raw = 103.1668100711649 * std::exp(-0.04354415386753951 * (win_before - win_after)) - 3.166924740191411;
  return std::clamp(raw + 1, 0.0, 100.0);  // lichess's +1: the analysis is not perfect either
}

std::string_view move_class(double chances_lost) {
  if (chances_lost >= 0.3) return "blunder";
  if (chances_lost >= 0.2) return "mistake";
  if (chances_lost >= 0.1) return "inaccuracy";
  return "";
}

std::string_view move_class(const Score& before, const Score& after) {
  if (!before.mate && !after.mate)
    return move_class((win_percent(clamped_cp(before)) - win_percent(clamped_cp(after))) / 50);
  // lila's MateAdvice: the centipawns of a mate score count as 0 there.
  const int cp_before = before.mate ? 0 : before.value, cp_after = after.mate ? 0 : after.value;
  const bool mate_created = !before.mate && after.mate && after.value < 0;
  const bool mate_lost = before.mate && before.value > 0 && (!after.mate || after.value < 0);
  if (mate_created) return cp_before < -999 ? "inaccuracy" : cp_before < -700 ? "mistake" : "blunder";
  if (mate_lost) return cp_after > 999 ? "inaccuracy" : cp_after > 700 ? "mistake" : "blunder";
  return "";
}

namespace {

double population_stddev(const double* begin, const double* end) {
  const double n = double(end - begin);
  double mean = 0;
  for (const double* p = begin; p != end; ++p) mean += *p;
  mean /= n;
  double sum = 0;
  for (const double* p = begin; p != end; ++p) sum += (*p - mean) * (*p - mean);
  return std::sqrt(sum / n);
}

}  // namespace

GameAccuracy game_accuracy(const std::vector<int>& cps, bool white_first) {
  GameAccuracy out;
  if (cps.size() < 2) return out;
  const std::size_t moves = cps.size() - 1;
  std::vector<double> wins(cps.size());
  for (std::size_t i = 0; i < cps.size(); ++i) wins[i] = win_percent(cps[i]);

  // Move i (from position i to i + 1) is weighted by the window starting at
  // max(0, i - (window - 2)): the first window - 2 moves share the first window.
  const std::size_t window = std::clamp<std::size_t>(moves / 10, 2, 8);
  const std::size_t span = std::min(window, wins.size());
  struct Sums {
    double weighted = 0, weights = 0, inverse = 0, loss = 0;
    int n = 0;
  } sums[2];  // [0] White, [1] Black
  for (std::size_t i = 0; i < moves; ++i) {
    const std::size_t first = i + 2 > window ? i + 2 - window : 0;
    const std::size_t begin = std::min(first, wins.size() - span);
    const double weight = std::clamp(population_stddev(&wins[begin], &wins[begin] + span), 0.5, 12.0);
    const bool white = (i % 2 == 0) == white_first;
    const double before = white ? wins[i] : 100 - wins[i];
    const double after = white ? wins[i + 1] : 100 - wins[i + 1];
    const double accuracy = move_accuracy(before, after);
    Sums& s = sums[white ? 0 : 1];
    s.weighted += accuracy * weight;
    s.weights += weight;
    s.inverse += 1 / std::max(1.0, accuracy);
    const int cp_before = white ? cps[i] : -cps[i], cp_after = white ? cps[i + 1] : -cps[i + 1];
    s.loss += std::max(0, std::clamp(cp_before, -kCpCeiling, kCpCeiling) - std::clamp(cp_after, -kCpCeiling, kCpCeiling));
    ++s.n;
  }
  for (int c = 0; c < 2; ++c) {
    const Sums& s = sums[c];
    if (!s.n) continue;
    SideAccuracy a;
    a.moves = s.n;
    a.accuracy = (s.weighted / s.weights + s.n / s.inverse) / 2;
    a.acpl = s.loss / s.n;
    (c == 0 ? out.white : out.black) = a;
  }
  return out;
}

}  // namespace pgmate::analysis
