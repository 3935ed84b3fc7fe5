#include "tuner/search_context.hpp"

#include <algorithm>
#include <cmath>
#include <exception>
#include <limits>

#include <fmt/format.h>

#include "core/classify.hpp"
#include "tunekit/errors.hpp"
#include "tunekit/stats.hpp"
#include "tuner/admission.hpp"
#include "tuner/confirmation_size.hpp"
#include "tuner/decision.hpp"
#include "tuner/decision_confidence.hpp"
#include "tuner/trial_runner.hpp"

namespace tunekit::detail {
namespace {
double since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}
// An op's own timing protocol (Op::timing): its warmup, then `windows` queued batches of
// launches / windows each, no top-up; the ranking statistic is the median across windows.
void apply_protocol(const TimingProtocol& p, TimingOptions& timing) {
  timing.mode = TimingMode::queued;
  timing.warmup = p.warmup;
  timing.fixed_depth = p.launches / p.windows;
  timing.depth_cap = std::max(timing.depth_cap, timing.fixed_depth);
  timing.repeats_floor = p.windows;
  timing.max_runs = p.windows;
  timing.sample_budget = 0;
}

}  // namespace

SearchContext::SearchContext(Device& device, const OpBase& op, const Key& key,
                             const TunerOptions& options)
    : device_(device),
      op_(op),
      key_(key),
      options_(options),
      placement_(device, options.measure.placement, [this] { return budget_now(); }) {
  r_.default_index = op_.default_index(key_);
  r_.default_name = op_.candidate(r_.default_index).name;
  r_.space_size = op_.size();
  r_.winner = r_.default_index;
  r_.winner_name = r_.default_name;
  total_ = r_.space_size;
  started_ = budget_now();
}

SearchContext::~SearchContext() = default;

void SearchContext::start_placement() {
  r_.cpu_placement.before_ns = device_.cross_cpu_round_trip().value_or(0);
  placement_.start(r_.cpu_placement.before_ns);
}

void SearchContext::end_placement() {
  CpuPlacement& p = r_.cpu_placement;
  p.after_ns = device_.cross_cpu_round_trip().value_or(0);
  placement_.report(p);
  if (p.lowest_ns > 0 && p.after_ns > 0) p.lowest_ns = std::min(p.lowest_ns, p.after_ns);
}

CandidateReport& SearchContext::entry(std::size_t index) {
  if (auto it = position_.find(index); it != position_.end()) return r_.candidates[it->second];
  const Candidate cand = op_.candidate(index);
  CandidateReport c;
  c.index = index;
  c.name = cand.name;
  c.config = cand.config.text();
  c.numerics = cand.numerics;
  c.group = cand.group;
  c.preference = cand.preference;
  c.is_default = index == r_.default_index;
  c.outcome = {Status::skipped, "not reached"};
  position_.emplace(index, r_.candidates.size());
  r_.candidates.push_back(std::move(c));
  return r_.candidates.back();
}

bool SearchContext::prepare_inputs(int input_sets) {
  const int sets = input_sets > 0 ? std::min(input_sets, op_.input_sets()) : op_.input_sets();
  // A shape that cannot fit is refused before anything is allocated.
  if (auto refused = working_set_refusal(op_, key_, device_.identity())) {
    r_.source = Source::pre_search_failure;
    r_.reason = *refused;
    return false;
  }
  try {
    const int copies = options_.measure.rotate > 0 ? options_.measure.rotate : op_.rotation(key_);
    input_set_.emplace(op_, key_, sets, std::max(0, copies - 1), r_.default_index);
    TrialInputs& inputs = input_set_->inputs();
    inputs.tolerance = op_.tolerance(key_);
    inputs.check_calls = options_.measure.check_calls;
    inputs.functions = [this](std::size_t index) { return timing_options(index); };
  } catch (const UsageError&) {
    throw;
  } catch (...) {
    Outcome o = classify_exception(std::current_exception(), "preparing inputs and reference");
    r_.source = Source::pre_search_failure;
    r_.reason = o.message;
    return false;
  }
  choose_runner();
  return true;
}

