// The attention block as a stack workload (kernels/attention/attention_stack.hpp): every level
// decided, the executed block correct, dependencies linking the levels.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "attention/attention_stack.hpp"
#include "fakes/stack_fakes.hpp"
#include "tunekit/cpu.hpp"
#include "tunekit/errors.hpp"

namespace tunekit::kernels {
namespace {

TunerOptions quick_tuning() {
  TunerOptions o;
  o.decide.budget_evaluations = 3;  // a few points per op: this tests the wiring, not speed
  o.decide.confirm_pairs = 4;
  o.measure.timing.sample_budget = 1e-3;
  return o;
}

stack::StackOptions quick_stack() {
  stack::StackOptions o;
  o.policy.samples = 4;
  o.policy.max_relative_mad = 10;  // a loaded CI machine: the wiring, not the decision
  return o;
}

TEST(AttentionShapeText, ParsesAndRefuses) {
  const AttentionShape s = parse_attention_shape("tokens=2048,d=512");
  EXPECT_EQ(s.tokens, 2048u);
  EXPECT_EQ(s.d, 512u);
  EXPECT_EQ(s.heads, 8u);
  EXPECT_EQ(parse_attention_shape("d=64,tokens=32,heads=4").heads, 4u);
  EXPECT_EQ(to_string(s), "tokens=2048,d=512,heads=8");
  for (const char* bad :
       {"", "tokens=2048", "d=512", "tokens=2048,d=512,m=3", "tokens=-1,d=64", "tokens=1e3,d=64",
        "tokens=64,d=60,heads=8", "tokens=64,d=64,heads=0", "tokens=99999999999,d=64"})
    EXPECT_THROW(parse_attention_shape(bad), UsageError) << bad;
}

TEST(AttentionStackBlock, DecidesEveryLevelAndRunsTheDecidedBlockCorrectly) {
  cpu::CpuDevice device;
  cpu::ThreadPool pool(2);
  Tuner tuner(device, quick_tuning());
  stack::StackController controller(quick_stack());
  AttentionStack block(tuner, controller, pool, parse_attention_shape("tokens=48,d=64,heads=4"));

  const AttentionDecision d = block.decide();
  ASSERT_EQ(d.operators.size(), 6u);
  EXPECT_EQ(d.operators[0].segment, "rmsnorm");
  EXPECT_EQ(d.operators[5].segment, "out");
  ASSERT_TRUE(d.graph_report.has_value());
  EXPECT_EQ(d.graph_report->scope, stack::Scope::graph);
  EXPECT_GE(d.graph_report->entries.size(), 4u);  // defaults, 3 fused alternatives (+ composed)
  EXPECT_EQ(d.graph_report->dependencies.size(), 6u);
  ASSERT_TRUE(d.application_report.has_value());
  EXPECT_EQ(d.application_report->scope, stack::Scope::application);
  ASSERT_EQ(d.application_report->dependencies.size(), 1u);
  EXPECT_EQ(d.application_report->dependencies[0].scope, stack::Scope::graph);
  EXPECT_EQ(d.application_report->dependencies[0].chosen, d.graph.candidate);
  for (const stack::ReportEntry& e : d.graph_report->entries)
    EXPECT_NE(e.status, stack::EntryStatus::failed) << e.candidate << ": " << e.why;

  AttentionArgs args = make_attention_args(48, 64, 4, 1);
  AttentionArgs expected = args;
  attention_reference(pool, expected);
  block.run(args);
  const AttentionCheck check = check_attention_output(args, expected.y);
  EXPECT_TRUE(check.ok) << check.message;

  // Served again: the controller's decisions are hits now.
  const AttentionDecision again = block.decide();
  EXPECT_EQ(again.graph.source, stack::DecisionSource::hit);
  EXPECT_EQ(again.application.source, stack::DecisionSource::hit);
}

TEST(AttentionStackBlock, TheApplicationLevelPlansOverTheGraphsPick) {
  // Scripted times (the candidates still run and validate): the fused-norm streaming graph is
  // the fastest, and of the plans over it the heads-parallel one.
  auto runner = std::make_shared<fakes::ScriptedTrialRunner>();
  runner->seconds = [](const std::string& name, int) {
    if (name.rfind("fused_norm+streaming", 0) == 0)
      return name.find("heads") != std::string::npos ? 0.2 : 0.4;
    return 1.0;
  };
  stack::StackOptions o = quick_stack();
  o.runner = runner;
  cpu::CpuDevice device;
  cpu::ThreadPool pool(2);
  Tuner tuner(device, quick_tuning());
  stack::StackController controller(o);
  AttentionStack block(tuner, controller, pool, {32, 64, 4});
  const AttentionDecision d = block.decide();
  EXPECT_EQ(d.graph.candidate.rfind("fused_norm+streaming", 0), 0u) << d.graph.candidate;
  EXPECT_NE(d.application.candidate.find("heads"), std::string::npos) << d.application.candidate;
  EXPECT_TRUE(d.plan.fuse_norm);
  EXPECT_TRUE(d.plan.streaming);
  EXPECT_TRUE(d.plan.heads_parallel);
  // The application level's reference is the graph's pick, as it was measured.
  EXPECT_EQ(block.application_set().candidates.at(0).name, "as graph: " + d.graph.candidate);
}

TEST(AttentionStackBlock, ArgumentsOfAnotherShapeAreRefused) {
  cpu::CpuDevice device;
  cpu::ThreadPool pool(2);
  Tuner tuner(device, quick_tuning());
  stack::StackController controller(quick_stack());
  AttentionStack block(tuner, controller, pool, {32, 64, 4});
  AttentionArgs other = make_attention_args(16, 64, 4);
  EXPECT_THROW(block.run(other), UsageError);
}

}  // namespace
}  // namespace tunekit::kernels
