// Tests for src/measure/stats.cpp.
#include "tunekit/stats.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

namespace tunekit::stats {
namespace {

TEST(Stats, OrderStatistics) {
  std::vector<double> xs{5, 1, 4, 2, 3};
  EXPECT_DOUBLE_EQ(min(xs), 1);
  EXPECT_DOUBLE_EQ(median(xs), 3);
  EXPECT_DOUBLE_EQ(mean(xs), 3);
  EXPECT_DOUBLE_EQ(mad(xs), 1);  // deviations 2,2,1,1,0 -> 1
  EXPECT_DOUBLE_EQ(quantile(xs, 0.0), 1);
  EXPECT_DOUBLE_EQ(quantile(xs, 1.0), 5);
  EXPECT_DOUBLE_EQ(quantile(xs, 0.1), 1.4);
  std::vector<double> even{1, 2, 3, 4};
  EXPECT_DOUBLE_EQ(median(even), 2.5);
}

TEST(Stats, EmptyIsNaN) {
  std::vector<double> none;
  EXPECT_TRUE(std::isnan(median(none)));
  EXPECT_TRUE(std::isnan(min(none)));
  EXPECT_EQ(stalled_fraction(none, 2), 0);
}

TEST(Stats, StalledFraction) {
  std::vector<double> xs{1, 1, 1, 2, 2.5, 3};
  EXPECT_DOUBLE_EQ(stalled_fraction(xs, 2.0), 2.0 / 6);  // 2.0 is not over 2x
}

TEST(Stats, MedianOfRatiosKeepsOnlyPositiveFiniteOnes) {
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  std::vector<double> ratios{0.5, inf, 0.0, -2.0, nan, 0.7, 0.6};
  EXPECT_EQ(positive_finite(ratios), (std::vector<double>{0.5, 0.7, 0.6}));
  EXPECT_DOUBLE_EQ(median_of_ratios(ratios), 0.6);
  std::vector<double> none{inf, 0.0, nan};
  EXPECT_TRUE(std::isnan(median_of_ratios(none)));
}

TEST(Stats, PairedScoreScoresCleanPairs) {
  std::vector<double> ref(10, 2.0);
  std::vector<double> cand(10, 1.0);
  PairedScore s = paired_score(ref, cand, {.min_pairs = 8, .max_relative_mad = 0.25});
  EXPECT_TRUE(s.scored) << s.why;
  EXPECT_DOUBLE_EQ(s.ratio, 0.5);
  EXPECT_EQ(s.pairs, 10);
}

TEST(Stats, PairedScoreIsNoneForTooFewPairs) {
  std::vector<double> ref(7, 2.0);
  std::vector<double> cand(7, 1.0);
  PairedScore s = paired_score(ref, cand, {.min_pairs = 8, .max_relative_mad = 0.25});
  EXPECT_FALSE(s.scored);
  EXPECT_EQ(s.pairs, 7);
  EXPECT_NE(s.why.find("fewer than the 8"), std::string::npos) << s.why;
}

TEST(Stats, PairedScoreIsNoneForANoisyMad) {
  std::vector<double> ref(10, 1.0);
  std::vector<double> cand{0.2, 1.8, 0.2, 1.8, 0.2, 1.8, 0.2, 1.8, 0.2, 1.8};
  PairedScore s = paired_score(ref, cand, {.min_pairs = 8, .max_relative_mad = 0.25});
  EXPECT_FALSE(s.scored);
  EXPECT_NE(s.why.find("too noisy"), std::string::npos) << s.why;
}

TEST(Stats, SignTestIsTheBinomialTail) {
  EXPECT_NEAR(sign_test_p(10, 10), 1.0 / 1024, 1e-12);
  EXPECT_NEAR(sign_test_p(9, 10), 11.0 / 1024, 1e-12);
  EXPECT_DOUBLE_EQ(sign_test_p(0, 10), 1.0);
  EXPECT_DOUBLE_EQ(sign_test_p(0, 0), 1.0);
  EXPECT_NEAR(sign_test_p(5000, 5000), 0.0, 1e-300);  // finite for large n
}

// The CI failure this rule came from: a candidate 30x ahead of its Python-loop default, timed
// from single launches a side, reads ratios of 0.02-0.05 — a relative MAD over 0.25 that voided
// the score and kept the default 30x slower. Spread that cannot reach the bar is not doubt.
TEST(Stats, NoisyPairsThatAllAgreeOnTheirSideOfTheBarAreAScore) {
  std::vector<double> ref(10, 1.0);
  std::vector<double> cand{0.02, 0.05, 0.03, 0.02, 0.05, 0.03, 0.02, 0.05, 0.03, 0.04};
  PairedScore without = paired_score(ref, cand, {.min_pairs = 8, .max_relative_mad = 0.25});
  EXPECT_FALSE(without.scored);  // no bar named: the spread limit holds as before
  PairedScore with =
      paired_score(ref, cand, {.min_pairs = 8, .max_relative_mad = 0.25, .bar = 1 / 1.02});
  EXPECT_TRUE(with.scored) << with.why;
  EXPECT_TRUE(with.noisy_but_agreed);
  EXPECT_EQ(with.pairs_below_bar, 10);
  EXPECT_LT(with.ratio_high, 0.1);
  // 9 of 10 below: p = 11/1024 > 0.01, so a stalled pair on the wrong side is still doubt...
  cand[0] = 1.5;
  EXPECT_FALSE(
      paired_score(ref, cand, {.min_pairs = 8, .max_relative_mad = 0.25, .bar = 1 / 1.02}).scored);
  // ...unless there are more pairs: 15 of 16 below is p = 17/65536.
  ref.resize(16, 1.0);
  cand.resize(16, 0.03);
  PairedScore more =
      paired_score(ref, cand, {.min_pairs = 8, .max_relative_mad = 0.25, .bar = 1 / 1.02});
  EXPECT_EQ(more.pairs_below_bar, 15);
  // (the extra pairs also tighten the spread; the agreement alone decides either way)
  EXPECT_TRUE(more.scored) << more.why;
  // Noise that straddles the bar stays no score.
  std::vector<double> straddle{0.2, 1.8, 0.2, 1.8, 0.2, 1.8, 0.2, 1.8, 0.2, 1.8};
  std::vector<double> ones(10, 1.0);
  PairedScore s =
      paired_score(ones, straddle, {.min_pairs = 8, .max_relative_mad = 0.25, .bar = 1 / 1.02});
  EXPECT_FALSE(s.scored);
  EXPECT_EQ(s.pairs_below_bar, 5);
  EXPECT_NE(s.why.find("too noisy"), std::string::npos) << s.why;
}

// Before the fix a zero reference made an inf ratio that counted as a pair (and could be the
// median): zero, inf, NaN and negative readings now never make a pair.
TEST(Stats, PairedScoreDropsZeroInfNanAndNegativeRatios) {
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  std::vector<double> ref{0.0, 1.0, inf, 1.0, nan, -1.0, 1.0, 1.0, 1.0, 1.0};
  std::vector<double> cand{1.0, inf, 1.0, nan, 1.0, -0.5, 0.0, 0.5, 0.5, 0.5};
  PairedScore s = paired_score(ref, cand, {.min_pairs = 4, .max_relative_mad = 0.25});
  EXPECT_FALSE(s.scored);
  EXPECT_EQ(s.pairs, 3);  // only the last three pairs are evidence
  // With enough clean pairs the bad ones do not move the median.
  PairedScore t = paired_score(ref, cand, {.min_pairs = 3, .max_relative_mad = 0.25});
  EXPECT_TRUE(t.scored) << t.why;
  EXPECT_DOUBLE_EQ(t.ratio, 0.5);
  // All-inf candidate readings (a failed side) are no score, never a claimed slowdown or speedup.
  std::vector<double> infs(10, inf);
  std::vector<double> ones(10, 1.0);
  EXPECT_FALSE(paired_score(ones, infs, {.min_pairs = 8}).scored);
  EXPECT_FALSE(paired_score(infs, ones, {.min_pairs = 8}).scored);
}

}  // namespace
}  // namespace tunekit::stats
