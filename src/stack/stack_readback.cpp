#include "stack/stack_readback.hpp"

#include <cmath>

namespace tunekit::detail {

std::vector<std::uint64_t> readback_positions(std::uint64_t total, std::size_t max) {
  std::vector<std::uint64_t> out;
  if (total == 0 || max == 0) return out;
  if (total <= max) {
    out.reserve(static_cast<std::size_t>(total));
    for (std::uint64_t i = 0; i < total; ++i) out.push_back(i);
    return out;
  }
  out.reserve(max);
  if (max == 1) return {0};
  // floor(k * (total - 1) / (max - 1)) without overflow: strictly increasing (the step is at
  // least 1 since total > max), first 0, last total - 1.
  const std::uint64_t span = max - 1;
  const std::uint64_t step = (total - 1) / span;
  const std::uint64_t rest = (total - 1) % span;
  for (std::uint64_t k = 0; k < max; ++k) out.push_back(k * step + (k * rest) / span);
  return out;
}

StackReadback::StackReadback(stack::Workspace& reference, const stack::Tolerance& tolerance)
    : tolerance_(tolerance),
      total_(reference.output_elements()),
      positions_(readback_positions(total_, tolerance.max_readback_elements)),
      expected_(reference.read(positions_)) {}

std::optional<std::string> StackReadback::mismatch(stack::Workspace& candidate) const {
  const std::uint64_t total = candidate.output_elements();
  if (total != total_)
    return "the outputs have " + std::to_string(total) + " elements, the reference's " +
           std::to_string(total_);
  const std::vector<double> got = candidate.read(positions_);
  if (got.size() != positions_.size())
    return "the workspace read " + std::to_string(got.size()) + " elements, asked for " +
           std::to_string(positions_.size());
  std::size_t bad = 0;
  std::string first;
  for (std::size_t i = 0; i < got.size(); ++i) {
    const double limit = tolerance_.abs + tolerance_.rel * std::abs(expected_[i]);
    // Written so NaN on either side fails: the comparison is false.
    if (std::abs(got[i] - expected_[i]) <= limit) continue;
    if (bad++ == 0)
      first = "element " + std::to_string(positions_[i]) + " is " + std::to_string(got[i]) +
              ", expected " + std::to_string(expected_[i]);
  }
  if (bad == 0) return std::nullopt;
  return first + " (" + std::to_string(bad) + " of " + std::to_string(got.size()) +
         " sampled elements differ)";
}

}  // namespace tunekit::detail
