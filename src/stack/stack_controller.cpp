// StackController: select (memory, then a tune on a miss in explore mode), try_execute (the
// request executed once on the selection), invalidation, bans, counters.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <exception>
#include <new>
#include <vector>

#include "stack/problem_check.hpp"
#include "stack/stack_decisions.hpp"
#include "stack/stack_persistence.hpp"
#include "stack/stack_tuning.hpp"
#include "stack/trial_scope.hpp"
#include "tunekit/stack.hpp"

namespace tunekit::stack {

struct StackController::Impl {
  explicit Impl(StackOptions o)
      : options(std::move(o)), decisions(options.reports), persist(options) {
    if (!options.runner) options.runner = host_trial_runner();
    if (options.policy.samples < 1)
      throw UsageError("stack policy.samples must be at least 1 (pairs per candidate)");
    const ScorePolicy& p = options.policy;
    if (!(p.tie_band >= 0 && p.tie_band < 1))
      throw UsageError("stack policy.tie_band must be a number in [0, 1), e.g. 0.02");
    if (!(p.max_relative_mad > 0) || !std::isfinite(p.max_relative_mad))
      throw UsageError("stack policy.max_relative_mad must be a finite number > 0, e.g. 0.10");
  }

  Selection reference(const CandidateSet& set, DecisionSource source) {
    ++fallbacks;
    const std::size_t i = *set.reference;
    return {i, set.candidates[i].name, source, true};
  }
  Selection select(const Problem& problem, const CandidateSet& set, const Digest& key);
  Selection tune(const Problem& problem, const CandidateSet& set, const Digest& key);
  std::optional<Selection> from_store(const Problem& problem, const CandidateSet& set,
                                      const Digest& key);
  Selection claimed(const Problem& problem, const CandidateSet& set, const Digest& key);
  DecisionSource miss_source(const Digest& key) const;
  void banned_live(const Problem& problem, const CandidateSet& set, const Digest& key,
                   const std::string& name, const std::string& why);
  // A store operation whose failure must not replace what the caller gets: warned about.
  template <class F>
  void persist_or_warn(const char* what, F&& f) {
    try {
      f();
    } catch (const std::exception& e) {
      options.log.warn(std::string("stack: could not ") + what + ": " + e.what());
    }
  }

