// Statistics of arenas (matches) between engines, as fishtest and fastchess compute them:
// score, Elo difference with a 95% interval and likelihood of superiority from trinomial
// (win/draw/loss) and pentanomial (game pair) counts, fishtest's generalized SPRT, and
// Bradley-Terry maximum-likelihood ratings of many players. Plain structs in and out, no
// I/O, so that SQL functions can wrap them directly.
//
// Elo here is always logistic Elo: a score s corresponds to -400*log10(1/s - 1).
// Scores of exactly 0 or 1 give -infinity or +infinity; no function returns NaN except
// where a result is undefined and documented as NaN (ratings of players unrelated to the
// anchor).
#pragma once

#include <cstdint>
#include <vector>

namespace pgmate::arena {

// z such that Phi(z) = 0.975: the two-sided 95% normal quantile.
inline constexpr double kNormalQuantile975 = 1.959963984540054;

// Logistic Elo of a score in [0, 1]: -400*log10(1/s - 1), +-infinity at 1 and 0.
double elo_from_score(double score);
// The expected score of an Elo difference: 1 / (1 + 10^(-elo/400)).
double score_from_elo(double elo);
// Standard normal cumulative distribution Phi.
double normal_cdf(double x);

// Game results from one player's (A's) side.
struct TrinomialCounts {
  std::int64_t wins = 0;
  std::int64_t draws = 0;
  std::int64_t losses = 0;
};

// Game pairs (one opening, each side once with each colour) by A's points in the pair.
struct PentanomialCounts {
  std::int64_t ll = 0;       // 0 points
  std::int64_t ld = 0;       // 0.5
  std::int64_t dd_wl = 0;    // 1: two draws, or a win and a loss
  std::int64_t wd = 0;       // 1.5
  std::int64_t ww = 0;       // 2
};

struct MatchSummary {
  std::int64_t games = 0;   // games (pentanomial: twice the pairs)
  double score = 0.5;       // A's mean points per game
  double draw_ratio = 0.0;  // trinomial: draws / games; pentanomial: DD/WL pairs / pairs
                            // (fastchess's DrawRatio for pairs)
  double score_stddev = 0;  // per-game standard deviation of the score (see the functions)
  double elo = 0;           // elo_from_score(score)
  double elo_lower = 0;     // 95% interval: elo_from_score(score -+ z * stddev / sqrt(games))
  double elo_upper = 0;
  double los = 0.5;         // likelihood of superiority of A, in [0, 1]
};

// Trinomial summary (fastchess, Ordo, fishtest's stat_util.get_elo on 3 counts):
//   score = (W + D/2) / N, per-game variance = mean of (x - score)^2 over the N games,
//   interval = elo(score -+ 1.959964 * stddev / sqrt(N)), the score bounds clipped to [0, 1],
//   LOS = Phi((W - L) / sqrt(W + L)) (the usual LOS of win/loss counts, draws ignored).
// Edge cases: 0 games gives score 0.5, Elo 0, the interval (-inf, +inf) and LOS 0.5 (nothing
// known; callers check games). All wins (losses) gives Elo +inf (-inf); with no variance the
// normal interval collapses onto the estimate, as in fastchess, e.g. all draws: [0, 0].
// W + L = 0 gives LOS 0.5.
MatchSummary summarize(const TrinomialCounts& counts);

// Pentanomial summary (fishtest's stat_util.get_elo on 5 counts, fastchess's pentanomial
// Elo): the per-pair score p/2 (p = points of the pair) has variance v over the pairs; the
// per-game score is the same mean, and the interval is elo(score -+ 1.959964 * sqrt(v / pairs)).
// score_stddev is the per-game figure fishtest prints, sqrt(2 v). LOS = Phi((score - 0.5) /
// sqrt(v / pairs)) (fishtest), 1, 0 or 0.5 when v = 0. Same edge cases as the trinomial.
MatchSummary summarize(const PentanomialCounts& counts);

enum class SprtVerdict { kContinue, kAcceptH0, kAcceptH1 };

// SPRT of H0: elo = elo0 against H1: elo = elo1, in logistic Elo (fishtest's
// elo_model="logistic"; its normalized Elo model is not provided).
struct SprtParameters {
  double elo0 = 0;
  double elo1 = 2;
  double alpha = 0.05;  // false acceptance of H1 when elo = elo0
  double beta = 0.05;   // false acceptance of H0 when elo = elo1
};

struct SprtResult {
  double llr = 0;          // generalized log-likelihood ratio, H1 over H0
  double lower_bound = 0;  // log(beta / (1 - alpha)): H0 accepted below it
  double upper_bound = 0;  // log((1 - beta) / alpha): H1 accepted above it
  SprtVerdict verdict = SprtVerdict::kContinue;
};

// fishtest's GSPRT (LLRcalc.LLR_logistic): the result distribution is estimated by maximum
// likelihood under each hypothesis' mean score s = score_from_elo(elo), the multinomial MLE
// with a fixed mean being p_i = phat_i / (1 + x (a_i - s)) with x the root of
// sum phat_i (a_i - s) / (1 + x (a_i - s)) = 0 (van den Bergh, "support_MLE_multinomial").
// LLR = sum n_i log(p1_i / p0_i). As in fishtest, empty cells count 0.001 (a prior that keeps
// the MLE inside the simplex); with no games at all the LLR is 0. Plain Wald bounds, without
// fishtest's dynamic overshoot correction. The verdict is decided strictly beyond a bound.
SprtResult sprt(const PentanomialCounts& counts, const SprtParameters& parameters);
SprtResult sprt(const TrinomialCounts& counts, const SprtParameters& parameters);

// Games between two players, from player_a's side.
struct PairwiseCounts {
  int player_a = 0;
  int player_b = 0;
  TrinomialCounts counts;  // player_a's wins, draws, losses against player_b
};

struct GameScore {
  int player_a = 0;
  int player_b = 0;
  double score_a = 0;  // 0, 0.5 or 1
};

struct PlayerRating {
  double elo = 0;           // see bradley_terry for the infinite and NaN cases
  double elo_stderr = 0;    // 0 for the anchor; +inf where elo is infinite; NaN where elo is
  std::int64_t games = 0;
  double points = 0;
};

struct RatingResult {
  std::vector<PlayerRating> players;  // indexed by player number
  int iterations = 0;                 // Newton iterations on the finite part
  bool converged = true;
};

// Bradley-Terry maximum-likelihood ratings: P(i scores against j) = g_i / (g_i + g_j),
// a draw counting as half a win for each side; Elo_i = 400 log10(g_i) + the shift that puts
// the anchor at anchor_elo. Fitted by damped Newton steps on log g (the log-likelihood is
// concave there); standard errors from the inverse of the observed Fisher information (minus
// the Hessian) with the anchor's rating fixed, so they are errors relative to the anchor.
//
// A finite MLE exists only among players who beat or are beaten by each other through
// chains of points scored (Zermelo, Ford 1957): with i -> j when i scored any points
// against j, the anchor's strongly connected component gets finite ratings (fitted on the
// games inside it). A player from whom a chain reaches the anchor but not back scored more
// than any finite rating explains: +infinity; one reached from the anchor but with no chain
// back: -infinity; one with neither (including players without games or cut off from the
// anchor): NaN. Callers who prefer finite ratings for perfect scores can add a virtual draw
// against the anchor to the input. Players are numbered 0..player_count-1.
RatingResult bradley_terry(int player_count, const std::vector<PairwiseCounts>& results,
                           int anchor, double anchor_elo = 0);
RatingResult bradley_terry(int player_count, const std::vector<GameScore>& games, int anchor,
                           double anchor_elo = 0);

}  // namespace pgmate::arena
