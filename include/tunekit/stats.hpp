// Statistics as pure functions (no I/O, no state).
#pragma once

#include <span>
#include <string>
#include <vector>

namespace tunekit::stats {

double min(std::span<const double> xs);
double mean(std::span<const double> xs);
double median(std::span<const double> xs);
// Median absolute deviation from the median (unscaled).
double mad(std::span<const double> xs);
// Quantile with linear interpolation between order statistics, q in [0, 1].
double quantile(std::span<const double> xs, double q);
// Fraction of xs strictly above ratio * min(xs).
double stalled_fraction(std::span<const double> xs, double ratio);

// A distribution-free confidence interval for the median from order statistics: the ranks
// n/2 -+ z*sqrt(n)/2 (z = 1.96: about 95 %). With too few samples it spans [min, max].
struct Interval {
  double low = 0;
  double high = 0;
};
Interval median_interval(std::span<const double> xs, double z = 1.96);

// The ratios that can be evidence: positive and finite. A zero, negative, infinite or NaN
// ratio (a zero-length or failed reading on either side) says nothing about speed.
std::vector<double> positive_finite(std::span<const double> ratios);
// Median of the positive finite ratios (NaN when there are none).
double median_of_ratios(std::span<const double> ratios);

// Paired score (DESIGN §5): reference[i] and candidate[i] were measured as a pair, in
// A B B A order; the score is the median of candidate[i] / reference[i] with its relative MAD.
// Only positive finite ratios count as pairs; fewer than policy.min_pairs of them, or a
// relative MAD over policy.max_relative_mad, is no score (keep the reference) — unless the
// policy names the decision's bar and the pairs agree on their side of it whatever their
// spread: so many of them below the bar that a sign test puts the chance of it, were the two
// equally fast, at most policy.sign_p. Spread that cannot carry the verdict across the bar
// does not void it (a winner 30x ahead read from single launches is noisy in ratio, not in
// doubt).
struct PairedPolicy {
  int min_pairs = 8;
  double max_relative_mad = 0.25;
  double bar = 0;        // the ratio a decision needs to be under; 0: no bar, the limit holds
  double sign_p = 0.01;  // one-sided sign-test level for "the pairs agree"
};
struct PairedScore {
  bool scored = false;  // false: keep the reference
  double ratio = 0;     // median candidate / reference (< 1: the candidate is faster)
  double relative_mad = 0;
  // Approximate 95 % upper bound of the median ratio (normal approximation of the median's
  // standard error from the MAD); a decision needs this, not just the ratio, under its bar.
  double ratio_high = 0;
  int pairs = 0;
  int pairs_below_bar = 0;        // pairs whose ratio is under policy.bar (0 without a bar)
  bool noisy_but_agreed = false;  // scored by the sign test over a spread above the limit
  std::string why;                // when not scored
};
// One-sided sign test: the chance of at least `agree` of `n` fair coin tosses landing one way.
double sign_test_p(int agree, int n);
PairedScore paired_score(std::span<const double> reference, std::span<const double> candidate,
                         const PairedPolicy& policy = {});

}  // namespace tunekit::stats
