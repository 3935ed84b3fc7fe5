#include "tunekit/stats.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <vector>

namespace tunekit::stats {
namespace {
std::vector<double> sorted(std::span<const double> xs) {
  std::vector<double> v(xs.begin(), xs.end());
  std::sort(v.begin(), v.end());
  return v;
}
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
}  // namespace

double min(std::span<const double> xs) {
  return xs.empty() ? kNaN : *std::min_element(xs.begin(), xs.end());
}

double mean(std::span<const double> xs) {
  if (xs.empty()) return kNaN;
  return std::accumulate(xs.begin(), xs.end(), 0.0) / static_cast<double>(xs.size());
}

double quantile(std::span<const double> xs, double q) {
  if (xs.empty()) return kNaN;
  std::vector<double> v = sorted(xs);
  q = std::clamp(q, 0.0, 1.0);
  double pos = q * static_cast<double>(v.size() - 1);
  auto lo = static_cast<std::size_t>(std::floor(pos));
  std::size_t hi = std::min(lo + 1, v.size() - 1);
  double frac = pos - static_cast<double>(lo);
  return v[lo] + (v[hi] - v[lo]) * frac;
}

double median(std::span<const double> xs) {
  return quantile(xs, 0.5);
}

double mad(std::span<const double> xs) {
  if (xs.empty()) return kNaN;
  double m = median(xs);
  std::vector<double> dev;
  dev.reserve(xs.size());
  for (double x : xs) dev.push_back(std::abs(x - m));
  return median(dev);
}

double stalled_fraction(std::span<const double> xs, double ratio) {
  if (xs.empty()) return 0;
  double limit = min(xs) * ratio;
  auto stalled = std::count_if(xs.begin(), xs.end(), [&](double x) { return x > limit; });
  return static_cast<double>(stalled) / static_cast<double>(xs.size());
}

Interval median_interval(std::span<const double> xs, double z) {
  if (xs.empty()) return {kNaN, kNaN};
  std::vector<double> v = sorted(xs);
  const double n = static_cast<double>(v.size());
  const double half_width = z * std::sqrt(n) / 2;
  // 1-based ranks, clamped to the sample.
  auto at = [&](double rank) {
    rank = std::clamp(rank, 1.0, n);
    return v[static_cast<std::size_t>(rank) - 1];
  };
  return {at(std::floor(n / 2 - half_width)), at(std::ceil(n / 2 + half_width + 1))};
}

std::vector<double> positive_finite(std::span<const double> ratios) {
  std::vector<double> kept;
  kept.reserve(ratios.size());
  for (double r : ratios)
    if (std::isfinite(r) && r > 0) kept.push_back(r);
  return kept;
}

double median_of_ratios(std::span<const double> ratios) {
  return median(positive_finite(ratios));
}

double sign_test_p(int agree, int n) {
  if (n <= 0) return 1;
  agree = std::clamp(agree, 0, n);
  // Sum of C(n, i) / 2^n for i >= agree, in logs so n in the thousands stays finite.
  double p = 0;
  for (int i = agree; i <= n; ++i)
    p += std::exp(std::lgamma(n + 1.0) - std::lgamma(i + 1.0) - std::lgamma(n - i + 1.0) -
                  n * std::log(2.0));
  return std::min(p, 1.0);
}

PairedScore paired_score(std::span<const double> reference, std::span<const double> candidate,
                         const PairedPolicy& policy) {
  PairedScore s;
  std::vector<double> all;
  for (std::size_t i = 0; i < std::min(reference.size(), candidate.size()); ++i)
    // A negative reading is no reading (and two of them would make a positive ratio); 0/0 is
    // NaN, x/0 inf and x/inf 0: all dropped by positive_finite.
    if (reference[i] >= 0 && candidate[i] >= 0) all.push_back(candidate[i] / reference[i]);
  const std::vector<double> ratios = positive_finite(all);
  s.pairs = static_cast<int>(ratios.size());
  if (s.pairs < policy.min_pairs) {
    s.why = std::to_string(s.pairs) + " valid pairs (positive, finite ratios), fewer than the " +
            std::to_string(policy.min_pairs) + " required";
    return s;
  }
  s.ratio = median(ratios);
  s.relative_mad = mad(ratios) / s.ratio;
  // sigma ~ 1.4826 MAD; the median's standard error ~ 1.2533 sigma / sqrt(n).
  s.ratio_high =
      s.ratio + 1.96 * 1.2533 * 1.4826 * mad(ratios) / std::sqrt(static_cast<double>(s.pairs));
  if (policy.bar > 0)
    s.pairs_below_bar = static_cast<int>(
        std::count_if(ratios.begin(), ratios.end(), [&](double r) { return r < policy.bar; }));
  const bool agreed = policy.bar > 0 && sign_test_p(s.pairs_below_bar, s.pairs) <= policy.sign_p;
  if (!(s.relative_mad <= policy.max_relative_mad) && agreed) s.noisy_but_agreed = true;
  if (!(s.relative_mad <= policy.max_relative_mad) && !agreed) {
    s.why = "pairs too noisy: relative MAD " + std::to_string(s.relative_mad) + " over the limit " +
            std::to_string(policy.max_relative_mad);
    return s;
  }
  s.scored = true;
  return s;
}

}  // namespace tunekit::stats
