#include "tuner/trial_runner.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <exception>
#include <set>
#include <string>
#include <unordered_map>

#include "core/classify.hpp"
#include "tunekit/errors.hpp"

namespace tunekit::detail {
namespace {

double since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

// Cycles launches over one trial per input copy; the first is the validated workload's, and
// the first launch (the validation run) lands on it. sync() synchronises every copy launched
// since the last one.
class RotatingTrial final : public Trial {
 public:
  explicit RotatingTrial(std::vector<std::unique_ptr<Trial>> trials)
      : trials_(std::move(trials)), launched_(trials_.size(), false) {}
  // One build serves every copy: the program does not depend on the inputs.
  Outcome build() override { return trials_.front()->build(); }
  Outcome prepare() override {
    for (auto& t : trials_)
      if (Outcome o = t->prepare(); !o.ok()) return o;
    return Outcome::success();
  }
  void launch() override {
    trials_[next_]->launch();
    launched_[next_] = true;
    next_ = (next_ + 1) % trials_.size();
  }
  void sync() override {
    for (std::size_t i = 0; i < trials_.size(); ++i) {
      if (launched_[i]) trials_[i]->sync();
      launched_[i] = false;
    }
  }
  void release() override {
    for (auto& t : trials_) t->release();
  }

 private:
  std::vector<std::unique_ptr<Trial>> trials_;
  std::vector<bool> launched_;
  std::size_t next_ = 0;
};

// The trial timing windows use: on the validated workload, cycling through the rotation
// copies when there are any.
std::unique_ptr<Trial> timing_trial(Device& device, const TrialInputs& in, std::size_t index) {
  if (in.rotation.empty()) return device.make_trial(*in.workload, index);
  std::vector<std::unique_ptr<Trial>> trials;
  trials.push_back(device.make_trial(*in.workload, index));
  for (Workload* w : in.rotation) trials.push_back(device.make_trial(*w, index));
  return std::make_unique<RotatingTrial>(std::move(trials));
}

void release_quietly(std::unique_ptr<Trial>& trial) {
  if (!trial) return;
  try {
    trial->release();
  } catch (const FatalError&) {
    throw;
  } catch (...) {  // a failing release must not hide the outcome
  }
  trial.reset();
}

// One checked call: poison (and the op's hook), launch, sync, compare (and the op's hook).
// With `clock`, the launch and sync are read on it into `seconds` (0 when the reading is not
// valid).
Outcome checked_call(Trial& trial, OutputCheck& check, std::string_view during,
                     Clock* clock = nullptr, double* seconds = nullptr, double* waited = nullptr) {
  check.arm();
  try {
    if (clock) clock->begin();
    trial.launch();
    trial.sync();
    if (clock) {
      const double t = clock->end();
      *seconds = t > 0 && std::isfinite(t) ? t : 0;
      if (waited) *waited = clock->waited_seconds();
    }
  } catch (...) {
    return classify_exception(std::current_exception(), during);
  }
  Outcome o = check.verify();
  if (!o.ok()) o.message = std::string(during) + ": " + o.message;
  return o;
}

Outcome prepare(Trial& trial) {
  try {
    return trial.prepare();
  } catch (...) {
    return classify_exception(std::current_exception(), "prepare", Status::compile_failed);
  }
}

// Validation on the further input sets, each on a plain trial of its own and on its inputs as
// made; `fastest`: the fastest of their runs on the device's clock (0 when none was read).
Outcome validate_more_sets(Device& device, const TrialInputs& in, std::size_t index,
                           double& fastest) {
  for (std::size_t s = 0; s < in.more_sets.size(); ++s) {
    auto [workload, reference] = in.more_sets[s];
    workload->restore_inputs();  // no candidate sees another's side effects
    std::unique_ptr<Trial> trial = device.make_trial(*workload, index);
    Outcome o = prepare(*trial);
    if (o.ok()) {
      OutputCheck check(*workload, *reference, in.tolerance);
      double seconds = 0;
      o = checked_call(*trial, check, "validation on input set " + std::to_string(s + 2),
                       &device.clock(), &seconds);
      if (seconds > 0 && (fastest == 0 || seconds < fastest)) fastest = seconds;
    }
    release_quietly(trial);
    if (!o.ok()) return o;
  }
  return Outcome::success();
}

// Stops what the candidate left running (Op::quiesce); a quiesce step that throws fails the
// candidate.
Outcome quiesce(const TrialInputs& in, std::size_t index) {
  try {
    in.workload->quiesce_candidate(index);
    return Outcome::success();
  } catch (...) {
    return classify_exception(std::current_exception(), "quiesce", Status::launch_failed);
  }
}

// Makes, builds (unless built), prepares and validates (the further input sets when the first
// run took `cuts.more_sets_over` seconds or more and is not one reading enough: AdmitCuts); on
// success `keep` holds the trial, prepared, for timing windows.
TrialAnswer admit_phase(Device& device, const TrialInputs& in, std::size_t index, bool built,
                        const AdmitCuts& cuts, std::unique_ptr<Trial>& keep) {
  TrialAnswer a;
  try {
    keep = timing_trial(device, in, index);
    if (!built) {
      const auto start = std::chrono::steady_clock::now();
      Outcome b = keep->build();
      a.compile_seconds = since(start);
      if (!b.ok()) {
        a.outcome = std::move(b);
        release_quietly(keep);
        return a;
      }
    }
  } catch (...) {
    a.outcome = classify_exception(std::current_exception(), "build", Status::compile_failed);
    release_quietly(keep);
    return a;
  }
  a.outcome = prepare(*keep);
  if (a.outcome.ok()) {
    OutputCheck check(*in.workload, *in.reference, in.tolerance);
    // Read on the device's clock: a kernel far behind the incumbent is cut on it and one sample.
    double waited = -1;
    a.outcome = checked_call(*keep, check, "validation run", &device.clock(),
                             &a.validation_call_seconds, &waited);
    // A clock that cannot tell (-1) never makes a reading clean.
    a.validation_call_clean =
        waited >= 0 && waited <= cuts.wait_tolerance * a.validation_call_seconds;
  }
  // Asked for now whatever it read (more_sets_over 0): the default, an audit, no checked calls.
  const bool lone_cut = cuts.more_sets_over > 0 && a.validation_call_clean &&
                        a.validation_call_seconds >= cuts.lone_cut_over;
  if (a.outcome.ok() && !in.more_sets.empty() && a.validation_call_seconds >= cuts.more_sets_over &&
      !lone_cut) {
    // One candidate's buffers at a time: the timing trial is made again after the others.
    release_quietly(keep);
    a.outcome = validate_more_sets(device, in, index, a.validation_more_seconds);
    a.validated_more = a.outcome.ok();
    if (a.outcome.ok()) {
      keep = timing_trial(device, in, index);
      a.outcome = prepare(*keep);
    }
  }
  if (Outcome q = quiesce(in, index); a.outcome.ok() && !q.ok()) a.outcome = std::move(q);
  if (!a.outcome.ok()) release_quietly(keep);
  return a;
}

// Checked calls after a window, on the inputs its launches left (a plain trial when the
// window rotated over input copies: the check reads the validated workload's outputs).
Outcome check_after_window(Device& device, const TrialInputs& in, std::size_t index,
                           std::unique_ptr<Trial>& timed) {
  std::unique_ptr<Trial> plain;
  Trial* trial = timed.get();
  if (!in.rotation.empty()) {
    release_quietly(timed);
    plain = device.make_trial(*in.workload, index);
    if (Outcome o = prepare(*plain); !o.ok()) return o;
    trial = plain.get();
  }
  OutputCheck check(*in.workload, *in.reference, in.tolerance);
  Outcome o;
  for (int c = 0; c < in.check_calls && o.ok(); ++c)
    o = checked_call(*trial, check,
                     "checked call " + std::to_string(c + 1) + " after the timing window");
  release_quietly(plain);
  return o;
}

TrialAnswer window_phase(Device& device, const TrialInputs& in, std::size_t index,
                         std::unique_ptr<Trial>& trial, const TimingOptions& timing,
                         CheckAfter check) {
  TrialAnswer a;
  // What the last window left spinning must not share this one's cores.
  a.settle_seconds = device.settle(timing.settle_seconds);
  TimingOptions options = timing;
  // An op that quiesces its candidates stopped this one's threads after its last window (or
  // its validation run): the first launch restarts them, untimed.
  if (in.workload->quiesces()) options.warmup = std::max(options.warmup, 1);
  a.timing = time_routine(*trial, device.clock(), options);
  a.outcome = a.timing->outcome;
  const bool contender = check.below <= 0 || a.timing->min <= check.below;
  if (check.wanted && contender && a.outcome.ok() && in.check_calls > 0) {
    a.checked = true;
    a.outcome = check_after_window(device, in, index, trial);
    if (a.outcome.ok() && check.validate_more && !in.more_sets.empty()) {
      // After the calls that check what the window left; the next window prepares it again.
      release_quietly(trial);
      double fastest = 0;
      a.outcome = validate_more_sets(device, in, index, fastest);
      a.validated_more = a.outcome.ok();
    }
    if (!a.outcome.ok()) a.timing->outcome = a.outcome;
  }
  // What it left spinning is stopped now rather than waited for before the next window.
  if (Outcome q = quiesce(in, index); a.outcome.ok() && !q.ok()) {
    a.outcome = q;
    a.timing->outcome = std::move(q);
  }
  return a;
}

// The inputs a phase reads, as made: the workload it validates, times and checks and its
// rotation copies (the other input sets are read only by their validations, each of which
// restores them first: copying them back before every window took a sixth of the CPU of a
// tune of 16 MB rows, docs/performance.md).
void restore(const TrialInputs& in) {
  in.workload->restore_inputs();
  for (Workload* w : in.rotation) w->restore_inputs();
}

class InProcessRunner final : public TrialRunner {
 public:
  InProcessRunner(Device& device, const TrialInputs& in) : device_(device), in_(in) {}
  ~InProcessRunner() override {
    while (!trials_.empty()) release(trials_.begin()->first);
  }

