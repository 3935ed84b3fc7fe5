// Readings that waited for a CPU (src/measure/time_routine.cpp, TimingOptions::wait_tolerance
// and retake_waited), driven by the scripted clock's waits.
#include <gtest/gtest.h>

#include <limits>
#include <vector>

#include "fakes/scripted_clock.hpp"
#include "tunekit/errors.hpp"
#include "tunekit/timing.hpp"

namespace tunekit {
namespace {

using fakes::CountingTrial;
using fakes::ScriptedClock;

// Readings the scheduler stretched (TimingOptions::wait_tolerance, retake_waited): the clock
// says how long the process's threads waited for a CPU during each reading.
TimingOptions floor_of(int n, bool retake = true) {
  TimingOptions o;
  o.warmup = 0;
  o.repeats_floor = n;
  o.max_runs = n;
  o.sample_budget = 0;
  o.retake_waited = retake;
  return o;
}

TEST(WaitedReadings, ByDefaultTheyAreKeptAndCounted) {
  CountingTrial trial;
  ScriptedClock clock;
  clock.script = {1e-3, 1.5e-3, 1e-3, 1e-3};
  clock.waits = {0, 5e-4, 1e-5, -1};  // the third is under 2 %; the last: cannot tell
  TimingResult r = time_routine(trial, clock, floor_of(4, /*retake=*/false));
  ASSERT_TRUE(r.ok()) << r.outcome.message;
  EXPECT_EQ(r.samples.size(), 4u);
  EXPECT_EQ(r.waited, 1);
  EXPECT_EQ(r.retaken, 0);
  EXPECT_FALSE(TimingOptions{}.retake_waited);
}

TEST(WaitedReadings, APassingCoRunnerIsRetakenAndLeavesNoTrace) {
  CountingTrial trial;
  ScriptedClock clock;
  // 8 clean readings of 1 ms; the 3rd and 6th waited 0.5 ms and read 1.5 ms.
  clock.script = {1e-3, 1e-3, 1.5e-3, 1e-3, 1e-3, 1.5e-3, 1e-3, 1e-3, 1e-3, 1e-3};
  clock.waits = {0, 0, 5e-4, 0, 0, 5e-4, 0, 0, 0, 0};
  TimingResult r = time_routine(trial, clock, floor_of(8));
  ASSERT_TRUE(r.ok()) << r.outcome.message;
  EXPECT_EQ(r.samples, std::vector<double>(8, 1e-3));
  EXPECT_EQ(r.retaken, 2);
  EXPECT_EQ(r.waited, 0);
  EXPECT_EQ(r.dispatches, 10);  // the refused readings ran and count as dispatches
}

TEST(WaitedReadings, APersistentLoadCostsTwoRetakesThenIsMeasuredAsItIs) {
  CountingTrial trial;
  ScriptedClock clock;
  clock.then = [] { return 2e-3; };
  for (int i = 0; i < 40; ++i) clock.waits.push_back(1e-3);  // every reading waited half
  TimingResult r = time_routine(trial, clock, floor_of(16));
  ASSERT_TRUE(r.ok()) << r.outcome.message;
  EXPECT_EQ(r.samples.size(), 16u);
  EXPECT_EQ(r.retaken, 2);
  EXPECT_EQ(r.waited, 16);
  EXPECT_EQ(clock.ends, 18);
}

TEST(WaitedReadings, RetakesStopWhenTheyCatchUpWithTheCleanReadings) {
  // Four clean readings, then every reading waits: refusals run while they are fewer than
  // max(2, clean readings kept) = 4, so four are retaken and the rest kept as waited.
  CountingTrial trial;
  ScriptedClock clock;
  clock.then = [] { return 1e-3; };
  clock.waits = {0, 0, 0, 0};
  for (int i = 0; i < 100; ++i) clock.waits.push_back(1e-3);
  TimingResult r = time_routine(trial, clock, floor_of(20));
  ASSERT_TRUE(r.ok()) << r.outcome.message;
  EXPECT_EQ(r.samples.size(), 20u);
  EXPECT_EQ(r.retaken, 4);
  EXPECT_EQ(r.waited, 16);
  EXPECT_EQ(clock.ends, 24);

  // One reading in three waits (a passing co-runner): every one of them is retaken.
  ScriptedClock passing;
  passing.then = [] { return 1e-3; };
  for (int i = 0; i < 100; ++i) passing.waits.push_back(i % 3 == 2 ? 1e-3 : 0);
  TimingResult p = time_routine(trial, passing, floor_of(20));
  EXPECT_EQ(p.waited, 0);
  EXPECT_EQ(p.retaken, passing.ends - 20);
  EXPECT_GE(p.retaken, 9);
}

TEST(WaitedReadings, UnderTheToleranceOrWithoutAnAnswerNothingIsRefused) {
  for (double wait : {1.9e-5, -1.0}) {  // 1.9 % of 1 ms; a clock that cannot tell
    CountingTrial trial;
    ScriptedClock clock;
    clock.then = [] { return 1e-3; };
    for (int i = 0; i < 8; ++i) clock.waits.push_back(wait);
    TimingResult r = time_routine(trial, clock, floor_of(8));
    EXPECT_EQ(r.retaken + r.waited, 0) << wait;
    EXPECT_EQ(clock.ends, 8);
  }
  // Tolerance 0: any wait at all counts.
  CountingTrial trial;
  ScriptedClock clock;
  clock.then = [] { return 1e-3; };
  for (int i = 0; i < 8; ++i) clock.waits.push_back(1e-9);
  TimingOptions o = floor_of(8, /*retake=*/false);
  o.wait_tolerance = 0;
  TimingResult r = time_routine(trial, clock, o);
  EXPECT_EQ(r.waited, 8);
  EXPECT_EQ(clock.ends, 8);
}

TEST(WaitedReadings, RefusedReadingsNeverFeedTheHopelessCuts) {
  // A fast kernel whose first two readings were stretched 20x by a co-runner: refused, so the
  // far-behind cut (8x the incumbent) sees only the clean ones and keeps the window open.
  CountingTrial trial;
  ScriptedClock clock;
  clock.script = {20e-3, 20e-3};
  clock.then = [] { return 1e-3; };
  clock.waits = {19e-3, 19e-3};
  TimingOptions o = floor_of(8);
  o.hopeless_against = 1e-3;
  TimingResult r = time_routine(trial, clock, o);
  ASSERT_TRUE(r.ok()) << r.outcome.message;
  EXPECT_EQ(r.retaken, 2);
  EXPECT_DOUBLE_EQ(r.median, 1e-3);
}

TEST(WaitedReadings, QueuedBatchesAreJudgedOnTheWholeBatch) {
  // depth 10 fixed: a batch of 10 ms that waited 0.1 ms (1 %) is kept; one that waited 1 ms
  // (10 %) is retaken.
  CountingTrial trial;
  ScriptedClock clock;
  clock.then = [] { return 10e-3; };
  clock.waits = {1e-4, 1e-3, 0, 0};
  TimingOptions o = floor_of(3);
  o.mode = TimingMode::queued;
  o.fixed_depth = 10;
  TimingResult r = time_routine(trial, clock, o);
  ASSERT_TRUE(r.ok()) << r.outcome.message;
  EXPECT_EQ(r.retaken, 1);
  EXPECT_EQ(r.samples.size(), 3u);
}

TEST(WaitedReadings, BadTolerancesAreUsageErrors) {
  for (double bad :
       {-0.1, std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity()}) {
    TimingOptions o;
    o.wait_tolerance = bad;
    CountingTrial trial;
    ScriptedClock clock;
    clock.then = [] { return 1e-3; };
    EXPECT_THROW(time_routine(trial, clock, o), UsageError) << bad;
  }
}

}  // namespace
}  // namespace tunekit