void SearchContext::choose_runner() {
  using Mode = IsolationOptions::Mode;
  const IsolationOptions& iso = options_.measure.isolation;
  const Device::Workers workers = device_.workers();
  if (iso.mode == Mode::worker && workers == Device::Workers::unsupported) {
    throw UsageError("isolation 'worker' is not available on the " + device_.identity().backend +
                     " device (a worker would need a device context of its own): use "
                     "'automatic' or 'in_process'");
  }
  const bool opted_out = op_.in_process_reason().has_value();
  isolated_ = !opted_out && (iso.mode == Mode::worker || (iso.mode == Mode::automatic &&
                                                          workers == Device::Workers::by_default));
  const std::uint64_t memory =
      iso.memory_bytes > 0 ? iso.memory_bytes : device_.identity().memory_bytes;
  spawned_ = isolated_ && workers == Device::Workers::spawned;
  // A worker is sent the budget with each window (BudgetStop): asked when the window starts.
  auto seconds_to_stop = [this]() -> double {
    return seconds_to_stop_ ? seconds_to_stop_() : std::numeric_limits<double>::infinity();
  };
  if (spawned_) {
    WorkerProcess::Spawn spawn = spawn_worker(iso.memory_bytes);
    r_.isolation = "worker (spawned: " + spawn.program + ")";
    // The device's memory is not the host's address space (a GPU driver reserves far more
    // than it uses): only a limit the caller set applies.
    runner_ = make_spawned_runner(device_, input_set_->inputs(), std::move(spawn), seconds_to_stop);
  } else if (isolated_) {
    r_.isolation = "worker";
    runner_ = make_worker_runner(device_, input_set_->inputs(), memory, seconds_to_stop);
  } else {
    r_.isolation =
        opted_out ? "in_process (the op: " + *op_.in_process_reason() + ")" : "in_process";
    runner_ = make_in_process_runner(device_, input_set_->inputs());
  }
}

WorkerProcess::Spawn SearchContext::spawn_worker(std::uint64_t memory) const {
  const IsolationOptions& iso = options_.measure.isolation;
  const std::string backend = device_.identity().backend;
  std::optional<DeviceReopen> reopen = device_.reopen();
  if (iso.worker_program.empty() || !reopen) {
    throw UsageError("isolation 'worker' on the " + backend +
                     " device runs trials in a worker program that opens the device again "
                     "(its driver's context does not survive fork()): " +
                     (reopen ? "set IsolationOptions::worker_program (TUNEKIT_WORKER_PROGRAM) "
                               "to the tunekit executable"
                             : std::string("this device does not say how to open it again")) +
                     ", or use 'in_process'");
  }
  if (iso.worker_program.find('/') == std::string::npos) {
    throw UsageError("IsolationOptions::worker_program '" + iso.worker_program +
                     "' is not a path: name the tunekit executable by its path (it is not "
                     "looked up in PATH)");
  }
  if (options_.measure.timing.on_call || options_.measure.timing.evictor) {
    throw UsageError(std::string("TimingOptions::") +
                     (options_.measure.timing.on_call ? "on_call" : "evictor") +
                     " cannot run in a spawned worker (the " + backend +
                     " device's trials run in a process of their own, with the device's own "
                     "evictor): use isolation 'in_process'");
  }
  TrialSetup setup;
  setup.backend = reopen->backend;
  setup.device = reopen->device;
  setup.arch = reopen->arch;
  setup.op = op_.name();
  setup.key = key_.text();
  setup.checksum = op_.checksum().hex();
  setup.store = options_.persist.store;
  setup.input_sets = static_cast<std::uint32_t>(1 + input_set_->inputs().more_sets.size());
  setup.rotation_copies = static_cast<std::uint32_t>(input_set_->inputs().rotation.size());
  setup.check_calls = options_.measure.check_calls;
  setup.default_index = r_.default_index;
  setup.memory_bytes = memory;
  // Setting up makes the inputs and the reference again: as long as a phase may take, at least.
  return {iso.worker_program, encode(setup), std::max(iso.limit_seconds, 60.0)};
}