  TrialAnswer admit(std::size_t index, bool built, double, const AdmitCuts& cuts) override {
    restore(in_);  // no candidate sees another's side effects
    std::unique_ptr<Trial> keep;
    TrialAnswer a = admit_phase(device_, in_, index, built, cuts, keep);
    if (keep) trials_[index] = std::move(keep);
    return a;
  }

  bool acquire(std::size_t index) override {
    if (trials_.count(index)) return true;
    try {
      auto trial = timing_trial(device_, in_, index);
      if (!prepare(*trial).ok()) return false;
      trials_[index] = std::move(trial);
      return true;
    } catch (const FatalError&) {
      throw;
    } catch (...) {
      return false;
    }
  }

  TrialAnswer window(std::size_t index, const TimingOptions& timing, CheckAfter check, double,
                     std::size_t) override {
    if (!acquire(index)) return {{Status::launch_failed, "could not be prepared again"}};
    restore(in_);
    std::unique_ptr<Trial>& trial = trials_.at(index);
    TrialAnswer a = window_phase(device_, in_, index, trial, timing, check);
    if (!trial) trials_.erase(index);  // released by the check
    return a;
  }

  void release(std::size_t index) override {
    auto it = trials_.find(index);
    if (it == trials_.end()) return;
    std::unique_ptr<Trial> trial = std::move(it->second);
    trials_.erase(it);
    release_quietly(trial);
  }

