// OutputCheck: poison before a run, compare and run the op's check after it.
#include <exception>
#include <string>

#include "core/classify.hpp"
#include "tunekit/validate.hpp"

namespace tunekit {

OutputCheck::OutputCheck(Workload& workload, const Reference& reference, Tolerance tolerance)
    : workload_(workload), reference_(reference), tolerance_(tolerance) {}

void OutputCheck::arm() {
  armed_ = Outcome::success();
  try {
    poison(workload_.outputs());
    workload_.before_check();
  } catch (...) {
    // Kept for verify(): the caller arms right before a launch and looks at outcomes after.
    armed_ = detail::classify_exception(std::current_exception(), "validation hook (poison)",
                                        Status::validation_failed);
  }
}

Outcome OutputCheck::verify() {
  if (!armed_.ok()) return armed_;
  try {
    Outcome compared = reference_.compare(workload_.outputs(), tolerance_);
    if (!compared.ok()) return compared;
  } catch (...) {
    return detail::classify_exception(std::current_exception(), "reading the outputs",
                                      Status::validation_failed);
  }
  try {
    if (std::optional<std::string> error = workload_.after_check()) {
      return {Status::validation_failed, "the op's check: " + *error};
    }
  } catch (...) {
    return detail::classify_exception(std::current_exception(), "validation hook (check)",
                                      Status::validation_failed);
  }
  return Outcome::success();
}

}  // namespace tunekit
