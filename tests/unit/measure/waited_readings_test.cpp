// Readings that waited for a CPU (src/measure/time_routine.cpp, TimingOptions::wait_tolerance
// and retake_waited), driven by the scripted clock's waits.
#include <gtest/gtest.h>

#include <deque>
#include <limits>
#include <string>
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

// The far-behind cut on clean readings (TimingOptions::clean_far_behind_ratio, default 2):
// readings the clock knows did not wait for a CPU are the kernel's own time.
TimingOptions against_incumbent(double incumbent) {
  TimingOptions o = floor_of(16, /*retake=*/false);
  o.hopeless_against = incumbent;
  return o;
}

TEST(CleanFarBehindCut, TwoCleanReadingsTwiceTheIncumbentEndTheWindow) {
  CountingTrial trial;
  ScriptedClock clock;
  clock.then = [] { return 2.5e-3; };
  clock.waits = {0, 1e-6, 0, 0};  // the second waited 0.04 %: within the 2 % tolerance
  TimingResult r = time_routine(trial, clock, against_incumbent(1e-3));
  EXPECT_EQ(r.outcome.status, Status::hopeless);
  EXPECT_EQ(r.samples.size(), 2u);
  EXPECT_NE(r.outcome.message.find("clean_far_behind_ratio 2"), std::string::npos)
      << r.outcome.message;
  EXPECT_EQ(TimingOptions{}.clean_far_behind_ratio, 2);
}

// A window of readings of `seconds` (after `first`), each with the clock's answer `wait`.
TimingResult window_of(double seconds, double wait, const TimingOptions& o,
                       std::deque<double> first = {}) {
  CountingTrial trial;
  ScriptedClock clock;
  clock.script = std::move(first);
  clock.then = [seconds] { return seconds; };
  clock.waits.assign(64, wait);
  return time_routine(trial, clock, o);
}

TEST(CleanFarBehindCut, WaitedOrUnknownReadingsAreNeverClean) {
  // The same 2.5x readings, but the clock cannot tell (-1) or they waited 40 %: only the median
  // rule cuts them, after more than half of the largest window (16 samples here: the 9th).
  for (double wait : {-1.0, 1e-3}) {
    TimingResult r = window_of(2.5e-3, wait, against_incumbent(1e-3));
    EXPECT_EQ(r.outcome.status, Status::hopeless) << wait;
    EXPECT_EQ(r.samples.size(), 9u) << wait;
    EXPECT_NE(r.outcome.message.find("median"), std::string::npos) << r.outcome.message;
  }
  // One clean reading and one that waited: not two clean ones.
  CountingTrial trial;
  ScriptedClock clock;
  clock.then = [] { return 2.5e-3; };
  clock.waits = {0, 1e-3, 1e-3};
  TimingResult r = time_routine(trial, clock, against_incumbent(1e-3));
  EXPECT_GT(r.samples.size(), 2u);
}

TEST(CleanFarBehindCut, OneFastReadingKeepsAKernelIn) {
  // Clean readings of 2.5 ms but one of 1.2 ms (the kernel's real time, the others slowed by
  // something the clock does not see): the fastest is under 2x, the window goes on.
  TimingResult r = window_of(1.2e-3, 0, against_incumbent(1e-3), {2.5e-3, 1.2e-3, 2.5e-3});
  ASSERT_TRUE(r.ok()) << r.outcome.message;
  EXPECT_EQ(r.samples.size(), 16u);
  // So does a fast prior reading (the validation run).
  TimingOptions o = against_incumbent(1e-3);
  o.prior_reading = 1.1e-3;
  TimingResult r2 = window_of(2.5e-3, 0, o);
  EXPECT_EQ(r2.outcome.status, Status::hopeless);
  EXPECT_EQ(r2.samples.size(), 9u) << r2.outcome.message;  // the median rule, not this one
}

TEST(CleanFarBehindCut, ZeroTurnsItOffAndItIsNeverCloserThanTheHopelessRatio) {
  TimingOptions off = against_incumbent(1e-3);
  off.clean_far_behind_ratio = 0;
  TimingResult r = window_of(2.5e-3, 0, off);
  EXPECT_EQ(r.samples.size(), 9u) << r.outcome.message;
  // Ratio 1.1 under hopeless_ratio 1.5: readings 1.4x the incumbent are not cut by it.
  TimingOptions under = against_incumbent(1e-3);
  under.clean_far_behind_ratio = 1.1;
  TimingResult r2 = window_of(1.4e-3, 0, under);
  ASSERT_TRUE(r2.ok()) << r2.outcome.message;
  EXPECT_EQ(r2.samples.size(), 16u);
  // Without an incumbent nothing is far behind.
  TimingResult r3 = window_of(1.0, 0, floor_of(16, false));
  EXPECT_TRUE(r3.ok()) << r3.outcome.message;
}

TEST(CleanFarBehindCut, BadRatiosAreUsageErrors) {
  for (double bad : {-1.0, 0.5, std::numeric_limits<double>::quiet_NaN()}) {
    TimingOptions o = against_incumbent(1e-3);
    o.clean_far_behind_ratio = bad;
    CountingTrial trial;
    ScriptedClock clock;
    clock.then = [] { return 1e-3; };
    EXPECT_THROW(time_routine(trial, clock, o), UsageError) << bad;
  }
}

}  // namespace
}  // namespace tunekit