  std::size_t live() const override { return trials_.size(); }

 private:
  Device& device_;
  const TrialInputs& in_;
  std::unordered_map<std::size_t, std::unique_ptr<Trial>> trials_;
};

// The phases in a worker process, kept for the search: a fork of the host, which inherits the
// host's inputs untouched (nothing a candidate does there reaches the host); or a spawned
// worker program, which opens the device again and makes the same inputs itself. Either
// restores the inputs before every phase as the in-process runner does, and answers each
// phase's outcome. A worker that crashed, hung or saw a phase fail is replaced by a fresh one
// before the next phase: no candidate shares a process with one that misbehaved.
class WorkerRunner final : public TrialRunner {
 public:
  WorkerRunner(Device& device, const TrialInputs& in, std::uint64_t memory_bytes,
               std::function<double()> seconds_to_stop)
      : server_(device, in),
        worker_([this](std::string_view request) { return server_.serve(request); }, memory_bytes),
        seconds_to_stop_(std::move(seconds_to_stop)) {}
  WorkerRunner(Device& device, const TrialInputs& in, WorkerProcess::Spawn spawn,
               std::function<double()> seconds_to_stop)
      : server_(device, in),
        worker_(std::move(spawn)),
        spawned_(true),
        seconds_to_stop_(std::move(seconds_to_stop)) {}

