// Runs the phases of a candidate's trial for one search (DESIGN §11): in this process, or
// each phase in a forked worker process so that a candidate that crashes, hangs or allocates
// without bound is a classified decline and the host survives. One phase is admission (make
// the trial, build it unless the compile pass did, prepare, validate on the first input set,
// and on the further ones where the host asks) or one timing window followed by checked calls
// (the outputs of a timed trial are checked again, on the inputs the timing launches left: a
// result that is wrong on some calls, or a candidate that clobbers its inputs, fails there)
// and, for a candidate admission did not validate on them, the further input sets.
#pragma once

#include <cmath>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "isolate/trial_messages.hpp"
#include "isolate/worker_process.hpp"
#include "tunekit/device.hpp"
#include "tunekit/key.hpp"
#include "tunekit/timing.hpp"
#include "tunekit/validate.hpp"

namespace tunekit::detail {

// What every phase runs on: the validated workload (input set 0) and its reference, further
// input sets each with its own reference, and rotation copies for timing.
struct TrialInputs {
  Workload* workload = nullptr;
  const Reference* reference = nullptr;
  std::vector<std::pair<Workload*, const Reference*>> more_sets;
  std::vector<Workload*> rotation;
  Tolerance tolerance;
  int check_calls = 0;  // checked calls after a timing window
  // The search's timing options of a candidate (its evictor, stop() and on_call): a worker
  // calls its own copy, the functions of the host as they were at its fork. A BudgetStop in
  // them is the host's alone: the worker keeps its caller part (the budget comes with each
  // request).
  std::function<TimingOptions(std::size_t)> functions;
};

// A window's stop() made of the caller's own stop() and the search budget's. Only the host
// may ask the budget part: a forked worker's copy of it is the host's state as it was at the
// fork (the reserve and the projected builds move on), so a worker is sent the budget instead
// — whether it had already stopped and the seconds left until it stops — and keeps `user`.
struct BudgetStop {
  std::function<bool()> user;    // null: none
  std::function<bool()> budget;  // true: the budget stops the window
  bool operator()() const { return (user && user()) || budget(); }
};

// Makes and owns what TrialInputs points at, from the op at `key`: the validated workload and
// its reference, input sets 2..`input_sets` with theirs, `rotation_copies` further copies for
// timing; tolerance and check_calls are left to the caller. The host (SearchContext) and a
// spawned worker (serve_trial_worker) both make their inputs here, so both validate and time on
// the same values.
class TrialInputSet {
 public:
  TrialInputSet(const OpBase& op, const Key& key, int input_sets, int rotation_copies,
                std::size_t default_index);
  TrialInputSet(const TrialInputSet&) = delete;
  TrialInputSet& operator=(const TrialInputSet&) = delete;
  TrialInputs& inputs() { return inputs_; }
  const TrialInputs& inputs() const { return inputs_; }

