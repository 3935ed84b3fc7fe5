#include <algorithm>
#include <cmath>

#include "tunekit/timing.hpp"

namespace tunekit {

int choose_depth(std::span<const DepthProbe> probes, double target, int cap) {
  cap = std::max(cap, 1);
  if (probes.empty()) return 1;
  for (const auto& p : probes)
    if (p.depth == 1 && p.seconds >= target) return 1;  // one launch already fills a batch
  // The deepest batch actually measured within the target: the bound when the fit fails.
  int deepest_within = 1;
  for (const auto& p : probes)
    if (p.seconds <= target) deepest_within = std::max(deepest_within, p.depth);

  // Least squares: seconds = fixed + marginal * depth.
  double n = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (const auto& p : probes) {
    double x = p.depth;
    n += 1;
    sx += x;
    sy += p.seconds;
    sxx += x * x;
    sxy += x * p.seconds;
  }
  const double denom = n * sxx - sx * sx;
  if (denom <= 0) return std::clamp(deepest_within, 1, cap);  // one distinct depth
  const double marginal = (n * sxy - sx * sy) / denom;
  const double fixed = (sy - marginal * sx) / n;
  if (!(marginal > 0) || !std::isfinite(marginal)) return std::clamp(deepest_within, 1, cap);
  const double wanted = std::ceil((target - std::max(fixed, 0.0)) / marginal);
  if (!std::isfinite(wanted)) return std::clamp(deepest_within, 1, cap);
  return static_cast<int>(std::clamp(wanted, 1.0, static_cast<double>(cap)));
}

}  // namespace tunekit
