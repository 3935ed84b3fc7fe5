// Spearman's rank correlation, for the report's model-vs-measured plot (private to src/report).
#pragma once

#include <span>

namespace tunekit::detail {

// Pearson's correlation of the average ranks (ties share their mean rank). NaN with fewer
// than three pairs, with unequal lengths, or when either side has no spread.
double spearman(std::span<const double> a, std::span<const double> b);

}  // namespace tunekit::detail