std::unique_ptr<Trial> SearchContext::build_trial(std::size_t index) {
  return device_.make_trial(*input_set_->inputs().workload, index);
}

void SearchContext::built(std::size_t index, const Outcome& outcome, double seconds) {
  entry(index).compile_seconds = seconds;
  built_[index] = true;
  // A forked worker lacks what a build did in the host after the fork: replaced when a build
  // can have done anything (the op's build step, or a device's own), else kept — a fresh fork
  // per batch costs its copy-on-write faults on every input it restores.
  if (runner_ && (op_.has_build_step() || device_.trial_builds_beyond_op())) runner_->built();
  if (!outcome.ok()) finish(index, outcome, std::nullopt);
}

bool SearchContext::admit(std::size_t index) {
  const Candidate cand = op_.candidate(index);
  if (auto banned = banned_.find(index); banned != banned_.end()) {
    finish(index, {Status::rejected, "banned for this key: " + banned->second}, std::nullopt);
    return false;
  }
  if (auto refused = precheck(cand, key_, options_.decide.numerics_policy)) {
    finish(index, *refused, std::nullopt);
    return false;
  }
  const auto start = Wall::now();
  const double budget_start = budget_now();
  const AdmitCuts cuts{.more_sets_over = more_sets_over(index),
                       .lone_cut_over = lone_cut_over(index),
                       .wait_tolerance = timing_options(index).wait_tolerance};
  TrialAnswer a = runner_->admit(index, built_[index], validation_limit(index), cuts);
  if (a.validated_more) validated_more_.insert(index);
  // Only a run the clock knows clean can be one reading enough.
  lone_cut_line_[index] = a.validation_call_clean ? cuts.lone_cut_over : HUGE_VAL;
  const double took = since(start) - a.worker_setup_seconds;  // a worker's start is no candidate's
  validated_[index] = took;
  // The budget's projections are on its own clock (a replay's or a test's simulated one).
  admission_.add(budget_now() - budget_start - (options_.measure.now ? 0 : a.worker_setup_seconds));
  validation_call_[index] = a.validation_call_seconds;
  validation_more_[index] = a.validation_more_seconds;
  if (!built_[index]) {
    entry(index).compile_seconds = a.compile_seconds;
    r_.seconds_compiling += a.compile_seconds;
    built_[index] = true;
  }
  r_.seconds_validating += std::max(0.0, took - a.compile_seconds);
  if (!a.outcome.ok()) {
    finish(index, std::move(a.outcome), std::nullopt);
    return false;
  }
  return true;
}

bool SearchContext::acquire(std::size_t index) {
  const double start = budget_now();
  const bool ok = runner_->acquire(index);
  // What preparing a trial again costs: a pairing prepares both its sides first.
  acquisition_.add(budget_now() - start);
  return ok;
}

double SearchContext::budget_now() const {
  if (options_.measure.now) return options_.measure.now();
  return std::chrono::duration<double>(Wall::now().time_since_epoch()).count();
}

void SearchContext::drop_trial(std::size_t index) {
  runner_->release(index);
}

std::size_t SearchContext::live_trials() const {
  return runner_ ? runner_->live() : 0;
}

double SearchContext::validation_limit(std::size_t index) const {
  if (!isolated_) return 0;
  const IsolationOptions& iso = options_.measure.isolation;
  double limit = iso.limit_seconds;
  // One call per input set, each far slower than the incumbent: it would lose anyway.
  if (incumbent_ > 0) limit = std::min(limit, 50 * incumbent_ * op_.input_sets());
  if (time_left_ && index != r_.default_index) limit = std::min(limit, std::max(0.0, time_left_()));
  return std::max(limit, iso.floor_seconds) + rebuild_allowance(index);
}

