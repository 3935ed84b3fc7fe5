// compose: per-segment kernel choices, measured as a whole against the routine's
// alternatives and its all-defaults reference (include/tunekit/routine.hpp).
#include "tunekit/routine.hpp"

#include <string>
#include <utility>
#include <vector>

#include "tunekit/errors.hpp"
#include "tunekit/op.hpp"
#include "tunekit/tuner.hpp"

namespace tunekit::stack {
namespace {

void check(const Routine& routine) {
  const std::string name = routine.problem.name.empty() ? "a routine" : routine.problem.name;
  if (routine.segments.empty())
    throw UsageError("compose: " + name + " has no segments; list the ops it runs in order");
  if (!routine.run)
    throw UsageError("compose: " + name +
                     " has no run function; give one that runs the segments with given choices");
  for (const Segment& s : routine.segments)
    if (!s.op) throw UsageError("compose: segment '" + s.name + "' of " + name + " has no op");
}

// A whole-routine candidate running every segment with `choices`.
StackCandidate with_choices(const Routine& routine, std::string name,
                            std::vector<std::size_t> choices) {
  StackCandidate c;
  c.name = std::move(name);
  c.run = [run = routine.run, choices = std::move(choices)](Workspace& ws, std::span<std::byte>) {
    run(ws, choices);
  };
  return c;
}

}  // namespace

Dependency kernel_dependency(const Tuner& tuner, const OpBase& op, const Key& key,
                             std::size_t chosen) {
  Dependency d;
  d.scope = Scope::operator_;
  d.key = tuner.identity(op, key).digest();
  d.candidates = op.checksum_for(op.buckets() ? op.bucket_of(key) : key);
  d.chosen = op.candidate(chosen).name;
  return d;
}

Composition compose(Tuner& tuner, StackController& controller, const Routine& routine) {
  check(routine);
  Composition out;
  out.problem = routine.problem;  // with the segments' decisions added to what it depends on
  std::vector<std::size_t> defaults, picks;
  bool any_pick = false;
  for (const Segment& s : routine.segments) {
    TuneReport report;
    const Choice choice = tuner.select(*s.op, s.key, &report);
    SegmentPick pick;
    pick.segment = s.name;
    pick.op = s.op->name();
    pick.key = s.key.text();
    pick.index = choice.index;
    pick.candidate = s.op->candidate(choice.index).name;
    pick.is_default = choice.index == s.op->default_index(s.key);
    pick.source = choice.source;
    pick.reason = report.reason;
    any_pick = any_pick || !pick.is_default;
    defaults.push_back(s.op->default_index(s.key));
    picks.push_back(choice.index);
    out.problem.depends_on.push_back(kernel_dependency(tuner, *s.op, s.key, choice.index));
    out.picks.push_back(std::move(pick));
  }
  out.set.candidates.push_back(with_choices(routine, "defaults", std::move(defaults)));
  out.set.reference = 0;
  std::vector<StackCandidate> alternatives;
  if (routine.alternatives) alternatives = routine.alternatives(picks);
  if (any_pick) out.set.candidates.push_back(with_choices(routine, "composed", std::move(picks)));
  for (StackCandidate& alternative : alternatives)
    out.set.candidates.push_back(std::move(alternative));
  out.selection = controller.select(out.problem, out.set);
  return out;
}

}  // namespace tunekit::stack