 private:
  std::unique_ptr<Workload> workload_;
  std::optional<Reference> reference_;
  std::vector<std::unique_ptr<Workload>> more_sets_;
  std::vector<Reference> more_references_;
  std::vector<std::unique_ptr<Workload>> rotation_;
  TrialInputs inputs_;
};

// The checked calls after a window (DESIGN §1.3): not wanted, or wanted of a candidate that
// could still win — one whose fastest reading in the window is at most `below` seconds (0: any
// reading). A candidate far behind the best reading is not checked: it cannot be chosen, and
// five calls of a slow loser cost more than a fixed protocol's whole window of it.
struct CheckAfter {
  bool wanted = false;
  double below = 0;
  // With the checked calls: the validation on the further input sets, which admission left to
  // the candidates that could win (an unchecked loser cannot be chosen).
  bool validate_more = false;
};

// What admission is told of the cuts on validation runs (SearchContext::cut_on_validation;
// TrialRequest): the further input sets are validated at once when the first run took at least
// `more_sets_over` seconds, so that two cold readings may cut the candidate — unless that run
// is one reading enough: at least `lone_cut_over` seconds and known not to have waited for a
// CPU (the clock's waited seconds at most `wait_tolerance` of it). `more_sets_over` 0: at once,
// whatever the first run read (the default, an audit, no checked calls).
struct AdmitCuts {
  double more_sets_over = 0;
  double lone_cut_over = HUGE_VAL;
  double wait_tolerance = 0;
};

class TrialRunner {
 public:
  virtual ~TrialRunner() = default;
  // Admission of candidate `index`: ok (ready for windows), or its failure. `limit_seconds`
  // bounds a worker's phase (0: none). The further input sets are validated too when the
  // validation run took at least `cuts.more_sets_over` seconds and is not one reading enough
  // (AdmitCuts), else left to the candidate's checked calls (CheckAfter::validate_more).
  virtual TrialAnswer admit(std::size_t index, bool built, double limit_seconds,
                            const AdmitCuts& cuts) = 0;
  // Whether the candidate can be timed again (in process: prepared again when released).
  virtual bool acquire(std::size_t index) = 0;
  // One timing window of an admitted candidate; checked calls after it as `check` says. The
  // timing's functions (stop, on_call, evictor) are the search's for candidate `functions_of`
  // (the paired confirmation times the winner with the default's: no budget stop).
  virtual TrialAnswer window(std::size_t index, const TimingOptions& timing, CheckAfter check,
                             double limit_seconds, std::size_t functions_of) = 0;
  // The host built something (the compile pass): a worker forked before it is replaced.
  virtual void built() {}
  virtual void release(std::size_t index) = 0;
  // Prepared trials alive in this process.
  virtual std::size_t live() const = 0;
};

// Answers the phases a worker is asked for, on `device` and `inputs` (the host's, inherited by
// a fork; or a spawned worker's own, made as its TrialSetup says). Inputs are restored before
// every phase (a further input set before its validation); nothing is kept between phases.
class TrialServer {
 public:
  // `own_builds`: this process did none of the host's builds (a spawned worker), so a window's
  // trial is built before it is timed (a worker started after another's failure has not
  // admitted it).
  TrialServer(Device& device, const TrialInputs& inputs, bool own_builds = false)
      : device_(device), in_(inputs), own_builds_(own_builds) {}
  ~TrialServer();
  TrialServer(const TrialServer&) = delete;
  TrialServer& operator=(const TrialServer&) = delete;
  std::string serve(std::string_view request);

 private:
  TrialAnswer admit_here(const TrialRequest& q);
  TrialAnswer window_here(const TrialRequest& q);
  void keep(std::size_t index, std::unique_ptr<Trial> trial);
  Device& device_;
  const TrialInputs& in_;
  bool own_builds_;
  // The last phase's prepared trial, for the next window of the same candidate (as the
  // in-process runner keeps it): one candidate's buffers at most, released before another's.
  std::size_t kept_index_ = 0;
  std::unique_ptr<Trial> kept_;
};

std::unique_ptr<TrialRunner> make_in_process_runner(Device& device, const TrialInputs& inputs);
// Phases in a forked worker. `memory_bytes`: what a worker may allocate beyond what it
// inherits (0: unlimited). `seconds_to_stop`: how long until the budget's stop() would be
// true, asked as each window whose stop() is a BudgetStop is sent (the worker's own copy of
// the budget is stale: BudgetStop); <= 0 then: spent.
std::unique_ptr<TrialRunner> make_worker_runner(Device& device, const TrialInputs& inputs,
                                                std::uint64_t memory_bytes,
                                                std::function<double()> seconds_to_stop);
// Phases in a spawned worker program (Device::Workers::spawned), set up by `spawn.setup` (an
// encoded TrialSetup). The first worker that cannot set up is a UsageError naming why (no
// candidate is to blame); a replacement that cannot is tried once more, then the phase fails
// launch_failed. `seconds_to_stop` as for a forked worker (a spawned one has no copy of the
// host's functions at all).
std::unique_ptr<TrialRunner> make_spawned_runner(Device& device, const TrialInputs& inputs,
                                                 WorkerProcess::Spawn spawn,
                                                 std::function<double()> seconds_to_stop);

}  // namespace tunekit::detail