double SearchContext::more_sets_over(std::size_t index) const {
  // The default is validated on every set (it ships whatever the search finds), and so is every
  // candidate when no checked calls run (nothing else would validate them there) or when the
  // audit is to name every wrong candidate (a window cut before its checked calls would not).
  if (op_.input_sets() <= 1 || index == r_.default_index || options_.measure.check_calls <= 0 ||
      options_.measure.check_every_candidate)
    return 0;
  // Where cut_on_validation can cut the candidate at its first window (the incumbent then is
  // the incumbent now: a schedule finishes no candidate between an admission and that window),
  // its second cold reading is taken when the first is over the cut's line.
  const TimingOptions t = timing_options(index);
  if (t.mode != TimingMode::isolated || !(t.far_behind_ratio > 0) || !(incumbent_ > 0))
    return HUGE_VAL;
  return std::max(t.far_behind_ratio, t.hopeless_ratio) * incumbent_;
}

double SearchContext::lone_cut_over(std::size_t index) const {
  const TimingOptions t = timing_options(index);
  if (index == r_.default_index || t.mode != TimingMode::isolated || !(t.far_behind_ratio > 0) ||
      !(t.lone_cut_seconds > 0) || !(incumbent_ > 0))
    return HUGE_VAL;
  return std::max(t.far_behind_ratio, t.hopeless_ratio) * incumbent_ + t.lone_cut_seconds;
}

double SearchContext::more_sets_seconds(std::size_t index, double call) const {
  const int more = validated_more_.count(index) ? 0 : op_.input_sets() - 1;
  return more * (call + prepare_seconds());
}

double SearchContext::rebuild_allowance(std::size_t index) const {
  // A spawned worker builds again what the host's compile pass built (a cache hit, unless the
  // driver keeps no cache): as long as the host's build took, beyond the phase's own limit.
  if (!spawned_) return 0;
  const CandidateReport* c = find(index);
  return c ? 2 * c->compile_seconds : 0;
}

double SearchContext::window_limit(std::size_t index, const TimingOptions& t) const {
  if (!isolated_) return 0;
  const IsolationOptions& iso = options_.measure.isolation;
  // The longest window the timing policy takes for a candidate whose calls take `call`
  // seconds: the warmup, the sample cap, the checked calls and the queued calibration.
  // With the checked calls, a validation run on each further input set not yet validated.
  auto window_of = [&](double call) {
    return (t.warmup + std::max(t.max_runs, t.repeats_floor) + options_.measure.check_calls) *
               call +
           more_sets_seconds(index, call) + 20 * t.batch_target + t.sample_budget;
  };
  double limit = iso.limit_seconds;
  if (auto it = validated_.find(index); it != validated_.end())
    limit = std::max(limit, 3 * window_of(it->second));  // its own calls: a slow op is no hang
  if (incumbent_ > 0 && index != r_.default_index) {
    // What a window costs beyond its launches (evictor sweeps, restoring inputs, prepare) is
    // in the default's measured wall time: the cap never falls under three of those.
    double cap = 10 * window_of(incumbent_);
    if (const CandidateReport* d = find(r_.default_index); d && d->timing)
      cap = std::max(cap, 3 * d->timing->wall_seconds);
    limit = std::min(limit, cap);
  }
  if (time_left_ && index != r_.default_index) limit = std::min(limit, std::max(0.0, time_left_()));
  // A worker stops a window at the budget by itself: the host's limit is a floor later.
  const double grace = isolated_ && time_left_ ? iso.floor_seconds : 0;
  return std::max(limit, iso.floor_seconds) + grace + rebuild_allowance(index);
}

