#include "tunekit/methodology.hpp"

#include <algorithm>
#include <cmath>

#include "tunekit/errors.hpp"

namespace tunekit {

MethodologyBaseline methodology_baseline(std::span<const double> values, std::size_t max_budget,
                                         double cutoff) {
  std::vector<double> ok;
  for (double v : values)
    if (std::isfinite(v)) ok.push_back(v);
  if (ok.empty()) throw UsageError("methodology: no configuration succeeded");
  std::sort(ok.begin(), ok.end());
  MethodologyBaseline b;
  b.optimum = ok.front();
  b.worst = ok.back();
  const std::size_t m = ok.size();
  b.median = m % 2 ? ok[m / 2] : 0.5 * (ok[m / 2 - 1] + ok[m / 2]);
  const double target = b.median + cutoff * (b.optimum - b.median);
  const auto good =
      static_cast<std::size_t>(std::upper_bound(ok.begin(), ok.end(), target) - ok.begin());
  const std::size_t n = values.size();
  b.cutoff_budget =
      std::max<std::size_t>(1, static_cast<std::size_t>(std::ceil(static_cast<double>(n + 1) /
                                                                  static_cast<double>(good + 1))));
  // Sorted objective of all n configurations, failures as the worst value.
  std::vector<double> sorted = ok;
  sorted.resize(n, b.worst);
  const std::size_t kmax = std::min(n, std::max(max_budget, b.cutoff_budget));
  b.expected_best.resize(kmax);
  for (std::size_t k = 1; k <= kmax; ++k) {
    // S_j = P(all k draws have rank >= j) = C(n-j+1, k) / C(n, k); P(min rank = j) = S_j - S_{j+1}.
    double s = 1.0;
    double expected = 0;
    for (std::size_t j = 1; j <= n && s > 0; ++j) {
      const double remaining = static_cast<double>(n - j + 1);
      const double next = remaining >= static_cast<double>(k) + 1
                              ? s * (remaining - static_cast<double>(k)) / remaining
                              : 0.0;
      expected += sorted[j - 1] * (s - next);
      s = next;
    }
    b.expected_best[k - 1] = expected;
  }
  return b;
}

std::vector<double> best_so_far(const History& history, std::size_t budget, double worst) {
  std::vector<double> curve(budget, worst);
  double best = worst;
  const auto& list = history.evaluations();
  for (std::size_t k = 0; k < budget; ++k) {
    if (k < list.size() && list[k].ok()) best = std::min(best, list[k].value);
    curve[k] = best;
  }
  return curve;
}

double methodology_score(std::span<const double> curve, const MethodologyBaseline& b) {
  const std::size_t budget = std::min({b.cutoff_budget, curve.size(), b.expected_best.size()});
  if (budget == 0) throw UsageError("methodology: the curve is empty");
  double sum = 0;
  for (std::size_t k = 0; k < budget; ++k) {
    const double span = b.expected_best[k] - b.optimum;
    sum += span > 0 ? (b.expected_best[k] - curve[k]) / span : 1.0;
  }
  return sum / static_cast<double>(budget);
}

}  // namespace tunekit
