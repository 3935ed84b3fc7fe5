// A/B refinement (tunekit/refinement.hpp) measured by the stack controller: each plan (one bit
// per flip) is a StackCandidate the caller makes; a comparison validates the contender plan
// against the incumbent and scores it by the controller's paired score.
#pragma once

#include <cstddef>
#include <functional>
#include <vector>

#include "tunekit/refinement.hpp"
#include "tunekit/stack.hpp"

namespace tunekit::stack {

class PairedPlanComparator final : public PlanComparator {
 public:
  // `make` turns a plan into the candidate that runs it; distinct plans need distinct names.
  // The controller must outlive the comparator.
  PairedPlanComparator(const StackController& controller, Problem problem,
                       std::function<StackCandidate(const PlanBits&)> make);

  // 2 + 2 * policy.samples trials (StackController::compare).
  std::size_t calls_per_comparison() const override;
  stats::PairedScore compare(const PlanBits& incumbent, const PlanBits& contender) override;
  // Every comparison's report entry, in order (what a report of the refinement shows).
  const std::vector<ReportEntry>& entries() const { return entries_; }

 private:
  const StackController& controller_;
  Problem problem_;
  std::function<StackCandidate(const PlanBits&)> make_;
  std::vector<ReportEntry> entries_;
};

}  // namespace tunekit::stack
