// Statistics as pure functions (no I/O, no state).
#pragma once

#include <span>

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

}  // namespace tunekit::stats
