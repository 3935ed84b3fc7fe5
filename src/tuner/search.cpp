#include "tuner/search.hpp"

#include <algorithm>
#include <chrono>
#include <exception>
#include <map>
#include <memory>
#include <optional>

#include "core/classify.hpp"
#include "tunekit/errors.hpp"
#include "tunekit/validate.hpp"
#include "tuner/decision.hpp"

namespace tunekit::detail {
namespace {

using Wall = std::chrono::steady_clock;
double since(Wall::time_point t) {
  return std::chrono::duration<double>(Wall::now() - t).count();
}

class ExhaustiveSearch {
 public:
  ExhaustiveSearch(Device& device, const OpBase& op, const Key& key, const TunerOptions& options)
      : device_(device), op_(op), key_(key), options_(options) {}

  TuneReport run() {
    const auto start = Wall::now();
    r_.default_index = op_.default_index(key_);
    r_.default_name = op_.candidates()[r_.default_index].name;
    init_candidates();
    if (prepare_inputs()) {
      measure_plan();
      r_.source = Source::searched;
      choose();
    }
    r_.winner_name = op_.candidates()[r_.winner].name;
    r_.seconds_total = since(start);
    return std::move(r_);
  }

 private:
  void init_candidates() {
    const auto& cs = op_.candidates();
    r_.candidates.resize(cs.size());
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
  }

  // Inputs and the reference. A failure here serves the default (pre_search_failure).
  bool prepare_inputs() {
    try {
      workload_ = op_.make_workload(key_);
      reference_ = Reference::capture(*workload_, op_.has_reference(), r_.default_index);
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

  // Plan groups in ascending order; stop after the first group with a valid measurement.
  // The default is always measured: ties and speedups are judged against it.
  void measure_plan() {
    std::map<int, std::vector<std::size_t>> groups;
    for (const auto& c : op_.candidates())
      groups[c.group].push_back(static_cast<std::size_t>(&c - op_.candidates().data()));
    std::vector<std::size_t> order;
    bool default_done = false;
    std::size_t total = 0;
    for (const auto& [g, members] : groups) total += members.size();
    for (auto it = groups.begin(); it != groups.end(); ++it) {
      bool any_ok = false;
      for (std::size_t i : it->second) {
        evaluate(i, total);
        default_done |= i == r_.default_index;
        any_ok |= r_.candidates[i].outcome.ok();
      }
      if (any_ok) {
        for (auto rest = std::next(it); rest != groups.end(); ++rest)
          for (std::size_t i : rest->second)
            r_.candidates[i].outcome = {Status::skipped, "plan group " + std::to_string(it->first) +
                                                             " already produced a valid candidate"};
        break;
      }
    }
    if (!default_done) evaluate(r_.default_index, total);
  }

  void evaluate(std::size_t index, std::size_t total) {
    CandidateReport& c = r_.candidates[index];
    c.outcome = attempt(index, c);
    if (c.outcome.ok()) c.score = score(*c.timing);
    if (options_.on_progress) {
      options_.on_progress(ProgressEvent{op_.name(), position_, total, c.name, &c});
    }
    ++position_;
  }

  Outcome attempt(std::size_t index, CandidateReport& c) {
    const Candidate& cand = op_.candidates()[index];
    if (cand.numerics > options_.numerics_policy) {
      return {Status::skipped, "numerics class '" + std::string(to_string(cand.numerics)) +
                                   "' is not admitted by the policy '" +
                                   std::string(to_string(options_.numerics_policy)) + "'"};
    }
    if (cand.eligible) {
      try {
        if (auto reason = cand.eligible(key_)) return {Status::rejected, *reason};
      } catch (...) {
        return classify_exception(std::current_exception(), "eligibility check", Status::rejected);
      }
    }
    std::unique_ptr<Trial> trial;
    try {
      trial = device_.make_trial(*workload_, index);
      Outcome prepared = trial->prepare();
      if (!prepared.ok()) return prepared;
    } catch (...) {
      return classify_exception(std::current_exception(), "prepare", Status::compile_failed);
    }
    struct Release {
      Trial& t;
      ~Release() {
        try {
          t.release();
        } catch (...) {  // a failing release must not hide the outcome
        }
      }
    } release{*trial};

    const auto validate_start = Wall::now();
    Outcome valid = validate(*trial);
    r_.seconds_validating += since(validate_start);
    if (!valid.ok()) return valid;

    const auto measure_start = Wall::now();
    Outcome measured = measure(*trial, c);
    r_.seconds_measuring += since(measure_start);
    return measured;
  }

  // Poison, run once through the trial, compare to the reference.
  Outcome validate(Trial& trial) {
    std::vector<OutputView> outs = workload_->outputs();
    poison(outs);
    try {
      trial.launch();
      trial.sync();
    } catch (...) {
      return classify_exception(std::current_exception(), "validation run");
    }
    return reference_->compare(workload_->outputs(), tolerance_);
  }

  // One window; a contended window is retried once with a fresh one, then refused.
  Outcome measure(Trial& trial, CandidateReport& c) {
    TimingOptions timing = options_.timing;
    if (options_.evict && !timing.evictor) timing.evictor = device_.evictor();
    TimingResult result = time_routine(trial, device_.clock(), timing);
    if (result.ok() && result.contended) {
      c.retries = 1;
      result = time_routine(trial, device_.clock(), timing);
      if (result.ok() && result.contended) {
        result.outcome = {
            Status::refused,
            "contended twice: " + std::to_string(static_cast<int>(100 * result.stalled_fraction)) +
                "% of samples over " + std::to_string(timing.stall_ratio) +
                "x the window's minimum"};
      }
    }
    Outcome outcome = result.outcome;
    c.timing = std::move(result);
    return outcome;
  }

  double score(const TimingResult& t) const {
    return options_.statistic == Statistic::min ? t.min : t.median;
  }

  void choose() {
    const CandidateReport& def = r_.candidates[r_.default_index];
    r_.default_score = def.outcome.ok() ? def.score : 0;
    if (auto w = decide(r_.candidates, r_.default_index, options_.tie_band)) {
      r_.winner = *w;
    } else {
      r_.winner = r_.default_index;
      r_.reason = "no candidate validated and measured cleanly; the default stands";
    }
    CandidateReport& win = r_.candidates[r_.winner];
    win.winner = true;
    r_.winner_score = win.outcome.ok() ? win.score : 0;
    r_.speedup =
        (r_.default_score > 0 && r_.winner_score > 0) ? r_.default_score / r_.winner_score : 1;
    for (auto& c : r_.candidates)
      if (c.outcome.ok() && r_.default_score > 0) c.vs_default = r_.default_score / c.score;
  }

  Device& device_;
  const OpBase& op_;
  const Key& key_;
  const TunerOptions& options_;
  TuneReport r_;
  std::unique_ptr<Workload> workload_;
  std::optional<Reference> reference_;
  Tolerance tolerance_;
  std::size_t position_ = 0;
};

}  // namespace

TuneReport exhaustive_search(Device& device, const OpBase& op, const Key& key,
                             const TunerOptions& options) {
  return ExhaustiveSearch(device, op, key, options).run();
}

}  // namespace tunekit::detail
