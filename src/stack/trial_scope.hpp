// Marks the calling thread as inside a stack trial, so a request made from a candidate's own
// code (a nested request) is answered with the reference instead of tuning inside a timing.
// Private to src/stack.
#pragma once

namespace tunekit::detail {

// Thread-local depth (the one piece of per-thread state: it must follow the thread that runs
// the trial, whichever controller started it).
class TrialScope {
 public:
  TrialScope();
  ~TrialScope();
  TrialScope(const TrialScope&) = delete;
  TrialScope& operator=(const TrialScope&) = delete;
  static bool active();
};

}  // namespace tunekit::detail
