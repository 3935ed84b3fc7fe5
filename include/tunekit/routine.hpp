// Per-segment composition (issue 14 item 3): a routine is a sequence of kernel ops (its
// segments). Each segment's choice is the kernel tuner's, made independently (its own key, its
// own search); the composition of those choices is then measured as a whole, by the stack
// controller's paired score, against the routine's whole-routine alternatives (a fused kernel)
// and against the reference: every segment on its default.
#pragma once

#include <cstddef>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "tunekit/key.hpp"
#include "tunekit/report.hpp"
#include "tunekit/stack.hpp"

namespace tunekit {
class OpBase;
class Tuner;
}  // namespace tunekit

namespace tunekit::stack {

// One step of a routine: a kernel op and the key it runs at.
struct Segment {
  std::string name;
  const OpBase* op = nullptr;
  Key key;
};

struct Routine {
  // The routine as a stack problem (usually graph scope): its exact signature, tolerance and
  // workspaces. depends_on is filled by compose (one dependency per segment).
  Problem problem;
  std::vector<Segment> segments;
  // Runs the segments in order on `ws`, segment i with candidate choices[i] of its op.
  std::function<void(Workspace& ws, std::span<const std::size_t> choices)> run;
  // Whole-routine candidates (a fused kernel), validated against the reference like any
  // stack candidate; made once the segments are decided, so the steps an alternative does not
  // replace can run the segments' picks (picks[i]: segment i's candidate). Empty: none.
  std::function<std::vector<StackCandidate>(std::span<const std::size_t> picks)> alternatives;
};

// What the kernel tuner chose for one segment.
struct SegmentPick {
  std::string segment;
  std::string op;         // the op's name
  std::string key;        // Key::text() of the segment's key
  std::size_t index = 0;  // into the segment's op
  std::string candidate;
  bool is_default = true;
  Source source = Source::use_default;
  std::string reason;  // the tuner's
};

struct Composition {
  std::vector<SegmentPick> picks;
  // The candidates compared: "defaults" (the reference: every segment on its default),
  // "composed" (every segment on its pick; absent when every pick is the default), then the
  // alternatives, in order.
  CandidateSet set;
  Selection selection;  // the controller's decision over `set`
  // The routine's problem with depends_on set: the kernel decisions (one per segment) the
  // decision was made under. Run a request with controller.try_execute(problem, set, ws).
  Problem problem;
};

// The kernel tuner's decision for (op, key) as a dependency of a higher-scope decision: its
// stored identity, the op's candidate-set checksum, the chosen candidate's name.
Dependency kernel_dependency(const Tuner& tuner, const OpBase& op, const Key& key,
                             std::size_t chosen);

// Decides each segment with tuner.select (the tuner's mode: tune searches a miss), then the
// routine with controller.select over {defaults, composed, alternatives...}. A segment whose
// pick is the default keeps it (the tuner's tie band: only a strict improvement is picked);
// the composition is kept only when its paired score beats the reference. A routine without
// segments, a segment without an op, or without a run function is a UsageError.
Composition compose(Tuner& tuner, StackController& controller, const Routine& routine);

}  // namespace tunekit::stack
