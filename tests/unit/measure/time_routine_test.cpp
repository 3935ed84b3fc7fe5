// Tests for src/measure/time_routine.cpp, driven by the scripted clock.
#include <gtest/gtest.h>

#include "fakes/scripted_clock.hpp"
#include "tunekit/errors.hpp"
#include "tunekit/timing.hpp"

namespace tunekit {
namespace {

using fakes::CountingTrial;
using fakes::ScriptedClock;

TimingResult time_constant(double seconds, const TimingOptions& options = {}) {
  CountingTrial trial;
  ScriptedClock clock;
  clock.then = [seconds] { return seconds; };
  return time_routine(trial, clock, options);
}

TEST(SamplingPolicy, PureFunction) {
  TimingOptions o;
  EXPECT_EQ(more_samples_wanted(o, 0, 0), 16);
  EXPECT_EQ(more_samples_wanted(o, 16, 0.016), 9);   // 1 ms each: 9 more reach 25 ms
  EXPECT_EQ(more_samples_wanted(o, 16, 0.160), 0);   // budget spent
  EXPECT_EQ(more_samples_wanted(o, 16, 16e-6), 48);  // capped at 64
  EXPECT_EQ(more_samples_wanted(o, 64, 64e-6), 0);
  o.repeats_floor = 100;  // a floor above the cap wins
  EXPECT_EQ(more_samples_wanted(o, 64, 1.0), 36);
}

TEST(TimeRoutine, FastRoutineTopsUpToTheCap) {
  TimingResult r = time_constant(1e-6);
  ASSERT_TRUE(r.ok()) << r.outcome.message;
  EXPECT_EQ(r.samples.size(), 64u);
  EXPECT_EQ(r.dispatches, 65);  // one warmup
  EXPECT_DOUBLE_EQ(r.median, 1e-6);
  EXPECT_EQ(r.depth, 1);
  EXPECT_EQ(r.mode, TimingMode::isolated);
  EXPECT_EQ(r.clock, "scripted");
}

TEST(TimeRoutine, MediumRoutineStopsAtTheBudget) {
  TimingResult r = time_constant(1e-3);
  EXPECT_EQ(r.samples.size(), 25u);  // 25 x 1 ms = the 25 ms budget
}

TEST(TimeRoutine, SlowRoutineTakesTheFloor) {
  TimingResult r = time_constant(0.1);
  EXPECT_EQ(r.samples.size(), 16u);
}

TEST(TimeRoutine, StatisticsOfTheWindow) {
  CountingTrial trial;
  ScriptedClock clock;
  for (int i = 1; i <= 16; ++i) clock.script.push_back(i * 0.01);
  TimingResult r = time_routine(trial, clock, {});
  ASSERT_TRUE(r.ok());
  EXPECT_DOUBLE_EQ(r.min, 0.01);
  EXPECT_DOUBLE_EQ(r.median, 0.085);
  EXPECT_DOUBLE_EQ(r.mean, 0.085);
  EXPECT_NEAR(r.p10, 0.025, 1e-12);
  EXPECT_NEAR(r.p90, 0.145, 1e-12);
  EXPECT_NEAR(r.mad, 0.04, 1e-12);
}

TEST(TimeRoutine, MostSamplesStalledIsContended) {
  CountingTrial trial;
  ScriptedClock clock;
  for (int i = 0; i < 7; ++i) clock.script.push_back(0.010);
  for (int i = 0; i < 9; ++i) clock.script.push_back(0.030);  // 9 of 16 over 2x the min
  TimingResult r = time_routine(trial, clock, {});
  EXPECT_TRUE(r.ok());
  EXPECT_TRUE(r.contended);
  EXPECT_DOUBLE_EQ(r.stalled_fraction, 9.0 / 16);

  ScriptedClock half;
  for (int i = 0; i < 8; ++i) half.script.push_back(0.010);
  for (int i = 0; i < 8; ++i) half.script.push_back(0.030);  // exactly half: not most
  EXPECT_FALSE(time_routine(trial, half, {}).contended);
}

TEST(TimeRoutine, StopEndsBeforeTheNextSample) {
  CountingTrial trial;
  ScriptedClock clock;
  clock.then = [] { return 1e-3; };
  int asked = 0;
  TimingOptions o;
  o.stop = [&] { return ++asked > 5; };  // true from the 6th question on
  TimingResult r = time_routine(trial, clock, o);
  EXPECT_EQ(r.outcome.status, Status::stopped);
  EXPECT_EQ(r.samples.size(), 4u);  // asked before warmup, then before samples 1..4
  EXPECT_EQ(trial.launches, 5);
  EXPECT_EQ(trial.syncs, trial.launches);
}

TEST(TimeRoutine, StopBeforeWarmupLaunchesNothing) {
  CountingTrial trial;
  ScriptedClock clock;
  TimingOptions o;
  o.stop = [] { return true; };
  TimingResult r = time_routine(trial, clock, o);
  EXPECT_EQ(r.outcome.status, Status::stopped);
  EXPECT_EQ(trial.launches, 0);
}

TEST(TimeRoutine, ZeroLengthReadingIsRefused) {
  CountingTrial trial;
  ScriptedClock clock;
  clock.script = {1e-3, 1e-3, 0.0};
  clock.then = [] { return 1e-3; };
  TimingResult r = time_routine(trial, clock, {});
  EXPECT_EQ(r.outcome.status, Status::not_measured);
  EXPECT_FALSE(r.ok());
  EXPECT_NE(r.outcome.message.find("zero-length"), std::string::npos);
}

TEST(TimeRoutine, ThrowingRoutineIsClassified) {
  CountingTrial trial;
  trial.on_launch = [](int n) {
    if (n == 3) throw std::runtime_error("boom");
  };
  ScriptedClock clock;
  clock.then = [] { return 1e-3; };
  TimingResult r = time_routine(trial, clock, {});
  EXPECT_EQ(r.outcome.status, Status::launch_failed);
  EXPECT_NE(r.outcome.message.find("boom"), std::string::npos);

  CountingTrial oom;
  oom.on_launch = [](int) { throw TrialError(Status::out_of_memory, "no room"); };
  EXPECT_EQ(time_routine(oom, clock, {}).outcome.status, Status::out_of_memory);

  CountingTrial fatal;
  fatal.on_launch = [](int) { throw FatalError("device lost"); };
  EXPECT_THROW(time_routine(fatal, clock, {}), FatalError);
}

TEST(TimeRoutine, EvictsBeforeEverySampleAndReportsEveryCall) {
  struct CountingEvictor : Evictor {
    int n = 0;
    void evict() override { ++n; }
  } evictor;
  int calls = 0;
  TimingOptions o;
  o.evictor = &evictor;
  o.on_call = [&](const TimingResult& r) {
    ++calls;
    EXPECT_EQ(r.samples.size(), 16u);
  };
  TimingResult r = time_constant(0.1, o);
  EXPECT_EQ(evictor.n, 16);
  EXPECT_EQ(calls, 1);
}

TEST(TimeRoutine, BadOptionsAreUsageErrors) {
  TimingOptions o;
  o.mode = TimingMode::queued;
  EXPECT_THROW(time_constant(1e-3, o), UsageError);
  TimingOptions z;
  z.repeats_floor = 0;
  EXPECT_THROW(time_constant(1e-3, z), UsageError);
}

}  // namespace
}  // namespace tunekit