double SearchContext::first_window_seconds(std::size_t index, int samples) const {
  const auto call = validation_call_.find(index);
  if (call == validation_call_.end()) return 0;
  return prepare_seconds() + (timing_options(index).warmup + samples) * call->second;
}

TimingOptions SearchContext::timing_options(std::size_t index) const {
  TimingOptions timing = options_.measure.timing;
  if (timing.depth_cap == TimingOptions{}.depth_cap) timing.depth_cap = device_.default_depth_cap();
  if (const auto& protocol = op_.timing_protocol()) apply_protocol(*protocol, timing);
  if ((options_.measure.evict || op_.evicts()) && !timing.evictor)
    timing.evictor = device_.evictor();
  // The validation run, a cold launch read on the same clock on this very trial, is one
  // reading of the far-behind cut (the default is never cut: it has no incumbent). Where the
  // further input sets were validated the timing trial was made again after them: that run
  // warmed another trial.
  if (auto it = validation_call_.find(index);
      it != validation_call_.end() && !validated_more_.count(index))
    timing.prior_reading = it->second;
  if (stop_ && index != r_.default_index) {
    // The caller's stop() and the budget's: either ends the window.
    timing.stop = BudgetStop{timing.stop, stop_};
  }
  return timing;
}

TimingResult SearchContext::window(std::size_t index, const TimingOptions& timing, CheckWhen when,
                                   std::optional<std::size_t> functions_of) {
  CheckAfter after;
  after.wanted = when != CheckWhen::never && !checked_[index] && options_.measure.check_calls > 0;
  after.validate_more = !validated_more_.count(index);
  // A contender: within the tie band of the best checked reading (every candidate while none is).
  if (when == CheckWhen::contender && !options_.measure.check_every_candidate && best_checked_ > 0)
    after.below = best_checked_ * (1 + options_.decide.tie_band);
  const auto start = Wall::now();
  // A budget's time is not waited away: at most what is left before it stops the search.
  const double waited =
      placement_.before_window(seconds_to_stop_ ? std::max(0.0, seconds_to_stop_()) : HUGE_VAL);
  TrialAnswer a = runner_->window(index, timing, after, window_limit(index, timing),
                                  functions_of.value_or(index));
  // What a window costs beyond its launches (inputs restored, settling, a worker's round
  // trip, a quiesce): the paired confirmations' projections count it for every side. Only on
  // the host's clock: an injected budget clock (a replay, a test) has none to separate.
  if (!options_.measure.now && a.timing && !a.checked && a.timing->wall_seconds > 0)
    window_overhead_.add(since(start) - waited - a.worker_setup_seconds - a.timing->wall_seconds);
  r_.seconds_settling += a.settle_seconds + waited;
  if (a.validated_more) validated_more_.insert(index);
  if (a.checked) entry(index).checked = true;  // ran (a failure is its outcome)
  if (a.checked && a.timing && a.timing->outcome.ok()) {
    checked_[index] = true;
    const double reading = score(*a.timing);
    if (best_checked_ == 0 || reading < best_checked_) best_checked_ = reading;
  }
  if (a.timing) return std::move(*a.timing);
  TimingResult failed;
  failed.outcome = std::move(a.outcome);
  return failed;
}

