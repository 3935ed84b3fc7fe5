// Validation of a stack candidate with a bounded host readback. Private to src/stack.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "tunekit/stack.hpp"

namespace tunekit::detail {

// At most `max` positions out of `total`, ascending, spread evenly (every one when total <=
// max; first and last always included when max >= 2).
std::vector<std::uint64_t> readback_positions(std::uint64_t total, std::size_t max);

// The reference's outputs at the sampled positions; compares a candidate's at the same ones.
class StackReadback {
 public:
  // Reads the reference's workspace (at most tolerance.max_readback_elements elements).
  StackReadback(stack::Workspace& reference, const stack::Tolerance& tolerance);

  // nullopt when every sampled element is within tolerance, else what disagreed. A NaN never
  // passes; a different output size fails.
  std::optional<std::string> mismatch(stack::Workspace& candidate) const;
  std::size_t sampled() const { return positions_.size(); }
  std::uint64_t total() const { return total_; }

 private:
  stack::Tolerance tolerance_;
  std::uint64_t total_ = 0;
  std::vector<std::uint64_t> positions_;
  std::vector<double> expected_;
};

}  // namespace tunekit::detail
