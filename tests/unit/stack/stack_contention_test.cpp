// Concurrency tests of src/stack/stack_controller.cpp (also run under TSan): contenders and
// nested requests get the reference at once, and no state lock is held while a trial runs.
#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <thread>

#include "tunekit/stack.hpp"
#include "unit/stack/stack_test_support.hpp"

namespace tunekit::stack {
namespace {

using test::make_problem;
using test::make_runner;
using test::make_set;
using test::options_with;

// A deadlock guard, not a timing assertion: a correct controller answers in microseconds.
constexpr auto kGuard = std::chrono::seconds(30);

TEST(StackContention, AContenderGetsTheReferenceAtOnceWhileATrialIsSlow) {
  auto runner = make_runner();
  std::promise<void> inside, release;
  std::shared_future<void> released = release.get_future().share();
  std::atomic<bool> first{true};
  runner->on_trial = [&](const std::string&) {
    if (first.exchange(false)) {
      inside.set_value();
      released.wait();  // the first trial blocks until the contender has its answer
    }
  };
  StackController c(options_with(runner));
  const Problem p = make_problem();
  const CandidateSet set = make_set({"fast"});
  std::future<Selection> tuner = std::async(std::launch::async, [&] { return c.select(p, set); });
  inside.get_future().wait();
  std::future<Selection> contender =
      std::async(std::launch::async, [&] { return c.select(p, set); });
  ASSERT_EQ(contender.wait_for(kGuard), std::future_status::ready);  // did not wait for the tune
  Selection s = contender.get();
  EXPECT_TRUE(s.reference);
  EXPECT_EQ(s.source, DecisionSource::contender);
  release.set_value();
  ASSERT_EQ(tuner.wait_for(kGuard), std::future_status::ready);
  EXPECT_EQ(tuner.get().candidate, "fast");
  EXPECT_EQ(c.select(p, set).source, DecisionSource::hit);
  Stats st = c.stats();
  EXPECT_EQ(st.fallbacks, 1u);
  EXPECT_EQ(st.tunes, 1u);
}

TEST(StackContention, ANestedRequestInsideATrialGetsTheReference) {
  auto runner = make_runner();
  StackController c(options_with(runner));
  const Problem inner = make_problem("inner_op", 512, 64, Scope::operator_);
  const CandidateSet inner_set = make_set({"fast"});
  std::vector<Selection> nested;
  CandidateSet outer_set = make_set({});
  StackCandidate calls_in = fakes::doubling("fast");
  auto run = calls_in.run;
  calls_in.run = [&, run](Workspace& w, std::span<std::byte> s) {
    EXPECT_TRUE(StackController::is_tuning());
    nested.push_back(c.select(inner, inner_set));
    run(w, s);
  };
  outer_set.candidates.push_back(calls_in);
  EXPECT_FALSE(StackController::is_tuning());
  EXPECT_EQ(c.select(make_problem("outer"), outer_set).candidate, "fast");
  EXPECT_FALSE(StackController::is_tuning());
  ASSERT_FALSE(nested.empty());
  for (const Selection& s : nested) {
    EXPECT_TRUE(s.reference);
    EXPECT_EQ(s.source, DecisionSource::nested);
  }
  EXPECT_EQ(c.stats().tunes, 1u);            // the outer problem only
  EXPECT_FALSE(c.report(inner, inner_set));  // nothing was tuned for it
}

TEST(StackContention, NoStateLockIsHeldWhileATrialRuns) {
  auto runner = make_runner();
  StackController c(options_with(runner));
  const Problem p = make_problem();
  const Problem other = make_problem("other");
  const CandidateSet set = make_set({"fast"});
  bool checked = false;
  runner->on_trial = [&](const std::string& name) {
    if (checked || name != "fast") return;
    checked = true;
    // Another thread reads the state and tunes another problem while this trial runs.
    std::future<Selection> f = std::async(std::launch::async, [&] {
      (void)c.stats();
      (void)c.reports();
      return c.select(other, set);
    });
    ASSERT_EQ(f.wait_for(kGuard), std::future_status::ready);
    EXPECT_EQ(f.get().source, DecisionSource::tuned);
  };
  EXPECT_EQ(c.select(p, set).candidate, "fast");
  EXPECT_TRUE(checked);
}

TEST(StackContention, ManyThreadsOneTuneEveryAnswerValid) {
  auto runner = make_runner();
  StackController c(options_with(runner));
  const Problem p = make_problem();
  const CandidateSet set = make_set({"fast"});
  std::vector<std::future<Selection>> all;
  for (int i = 0; i < 8; ++i)
    all.push_back(std::async(std::launch::async, [&] { return c.select(p, set); }));
  for (auto& f : all) {
    Selection s = f.get();
    EXPECT_TRUE(s.candidate == "fast" || (s.reference && s.source == DecisionSource::contender));
  }
  EXPECT_EQ(c.stats().tunes, 1u);
}

}  // namespace
}  // namespace tunekit::stack