std::optional<TimingResult> SearchContext::cut_on_validation(std::size_t index,
                                                             const TimingOptions& timing) const {
  // Before a candidate's first window only (a later one — a racing round, the final race —
  // follows readings of its own), against the best measured so far. Isolated windows only: a
  // queued incumbent is a per-launch time of batches, which one launch and its sync are no
  // measure against. The default is never cut (it has no incumbent).
  if (index == r_.default_index || timing.mode != TimingMode::isolated || !(incumbent_ > 0) ||
      !(timing.far_behind_ratio > 0))
    return std::nullopt;
  const auto first = validation_call_.find(index);
  if (first == validation_call_.end() || !(first->second > 0)) return std::nullopt;
  const auto more = validation_more_.find(index);
  const bool two = more != validation_more_.end() && more->second > 0;
  // Cold runs only add time, as a stall does: two of them far behind are not a fast kernel, nor
  // is one the clock knows did not wait, far behind by more than the allowance for what a first
  // call costs once (lone_cut_over). A second run under the line says the kernel is not that
  // far behind: no cut on the first then.
  const auto lone_line = lone_cut_line_.find(index);
  const bool lone = !two && lone_line != lone_cut_line_.end() && first->second >= lone_line->second;
  if (!two && !lone) return std::nullopt;
  const double behind = (two ? std::min(first->second, more->second) : first->second) / incumbent_;
  const double line = std::max(timing.far_behind_ratio, timing.hopeless_ratio);
  if (!(behind >= line)) return std::nullopt;
  TimingResult t;
  t.mode = TimingMode::isolated;
  t.clock = std::string(device_.clock().name());
  t.samples =
      two ? std::vector<double>{first->second, more->second} : std::vector<double>{first->second};
  t.clean = lone ? 1 : 0;  // a strategy is given the median: cold, an upper bound of the kernel
  summarise(t, timing);
  t.outcome = {
      Status::hopeless,
      two ? fmt::format("cut on its validation runs, before any window: the faster of the "
                        "two is {:.3g}x the incumbent (far_behind_ratio {:g})",
                        behind, line)
          : fmt::format("cut on its validation run alone, before any window: {:.3g} s, "
                        "{:.3g}x the incumbent, past {:.3g} s (far_behind_ratio {:g} x "
                        "the incumbent + lone_cut_seconds {:g} for one-time costs), its "
                        "threads never waiting for a CPU",
                        first->second, behind, lone_line->second, line, timing.lone_cut_seconds)};
  return t;
}

TimingResult SearchContext::measure(std::size_t index, const TimingOptions& timing,
                                    CheckWhen when) {
  if (windowed_.insert(index).second)
    if (std::optional<TimingResult> cut = cut_on_validation(index, timing)) return *cut;
  const auto start = Wall::now();
  TimingResult result = window(index, timing, when);
  if (result.ok() && result.contended) {
    CandidateReport& c = entry(index);
    if (options_.hooks.on_retry) options_.hooks.on_retry(c.name, result);
    ++c.retries;
    result = window(index, timing, when);
    if (result.ok() && result.contended) {
      result.outcome = {
          Status::refused,
          "contended twice: " + std::to_string(static_cast<int>(100 * result.stalled_fraction)) +
              "% of samples over " + std::to_string(timing.stall_ratio) + "x the window's minimum"};
    }
  }
  r_.seconds_measuring += since(start);
  return result;
}

double SearchContext::score(const TimingResult& t) const {
  return options_.decide.statistic == Statistic::min ? t.min : t.median;
}

void SearchContext::finish(std::size_t index, Outcome outcome, std::optional<TimingResult> timing) {
  CandidateReport& c = entry(index);
  c.outcome = std::move(outcome);
  c.timing = std::move(timing);
  if (c.outcome.ok() && c.timing) {
    c.score = score(*c.timing);
    if (incumbent_ == 0 || c.score < incumbent_) incumbent_ = c.score, incumbent_index_ = index;
    project_decision_cost();
  }
  if (options_.hooks.on_progress)
    options_.hooks.on_progress(
        ProgressEvent{op_.name(), finished_, std::max(total_, finished_ + 1), c.name, &c});
  ++finished_;
  // A lost device (a CUDA sticky error) takes every later trial with it: the search ends here
  // as a fatal failure (DESIGN §4), nothing is stored, the caller hears which candidate lost it.
  if (c.outcome.status == Status::device_lost)
    throw FatalError("the device was lost while " + c.name + " ran (" + c.outcome.message +
                     "); nothing more is tuned on it: restart the process");
}