  TrialAnswer admit(std::size_t index, bool built, double limit_seconds,
                    const AdmitCuts& cuts) override {
    TrialRequest q;
    q.phase = TrialRequest::Phase::admit;
    q.index = index;
    q.more_sets_over = cuts.more_sets_over;
    q.lone_cut_over = cuts.lone_cut_over;
    q.wait_tolerance = cuts.wait_tolerance;
    // A spawned worker has none of the host's builds: it builds before validating (a hit in the
    // driver's cache the host's compile pass filled), never inside the validation run's reading.
    q.built = built && !spawned_;
    return call(q, "validation", limit_seconds);
  }

  bool acquire(std::size_t) override { return true; }

  TrialAnswer window(std::size_t index, const TimingOptions& timing, CheckAfter check,
                     double limit_seconds, std::size_t functions_of) override {
    TrialRequest q;
    q.phase = TrialRequest::Phase::window;
    q.index = index;
    q.functions_of = functions_of;
    q.check = check.wanted;
    q.check_below = check.below;
    q.validate_more = check.validate_more;
    q.timing = timing;
    return call(q, "timing", limit_seconds);
  }

  void release(std::size_t) override {}
  std::size_t live() const override { return 0; }
  void built() override {
    if (spawned_) return;  // it builds itself (through the driver's caches the build filled)
    worker_.stop();        // the next phase forks a worker that has the build
    served_.clear();
  }

 private:
  TrialAnswer call(const TrialRequest& q, std::string_view phase, double limit_seconds) {
    const bool shared =
        worker_.running() && !served_.empty() && !(served_.size() == 1 && served_.count(q.index));
    TrialAnswer a = call_once(q, phase, limit_seconds);
    // A failure in a worker that served other candidates may be their leftovers (a global they
    // changed, a heap they damaged): the phase runs again in a fresh worker, and the candidate
    // is blamed only if it fails there too. (A hang is not run twice: its limit was paid once
    // already.)
    if (shared && !trusted(a.outcome.status) && a.outcome.status != Status::timed_out) {
      TrialAnswer again = call_once(q, phase, limit_seconds);
      // No fresh worker to run it in: the first outcome is all that is known.
      if (!no_worker_) a = std::move(again);
    }
    return a;
  }

  // The host's stop() is asked as each attempt is sent, and the worker stops by itself when
  // the budget's would: a spawned worker has no copy of it, a forked one a stale copy
  // (BudgetStop). A caller's own stop() is asked here too, and again in a forked worker, in
  // its copy.
  TrialRequest asked(const TrialRequest& q) const {
    TrialRequest sent = q;
    if (q.phase != TrialRequest::Phase::window || !q.timing.stop) return sent;
    sent.stopped = q.timing.stop();
    if (sent.stopped || !q.timing.stop.target<BudgetStop>() || !seconds_to_stop_) return sent;
    const double left = seconds_to_stop_();
    if (!(left > 0))
      sent.stopped = true;  // spent between the two readings of the clock
    else if (std::isfinite(left))
      sent.stop_after_seconds = left;
    return sent;
  }

