// Validation: a candidate is correct before it is fast (DESIGN §1.3). Outputs are poisoned
// with NaN before the candidate runs, then compared element-wise to the reference.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "tunekit/op.hpp"
#include "tunekit/outcome.hpp"

namespace tunekit {

// Fills every output with quiet NaN so a candidate that skips an element cannot pass.
void poison(std::span<const OutputView> outputs);

// The expected outputs of one workload, kept in double.
class Reference {
 public:
  // Runs the op's reference on the workload (or, when the op has none, candidate
  // `fallback_index`, normally the default) and keeps a copy of its outputs.
  static Reference capture(Workload& workload, bool has_reference, std::size_t fallback_index);
  static Reference of(std::span<const OutputView> outputs);

  // Compares outputs with tolerance: |got - expected| <= abs + rel * |expected|; NaN or
  // infinity where a finite value is expected never passes. The message names the first
  // bad element and counts the bad ones.
  Outcome compare(std::span<const OutputView> outputs, const Tolerance& tolerance) const;

  // poison, run candidate `index`, compare. A TrialError or std::exception thrown by the
  // candidate is classified (launch_failed, out_of_memory, or the TrialError's status).
  Outcome check(Workload& workload, std::size_t index, const Tolerance& tolerance) const;

 private:
  std::vector<std::vector<double>> values_;
};

}  // namespace tunekit
