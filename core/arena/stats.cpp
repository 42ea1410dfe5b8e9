#include "arena/stats.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <span>
#include <stdexcept>
#include <string>

namespace pgmate::arena {
namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
// Elo per unit of natural-log strength: 400 / ln(10).
constexpr double kEloPerNat = 173.71779276130073;

void require_non_negative(std::int64_t count, const char* what) {
  if (count < 0) throw std::invalid_argument(std::string("arena statistics: negative count of ") + what);
}

// Mean and population variance of a per-sample score that takes value values[k] counts[k]
// times; the variance of the mean is variance / samples.
struct Moments {
  double samples = 0, mean = 0.5, variance = 0;
};

Moments moments(std::span<const double> values, std::span<const std::int64_t> counts) {
  Moments m;
  for (std::int64_t c : counts) m.samples += double(c);
  if (m.samples == 0) return m;
  double sum = 0;
  for (size_t k = 0; k < values.size(); ++k) sum += double(counts[k]) * values[k];
  m.mean = sum / m.samples;
  double squares = 0;
  for (size_t k = 0; k < values.size(); ++k) squares += double(counts[k]) * (values[k] - m.mean) * (values[k] - m.mean);
  m.variance = squares / m.samples;
  return m;
}

// The least variance of one sample's score (a game's, or a pair's mean) that an interval
// assumes. A handful of pairs can agree exactly (four games, two pairs of 1.5 points each),
// and an observed variance of 0 would give an interval of zero width: certainty from two
// pairs. Real matches between different players show 0.03-0.08 per pair (fastchess's and
// fishtest's published counts), so the floor changes no interval of a match of any size
// that has shown its variance, and only widens those that have not.
constexpr double kMinSampleVariance = 0.01;

// Fills score, elo and the normal-approximation interval of the mean score.
void fill_elo(const Moments& m, MatchSummary& s) {
  s.score = m.mean;
  if (m.samples == 0) {
    s.elo = 0;
    s.elo_lower = -kInfinity;
    s.elo_upper = kInfinity;
    return;
  }
  const double half_width = kNormalQuantile975 * std::sqrt(std::max(m.variance, kMinSampleVariance) / m.samples);
  s.elo = elo_from_score(m.mean);
  s.elo_lower = elo_from_score(std::clamp(m.mean - half_width, 0.0, 1.0));
  s.elo_upper = elo_from_score(std::clamp(m.mean + half_width, 0.0, 1.0));
}

// fishtest's LLRcalc.regularize: an empty cell counts 0.001.
constexpr double kEmptyCellPrior = 1e-3;

// The x solving sum phat_i d_i / (1 + x d_i) = 0 with d_i = a_i - s, where the smallest d is
// negative and the largest positive. The sum falls strictly from +inf to -inf on
// (-1/d_max, -1/d_min), so bisection to the last representable step finds the root.
double secular_root(std::span<const double> phat, std::span<const double> d) {
  const double d_min = *std::min_element(d.begin(), d.end());
  const double d_max = *std::max_element(d.begin(), d.end());
  double lo = -1 / d_max, hi = -1 / d_min;
  for (int iteration = 0; iteration < 2000; ++iteration) {
    const double mid = 0.5 * (lo + hi);
    if (mid <= lo || mid >= hi) break;
    double f = 0;
    for (size_t i = 0; i < d.size(); ++i) f += phat[i] * d[i] / (1 + mid * d[i]);
    if (f > 0)
      lo = mid;
    else
      hi = mid;
  }
  return 0.5 * (lo + hi);
}

SprtResult sprt_of(std::span<const std::int64_t> raw_counts, const SprtParameters& p) {
  if (!(p.alpha > 0 && p.alpha < 1 && p.beta > 0 && p.beta < 1))
    throw std::invalid_argument("sprt: alpha and beta must lie in (0, 1)");
  if (!std::isfinite(p.elo0) || !std::isfinite(p.elo1))
    throw std::invalid_argument("sprt: elo0 and elo1 must be finite");
  SprtResult r;
  r.lower_bound = std::log(p.beta / (1 - p.alpha));
  r.upper_bound = std::log((1 - p.beta) / p.alpha);

  const size_t k = raw_counts.size();
  std::int64_t played = 0;
  for (std::int64_t c : raw_counts) played += c;
  if (played > 0) {
    std::array<double, 5> counts{}, values{}, phat{};
    double total = 0;
    for (size_t i = 0; i < k; ++i) {
      counts[i] = raw_counts[i] > 0 ? double(raw_counts[i]) : kEmptyCellPrior;
      values[i] = double(i) / double(k - 1);
      total += counts[i];
    }
    for (size_t i = 0; i < k; ++i) phat[i] = counts[i] / total;

    // log p_i under the constrained MLE, up to the common log phat_i that cancels in the ratio.
    auto log_denominators = [&](double elo, std::array<double, 5>& out) {
      const double s = score_from_elo(elo);
      std::array<double, 5> d{};
      for (size_t i = 0; i < k; ++i) d[i] = values[i] - s;
      const double x = secular_root(std::span(phat.data(), k), std::span(d.data(), k));
      for (size_t i = 0; i < k; ++i) out[i] = std::log1p(x * d[i]);
    };
    std::array<double, 5> log0{}, log1{};
    log_denominators(p.elo0, log0);
    log_denominators(p.elo1, log1);
    // log(p1_i / p0_i) = log(1 + x0 d0_i) - log(1 + x1 d1_i).
    for (size_t i = 0; i < k; ++i) r.llr += counts[i] * (log0[i] - log1[i]);
  }
  if (r.llr > r.upper_bound)
    r.verdict = SprtVerdict::kAcceptH1;
  else if (r.llr < r.lower_bound)
    r.verdict = SprtVerdict::kAcceptH0;
  return r;
}

// log(1 / (1 + e^-x)) without overflow.
double log_sigmoid(double x) { return x >= 0 ? -std::log1p(std::exp(-x)) : x - std::log1p(std::exp(x)); }
double sigmoid(double x) { return x >= 0 ? 1 / (1 + std::exp(-x)) : std::exp(x) / (1 + std::exp(x)); }

// Cholesky factorisation of a symmetric positive definite n x n matrix in place (lower
// triangle); false if it is not positive definite.
bool cholesky(std::vector<double>& a, size_t n) {
  for (size_t j = 0; j < n; ++j) {
    double diagonal = a[j * n + j];
    for (size_t k = 0; k < j; ++k) diagonal -= a[j * n + k] * a[j * n + k];
    if (!(diagonal > 0)) return false;
    const double root = std::sqrt(diagonal);
    a[j * n + j] = root;
    for (size_t i = j + 1; i < n; ++i) {
      double v = a[i * n + j];
      for (size_t k = 0; k < j; ++k) v -= a[i * n + k] * a[j * n + k];
      a[i * n + j] = v / root;
    }
  }
  return true;
}

// Solves L L^T x = b for the factor left by cholesky().
std::vector<double> cholesky_solve(const std::vector<double>& l, size_t n, std::vector<double> b) {
  for (size_t i = 0; i < n; ++i) {
    for (size_t k = 0; k < i; ++k) b[i] -= l[i * n + k] * b[k];
    b[i] /= l[i * n + i];
  }
  for (size_t i = n; i-- > 0;) {
    for (size_t k = i + 1; k < n; ++k) b[i] -= l[k * n + i] * b[k];
    b[i] /= l[i * n + i];
  }
  return b;
}

}  // namespace