  TrialAnswer call_once(const TrialRequest& q, std::string_view phase, double limit_seconds) {
    if (!worker_.running()) served_.clear();
    WorkerResult r = worker_.call(encode(asked(q)), limit_seconds);
    no_worker_ = false;
    if (r.kind == WorkerResult::Kind::setup_failed && set_up_once_)
      r = worker_.call(encode(asked(q)), limit_seconds);  // a replacement: once more
    if (r.kind != WorkerResult::Kind::setup_failed && r.kind != WorkerResult::Kind::not_started)
      set_up_once_ = true;
    served_.insert(q.index);
    const std::string during = std::string(phase) + " in a worker process: ";
    TrialAnswer a;
    switch (r.kind) {
      case WorkerResult::Kind::answered:
        if (auto decoded = decode_trial_answer(r.answer)) {
          if (!decoded->fatal.empty()) throw FatalError(decoded->fatal);
          a = std::move(*decoded);
        } else {
          a.outcome = {Status::crashed, during +
                                            "the worker's answer is unreadable (it "
                                            "scribbled over its own memory?)"};
        }
        break;
      case WorkerResult::Kind::crashed:
        a.outcome = {Status::crashed, during + "the worker " + r.message};
        break;
      case WorkerResult::Kind::timed_out:
        a.outcome = {Status::timed_out, during + r.message};
        break;
      case WorkerResult::Kind::not_started:
        a.outcome = {Status::launch_failed, during + r.message};
        break;
      case WorkerResult::Kind::setup_failed:
        // The first worker: not a candidate's doing (the setup runs none of them but the
        // default, which the host validated) and every trial would fail the same way. A
        // replacement after a candidate misbehaved (a device it left unusable, say): the phase.
        if (!set_up_once_)
          throw UsageError(r.message + "; run the trials in process (isolation 'in_process')");
        a.outcome = {Status::launch_failed, during + "a fresh worker: " + r.message};
        no_worker_ = true;
        break;
    }
    a.worker_setup_seconds = r.setup_seconds;
    if (!trusted(a.outcome.status)) worker_.stop();
    if (!worker_.running()) served_.clear();
    return a;
  }

  // Outcomes after which the worker goes on serving; after any other, a fresh one.
  static bool trusted(Status s) {
    return s == Status::ok || s == Status::hopeless || s == Status::stopped;
  }