  StackOptions options;
  detail::StackDecisions decisions;
  detail::StackPersistence persist;
  std::atomic<std::uint64_t> hits{0}, misses{0}, tunes{0}, fallbacks{0}, rejections{0},
      invalidations{0}, bans{0};
};

Selection StackController::Impl::select(const Problem& problem, const CandidateSet& set,
                                        const Digest& key) {
  if (detail::TrialScope::active()) return reference(set, DecisionSource::nested);
  if (options.mode == Mode::disabled) return reference(set, DecisionSource::disabled);
  // cache_only claims too when a store may answer: one thread reads it, the others contend.
  const bool claim = options.mode == Mode::explore || persist.enabled();
  detail::StackDecisions::Lookup found = decisions.find(key, problem.depends_on, claim);
  invalidations += found.invalidated;
  using Found = detail::StackDecisions::Found;
  switch (found.found) {
    case Found::hit: {
      ++hits;
      return {found.index, std::move(found.chosen), DecisionSource::hit,
              found.index == *set.reference};
    }
    case Found::pending:
      return reference(set, DecisionSource::contender);
    case Found::miss:
      ++misses;
      return reference(set, miss_source(key));
    case Found::claimed:
      break;
  }
  ++misses;
  return claimed(problem, set, key);
}

// The key is claimed: the store first, then a tune (explore) or the reference (cache_only).
Selection StackController::Impl::claimed(const Problem& problem, const CandidateSet& set,
                                         const Digest& key) {
  try {
    if (std::optional<Selection> s = from_store(problem, set, key)) return *s;
  } catch (...) {
    decisions.release(key);
    throw;
  }
  if (options.mode == Mode::explore) return tune(problem, set, key);
  decisions.release(key);
  return reference(set, miss_source(key));
}

// cache_only without a decision: `banned` when a live failure dropped it (nothing re-decides
// in this mode), else a plain miss.
DecisionSource StackController::Impl::miss_source(const Digest& key) const {
  return decisions.bans(key).empty() ? DecisionSource::cache_only_miss : DecisionSource::banned;
}

// A stored decision serves once it validates again in this process; one that does not is
// marked stale in the store (kept as evidence) and the key is decided as a miss.
std::optional<Selection> StackController::Impl::from_store(const Problem& problem,
                                                           const CandidateSet& set,
                                                           const Digest& key) {
  if (!persist.enabled()) return std::nullopt;
  std::optional<std::size_t> index;
  persist_or_warn("read the store", [&] {
    for (const BannedCandidate& b : persist.bans(problem, set))
      (void)decisions.ban(key, b.candidate, b.reason);
    index = persist.find(problem, set);
  });
  if (!index) return std::nullopt;
  std::map<std::string, std::string> banned = decisions.ban_reasons(key);
  const std::string& name = set.candidates[*index].name;
  if (banned.contains(name)) return std::nullopt;
  const std::size_t ref = *set.reference;
  if (*index != ref) {
    detail::StackTuning check(problem, set, options, *options.runner, std::move(banned));
    // What this process would not run (a lower scratch limit, no longer eligible) is a miss
    // here, not stale: the entry may still be right for the process that stored it.
    if (check.screen(*index)) return std::nullopt;
    if (std::optional<Failure> bad = check.revalidate(*index)) {
      persist_or_warn("mark a stored decision stale", [&] {
        persist.mark_stale(problem, set, "failed re-validation: " + bad->text());
      });
      return std::nullopt;
    }
  }
  StackReport r;
  r.scope = problem.scope;
  r.problem = problem.name;
  r.signature = problem.signature.text();
  r.workload_digest = problem.workload_digest();
  r.cache_key = key;
  r.selected = name;
  r.source = DecisionSource::stored;
  r.dependencies = problem.depends_on;
  r.note = "served from the store, validated against the reference in this process";
  detail::StackDecision d{problem.scope,     *index, name, set.checksum(), DecisionSource::stored,
                          problem.depends_on};
  invalidations += decisions.publish(key, std::move(d), std::move(r));
  return Selection{*index, name, DecisionSource::stored, *index == ref};
}

// Runs with the key claimed and no lock held; a tune that throws unclaims it.
Selection StackController::Impl::tune(const Problem& problem, const CandidateSet& set,
                                      const Digest& key) {
  detail::StackTuned tuned;
  try {
    detail::StackTuning tuning(problem, set, options, *options.runner, decisions.ban_reasons(key));
    tuned = tuning.run();
  } catch (...) {
    decisions.release(key);
    throw;
  }
  ++tunes;
  rejections += tuned.rejections;
  detail::StackDecision d;
  d.scope = problem.scope;
  d.index = tuned.index;
  d.chosen = set.candidates[tuned.index].name;
  d.candidates = set.checksum();
  d.source = tuned.source;
  d.dependencies = problem.depends_on;
  // Persisted only when measured: a kept reference for lack of scores stays in memory. The
  // decision is published (the key unclaimed) before the store is written, and a store that
  // fails is warned about: the decision still serves this process.
  const bool measured = tuned.source == DecisionSource::tuned;
  const StackReport stored = measured ? tuned.report : StackReport{};
  invalidations += decisions.publish(key, std::move(d), std::move(tuned.report));
  const std::string& name = set.candidates[tuned.index].name;
  // A live ban of the pick while it was measured: not kept (publish dropped it), not served.
  if (tuned.index != *set.reference && decisions.ban_reasons(key).contains(name))
    return reference(set, DecisionSource::banned);
  if (measured) persist_or_warn("store a decision", [&] { persist.put(problem, set, stored); });
  return {tuned.index, name, tuned.source, tuned.index == *set.reference};
}

ReportEntry StackController::compare(const Problem& problem, const StackCandidate& incumbent,
                                     const StackCandidate& contender) const {
  CandidateSet pair;
  pair.candidates = {incumbent, contender};
  pair.reference = 0;
  detail::check_stack_metadata(problem, pair);
  detail::StackTuning tuning(problem, pair, impl_->options, *impl_->options.runner, {});
  // Two entries: nothing is cut, the contender's is the second.
  return std::move(tuning.run().report.entries.at(1));
}

StackController::StackController(StackOptions options)
    : impl_(std::make_unique<Impl>(std::move(options))) {}
StackController::~StackController() = default;

Selection StackController::select(const Problem& problem, const CandidateSet& set) {
  detail::check_stack_metadata(problem, set);
  return impl_->select(problem, set, cache_key(problem, set));
}

Selection StackController::try_execute(const Problem& problem, const CandidateSet& set,
                                       Workspace& request) {
  detail::check_stack_metadata(problem, set);
  const Digest key = cache_key(problem, set);
  const Selection s = impl_->select(problem, set, key);
  const StackCandidate& c = set.candidates[s.index];
  // Out of memory is the machine's state, not the candidate's fault: it bans nothing (as in
  // the kernel tuner), and the scratch is the controller's own allocation.
  std::vector<std::byte> scratch(c.scratch_bytes);
  try {
    c.run(request, scratch);
    if (c.sync) c.sync();
  } catch (const std::bad_alloc&) {
    throw;
  } catch (const std::exception& e) {
    if (!s.reference) impl_->banned_live(problem, set, key, c.name, e.what());
    throw;  // unchanged, and never replayed on another candidate
  } catch (...) {
    if (!s.reference) impl_->banned_live(problem, set, key, c.name, "threw a non-std::exception");
    throw;
  }
  return s;
}

void StackController::Impl::banned_live(const Problem& problem, const CandidateSet& set,
                                        const Digest& key, const std::string& name,
                                        const std::string& why) {
  ++bans;
  const std::size_t dropped = decisions.ban(key, name, why);
  invalidations += dropped;
  // The caller's own error is what propagates: a store that fails here is warned about.
  persist_or_warn("store a ban", [&] {
    persist.ban(problem, set, name, why);
    if (dropped > 0) persist.mark_stale(problem, set, name + " failed a live execution: " + why);
  });
}

bool StackController::invalidate(const Problem& problem, const CandidateSet& set) {
  const std::size_t n = impl_->decisions.invalidate(cache_key(problem, set), "invalidate()");
  impl_->invalidations += n;
  return n > 0;
}

Dependency StackController::dependency(const Problem& problem, const CandidateSet& set) const {
  const Digest key = cache_key(problem, set);
  // What serves: the decision, else the reference. A reference kept for lack of scores (in
  // memory only) and no decision at all (a cache_only miss) are the same basis, so a higher
  // decision measured over one is found over the other, in this process and in the store.
  Dependency d{problem.scope, key, set.checksum(), {}};
  if (auto decision = impl_->decisions.decision(key))
    d.chosen = decision->chosen;
  else if (set.reference)
    d.chosen = set.candidates.at(*set.reference).name;
  return d;
}

std::vector<std::string> StackController::banned(const Problem& problem,
                                                 const CandidateSet& set) const {
  return impl_->decisions.bans(cache_key(problem, set));
}

Stats StackController::stats() const {
  const Impl& i = *impl_;
  return {i.hits, i.misses, i.tunes, i.fallbacks, i.rejections, i.invalidations, i.bans};
}

std::optional<StackReport> StackController::report(const Problem& problem,
                                                   const CandidateSet& set) const {
  return impl_->decisions.report(cache_key(problem, set));
}

std::vector<StackReport> StackController::reports() const {
  return impl_->decisions.reports();
}

const StackOptions& StackController::options() const {
  return impl_->options;
}

}  // namespace tunekit::stack