double elo_from_score(double score) {
  if (score <= 0) return -kInfinity;
  if (score >= 1) return kInfinity;
  return -400 * std::log10(1 / score - 1);
}

double score_from_elo(double elo) { return 1 / (1 + std::pow(10.0, -elo / 400)); }

double normal_cdf(double x) { return 0.5 * std::erfc(-x / std::sqrt(2.0)); }

MatchSummary summarize(const TrinomialCounts& c) {
  require_non_negative(c.wins, "wins");
  require_non_negative(c.draws, "draws");
  require_non_negative(c.losses, "losses");
  const std::array<double, 3> values{0, 0.5, 1};
  const std::array<std::int64_t, 3> counts{c.losses, c.draws, c.wins};
  const Moments m = moments(values, counts);
  MatchSummary s;
  s.games = c.wins + c.draws + c.losses;
  s.draw_ratio = s.games > 0 ? double(c.draws) / double(s.games) : 0;
  s.score_stddev = std::sqrt(m.variance);
  fill_elo(m, s);
  const std::int64_t decisive = c.wins + c.losses;
  s.los = decisive > 0 ? normal_cdf(double(c.wins - c.losses) / std::sqrt(double(decisive))) : 0.5;
  return s;
}

MatchSummary summarize(const PentanomialCounts& c) {
  require_non_negative(c.ll, "LL pairs");
  require_non_negative(c.ld, "LD pairs");
  require_non_negative(c.dd_wl, "DD/WL pairs");
  require_non_negative(c.wd, "WD pairs");
  require_non_negative(c.ww, "WW pairs");
  // A pair's points divided by 2: the mean per-game score of the pair.
  const std::array<double, 5> values{0, 0.25, 0.5, 0.75, 1};
  const std::array<std::int64_t, 5> counts{c.ll, c.ld, c.dd_wl, c.wd, c.ww};
  const Moments m = moments(values, counts);
  MatchSummary s;
  const std::int64_t pairs = c.ll + c.ld + c.dd_wl + c.wd + c.ww;
  s.games = 2 * pairs;
  s.draw_ratio = pairs > 0 ? double(c.dd_wl) / double(pairs) : 0;
  s.score_stddev = std::sqrt(2 * m.variance);
  fill_elo(m, s);
  if (pairs == 0 || m.mean == 0.5)
    s.los = 0.5;
  else if (m.variance == 0)
    s.los = m.mean > 0.5 ? 1 : 0;
  else
    s.los = normal_cdf((m.mean - 0.5) / std::sqrt(m.variance / m.samples));
  return s;
}

