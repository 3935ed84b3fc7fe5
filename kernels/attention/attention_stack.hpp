// The attention block as a stack workload (issue 14 item 5): three levels of decisions, each
// made by tunekit and each shown with its evidence.
//   operator scope: each op of the unfused block (rmsnorm, the four sgemm products, softmax)
//     runs the kernel tuner's choice for its own key;
//   graph scope: the block's fused alternatives (streaming attention, rmsnorm fused into the
//     QKV packing, both) against the kernel-tuned composition and the all-defaults reference,
//     by the stack controller's paired score (tunekit/routine.hpp compose);
//   application scope: plans over the chosen graph (heads in parallel or each op on all
//     threads; the streaming kernel's query/key blocks), against the graph's pick.
// A higher decision records the lower ones it was measured under (dependencies): a changed
// kernel choice re-decides the graph, a changed graph re-decides the application plan.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "attention/attention.hpp"
#include "tunekit/routine.hpp"
#include "tunekit/stack.hpp"
#include "tunekit/stack_summary.hpp"
#include "tunekit/tuner.hpp"

namespace tunekit::kernels {

struct AttentionShape {
  std::size_t tokens = 0;
  std::size_t d = 0;
  std::size_t heads = 8;
};
// "tokens=2048,d=512" with an optional ",heads=N" (8 when absent); any other field, a missing
// one, or a shape check_attention_shape refuses is a UsageError that says what to write.
AttentionShape parse_attention_shape(std::string_view text);
std::string to_string(const AttentionShape& shape);

// Every level's decision and its evidence.
struct AttentionDecision {
  AttentionShape shape;
  std::vector<stack::SegmentPick> operators;  // one per op of the unfused block, in order
  stack::Selection graph;
  stack::Selection application;
  std::optional<stack::StackReport> graph_report;  // absent when served without a tune
  std::optional<stack::StackReport> application_report;
  AttentionPlan plan;  // what run() executes
};

// The decisions as `tunekit stack tune attention` shows them.
stack::StackSummary summarize(const AttentionDecision& decision);

// The block at one shape, decided by `tuner` (operator scope) and `controller` (graph and
// application scopes). Both must outlive it. Not thread-safe (one caller at a time).
class AttentionStack {
 public:
  AttentionStack(Tuner& tuner, stack::StackController& controller, cpu::ThreadPool& pool,
                 AttentionShape shape);
  ~AttentionStack();
  AttentionStack(const AttentionStack&) = delete;
  AttentionStack& operator=(const AttentionStack&) = delete;

  // Decides each level in turn (tuning where the modes say so) and returns the decisions.
  AttentionDecision decide();
  // Runs the decided block on `args` (of this shape) once, through the controller's
  // try_execute (an error of a chosen plan bans it and propagates). Decides first if needed.
  void run(AttentionArgs& args);

  // The problems and candidate sets of the two stack levels, as decide() last built them (for
  // StackController::report, invalidate, dependency).
  const stack::Problem& graph_problem() const;
  const stack::CandidateSet& graph_set() const;
  const stack::Problem& application_problem() const;
  const stack::CandidateSet& application_set() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tunekit::kernels
