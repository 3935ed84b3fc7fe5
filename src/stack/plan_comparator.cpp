// PairedPlanComparator: refine_flips' comparisons on the stack controller
// (include/tunekit/plan_comparator.hpp).
#include "tunekit/plan_comparator.hpp"

#include <utility>

#include "tunekit/errors.hpp"

namespace tunekit::stack {

PairedPlanComparator::PairedPlanComparator(const StackController& controller, Problem problem,
                                           std::function<StackCandidate(const PlanBits&)> make)
    : controller_(controller), problem_(std::move(problem)), make_(std::move(make)) {
  if (!make_)
    throw UsageError("PairedPlanComparator: give a function that makes a plan's candidate");
}

std::size_t PairedPlanComparator::calls_per_comparison() const {
  return 2 + 2 * static_cast<std::size_t>(controller_.options().policy.samples);
}

stats::PairedScore PairedPlanComparator::compare(const PlanBits& incumbent,
                                                 const PlanBits& contender) {
  ReportEntry e = controller_.compare(problem_, make_(incumbent), make_(contender));
  stats::PairedScore s;
  s.scored = e.status == EntryStatus::scored || e.status == EntryStatus::selected;
  s.ratio = e.ratio;
  s.ratio_high = e.ratio_high;
  s.relative_mad = e.relative_mad;
  s.pairs = e.pairs;
  if (!s.scored) s.why = e.failure ? e.failure->text() : e.why;
  entries_.push_back(std::move(e));
  return s;
}

}  // namespace tunekit::stack
