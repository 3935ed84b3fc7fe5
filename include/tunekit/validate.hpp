// Validation: a candidate is correct before it is fast (DESIGN §1.3). Outputs are poisoned
// (NaN, or a sentinel for integers) before the candidate runs, then compared element-wise to
// the reference; the op's own validation hooks run around that.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "tunekit/op.hpp"
#include "tunekit/outcome.hpp"

namespace tunekit {

// Fills every output so a candidate that skips an element cannot pass: quiet NaN in floating
// outputs (f32, f64, f16, bf16), the byte 0xA5 in every byte of integer outputs.
void poison(std::span<const OutputView> outputs);

// The expected outputs of one workload: f32 values as f32, the other floating types in double
// (f16 and bf16 converted exactly), integers as integers.
class Reference {
 public:
  // Runs the op's reference on the workload (or, when the op has none, candidate
  // `fallback_index`, normally the default) on poisoned outputs, after the workload's
  // before_check hook, and keeps a copy of its outputs.
  static Reference capture(Workload& workload, bool has_reference, std::size_t fallback_index);
  static Reference of(std::span<const OutputView> outputs);

  // Compares outputs: floating ones with tolerance, |got - expected| <= abs + rel * |expected|
  // (NaN or infinity where a finite value is expected never passes), integer ones exactly. The
  // types must match the reference's. The message names the first bad element and counts the
  // bad ones.
  Outcome compare(std::span<const OutputView> outputs, const Tolerance& tolerance) const;

  // OutputCheck's arm, run candidate `index`, verify. A TrialError or std::exception thrown by
  // the candidate is classified (launch_failed, out_of_memory, or the TrialError's status).
  Outcome check(Workload& workload, std::size_t index, const Tolerance& tolerance) const;

 private:
  struct Expected {
    OutputView::Type type = OutputView::Type::f32;
    std::vector<float> singles;          // f32: half the memory a comparison reads
    std::vector<double> floats;          // f64, f16, bf16
    std::vector<std::int64_t> integers;  // integer types
    std::size_t size() const { return singles.size() + floats.size() + integers.size(); }
  };
  std::vector<Expected> outputs_;
};

// One checked run of a workload: arm() before the run (a validation run, or a sampled timing
// launch), verify() after its synchronisation. The workload and the reference must outlive
// the check; one check may be armed and verified again for another run.
class OutputCheck {
 public:
  OutputCheck(Workload& workload, const Reference& reference, Tolerance tolerance);

  // Poisons the workload's outputs and runs its before_check hook. A std::exception from
  // either is not thrown: verify() reports it (validation_failed, or a TrialError's status).
  void arm();
  // Compares the outputs to the reference, then runs the after_check hook: ok, or
  // validation_failed with the message (a hook's error text or what it threw). FatalError
  // propagates, from arm() too.
  Outcome verify();

 private:
  Workload& workload_;
  const Reference& reference_;
  Tolerance tolerance_;
  Outcome armed_;  // a failure while arming, reported by verify()
};

}  // namespace tunekit
