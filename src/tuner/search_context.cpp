#include "tuner/search_context.hpp"

#include <algorithm>
#include <cmath>
#include <exception>

#include "core/classify.hpp"
#include "tunekit/errors.hpp"
#include "tunekit/stats.hpp"
#include "tuner/admission.hpp"
#include "tuner/decision.hpp"

namespace tunekit::detail {
namespace {
double since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}
}  // namespace

SearchContext::SearchContext(Device& device, const OpBase& op, const Key& key,
                             const TunerOptions& options)
    : device_(device), op_(op), key_(key), options_(options) {
  r_.default_index = op_.default_index(key_);
  r_.default_name = op_.candidate(r_.default_index).name;
  r_.space_size = op_.size();
  r_.winner = r_.default_index;
  r_.winner_name = r_.default_name;
  total_ = r_.space_size;
}

SearchContext::~SearchContext() {
  while (!trials_.empty()) drop_trial(trials_.begin()->first);
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

bool SearchContext::prepare_inputs() {
  try {
    workload_ = op_.make_workload(key_);
    reference_ = Reference::capture(*workload_, op_.has_reference(), r_.default_index);
    const int copies = options_.rotate > 0 ? options_.rotate : op_.rotation(key_);
    for (int c = 1; c < copies; ++c) rotation_.push_back(op_.make_workload(key_));
    tolerance_ = op_.tolerance(key_);
    return true;
  } catch (const UsageError&) {
    throw;
  } catch (...) {
    Outcome o = classify_exception(std::current_exception(), "preparing inputs and reference");
    r_.source = Source::pre_search_failure;
    r_.reason = o.message;
    return false;
  }
}

std::unique_ptr<Trial> SearchContext::build_trial(std::size_t index) {
  return device_.make_trial(*workload_, index);
}

void SearchContext::built(std::size_t index, const Outcome& outcome, double seconds) {
  entry(index).compile_seconds = seconds;
  built_[index] = true;
  if (!outcome.ok()) finish(index, outcome, std::nullopt);
}

Trial* SearchContext::admit(std::size_t index) {
  const Candidate cand = op_.candidate(index);
  auto fail = [&](Outcome o) -> Trial* {
    finish(index, std::move(o), std::nullopt);
    return nullptr;
  };
  if (auto refused = precheck(cand, key_, options_.numerics_policy)) return fail(*refused);
  try {
    trials_[index] = make_trial(index);
    if (!built_[index]) {
      const auto start = Wall::now();
      Outcome b = trials_[index]->build();
      entry(index).compile_seconds = since(start);
      r_.seconds_compiling += since(start);
      built_[index] = true;
      if (!b.ok()) {
        drop_trial(index);
        return fail(b);
      }
    }
    Outcome prepared = trials_[index]->prepare();
    if (!prepared.ok()) {
      drop_trial(index);
      return fail(prepared);
    }
  } catch (const FatalError&) {
    drop_trial(index);
    throw;
  } catch (...) {
    drop_trial(index);
    return fail(classify_exception(std::current_exception(), "prepare", Status::compile_failed));
  }
  // Validation through the trial: poison, one run, compare to the reference.
  const auto start = Wall::now();
  std::vector<OutputView> outs = workload_->outputs();
  poison(outs);
  Outcome valid;
  try {
    trials_[index]->launch();
    trials_[index]->sync();
    valid = reference_->compare(workload_->outputs(), tolerance_);
  } catch (...) {
    valid = classify_exception(std::current_exception(), "validation run");
  }
  r_.seconds_validating += since(start);
  if (!valid.ok()) {
    drop_trial(index);
    return fail(valid);
  }
  return trials_[index].get();
}

Trial* SearchContext::acquire(std::size_t index) {
  if (auto it = trials_.find(index); it != trials_.end()) return it->second.get();
  try {
    auto trial = make_trial(index);
    if (Outcome o = trial->prepare(); !o.ok()) return nullptr;
    return (trials_[index] = std::move(trial)).get();
  } catch (const FatalError&) {
    throw;
  } catch (...) {
    return nullptr;
  }
}

namespace {

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

}  // namespace

std::unique_ptr<Trial> SearchContext::make_trial(std::size_t index) {
  if (rotation_.empty()) return device_.make_trial(*workload_, index);
  std::vector<std::unique_ptr<Trial>> trials;
  trials.push_back(device_.make_trial(*workload_, index));
  for (auto& w : rotation_) trials.push_back(device_.make_trial(*w, index));
  return std::make_unique<RotatingTrial>(std::move(trials));
}

void SearchContext::drop_trial(std::size_t index) {
  auto it = trials_.find(index);
  if (it == trials_.end()) return;
  try {
    if (it->second) it->second->release();
  } catch (...) {  // a failing release must not hide the outcome
  }
  trials_.erase(it);
}

TimingOptions SearchContext::timing_options(std::size_t index) const {
  TimingOptions timing = options_.timing;
  if ((options_.evict || op_.evicts()) && !timing.evictor) timing.evictor = device_.evictor();
  if (stop_ && index != r_.default_index) {
    // The caller's stop() and the budget's: either ends the window.
    timing.stop = [user = timing.stop, budget = stop_] { return (user && user()) || budget(); };
  }
  return timing;
}

TimingResult SearchContext::measure(std::size_t index, const TimingOptions& timing) {
  const auto start = Wall::now();
  Trial& trial = *trials_.at(index);
  TimingResult result = time_routine(trial, device_.clock(), timing);
  if (result.ok() && result.contended) {
    CandidateReport& c = entry(index);
    if (options_.on_retry) options_.on_retry(c.name, result);
    ++c.retries;
    result = time_routine(trial, device_.clock(), timing);
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
  return options_.statistic == Statistic::min ? t.min : t.median;
}

void SearchContext::finish(std::size_t index, Outcome outcome, std::optional<TimingResult> timing) {
  CandidateReport& c = entry(index);
  c.outcome = std::move(outcome);
  c.timing = std::move(timing);
  if (c.outcome.ok() && c.timing) {
    c.score = score(*c.timing);
    if (incumbent_ == 0 || c.score < incumbent_) incumbent_ = c.score;
  }
  if (options_.on_progress)
    options_.on_progress(
        ProgressEvent{op_.name(), finished_, std::max(total_, finished_ + 1), c.name, &c});
  ++finished_;
}

void SearchContext::choose() {
  r_.source = Source::searched;
  const CandidateReport& def = entry(r_.default_index);
  r_.default_score = def.outcome.ok() ? def.score : 0;
  if (auto w = decide(r_.candidates, r_.default_index, options_.tie_band)) {
    r_.winner = *w;
  } else {
    r_.winner = r_.default_index;
    r_.reason = "no candidate validated and measured cleanly; the default stands";
  }
  if (r_.winner != r_.default_index && r_.default_score > 0 && options_.confirm_pairs > 0)
    confirm();
  CandidateReport& win = entry(r_.winner);
  win.winner = true;
  r_.winner_name = win.name;
  r_.winner_score = win.outcome.ok() ? win.score : 0;
  r_.speedup =
      (r_.default_score > 0 && r_.winner_score > 0) ? r_.default_score / r_.winner_score : 1;
  for (auto& c : r_.candidates)
    if (c.outcome.ok() && r_.default_score > 0) c.vs_default = r_.default_score / c.score;
}

int SearchContext::affordable_pairs() const {
  if (!time_left_) return options_.confirm_pairs;
  // One pair: five launches (batches) of each side at the depth its window used.
  double pair = 0;
  for (std::size_t i : {r_.default_index, r_.winner}) {
    const CandidateReport* c = find(i);
    if (!c || !c->timing) return options_.confirm_pairs;
    pair += 5.0 * c->score * std::max(1, c->timing->depth);
  }
  const double left = std::max(0.0, time_left_());
  if (pair <= 0) return options_.confirm_pairs;
  return static_cast<int>(std::min<double>(options_.confirm_pairs, std::floor(left / pair)));
}

void SearchContext::confirm() {
  const std::size_t def = r_.default_index;
  const std::size_t win = r_.winner;
  // Under a budget the pairs must fit what is left of it; too few to judge: the measured
  // winner stands, unconfirmed, and the report says so.
  const int pairs = affordable_pairs();
  if (pairs < options_.confirm_pairs && pairs < options_.paired.min_pairs) {
    r_.reason = "the budget left no time for the paired confirmation (" + std::to_string(pairs) +
                " of " + std::to_string(options_.paired.min_pairs) +
                " pairs would fit): the measured winner stands unconfirmed";
    return;
  }
  // Both trials prepared again (the schedules release every trial after timing it); the
  // winner is rebuilt from its config, its build already in the backend's cache.
  for (std::size_t i : {def, win})
    if (!acquire(i)) return;  // cannot confirm: keep the decision
  // Each side of a pair is one short window at the depth the main window used.
  auto window_for = [&](std::size_t i) {
    TimingOptions t = timing_options(def);  // the confirmation is not cut by the budget
    t.warmup = 0;
    t.repeats_floor = 5;  // each side of a pair: the best of five launches (batches)
    t.max_runs = 5;
    t.sample_budget = 0;
    t.hopeless_against = 0;
    t.on_call = nullptr;
    if (const CandidateReport* c = find(i); c && c->timing) t.fixed_depth = c->timing->depth;
    return t;
  };
  const auto start = Wall::now();
  std::vector<double> ref, cand;
  try {
    for (int p = 0; p < pairs; ++p) {
      // A B B A: the order alternates so drift hits both sides equally.
      double a = 0, b = 0;
      auto one = [&](std::size_t i) {
        TimingResult t = time_routine(*trials_.at(i), device_.clock(), window_for(i));
        // The minimum of the side's five: interference only ever adds time, so the minimum is
        // the reading least disturbed by whatever else the machine is doing.
        return t.ok() ? t.min : 0.0;
      };
      if (p % 2 == 0) {
        a = one(def);
        b = one(win);
      } else {
        b = one(win);
        a = one(def);
      }
      ref.push_back(a);
      cand.push_back(b);
    }
  } catch (const FatalError&) {
    throw;
  } catch (...) {
    drop_trial(def), drop_trial(win);
    return;  // a failure here leaves the measured decision as it was
  }
  drop_trial(def), drop_trial(win);
  r_.seconds_measuring += since(start);
  stats::PairedScore s = stats::paired_score(ref, cand, options_.paired);
  r_.paired_pairs = s.pairs;
  r_.paired_ratio = s.ratio;
  const double needed = 1 / (1 + options_.tie_band);
  if (s.scored && s.ratio_high < needed) {
    r_.confirmed = true;
    return;
  }
  r_.reason = "paired confirmation kept the default: " +
              (s.scored ? "the winner's paired ratio " + std::to_string(s.ratio) + " (95 % bound " +
                              std::to_string(s.ratio_high) + ") is not surely under " +
                              std::to_string(needed)
                        : s.why);
  r_.winner = def;
}

}  // namespace tunekit::detail
