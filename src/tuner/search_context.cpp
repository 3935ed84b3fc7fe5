#include "tuner/search_context.hpp"

#include <algorithm>
#include <exception>
#include <map>

#include "core/classify.hpp"
#include "tunekit/errors.hpp"
#include "tunekit/stats.hpp"
#include "tuner/admission.hpp"
#include "tuner/decision.hpp"
#include "tuner/model_choice.hpp"

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
  r_.default_name = op_.candidates()[r_.default_index].name;
  const auto& cs = op_.candidates();
  r_.candidates.resize(cs.size());
  trials_.resize(cs.size());
  total_ = cs.size();
  for (std::size_t i = 0; i < cs.size(); ++i) {
    CandidateReport& c = r_.candidates[i];
    c.index = i;
    c.name = cs[i].name;
    c.config = cs[i].config.text();
    c.numerics = cs[i].numerics;
    c.group = cs[i].group;
    c.preference = cs[i].preference;
    c.is_default = i == r_.default_index;
    c.outcome = {Status::skipped, "not reached"};
  }
  r_.winner = r_.default_index;
  r_.winner_name = r_.default_name;
}

SearchContext::~SearchContext() {
  for (std::size_t i = 0; i < trials_.size(); ++i) drop_trial(i);
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

std::vector<std::vector<std::size_t>> SearchContext::plan() const {
  std::map<int, std::vector<std::size_t>> groups;
  for (std::size_t i = 0; i < op_.candidates().size(); ++i) {
    if (!pruned_.empty() && pruned_[i]) continue;
    auto& members = groups[op_.candidates()[i].group];
    // The default is measured first in its group: the incumbent every other is judged by.
    if (i == r_.default_index) {
      members.insert(members.begin(), i);
    } else {
      members.push_back(i);
    }
  }
  std::vector<std::vector<std::size_t>> out;
  for (auto& [g, members] : groups) out.push_back(std::move(members));
  return out;
}

Trial* SearchContext::admit(std::size_t index) {
  const Candidate& cand = op_.candidates()[index];
  auto fail = [&](Outcome o) -> Trial* {
    finish(index, std::move(o), std::nullopt);
    return nullptr;
  };
  if (auto refused = precheck(cand, key_, options_.numerics_policy)) return fail(*refused);
  try {
    trials_[index] = make_trial(index);
    Outcome prepared = trials_[index]->prepare();
    if (!prepared.ok()) {
      drop_trial(index);
      return fail(prepared);
    }
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

namespace {

// Cycles launches over one trial per input copy; the first is the validated workload's, and
// the first launch (the validation run) lands on it. sync() synchronises every copy launched
// since the last one.
class RotatingTrial final : public Trial {
 public:
  explicit RotatingTrial(std::vector<std::unique_ptr<Trial>> trials)
      : trials_(std::move(trials)), launched_(trials_.size(), false) {}
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
  if (!trials_[index]) return;
  try {
    trials_[index]->release();
  } catch (...) {  // a failing release must not hide the outcome
  }
  trials_[index].reset();
}

TimingOptions SearchContext::timing_options() const {
  TimingOptions timing = options_.timing;
  if ((options_.evict || op_.evicts()) && !timing.evictor) timing.evictor = device_.evictor();
  return timing;
}

TimingResult SearchContext::measure(std::size_t index, const TimingOptions& timing) {
  const auto start = Wall::now();
  CandidateReport& c = r_.candidates[index];
  TimingResult result = time_routine(*trials_[index], device_.clock(), timing);
  if (result.ok() && result.contended) {
    if (options_.on_retry) options_.on_retry(c.name, result);
    ++c.retries;
    result = time_routine(*trials_[index], device_.clock(), timing);
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

void SearchContext::guide(const ModelReport& model) {
  if (model.source != Source::model) {
    if (!options_.model_prune.empty() || options_.floor_factor > 0) {
      r_.reason = "model-guided search off (" + model.reason + "): every candidate measured";
    }
    return;
  }
  if (options_.floor_factor > 0 && model.floor_seconds > 0)
    floor_bound_ = model.floor_seconds * options_.floor_factor;
  if (options_.model_prune.empty()) return;
  std::size_t ranked = 0;
  for (const auto& c : model.candidates) ranked += c.rank > 0;
  const std::size_t keep = prune_keep(options_.model_prune, ranked);
  pruned_.assign(model.candidates.size(), false);
  for (const auto& c : model.candidates) {
    // The model's own pick is never pruned (rank 1 by construction; kept explicitly too).
    if (c.rank <= 0 || static_cast<std::size_t>(c.rank) <= keep || c.is_default ||
        c.index == model.winner)
      continue;
    pruned_[c.index] = true;
    model_cut_ = true;
    r_.candidates[c.index].outcome = {
        Status::skipped, "pruned by the cost model: rank " + std::to_string(c.rank) + " of " +
                             std::to_string(ranked) + " (" + options_.model_prune + ")"};
  }
}

double SearchContext::short_circuit() const {
  return std::max(options_.limit, floor_bound_);
}

double SearchContext::score(const TimingResult& t) const {
  return options_.statistic == Statistic::min ? t.min : t.median;
}

void SearchContext::finish(std::size_t index, Outcome outcome, std::optional<TimingResult> timing) {
  CandidateReport& c = r_.candidates[index];
  c.outcome = std::move(outcome);
  c.timing = std::move(timing);
  if (c.outcome.ok() && c.timing) c.score = score(*c.timing);
  if (options_.on_progress)
    options_.on_progress(ProgressEvent{op_.name(), position_, total_, c.name, &c});
  ++position_;
}

void SearchContext::mark_skipped_after(const std::vector<std::vector<std::size_t>>& plan,
                                       std::size_t group) {
  for (std::size_t g = group + 1; g < plan.size(); ++g)
    for (std::size_t i : plan[g])
      r_.candidates[i].outcome = {Status::skipped,
                                  "an earlier plan group already produced a valid candidate"};
}

void SearchContext::choose() {
  r_.source = Source::searched;
  const CandidateReport& def = r_.candidates[r_.default_index];
  r_.default_score = def.outcome.ok() ? def.score : 0;
  if (auto w = decide(r_.candidates, r_.default_index, options_.tie_band)) {
    r_.winner = *w;
  } else {
    r_.winner = r_.default_index;
    r_.reason = "no candidate validated and measured cleanly; the default stands";
  }
  if (r_.winner != r_.default_index && def.outcome.ok() && options_.confirm_pairs > 0) confirm();
  CandidateReport& win = r_.candidates[r_.winner];
  win.winner = true;
  r_.winner_name = win.name;
  r_.winner_score = win.outcome.ok() ? win.score : 0;
  r_.speedup =
      (r_.default_score > 0 && r_.winner_score > 0) ? r_.default_score / r_.winner_score : 1;
  for (auto& c : r_.candidates)
    if (c.outcome.ok() && r_.default_score > 0) c.vs_default = r_.default_score / c.score;
}

void SearchContext::confirm() {
  const std::size_t def = r_.default_index;
  const std::size_t win = r_.winner;
  // Both trials prepared again if a strategy released them.
  for (std::size_t i : {def, win}) {
    if (trials_[i]) continue;
    trials_[i] = make_trial(i);
    if (!trials_[i]->prepare().ok()) return;  // cannot confirm: keep the decision
  }
  // Each side of a pair is one short window at the depth the main window used.
  auto window_for = [&](std::size_t i) {
    TimingOptions t = timing_options();
    t.warmup = 0;
    t.repeats_floor = 5;  // each side of a pair: the best of five launches (batches)
    t.max_runs = 5;
    t.sample_budget = 0;
    t.hopeless_against = 0;
    t.on_call = nullptr;
    if (r_.candidates[i].timing) t.fixed_depth = r_.candidates[i].timing->depth;
    return t;
  };
  const auto start = Wall::now();
  std::vector<double> ref, cand;
  try {
    for (int p = 0; p < options_.confirm_pairs; ++p) {
      // A B B A: the order alternates so drift hits both sides equally.
      double a = 0, b = 0;
      auto one = [&](std::size_t i) {
        TimingResult t = time_routine(*trials_[i], device_.clock(), window_for(i));
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
  } catch (...) {
    return;  // a failure here leaves the measured decision as it was
  }
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
