// StackController: select (memory, then a tune on a miss in explore mode), try_execute (the
// request executed once on the selection), invalidation, bans, counters.
#include <atomic>
#include <exception>
#include <vector>

#include "stack/problem_check.hpp"
#include "stack/stack_decisions.hpp"
#include "stack/stack_tuning.hpp"
#include "stack/trial_scope.hpp"
#include "tunekit/stack.hpp"

namespace tunekit::stack {

struct StackController::Impl {
  explicit Impl(StackOptions o) : options(std::move(o)), decisions(options.reports) {
    if (!options.runner) options.runner = host_trial_runner();
    if (options.policy.samples < 1)
      throw UsageError("stack policy.samples must be at least 1 (pairs per candidate)");
  }

  Selection reference(const CandidateSet& set, DecisionSource source) {
    ++fallbacks;
    const std::size_t i = *set.reference;
    return {i, set.candidates[i].name, source, true};
  }
  Selection select(const Problem& problem, const CandidateSet& set, const Digest& key);
  Selection tune(const Problem& problem, const CandidateSet& set, const Digest& key);

  StackOptions options;
  detail::StackDecisions decisions;
  std::atomic<std::uint64_t> hits{0}, misses{0}, tunes{0}, fallbacks{0}, rejections{0},
      invalidations{0}, bans{0};
};

Selection StackController::Impl::select(const Problem& problem, const CandidateSet& set,
                                        const Digest& key) {
  if (detail::TrialScope::active()) return reference(set, DecisionSource::nested);
  if (options.mode == Mode::disabled) return reference(set, DecisionSource::disabled);
  detail::StackDecisions::Lookup found =
      decisions.find(key, problem.depends_on, options.mode == Mode::explore);
  invalidations += found.invalidated;
  using Found = detail::StackDecisions::Found;
  switch (found.found) {
    case Found::hit: {
      ++hits;
      const detail::StackDecision& d = *found.decision;
      return {d.index, d.chosen, DecisionSource::hit, d.index == *set.reference};
    }
    case Found::pending:
      return reference(set, DecisionSource::contender);
    case Found::miss:
      ++misses;
      return reference(set, DecisionSource::cache_only_miss);
    case Found::claimed:
      break;
  }
  ++misses;
  return tune(problem, set, key);
}

// Runs with the key claimed and no lock held; a tune that throws unclaims it.
Selection StackController::Impl::tune(const Problem& problem, const CandidateSet& set,
                                      const Digest& key) {
  detail::StackTuned tuned;
  try {
    detail::StackTuning tuning(problem, set, options, *options.runner, decisions.bans(key));
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
  invalidations += decisions.publish(key, std::move(d), std::move(tuned.report));
  return {tuned.index, set.candidates[tuned.index].name, tuned.source,
          tuned.index == *set.reference};
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
  try {
    std::vector<std::byte> scratch(c.scratch_bytes);
    c.run(request, scratch);
    if (c.sync) c.sync();
  } catch (const std::exception& e) {
    if (!s.reference) {
      ++impl_->bans;
      impl_->invalidations += impl_->decisions.ban(key, c.name, e.what());
    }
    throw;  // unchanged, and never replayed on another candidate
  } catch (...) {
    if (!s.reference) {
      ++impl_->bans;
      impl_->invalidations += impl_->decisions.ban(key, c.name, "threw a non-std::exception");
    }
    throw;
  }
  return s;
}

bool StackController::invalidate(const Problem& problem, const CandidateSet& set) {
  const std::size_t n = impl_->decisions.invalidate(cache_key(problem, set), "invalidate()");
  impl_->invalidations += n;
  return n > 0;
}

Dependency StackController::dependency(const Problem& problem, const CandidateSet& set) const {
  const Digest key = cache_key(problem, set);
  Dependency d{problem.scope, key, set.checksum(), {}};
  if (auto decision = impl_->decisions.decision(key)) d.chosen = decision->chosen;
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