  TrialServer server_;            // in the forked worker
  std::set<std::size_t> served_;  // the candidates the running worker has served
  WorkerProcess worker_;
  bool spawned_ = false;
  bool set_up_once_ = false;  // a spawned worker set up at least once
  bool no_worker_ = false;    // the last call found no worker that could set up
  std::function<double()> seconds_to_stop_;
};

}  // namespace

TrialInputSet::TrialInputSet(const OpBase& op, const Key& key, int input_sets, int rotation_copies,
                             std::size_t default_index) {
  workload_ = op.make_workload(key);
  reference_ = Reference::capture(*workload_, op.has_reference(), default_index);
  for (int set = 1; set < input_sets; ++set) {
    more_sets_.push_back(op.make_workload(key, set));
    more_references_.push_back(
        Reference::capture(*more_sets_.back(), op.has_reference(), default_index));
  }
  for (int c = 0; c < rotation_copies; ++c) rotation_.push_back(op.make_workload(key));
  inputs_.workload = workload_.get();
  inputs_.reference = &*reference_;
  for (std::size_t s = 0; s < more_sets_.size(); ++s)
    inputs_.more_sets.emplace_back(more_sets_[s].get(), &more_references_[s]);
  for (auto& w : rotation_) inputs_.rotation.push_back(w.get());
}

TrialServer::~TrialServer() {
  try {
    release_quietly(kept_);
  } catch (...) {  // a worker's exit: nothing to report it to
  }
}

void TrialServer::keep(std::size_t index, std::unique_ptr<Trial> trial) {
  release_quietly(kept_);
  kept_index_ = index;
  kept_ = std::move(trial);
}

std::string TrialServer::serve(std::string_view bytes) {
  TrialAnswer a;
  try {
    auto q = decode_trial_request(bytes);
    if (!q) throw FatalError("a worker process received a damaged request");
    if (kept_ && (q->index != kept_index_ || q->phase == TrialRequest::Phase::admit))
      release_quietly(kept_);  // another candidate's buffers go before this one's come
    restore(in_);
    a = q->phase == TrialRequest::Phase::admit ? admit_here(*q) : window_here(*q);
  } catch (const FatalError& e) {
    a.fatal = e.what();
  } catch (...) {
    a.outcome = classify_exception(std::current_exception(), "worker");
  }
  return encode(a);
}

TrialAnswer TrialServer::admit_here(const TrialRequest& q) {
  std::unique_ptr<Trial> trial;
  // A forked worker inherits the builds of the host's compile pass (one forked before a build
  // is replaced: WorkerRunner::built); a spawned one is asked to build (WorkerRunner::admit).
  const AdmitCuts cuts{.more_sets_over = q.more_sets_over,
                       .lone_cut_over = q.lone_cut_over,
                       .wait_tolerance = q.wait_tolerance};
  TrialAnswer a = admit_phase(device_, in_, q.index, q.built, cuts, trial);
  keep(q.index, std::move(trial));  // prepared for its first window (null when it failed)
  return a;
}

TrialAnswer TrialServer::window_here(const TrialRequest& q) {
  TimingOptions t = q.timing;
  const TimingOptions own = in_.functions ? in_.functions(q.functions_of) : TimingOptions{};
  t.evictor = q.evict ? (own.evictor ? own.evictor : device_.evictor()) : nullptr;
  t.stop = nullptr;
  if (q.stop) {  // the caller's own stop() in this copy; the budget is the request's
    const auto* combined = own.stop.target<BudgetStop>();
    t.stop = combined ? combined->user : own.stop;
  }
  if (q.stopped) {
    t.stop = [] { return true; };
  } else if (q.stop_after_seconds > 0) {  // the host's budget, from now
    const auto until = std::chrono::steady_clock::now() +
                       std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                           std::chrono::duration<double>(q.stop_after_seconds));
    t.stop = [until, inner = std::move(t.stop)] {
      return std::chrono::steady_clock::now() >= until || (inner && inner());
    };
  }
  t.on_call = q.on_call ? own.on_call : nullptr;
  TrialAnswer a;
  if (kept_) {  // admitted or timed here before: built and prepared
    std::unique_ptr<Trial> trial = std::move(kept_);
    a = window_phase(device_, in_, q.index, trial, t, {q.check, q.check_below, q.validate_more});
    if (a.outcome.ok()) keep(q.index, std::move(trial));  // null when the check released it
    release_quietly(trial);
    return a;
  }
  std::unique_ptr<Trial> trial = timing_trial(device_, in_, q.index);
  if (own_builds_) {
    try {
      a.outcome = trial->build();  // a hit when this process admitted it
    } catch (...) {
      a.outcome = classify_exception(std::current_exception(), "build", Status::compile_failed);
    }
  }
  if (a.outcome.ok()) a.outcome = prepare(*trial);
  if (a.outcome.ok())
    a = window_phase(device_, in_, q.index, trial, t, {q.check, q.check_below, q.validate_more});
  if (a.outcome.ok())
    keep(q.index, std::move(trial));
  else
    release_quietly(trial);
  return a;
}

std::unique_ptr<TrialRunner> make_in_process_runner(Device& device, const TrialInputs& inputs) {
  return std::make_unique<InProcessRunner>(device, inputs);
}

std::unique_ptr<TrialRunner> make_worker_runner(Device& device, const TrialInputs& inputs,
                                                std::uint64_t memory_bytes,
                                                std::function<double()> seconds_to_stop) {
  return std::make_unique<WorkerRunner>(device, inputs, memory_bytes, std::move(seconds_to_stop));
}

std::unique_ptr<TrialRunner> make_spawned_runner(Device& device, const TrialInputs& inputs,
                                                 WorkerProcess::Spawn spawn,
                                                 std::function<double()> seconds_to_stop) {
  return std::make_unique<WorkerRunner>(device, inputs, std::move(spawn),
                                        std::move(seconds_to_stop));
}

}  // namespace tunekit::detail
