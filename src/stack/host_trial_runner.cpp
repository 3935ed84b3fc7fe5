// The default TrialRunner: a fresh workspace and scratch per trial, the steady clock around
// run() and sync().
#include <chrono>
#include <exception>
#include <vector>

#include "core/classify.hpp"
#include "stack/trial_scope.hpp"
#include "tunekit/stack.hpp"

namespace tunekit::detail {
namespace {

thread_local int trial_depth = 0;

stack::FailureKind kind_of(Status status) {
  switch (status) {
    case Status::out_of_memory:
      return stack::FailureKind::out_of_memory;
    case Status::rejected:
      return stack::FailureKind::ineligible;
    case Status::validation_failed:
      return stack::FailureKind::validation_failed;
    case Status::not_measured:
      return stack::FailureKind::not_measured;
    default:
      return stack::FailureKind::run_failed;
  }
}

class HostTrialRunner final : public stack::TrialRunner {
 public:
  stack::TrialResult run(const stack::Problem& problem,
                         const stack::StackCandidate& candidate) override {
    stack::TrialResult result;
    try {
      result.workspace = problem.make_workspace();
      if (!result.workspace) throw UsageError("make_workspace returned no workspace");
      result.workspace->poison();  // before the clock: what the candidate skips reads NaN
      std::vector<std::byte> scratch(candidate.scratch_bytes);
      const auto start = std::chrono::steady_clock::now();
      candidate.run(*result.workspace, scratch);
      if (candidate.sync) candidate.sync();  // the plan's work is done only after this
      const auto stop = std::chrono::steady_clock::now();
      result.seconds = std::chrono::duration<double>(stop - start).count();
    } catch (const UsageError&) {
      throw;  // the problem's own misuse, not the candidate's failure
    } catch (...) {
      const Outcome o = classify_exception(std::current_exception(), "trial of " + candidate.name);
      result.failure = stack::Failure{kind_of(o.status), o.message};
    }
    return result;
  }
};

}  // namespace

TrialScope::TrialScope() {
  ++trial_depth;
}
TrialScope::~TrialScope() {
  --trial_depth;
}
bool TrialScope::active() {
  return trial_depth > 0;
}

}  // namespace tunekit::detail

namespace tunekit::stack {

std::unique_ptr<TrialRunner> host_trial_runner() {
  return std::make_unique<detail::HostTrialRunner>();
}

bool StackController::is_tuning() {
  return detail::TrialScope::active();
}

}  // namespace tunekit::stack
