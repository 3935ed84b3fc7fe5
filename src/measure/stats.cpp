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

}  // namespace tunekit::stats
