// Arena statistics against values computed by hand, against published fastchess match
// summaries, and against fishtest SPRT results quoted in Stockfish commit messages.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <stdexcept>
#include <vector>

#include "arena/stats.h"

namespace pgmate::arena {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// ---- Trinomial ----

// 60 wins, 0 draws, 40 losses. score 0.6, Elo = -400 log10(1/0.6 - 1) = 70.4365.
// Per-game variance 0.6 * 0.4 = 0.24, standard error sqrt(0.24 / 100) = 0.0489898;
// 0.6 -+ 1.959964 * 0.0489898 = [0.5039818, 0.6960182] -> Elo [2.7669, 143.9092].
// LOS = Phi((60 - 40) / sqrt(100)) = Phi(2) = 0.9772499.
TEST(ArenaTrinomial, SixtyForty) {
  const MatchSummary s = summarize(TrinomialCounts{60, 0, 40});
  EXPECT_EQ(s.games, 100);
  EXPECT_DOUBLE_EQ(s.score, 0.6);
  EXPECT_DOUBLE_EQ(s.draw_ratio, 0.0);
  EXPECT_NEAR(s.score_stddev, std::sqrt(0.24), 1e-12);
  EXPECT_NEAR(s.elo, 70.4365036, 1e-6);
  EXPECT_NEAR(s.elo_lower, 2.7668732, 1e-6);
  EXPECT_NEAR(s.elo_upper, 143.9092330, 1e-6);
  EXPECT_NEAR(s.los, 0.9772499, 1e-7);
}

// 30 wins, 50 draws, 20 losses: score (30 + 25) / 100 = 0.55, Elo 34.8601.
// Variance (30 * 0.45^2 + 50 * 0.05^2 + 20 * 0.55^2) / 100 = 0.1225 (stddev 0.35);
// 0.55 -+ 1.959964 * 0.035 -> Elo [-12.9297, 84.0108]. LOS = Phi(10 / sqrt(50)) = 0.9213504.
TEST(ArenaTrinomial, WithDraws) {
  const MatchSummary s = summarize(TrinomialCounts{30, 50, 20});
  EXPECT_DOUBLE_EQ(s.score, 0.55);
  EXPECT_DOUBLE_EQ(s.draw_ratio, 0.5);
  EXPECT_NEAR(s.score_stddev, 0.35, 1e-12);
  EXPECT_NEAR(s.elo, 34.8600703, 1e-6);
  EXPECT_NEAR(s.elo_lower, -12.9296935, 1e-6);
  EXPECT_NEAR(s.elo_upper, 84.0107626, 1e-6);
  EXPECT_NEAR(s.los, 0.9213504, 1e-7);
}

// The other side of a match is the mirror image.
TEST(ArenaTrinomial, SwappingSidesNegatesElo) {
  const MatchSummary a = summarize(TrinomialCounts{30, 50, 20});
  const MatchSummary b = summarize(TrinomialCounts{20, 50, 30});
  EXPECT_NEAR(b.elo, -a.elo, 1e-9);
  EXPECT_NEAR(b.elo_lower, -a.elo_upper, 1e-9);
  EXPECT_NEAR(b.elo_upper, -a.elo_lower, 1e-9);
  EXPECT_NEAR(b.los, 1 - a.los, 1e-12);
}

TEST(ArenaTrinomial, NoGames) {
  const MatchSummary s = summarize(TrinomialCounts{});
  EXPECT_EQ(s.games, 0);
  EXPECT_EQ(s.score, 0.5);
  EXPECT_EQ(s.elo, 0);
  EXPECT_EQ(s.elo_lower, -kInf);
  EXPECT_EQ(s.elo_upper, kInf);
  EXPECT_EQ(s.los, 0.5);
  EXPECT_EQ(s.draw_ratio, 0);
}

TEST(ArenaTrinomial, AllWinsAndAllLossesAreInfinite) {
  const MatchSummary w = summarize(TrinomialCounts{10, 0, 0});
  EXPECT_EQ(w.score, 1);
  EXPECT_EQ(w.elo, kInf);
  EXPECT_EQ(w.elo_upper, kInf);
  // No variance observed: the interval takes the floor of 0.01 per game,
  // 1 - 1.959964 * sqrt(0.01 / 10) = 0.938020 -> Elo 471.99.
  EXPECT_NEAR(w.elo_lower, 471.99, 0.01);
  EXPECT_NEAR(w.los, 0.9992173, 1e-7);  // Phi(10 / sqrt(10)) = Phi(3.1623)
  const MatchSummary l = summarize(TrinomialCounts{0, 0, 10});
  EXPECT_EQ(l.elo, -kInf);
  EXPECT_EQ(l.elo_lower, -kInf);
  EXPECT_NEAR(l.elo_upper, -471.99, 0.01);
  EXPECT_NEAR(l.los, 1 - 0.9992173, 1e-7);
  for (const MatchSummary& s : {w, l}) {
    EXPECT_FALSE(std::isnan(s.score_stddev));
    EXPECT_FALSE(std::isnan(s.los));
  }
}

TEST(ArenaTrinomial, AllDraws) {
  const MatchSummary s = summarize(TrinomialCounts{0, 12, 0});
  EXPECT_EQ(s.score, 0.5);
  EXPECT_EQ(s.draw_ratio, 1);
  EXPECT_EQ(s.elo, 0);
  // Twelve draws say Elo 0, not Elo 0 for certain: 0.5 -+ 1.959964 * sqrt(0.01 / 12).
  EXPECT_NEAR(s.elo_lower, -39.48, 0.01);
  EXPECT_NEAR(s.elo_upper, 39.48, 0.01);
  EXPECT_EQ(s.los, 0.5);
}

TEST(ArenaTrinomial, NegativeCountsAreRejected) {
  EXPECT_THROW(summarize(TrinomialCounts{1, -1, 0}), std::invalid_argument);
}

TEST(ArenaElo, Conversions) {
  EXPECT_NEAR(score_from_elo(70.4365036), 0.6, 1e-9);
  EXPECT_NEAR(elo_from_score(score_from_elo(-250)), -250, 1e-9);
  EXPECT_EQ(elo_from_score(0.5), 0);
  EXPECT_EQ(elo_from_score(1), kInf);
  EXPECT_EQ(elo_from_score(0), -kInf);
  EXPECT_NEAR(normal_cdf(kNormalQuantile975), 0.975, 1e-12);
}

// ---- Pentanomial ----

// Pairs [LL, LD, DD/WL, WD, WW] = [2, 8, 20, 12, 8] (50 pairs, 100 games). Per-pair scores
// 0, .25, .5, .75, 1: mean (8 * .25 + 20 * .5 + 12 * .75 + 8) / 50 = 29 / 50 = 0.58.
// Variance (2 * .58^2 + 8 * .33^2 + 20 * .08^2 + 12 * .17^2 + 8 * .42^2) / 50 = 3.43 / 50 = 0.0686;
// per-game stddev sqrt(2 * 0.0686) = 0.3704052. Standard error sqrt(0.0686 / 50) = 0.0370405;
// 0.58 -+ 1.959964 * 0.0370405 -> Elo [5.1438, 109.5254]; Elo(0.58) = 56.0715;
// LOS = Phi(0.08 / 0.0370405) = Phi(2.1598) = 0.9846058.
TEST(ArenaPentanomial, ByHand) {
  const MatchSummary s = summarize(PentanomialCounts{2, 8, 20, 12, 8});
  EXPECT_EQ(s.games, 100);
  EXPECT_DOUBLE_EQ(s.score, 0.58);
  EXPECT_DOUBLE_EQ(s.draw_ratio, 0.4);
  EXPECT_NEAR(s.score_stddev, 0.3704052, 1e-7);
  EXPECT_NEAR(s.elo, 56.0714813, 1e-6);
  EXPECT_NEAR(s.elo_lower, 5.1437552, 1e-6);
  EXPECT_NEAR(s.elo_upper, 109.5254324, 1e-6);
  EXPECT_NEAR(s.los, 0.9846058, 1e-7);
}

// Pairs cancel variance that games alone show: the same 100 games as trinomial counts
// (20 pairs scoring 1 point as DD, the rest as their games) give a wider interval.
TEST(ArenaPentanomial, PairingNarrowsTheIntervalOfCorrelatedPairs) {
  // [2, 8, 20, 12, 8] as games: W = 8*2 + 12 = 28 + DD/WL; take the 20 one-point pairs as
  // 10 DD and 10 WL: W = 38, L = 2*2 + 8 + 10 = 22, D = 8 + 20 + 12 = 40.
  const MatchSummary games = summarize(TrinomialCounts{38, 40, 22});
  const MatchSummary pairs = summarize(PentanomialCounts{2, 8, 20, 12, 8});
  EXPECT_DOUBLE_EQ(games.score, pairs.score);
  EXPECT_LT(pairs.elo_upper - pairs.elo_lower, games.elo_upper - games.elo_lower);
}

// fastchess's published summaries ("Elo: x +/- y" is (upper - lower) / 2, DrawRatio is the
// share of DD/WL pairs, LOS in percent), quoted in engine repositories' match logs:
//   Ptnml(0-2): [352, 579, 1264, 743, 464] -> Elo: 19.83 +/- 6.77, LOS: 100.00 %, DrawRatio: 37.15 %
//   Ptnml(0-2): [1, 10, 78, 48, 13]        -> Elo: 72.85 +/- 22.33, DrawRatio: 52.00 %
//   Ptnml(0-2): [0, 0, 1, 8, 1]            -> Elo: 190.85 +/- 65.54
//   Ptnml(0-2): [0, 1, 0, 1, 0]            -> Elo: -0.00 +/- 296.58, LOS: 50.00 %
TEST(ArenaPentanomial, MatchesFastchessOutput) {
  struct Case {
    PentanomialCounts counts;
    double elo, plus_minus, draw_ratio;
  };
  for (const Case& c : {Case{{352, 579, 1264, 743, 464}, 19.83, 6.77, 0.3715},
                        Case{{1, 10, 78, 48, 13}, 72.85, 22.33, 0.52},
                        Case{{0, 0, 1, 8, 1}, 190.85, 65.54, 0.1},
                        Case{{0, 1, 0, 1, 0}, 0.0, 296.58, 0.0}}) {
    const MatchSummary s = summarize(c.counts);
    EXPECT_NEAR(s.elo, c.elo, 0.005);
    EXPECT_NEAR((s.elo_upper - s.elo_lower) / 2, c.plus_minus, 0.005);
    EXPECT_NEAR(s.draw_ratio, c.draw_ratio, 0.00005);
  }
  EXPECT_GT(summarize(PentanomialCounts{352, 579, 1264, 743, 464}).los, 0.99995);
  EXPECT_EQ(summarize(PentanomialCounts{0, 1, 0, 1, 0}).los, 0.5);
}

TEST(ArenaPentanomial, EdgeCases) {
  const MatchSummary none = summarize(PentanomialCounts{});
  EXPECT_EQ(none.games, 0);
  EXPECT_EQ(none.elo, 0);
  EXPECT_EQ(none.elo_lower, -kInf);
  EXPECT_EQ(none.elo_upper, kInf);
  EXPECT_EQ(none.los, 0.5);
  const MatchSummary all_won = summarize(PentanomialCounts{0, 0, 0, 0, 7});
  EXPECT_EQ(all_won.games, 14);
  EXPECT_EQ(all_won.elo, kInf);
  EXPECT_EQ(all_won.los, 1);
  const MatchSummary all_lost = summarize(PentanomialCounts{7, 0, 0, 0, 0});
  EXPECT_EQ(all_lost.elo, -kInf);
  EXPECT_EQ(all_lost.los, 0);
  // Every pair 1.5 points: no variance observed, Elo(0.75) = 190.85, and an interval from
  // the variance floor 0.01 per pair: 0.75 -+ 1.959964 * sqrt(0.01 / 5) = [0.66235, 0.83765]
  // -> Elo [117.3, 284.9], not a width of 0.
  const MatchSummary even = summarize(PentanomialCounts{0, 0, 0, 5, 0});
  EXPECT_NEAR(even.elo, 190.8485019, 1e-6);
  EXPECT_NEAR(even.elo_lower, -400 * std::log10(1 / 0.6623477 - 1), 0.01);
  EXPECT_NEAR(even.elo_upper, -400 * std::log10(1 / 0.8376523 - 1), 0.01);
  EXPECT_EQ(even.los, 1);
  // Four games, two pairs of 1.5 points: a wide interval, not 190.8 [190.8, 190.8].
  const MatchSummary four = summarize(PentanomialCounts{0, 0, 0, 2, 0});
  EXPECT_LT(four.elo_lower, 100);
  EXPECT_GT(four.elo_upper, 300);
  // All won: the lower bound is finite, the upper infinite.
  EXPECT_TRUE(std::isfinite(all_won.elo_lower));
  EXPECT_GT(all_won.elo_lower, 300);
  EXPECT_EQ(all_won.elo_upper, kInf);
  // Ten draws: Elo 0 with an interval around it.
  const MatchSummary draws = summarize(TrinomialCounts{0, 10, 0});
  EXPECT_EQ(draws.elo, 0);
  EXPECT_LT(draws.elo_lower, -30);
  EXPECT_GT(draws.elo_upper, 30);
  EXPECT_THROW(summarize(PentanomialCounts{0, 0, -1, 0, 0}), std::invalid_argument);
}

// ---- SPRT ----

// fishtest's logistic-Elo SPRTs ({elo0,elo1} in braces on fishtest), final LLR as printed
// (2 decimals) in Stockfish commit messages with the test's pentanomial counts:
//   tests/view/60428c84ddcba5f0627bb6e4  {-0.25,1.25}  Ptnml 61, 1226, 6644, 1387, 50          LLR  2.96
//   tests/view/605128702433018de7a38ca1  {0.25,1.25}   Ptnml 13, 1176, 17184, 1178, 21         LLR -3.00
//   tests/view/604bc7632433018de7a38982  {-0.25,1.25}  Ptnml 680, 14513, 75831, 14861, 715     LLR  2.93
//   tests/view/602ceea57f517a561bc49bf0  {0.25,1.25}   Ptnml 2, 288, 4365, 378, 3              LLR  2.98
//   tests/view/5f3b838bb38d442594aabed7  {-1.50,0.50}  Ptnml 0, 200, 1860, 237, 3 (an empty cell) LLR 2.93
TEST(ArenaSprt, MatchesFishtestResults) {
  struct Case {
    PentanomialCounts counts;
    double elo0, elo1, llr;
    SprtVerdict verdict;
  };
  for (const Case& c : {Case{{61, 1226, 6644, 1387, 50}, -0.25, 1.25, 2.96, SprtVerdict::kAcceptH1},
                        Case{{13, 1176, 17184, 1178, 21}, 0.25, 1.25, -3.00, SprtVerdict::kAcceptH0},
                        Case{{680, 14513, 75831, 14861, 715}, -0.25, 1.25, 2.93, SprtVerdict::kContinue},
                        Case{{2, 288, 4365, 378, 3}, 0.25, 1.25, 2.98, SprtVerdict::kAcceptH1},
                        Case{{0, 200, 1860, 237, 3}, -1.5, 0.5, 2.93, SprtVerdict::kContinue}}) {
    const SprtResult r = sprt(c.counts, SprtParameters{c.elo0, c.elo1, 0.05, 0.05});
    EXPECT_NEAR(r.llr, c.llr, 0.01) << c.counts.ll << " " << c.counts.ww;
    // 2.93 printed for a passed test: fishtest stops earlier, its overshoot correction lowers
    // the bound; with the plain Wald bound 2.944 the same LLR means continue.
    EXPECT_EQ(r.verdict, c.verdict) << r.llr;
  }
}

// More digits than the commit messages print, from fishtest's LLRcalc.LLR_logistic run in
// double precision (scipy's brentq swapped for bisection): these pin the empty-cell prior
// (0.001 per empty cell moves the first by 1.5e-4 and the second by 2.4e-4 compared with
// no prior) and the precision of the root.
TEST(ArenaSprt, MatchesFishtestAlgorithmToMoreDigits) {
  EXPECT_NEAR(sprt(PentanomialCounts{0, 200, 1860, 237, 3}, SprtParameters{-1.5, 0.5}).llr, 2.9320141355896334, 1e-7);
  EXPECT_NEAR(sprt(PentanomialCounts{61, 1226, 6644, 1387, 50}, SprtParameters{-0.25, 1.25}).llr, 2.960665051046664,
              1e-7);
  EXPECT_NEAR(sprt(PentanomialCounts{0, 0, 1, 8, 1}, SprtParameters{0, 50}).llr, 1.3356830187888125, 1e-7);
}

TEST(ArenaSprt, Bounds) {
  const SprtResult r = sprt(PentanomialCounts{}, SprtParameters{0, 2, 0.05, 0.05});
  EXPECT_NEAR(r.lower_bound, -2.9444390, 1e-7);  // log(0.05 / 0.95)
  EXPECT_NEAR(r.upper_bound, 2.9444390, 1e-7);
  const SprtResult asymmetric = sprt(PentanomialCounts{}, SprtParameters{0, 2, 0.1, 0.02});
  EXPECT_NEAR(asymmetric.lower_bound, std::log(0.02 / 0.9), 1e-12);
  EXPECT_NEAR(asymmetric.upper_bound, std::log(0.98 / 0.1), 1e-12);
  EXPECT_THROW(sprt(PentanomialCounts{}, SprtParameters{0, 2, 0, 0.05}), std::invalid_argument);
}

TEST(ArenaSprt, NothingPlayedIsZero) {
  for (const SprtResult& r : {sprt(PentanomialCounts{}, SprtParameters{}), sprt(TrinomialCounts{}, SprtParameters{})}) {
    EXPECT_EQ(r.llr, 0);
    EXPECT_EQ(r.verdict, SprtVerdict::kContinue);
  }
}

// Without draws the trinomial MLE under mean s puts s on wins, so the LLR is the binomial
// W log(s1/s0) + L log((1-s1)/(1-s0)); the empty draw cell (0.001) moves it by < 1e-4.
// W 60, L 40, elo0 -5, elo1 5: s0 = 0.4928044, s1 = 0.5071956 -> 0.5756463.
TEST(ArenaSprt, TrinomialWithoutDrawsIsBinomial) {
  const double s0 = score_from_elo(-5), s1 = score_from_elo(5);
  const double binomial = 60 * std::log(s1 / s0) + 40 * std::log((1 - s1) / (1 - s0));
  EXPECT_NEAR(binomial, 0.5756463, 1e-6);
  EXPECT_NEAR(sprt(TrinomialCounts{60, 0, 40}, SprtParameters{-5, 5}).llr, binomial, 1e-4);
}

// With many games the GSPRT approaches the normal approximation (van den Bergh, "GSPRT
// approximation"): N (s1 - s0) (2 s - s0 - s1) / (2 var). W 2200, D 6000, L 2000, {0, 5}:
// s = 0.50990, var = 0.0990, approximation 4.4288.
TEST(ArenaSprt, TrinomialNearNormalApproximation) {
  const TrinomialCounts c{2200, 6000, 2000};
  const double n = 10200, s = (2200 + 3000) / n;
  const double var = (2200 * (1 - s) * (1 - s) + 6000 * (0.5 - s) * (0.5 - s) + 2000 * s * s) / n;
  const double s0 = score_from_elo(0), s1 = score_from_elo(5);
  const double approximation = n * (s1 - s0) * (2 * s - s0 - s1) / (2 * var);
  EXPECT_NEAR(approximation, 4.4288, 1e-4);
  const SprtResult r = sprt(c, SprtParameters{0, 5});
  EXPECT_NEAR(r.llr, approximation, 0.01);
  EXPECT_EQ(r.verdict, SprtVerdict::kAcceptH1);
}

TEST(ArenaSprt, SymmetryAndSign) {
  const PentanomialCounts c{0, 200, 1860, 237, 3};
  const PentanomialCounts mirrored{3, 237, 1860, 200, 0};
  // The other side's test of -elo1 against -elo0 is the same test with hypotheses swapped.
  EXPECT_NEAR(sprt(mirrored, SprtParameters{-0.5, 1.5}).llr, -sprt(c, SprtParameters{-1.5, 0.5}).llr, 1e-9);
  // Swapping elo0 and elo1 negates the LLR.
  EXPECT_NEAR(sprt(c, SprtParameters{0.5, -1.5}).llr, -sprt(c, SprtParameters{-1.5, 0.5}).llr, 1e-9);
  // A balanced result between symmetric hypotheses is no evidence either way.
  EXPECT_NEAR(sprt(PentanomialCounts{10, 50, 100, 50, 10}, SprtParameters{-2, 2}).llr, 0, 1e-9);
  // Equal hypotheses: no evidence.
  EXPECT_NEAR(sprt(c, SprtParameters{1, 1}).llr, 0, 1e-12);
  // Losing is evidence for H0.
  const SprtResult losing = sprt(PentanomialCounts{300, 400, 1000, 200, 100}, SprtParameters{0, 2});
  EXPECT_LT(losing.llr, 0);
  EXPECT_EQ(losing.verdict, SprtVerdict::kAcceptH0);
}

TEST(ArenaSprt, MonotoneInResults) {
  // Turning one-point pairs into 1.5-point pairs only helps H1.
  double previous = -kInf;
  for (int better = 0; better <= 400; better += 50) {
    const double llr = sprt(PentanomialCounts{100, 400, 1000 - better, 400 + better, 100}, SprtParameters{0, 5}).llr;
    EXPECT_GT(llr, previous) << better;
    previous = llr;
  }
  // More of the same winning results: the LLR grows (about linearly).
  const double once = sprt(PentanomialCounts{10, 40, 100, 50, 15}, SprtParameters{0, 5}).llr;
  const double twice = sprt(PentanomialCounts{20, 80, 200, 100, 30}, SprtParameters{0, 5}).llr;
  EXPECT_GT(once, 0);
  EXPECT_NEAR(twice, 2 * once, 1e-9);
}

// ---- Bradley-Terry ----

// Two players, 60 wins to 40: the MLE is the match Elo, 70.4365, and the information is
// n p (1 - p) = 100 * 0.24 = 24 in natural-log units: SE = (400 / ln 10) / sqrt(24) = 35.4600.
TEST(ArenaBradleyTerry, TwoPlayers) {
  const RatingResult r = bradley_terry(2, {PairwiseCounts{1, 0, {60, 0, 40}}}, 0, 1000);
  ASSERT_TRUE(r.converged);
  EXPECT_EQ(r.players[0].elo, 1000);
  EXPECT_EQ(r.players[0].elo_stderr, 0);
  EXPECT_NEAR(r.players[1].elo, 1070.4365036, 1e-6);
  EXPECT_NEAR(r.players[1].elo_stderr, 35.4599960, 1e-6);
  EXPECT_EQ(r.players[1].games, 100);
  EXPECT_EQ(r.players[1].points, 60);
  EXPECT_EQ(r.players[0].points, 40);
  // Anchoring the other player only moves the scale.
  const RatingResult other = bradley_terry(2, {PairwiseCounts{1, 0, {60, 0, 40}}}, 1, 0);
  EXPECT_NEAR(other.players[0].elo, -70.4365036, 1e-6);
  EXPECT_NEAR(other.players[0].elo_stderr, 35.4599960, 1e-6);
}

// Millions of games: the convergence test must not demand more than rounding allows.
TEST(ArenaBradleyTerry, LargeCountsConverge) {
  const RatingResult r = bradley_terry(3, {PairwiseCounts{1, 0, {3000000, 2000000, 1000000}},
                                           PairwiseCounts{2, 1, {3000000, 2000000, 1000000}}}, 0);
  ASSERT_TRUE(r.converged);
  EXPECT_LT(r.iterations, 50);
  // Each step is a 2/3 score: Elo(2/3) = 120.4120 twice over the chain.
  EXPECT_NEAR(r.players[1].elo, 120.4119983, 1e-6);
  EXPECT_NEAR(r.players[2].elo, 240.8239965, 1e-6);
}

// Draws count half a win each: 40 wins, 40 draws, 20 losses is a 0.6 score as well.
TEST(ArenaBradleyTerry, DrawsAreHalfWins) {
  const RatingResult r = bradley_terry(2, {PairwiseCounts{1, 0, {40, 40, 20}}}, 0);
  EXPECT_NEAR(r.players[1].elo, 70.4365036, 1e-6);
  std::vector<GameScore> games;
  for (int i = 0; i < 40; ++i) games.push_back({1, 0, 1});
  for (int i = 0; i < 40; ++i) games.push_back({0, 1, 0.5});
  for (int i = 0; i < 20; ++i) games.push_back({0, 1, 1});
  const RatingResult from_games = bradley_terry(2, games, 0);
  EXPECT_NEAR(from_games.players[1].elo, 70.4365036, 1e-6);
  EXPECT_EQ(from_games.players[1].games, 100);
  EXPECT_THROW(bradley_terry(2, std::vector<GameScore>{{0, 1, 0.7}}, 0), std::invalid_argument);
}

// A beats B 2-1, B beats C 2-1, C beats A 2-1: by symmetry all equal. At equal strengths
// every pair (3 games) has information 3 * 1/4; with A fixed the information of (B, C) is
// 0.75 * [[2, -1], [-1, 2]], whose inverse has diagonal 2 / (0.75 * 3) = 0.8889:
// SE = 173.7178 * sqrt(0.8889) = 163.7827.
TEST(ArenaBradleyTerry, SymmetricCycle) {
  const std::vector<PairwiseCounts> results{{0, 1, {2, 0, 1}}, {1, 2, {2, 0, 1}}, {2, 0, {2, 0, 1}}};
  const RatingResult r = bradley_terry(3, results, 0);
  ASSERT_TRUE(r.converged);
  for (int i = 1; i < 3; ++i) {
    EXPECT_NEAR(r.players[i].elo, 0, 1e-6);
    EXPECT_NEAR(r.players[i].elo_stderr, 163.7827057, 1e-6);
  }
}

// An uneven cycle: the MLE satisfies the score equations, each player's points equal the
// model's expected points against the opponents actually met.
TEST(ArenaBradleyTerry, UnevenCycleSatisfiesScoreEquations) {
  const std::vector<PairwiseCounts> results{
      {0, 1, {7, 2, 3}}, {1, 2, {5, 4, 1}}, {2, 0, {3, 1, 4}}, {3, 0, {1, 1, 6}}, {3, 2, {2, 2, 2}}};
  const RatingResult r = bradley_terry(4, results, 2, 1500);
  ASSERT_TRUE(r.converged);
  std::vector<double> expected(4, 0);
  for (const PairwiseCounts& p : results) {
    const double n = double(p.counts.wins + p.counts.draws + p.counts.losses);
    const double s = score_from_elo(r.players[p.player_a].elo - r.players[p.player_b].elo);
    expected[p.player_a] += n * s;
    expected[p.player_b] += n * (1 - s);
  }
  for (int i = 0; i < 4; ++i) {
    EXPECT_NEAR(expected[i], r.players[i].points, 1e-6) << i;
    EXPECT_TRUE(std::isfinite(r.players[i].elo_stderr)) << i;
  }
  EXPECT_EQ(r.players[2].elo, 1500);
  // Player 0 scored 8.5 / 12 against player 1 and 4.5 / 8 against 2: above both.
  EXPECT_GT(r.players[0].elo, r.players[1].elo);
}

// Synthetic games from known ratings (draw probability min(s, 1 - s)), 400 games per pair:
// the fit recovers every rating within three standard errors, and the errors are about
// what 400 games per pair give.
TEST(ArenaBradleyTerry, RecoversKnownRatings) {
  const std::vector<double> truth{0, 120, -80, 260, 40, -200};
  const int n = int(truth.size());
  std::mt19937_64 rng(20240611);
  auto uniform = [&] { return double(rng() >> 11) * 0x1.0p-53; };
  std::vector<PairwiseCounts> results;
  for (int i = 0; i < n; ++i)
    for (int j = i + 1; j < n; ++j) {
      PairwiseCounts p{i, j, {}};
      const double s = score_from_elo(truth[i] - truth[j]);
      const double draw = std::min(s, 1 - s), win = s - draw / 2;
      for (int g = 0; g < 400; ++g) {
        const double u = uniform();
        if (u < win)
          ++p.counts.wins;
        else if (u < win + draw)
          ++p.counts.draws;
        else
          ++p.counts.losses;
      }
      results.push_back(p);
    }
  const RatingResult r = bradley_terry(n, results, 0, truth[0]);
  ASSERT_TRUE(r.converged);
  for (int i = 1; i < n; ++i) {
    EXPECT_NEAR(r.players[i].elo, truth[i], 3 * r.players[i].elo_stderr) << i;
    EXPECT_GT(r.players[i].elo_stderr, 5) << i;
    EXPECT_LT(r.players[i].elo_stderr, 30) << i;
  }
}

// Perfect scores and players the anchor cannot be compared with.
TEST(ArenaBradleyTerry, InfiniteAndUndefinedRatings) {
  // 0 and 1 trade wins; 2 beat 0 every time; 1 beat 3 every time; 4 beat 3 (4 and the
  // anchor are linked only through 3, who lost to both); 5 and 6 played only each other;
  // 7 never played.
  const std::vector<PairwiseCounts> results{{0, 1, {3, 1, 2}}, {2, 0, {4, 0, 0}}, {1, 3, {5, 0, 0}},
                                            {4, 3, {2, 0, 0}}, {5, 6, {1, 1, 1}}};
  const RatingResult r = bradley_terry(8, results, 0);
  EXPECT_TRUE(std::isfinite(r.players[1].elo));
  // With 2 and 3 at infinity, 0 and 1 are fitted on their own games: 3.5 / 6 points.
  EXPECT_NEAR(r.players[0].elo - r.players[1].elo, elo_from_score(3.5 / 6), 1e-6);
  EXPECT_EQ(r.players[2].elo, kInf);
  EXPECT_EQ(r.players[2].elo_stderr, kInf);
  EXPECT_EQ(r.players[3].elo, -kInf);
  for (int i : {4, 5, 6, 7}) {
    EXPECT_TRUE(std::isnan(r.players[i].elo)) << i;
    EXPECT_TRUE(std::isnan(r.players[i].elo_stderr)) << i;
  }
  EXPECT_EQ(r.players[7].games, 0);
  EXPECT_EQ(r.players[5].games, 3);
}

TEST(ArenaBradleyTerry, OnePlayerAndBadInput) {
  const RatingResult alone = bradley_terry(1, std::vector<PairwiseCounts>{}, 0, 1500);
  ASSERT_EQ(alone.players.size(), 1u);
  EXPECT_EQ(alone.players[0].elo, 1500);
  EXPECT_EQ(alone.players[0].elo_stderr, 0);
  EXPECT_THROW(bradley_terry(2, std::vector<PairwiseCounts>{{0, 0, {1, 0, 0}}}, 0), std::invalid_argument);
  EXPECT_THROW(bradley_terry(2, std::vector<PairwiseCounts>{{0, 2, {1, 0, 0}}}, 0), std::invalid_argument);
  EXPECT_THROW(bradley_terry(2, std::vector<PairwiseCounts>{}, 2), std::invalid_argument);
  EXPECT_THROW(bradley_terry(0, std::vector<PairwiseCounts>{}, 0), std::invalid_argument);
}

}  // namespace
}  // namespace pgmate::arena
