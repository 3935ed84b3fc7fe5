// Tests for the dependency tracking of src/stack/stack_decisions.cpp: a graph decision
// records the operator decisions it was measured under and is invalidated when one changes.
#include <gtest/gtest.h>

#include <stdexcept>

#include "tunekit/stack.hpp"
#include "unit/stack/stack_test_support.hpp"

namespace tunekit::stack {
namespace {

using test::make_problem;
using test::make_runner;
using test::make_set;
using test::options_with;

struct TwoLevels : ::testing::Test {
  std::shared_ptr<fakes::ScriptedTrialRunner> runner = make_runner();
  StackController c{options_with(runner)};
  Problem op = make_problem("qkv_projection", 512, 64, Scope::operator_);
  CandidateSet op_set = make_set({"fast"});
  Problem graph = make_problem("attention", 512, 64, Scope::graph);
  CandidateSet graph_set = make_set({"fused"});

  Selection select_graph() {
    graph.depends_on = {c.dependency(op, op_set)};
    return c.select(graph, graph_set);
  }
};

TEST_F(TwoLevels, TheGraphDecisionRecordsTheOperatorDecisions) {
  ASSERT_EQ(c.select(op, op_set).candidate, "fast");
  EXPECT_EQ(select_graph().source, DecisionSource::tuned);
  std::optional<StackReport> r = c.report(graph, graph_set);
  ASSERT_TRUE(r);
  ASSERT_EQ(r->dependencies.size(), 1u);
  EXPECT_EQ(r->dependencies[0].scope, Scope::operator_);
  EXPECT_EQ(r->dependencies[0].key, cache_key(op, op_set));
  EXPECT_EQ(r->dependencies[0].candidates, op_set.checksum());
  EXPECT_EQ(r->dependencies[0].chosen, "fast");
  EXPECT_EQ(select_graph().source, DecisionSource::hit);  // unchanged: still valid
}

TEST_F(TwoLevels, AnInvalidatedOperatorDecisionInvalidatesTheGraphDecision) {
  (void)c.select(op, op_set);
  (void)select_graph();
  EXPECT_TRUE(c.invalidate(op, op_set));
  EXPECT_EQ(c.stats().invalidations, 2u);  // the operator's and the graph's that depended on it
  EXPECT_NE(c.report(graph, graph_set)->note.find("invalidated"), std::string::npos);
  (void)c.select(op, op_set);
  EXPECT_EQ(select_graph().source, DecisionSource::tuned);  // measured again
  EXPECT_EQ(c.stats().tunes, 4u);
}

TEST_F(TwoLevels, DecidingAnOperatorTheGraphWasMeasuredWithoutInvalidatesIt) {
  EXPECT_EQ(select_graph().source, DecisionSource::tuned);  // the operator is undecided
  EXPECT_EQ(c.report(graph, graph_set)->dependencies[0].chosen, "reference");  // what served
  ASSERT_EQ(c.select(op, op_set).candidate, "fast");  // decided now: the graph's basis changed
  EXPECT_EQ(c.stats().invalidations, 1u);
  EXPECT_EQ(select_graph().source, DecisionSource::tuned);
  EXPECT_EQ(c.report(graph, graph_set)->dependencies[0].chosen, "fast");
  EXPECT_EQ(select_graph().source, DecisionSource::hit);
}

TEST_F(TwoLevels, DecidingAnOperatorForItsReferenceKeepsTheGraphDecision) {
  runner->seconds = [](const std::string&, int) { return 1.0; };  // nothing beats the reference
  EXPECT_EQ(select_graph().source, DecisionSource::tuned);        // the operator is undecided
  EXPECT_EQ(c.select(op, op_set).candidate, "reference");  // what served while the graph measured
  EXPECT_EQ(c.stats().invalidations, 0u);
  EXPECT_EQ(select_graph().source, DecisionSource::hit);
}

// A graph level kept at its reference for lack of scores (memory only) and one missed in
// cache_only mode are the same basis for the level above: the application decision stored over
// the first is found over the second (a stack tune then a stack explain on a loaded machine).
TEST_F(TwoLevels, AKeptReferenceAndAMissAreTheSameBasisForTheLevelAbove) {
  Problem app = make_problem("decode_step", 512, 64, Scope::application);
  CandidateSet plans = make_set({"fast"});
  c.select(op, op_set);
  graph.depends_on = {c.dependency(op, op_set)};
  StackController missing{options_with(runner, Mode::cache_only)};
  const Dependency undecided = missing.dependency(graph, graph_set);
  EXPECT_EQ(undecided.chosen, "reference");
  runner->seconds = [](const std::string&, int) { return 1.0; };
  (void)c.select(graph, graph_set);  // decided, the reference
  app.depends_on = {c.dependency(graph, graph_set)};
  EXPECT_EQ(app.depends_on[0], undecided);
}

TEST_F(TwoLevels, ABannedOperatorCandidateInvalidatesTheGraphDecision) {
  StackCandidate& fast = op_set.candidates[1];
  auto run = fast.run;
  fast.run = [run](Workspace& w, std::span<std::byte> s) {
    run(w, s);
    if (!StackController::is_tuning()) throw std::runtime_error("live failure");
  };
  fakes::FloatWorkspace request(64);
  (void)c.select(op, op_set);
  (void)select_graph();
  EXPECT_THROW(c.try_execute(op, op_set, request), std::runtime_error);
  Stats st = c.stats();
  EXPECT_EQ(st.bans, 1u);
  EXPECT_EQ(st.invalidations, 2u);
}

TEST_F(TwoLevels, AnExternalOperatorChoiceThatChangesInvalidatesOnTheNextRequest) {
  // An operator decided by the kernel tuner: the caller says what it is now.
  const Dependency blocked{Scope::operator_, Digest::of("sgemm m=512"), Digest::of("set"),
                           "blocked"};
  graph.depends_on = {blocked};
  EXPECT_EQ(c.select(graph, graph_set).source, DecisionSource::tuned);
  EXPECT_EQ(c.select(graph, graph_set).source, DecisionSource::hit);
  Dependency naive = blocked;
  naive.chosen = "naive";
  graph.depends_on = {naive};
  EXPECT_EQ(c.select(graph, graph_set).source, DecisionSource::tuned);
  EXPECT_EQ(c.stats().invalidations, 1u);
  EXPECT_EQ(c.report(graph, graph_set)->dependencies[0].chosen, "naive");
}

TEST_F(TwoLevels, AnApplicationDecisionOverAGraphOneIsInvalidatedInTurn) {
  (void)c.select(op, op_set);
  (void)select_graph();
  Problem app = make_problem("decode_step", 512, 64, Scope::application);
  app.depends_on = {c.dependency(graph, graph_set)};
  CandidateSet plans = make_set({"heads_in_parallel"});
  EXPECT_EQ(c.select(app, plans).source, DecisionSource::tuned);
  ASSERT_TRUE(c.invalidate(op, op_set));
  EXPECT_EQ(c.stats().invalidations, 3u);  // operator, graph, application
}

}  // namespace
}  // namespace tunekit::stack