void SearchContext::choose() {
  r_.source = Source::searched;
  const CandidateReport& def = entry(r_.default_index);
  r_.default_score = def.outcome.ok() ? def.score : 0;
  // A winner not yet checked is checked now; one that fails is declined and the next decided.
  std::optional<std::size_t> w;
  do w = decide(r_.candidates, r_.default_index, options_.decide.tie_band);
  while (w && !holds(*w));
  if (w) {
    r_.winner = *w;
  } else {
    r_.winner = r_.default_index;
    r_.reason = "no candidate validated and measured cleanly; the default stands";
    // The last failure chained (seed 002): what the caller would ask first.
    for (auto c = r_.candidates.rbegin(); c != r_.candidates.rend(); ++c) {
      if (c->outcome.ok() || c->outcome.status == Status::skipped) continue;
      r_.reason += "; the last failure: " + c->name + " " +
                   std::string(to_string(c->outcome.status)) + ": " + c->outcome.message;
      break;
    }
  }
  // The tie order's pick against the fastest reading it was tied with (the order must not
  // cost a difference the pairs can see); a winner that is not a library anchor must beat
  // the best anchor in pairs (a drift between their windows must not lose the library's
  // speed); then a non-default winner must beat the default.
  if (w && options_.decide.confirm_pairs > 0) pair_with_tied_rival();
  if (w && options_.decide.confirm_pairs > 0) pair_with_anchor();
  if (r_.winner != r_.default_index && r_.default_score > 0 && options_.decide.confirm_pairs > 0)
    confirm();
  CandidateReport& win = entry(r_.winner);
  win.winner = true;
  r_.winner_name = win.name;
  r_.winner_score = win.outcome.ok() ? win.score : 0;
  r_.speedup =
      (r_.default_score > 0 && r_.winner_score > 0) ? r_.default_score / r_.winner_score : 1;
  for (auto& c : r_.candidates)
    if (c.outcome.ok() && r_.default_score > 0) c.vs_default = r_.default_score / c.score;
  r_.confidence = decision_confidence(r_);
  // The paired bound is the winner's only when the confirmation kept it.
  if (r_.confidence && r_.confirmed) r_.confidence->paired_high = paired_high_;
}

Outcome SearchContext::check(std::size_t index) {
  if (checked_[index] || options_.measure.check_calls <= 0) return Outcome::success();
  const auto start = Wall::now();
  // A short window, so the calls check the inputs its launches left, as after any window.
  TimingOptions t = timing_options(index);
  t.warmup = 0;
  t.repeats_floor = t.max_runs = 2;
  t.sample_budget = 0;
  t.hopeless_against = 0;
  t.stop = nullptr;  // the decision waits for it: a budget does not skip the check
  t.on_call = nullptr;
  if (const CandidateReport* c = find(index); c && c->timing) t.fixed_depth = c->timing->depth;
  Outcome failed{Status::launch_failed, "could not be prepared again for its checked calls"};
  const std::size_t live_before = live_trials();
  if (acquire(index)) {
    TimingResult checked = window(index, t, CheckWhen::always);
    failed = checked.outcome;
    // A trial prepared here is dropped again; one the caller holds (a lone racing runner
    // keeps its own between rounds) is left to the caller.
    if (live_trials() > live_before) drop_trial(index);
  }
  r_.seconds_validating += since(start);
  if (checked_[index]) return Outcome::success();
  // Its calls did not run (a window that failed before them) or failed: it cannot be chosen.
  if (failed.ok()) failed = {Status::validation_failed, "its checked calls could not run"};
  return failed;
}

bool SearchContext::holds(std::size_t index) {
  Outcome failed = check(index);
  if (failed.ok()) return true;
  // As finish() does: a lost device takes every later trial (and check) with it.
  if (failed.status == Status::device_lost)
    throw FatalError("the device was lost while " + entry(index).name + " ran (" + failed.message +
                     "); nothing more is tuned on it: restart the process");
  entry(index).outcome = std::move(failed);
  return false;
}

}  // namespace tunekit::detail
