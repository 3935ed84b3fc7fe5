#include "stack/stack_tuning.hpp"

#include <algorithm>
#include <cmath>
#include <exception>

#include "core/classify.hpp"
#include "stack/trial_scope.hpp"
#include "tunekit/errors.hpp"
#include "tunekit/stats.hpp"

namespace tunekit::detail {
namespace {

using stack::EntryStatus;
using stack::Failure;
using stack::FailureKind;

void fail(stack::ReportEntry& e, EntryStatus status, FailureKind kind, std::string message) {
  e.status = status;
  e.failure = Failure{kind, std::move(message)};
  e.why = e.failure->text();
}

}  // namespace

StackTuning::StackTuning(const stack::Problem& problem, const stack::CandidateSet& set,
                         const stack::StackOptions& options, stack::TrialRunner& runner,
                         std::map<std::string, std::string> banned)
    : problem_(problem),
      set_(set),
      options_(options),
      runner_(runner),
      banned_(std::move(banned)),
      ref_(*set.reference) {}

stack::TrialResult StackTuning::trial(const stack::StackCandidate& candidate) {
  TrialScope inside;  // a request the candidate makes now is nested: it gets the reference
  stack::TrialResult result = runner_.run(problem_, candidate);
  if (result.ok() && !result.workspace)
    throw UsageError("a TrialRunner's successful result must carry the workspace it ran on (" +
                     candidate.name + "'s had none)");
  return result;
}

std::optional<stack::Failure> StackTuning::screen(std::size_t i) {
  stack::ReportEntry entry;
  if (!screened_out(i, entry)) return std::nullopt;
  return entry.failure;
}

StackTuned StackTuning::run() {
  StackTuned t;
  t.index = ref_;
  stack::StackReport& r = t.report;
  r.scope = problem_.scope;
  r.problem = problem_.name;
  r.signature = problem_.signature.text();
  r.workload_digest = problem_.workload_digest();
  r.cache_key = stack::cache_key(problem_, set_);
  r.dependencies = problem_.depends_on;
  for (const stack::StackCandidate& c : set_.candidates)
    r.entries.push_back({.candidate = c.name, .version = c.version});
  r.entries[ref_].status = EntryStatus::reference;
  r.entries[ref_].why = "the reference: every pair's A side";

  stack::TrialResult expected = trial(set_.candidates[ref_]);
  if (!expected.ok()) {
    for (std::size_t i = 0; i < r.entries.size(); ++i)
      if (i != ref_)
        fail(r.entries[i], EntryStatus::no_score, FailureKind::reference_failed,
             "the reference's trial failed: " + expected.failure->text());
    r.entries[ref_].failure = expected.failure;
    t.source = stack::DecisionSource::no_score;
  } else {
    const StackReadback readback(*expected.workspace, problem_.tolerance);
    expected.workspace.reset();  // at most one alternative's state is alive beside it
    for (std::size_t i = 0; i < r.entries.size(); ++i) {
      if (i == ref_ || screened_out(i, r.entries[i])) continue;
      measure(i, r.entries[i], readback);
    }
    t.index = choose(r.entries);
    const bool measured = std::any_of(r.entries.begin(), r.entries.end(), [](const auto& e) {
      return e.status == EntryStatus::scored || e.status == EntryStatus::selected ||
             e.status == EntryStatus::no_score;
    });
    const bool scored = std::any_of(r.entries.begin(), r.entries.end(), [](const auto& e) {
      return e.status == EntryStatus::scored || e.status == EntryStatus::selected;
    });
    t.source = scored     ? stack::DecisionSource::tuned
               : measured ? stack::DecisionSource::no_score
                          : stack::DecisionSource::only_reference;
  }
  for (const stack::ReportEntry& e : r.entries)
    if (e.status == EntryStatus::rejected || e.status == EntryStatus::failed) ++t.rejections;
  r.selected = set_.candidates[t.index].name;
  r.source = t.source;
  bound(t);
  return t;
}

std::optional<stack::Failure> StackTuning::revalidate(std::size_t i) {
  stack::TrialResult expected = trial(set_.candidates[ref_]);
  if (!expected.ok()) return Failure{FailureKind::reference_failed, expected.failure->text()};
  const StackReadback readback(*expected.workspace, problem_.tolerance);
  expected.workspace.reset();
  stack::TrialResult checked = trial(set_.candidates[i]);
  if (!checked.ok()) return checked.failure;
  if (std::optional<std::string> bad = readback.mismatch(*checked.workspace))
    return Failure{FailureKind::validation_failed, *bad};
  return std::nullopt;
}

bool StackTuning::screened_out(std::size_t i, stack::ReportEntry& e) {
  const stack::StackCandidate& c = set_.candidates[i];
  if (auto it = banned_.find(c.name); it != banned_.end()) {
    fail(e, EntryStatus::banned, FailureKind::banned, "failed a live execution: " + it->second);
    return true;
  }
  if (c.scratch_bytes > options_.scratch_limit) {
    fail(e, EntryStatus::rejected, FailureKind::scratch_over_limit,
         "needs " + std::to_string(c.scratch_bytes) + " bytes of scratch, over the limit of " +
             std::to_string(options_.scratch_limit));
    return true;
  }
  if (!c.eligible) return false;
  try {
    if (std::optional<std::string> why = c.eligible(problem_)) {
      fail(e, EntryStatus::rejected, FailureKind::ineligible, *why);
      return true;
    }
  } catch (...) {
    const Outcome o = classify_exception(std::current_exception(), "eligibility check");
    fail(e, EntryStatus::failed, FailureKind::run_failed, o.message);
    return true;
  }
  return false;
}

// One validation trial, then policy.samples pairs in A B B A order (reference first in even
// pairs, the candidate first in odd ones), each trial on fresh state.
void StackTuning::measure(std::size_t i, stack::ReportEntry& e, const StackReadback& expected) {
  const stack::StackCandidate& c = set_.candidates[i];
  {
    stack::TrialResult checked = trial(c);
    if (!checked.ok())
      return fail(e, EntryStatus::failed, checked.failure->kind, checked.failure->message);
    if (std::optional<std::string> bad = expected.mismatch(*checked.workspace))
      return fail(e, EntryStatus::failed, FailureKind::validation_failed, *bad);
  }
  std::vector<double> ref_times, cand_times;
  for (int p = 0; p < options_.policy.samples; ++p) {
    const bool ref_first = p % 2 == 0;
    stack::TrialResult a = trial(ref_first ? set_.candidates[ref_] : c);
    stack::TrialResult b = trial(ref_first ? c : set_.candidates[ref_]);
    const stack::TrialResult& ref = ref_first ? a : b;
    const stack::TrialResult& cand = ref_first ? b : a;
    if (!cand.ok()) return fail(e, EntryStatus::failed, cand.failure->kind, cand.failure->message);
    if (!ref.ok())
      return fail(e, EntryStatus::no_score, FailureKind::reference_failed, ref.failure->text());
    ref_times.push_back(ref.seconds);
    cand_times.push_back(cand.seconds);
  }
  const stats::PairedScore s = stats::paired_score(
      ref_times, cand_times,
      {.min_pairs = options_.policy.samples,
       .max_relative_mad = options_.policy.max_relative_mad,
       .bar = 1 - options_.policy.tie_band});  // spread that cannot cross the bar is no doubt
  e.ratio = s.ratio;
  e.relative_mad = s.relative_mad;
  e.ratio_high = s.ratio_high;
  e.pairs = s.pairs;
  if (!s.scored) return fail(e, EntryStatus::no_score, FailureKind::no_score, s.why);
  e.status = EntryStatus::scored;
  e.why = "validated on " + std::to_string(expected.sampled()) + " of " +
          std::to_string(expected.total()) + " output elements; paired ratio " +
          std::to_string(s.ratio);
}

// The lowest ratio at most 1 - tie_band whose upper bound is under 1; ties in ratio go to
// the earlier candidate, and no such candidate keeps the reference.
std::size_t StackTuning::choose(std::vector<stack::ReportEntry>& entries) const {
  std::size_t best = ref_;
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const stack::ReportEntry& e = entries[i];
    if (e.status != EntryStatus::scored) continue;
    if (e.ratio > 1 - options_.policy.tie_band || !(e.ratio_high < 1)) continue;
    if (best == ref_ || e.ratio < entries[best].ratio) best = i;
  }
  if (best != ref_) {
    entries[best].status = EntryStatus::selected;
    entries[best].why += ": the fastest, beyond the tie band";
  }
  return best;
}

// Keeps at most report_entries entries: the reference and the selection always, then the
// others in candidate order.
void StackTuning::bound(StackTuned& t) const {
  std::vector<stack::ReportEntry>& all = t.report.entries;
  const std::size_t limit = std::max<std::size_t>(options_.report_entries, 2);
  if (all.size() <= limit) return;
  std::vector<stack::ReportEntry> kept;
  std::size_t room = limit - (t.index == ref_ ? 1 : 2);
  for (std::size_t i = 0; i < all.size(); ++i) {
    const bool must = i == ref_ || i == t.index;
    if (must || room > 0) {
      if (!must) --room;
      kept.push_back(std::move(all[i]));
    }
  }
  t.report.entries_cut = all.size() - kept.size();
  all = std::move(kept);
}

}  // namespace tunekit::detail