SprtResult sprt(const PentanomialCounts& c, const SprtParameters& parameters) {
  summarize(c);  // validates the counts
  const std::array<std::int64_t, 5> counts{c.ll, c.ld, c.dd_wl, c.wd, c.ww};
  return sprt_of(counts, parameters);
}

SprtResult sprt(const TrinomialCounts& c, const SprtParameters& parameters) {
  summarize(c);
  const std::array<std::int64_t, 3> counts{c.losses, c.draws, c.wins};
  return sprt_of(counts, parameters);
}

RatingResult bradley_terry(int player_count, const std::vector<PairwiseCounts>& results, int anchor,
                           double anchor_elo) {
  if (player_count < 1) throw std::invalid_argument("bradley_terry: no players");
  if (anchor < 0 || anchor >= player_count) throw std::invalid_argument("bradley_terry: anchor out of range");
  const size_t n = size_t(player_count);
  // points[i*n+j]: points i scored against j; games[i*n+j]: games between them.
  std::vector<double> points(n * n, 0), games(n * n, 0);
  RatingResult out;
  out.players.resize(n);
  for (const PairwiseCounts& r : results) {
    if (r.player_a < 0 || r.player_a >= player_count || r.player_b < 0 || r.player_b >= player_count)
      throw std::invalid_argument("bradley_terry: player out of range");
    if (r.player_a == r.player_b) throw std::invalid_argument("bradley_terry: a player against itself");
    summarize(r.counts);  // validates the counts
    const size_t a = size_t(r.player_a), b = size_t(r.player_b);
    const double total = double(r.counts.wins + r.counts.draws + r.counts.losses);
    const double a_points = double(r.counts.wins) + 0.5 * double(r.counts.draws);
    points[a * n + b] += a_points;
    points[b * n + a] += total - a_points;
    games[a * n + b] += total;
    games[b * n + a] += total;
    out.players[a].games += std::int64_t(total);
    out.players[b].games += std::int64_t(total);
    out.players[a].points += a_points;
    out.players[b].points += total - a_points;
  }

  // Chains of points scored, from the anchor (forward) and to it (backward).
  auto reach = [&](bool forward) {
    std::vector<char> seen(n, 0);
    std::vector<size_t> stack{size_t(anchor)};
    seen[size_t(anchor)] = 1;
    while (!stack.empty()) {
      const size_t i = stack.back();
      stack.pop_back();
      for (size_t j = 0; j < n; ++j)
        if (!seen[j] && (forward ? points[i * n + j] : points[j * n + i]) > 0) {
          seen[j] = 1;
          stack.push_back(j);
        }
    }
    return seen;
  };
  const std::vector<char> reached_from_anchor = reach(true), reaching_anchor = reach(false);

  // The finite part: the anchor's strongly connected component; free = all of it but the anchor.
  std::vector<size_t> free_players;
  for (size_t i = 0; i < n; ++i) {
    PlayerRating& p = out.players[i];
    if (int(i) == anchor) {
      p.elo = anchor_elo;
      p.elo_stderr = 0;
    } else if (reached_from_anchor[i] && reaching_anchor[i]) {
      free_players.push_back(i);
    } else if (reaching_anchor[i]) {
      p.elo = kInfinity;
      p.elo_stderr = kInfinity;
    } else if (reached_from_anchor[i]) {
      p.elo = -kInfinity;
      p.elo_stderr = kInfinity;
    } else {
      p.elo = kNaN;
      p.elo_stderr = kNaN;
    }
  }
  const size_t m = free_players.size();
  if (m == 0) return out;

  std::vector<char> finite(n, 0);
  finite[size_t(anchor)] = 1;
  for (size_t i : free_players) finite[i] = 1;
  std::vector<double> theta(n, 0);  // natural-log strengths; the anchor's stays 0

  auto log_likelihood = [&](const std::vector<double>& t) {
    double sum = 0;
    for (size_t i = 0; i < n; ++i)
      for (size_t j = 0; j < n; ++j)
        if (finite[i] && finite[j] && points[i * n + j] > 0) sum += points[i * n + j] * log_sigmoid(t[i] - t[j]);
    return sum;
  };
  // Gradient of the log-likelihood over the free players, and the observed information
  // (minus the Hessian): d/dt_i = points_i - sum_j games_ij p_ij, with p_ij = sigmoid(t_i - t_j).
  std::vector<double> gradient(m), information(m * m);
  std::vector<size_t> slot(n, m);
  for (size_t k = 0; k < m; ++k) slot[free_players[k]] = k;
  auto derivatives = [&]() {
    std::fill(gradient.begin(), gradient.end(), 0);
    std::fill(information.begin(), information.end(), 0);
    for (size_t k = 0; k < m; ++k) {
      const size_t i = free_players[k];
      for (size_t j = 0; j < n; ++j) {
        if (!finite[j] || games[i * n + j] == 0) continue;
        const double p = sigmoid(theta[i] - theta[j]);
        gradient[k] += points[i * n + j] - games[i * n + j] * p;
        const double w = games[i * n + j] * p * (1 - p);
        information[k * m + k] += w;
        if (slot[j] < m) information[k * m + slot[j]] -= w;
      }
    }
  };

  double total_points = 0;
  for (double v : points) total_points += v;
  const double gradient_tolerance = 1e-10 * std::max(1.0, total_points);
  out.converged = false;
  double current = log_likelihood(theta);
  for (out.iterations = 0; out.iterations < 200; ++out.iterations) {
    derivatives();
    double largest_gradient = 0;
    for (double g : gradient) largest_gradient = std::max(largest_gradient, std::abs(g));
    if (largest_gradient < gradient_tolerance) {
      out.converged = true;
      break;
    }
    std::vector<double> factor = information;
    if (!cholesky(factor, m)) break;
    const std::vector<double> step = cholesky_solve(factor, m, gradient);
    // Damped step: halve until the (concave) log-likelihood does not fall.
    double scale = 1;
    std::vector<double> trial = theta;
    for (int halving = 0; halving < 60; ++halving, scale *= 0.5) {
      for (size_t k = 0; k < m; ++k) trial[free_players[k]] = theta[free_players[k]] + scale * step[k];
      const double value = log_likelihood(trial);
      if (value >= current) {
        current = value;
        break;
      }
    }
    double largest_step = 0;
    for (size_t k = 0; k < m; ++k) largest_step = std::max(largest_step, std::abs(trial[free_players[k]] - theta[free_players[k]]));
    theta = trial;
    if (largest_step < 1e-12) {
      out.converged = true;
      break;
    }
  }
  derivatives();

  // Standard errors: square roots of the diagonal of the inverse information.
  std::vector<double> factor = information;
  const bool invertible = cholesky(factor, m);
  for (size_t k = 0; k < m; ++k) {
    PlayerRating& p = out.players[free_players[k]];
    p.elo = anchor_elo + kEloPerNat * theta[free_players[k]];
    if (invertible) {
      std::vector<double> unit(m, 0);
      unit[k] = 1;
      p.elo_stderr = kEloPerNat * std::sqrt(cholesky_solve(factor, m, unit)[k]);
    } else {
      p.elo_stderr = kNaN;
    }
  }
  return out;
}

RatingResult bradley_terry(int player_count, const std::vector<GameScore>& games, int anchor, double anchor_elo) {
  std::vector<PairwiseCounts> results;
  results.reserve(games.size());
  for (const GameScore& g : games) {
    PairwiseCounts r{g.player_a, g.player_b, {}};
    if (g.score_a == 1)
      r.counts.wins = 1;
    else if (g.score_a == 0.5)
      r.counts.draws = 1;
    else if (g.score_a == 0)
      r.counts.losses = 1;
    else
      throw std::invalid_argument("bradley_terry: a game score must be 0, 0.5 or 1");
    results.push_back(r);
  }
  return bradley_terry(player_count, results, anchor, anchor_elo);
}

}  // namespace pgmate::arena
