// Tests for src/measure/time_routine.cpp, driven by the scripted clock.
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <random>
#include <vector>

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
  o.depth_cap = 0;
  EXPECT_THROW(time_constant(1e-3, o), UsageError);
  TimingOptions z;
  z.repeats_floor = 0;
  EXPECT_THROW(time_constant(1e-3, z), UsageError);
}

// A device whose batch of d launches takes fixed + marginal * d (times a seeded jitter).
struct LinearDevice {
  CountingTrial trial;
  ScriptedClock clock;
  int at_begin = 0;
  double fixed = 0;
  double marginal = 0;
  double jitter = 0;
  std::mt19937_64 rng{7};
  LinearDevice(double fixed_s, double marginal_s, double jitter_rel = 0)
      : fixed(fixed_s), marginal(marginal_s), jitter(jitter_rel) {
    clock.then = [this] {
      std::uniform_real_distribution<double> u(-jitter, jitter);
      double launches = trial.launches - at_begin;
      at_begin = trial.launches;
      return (fixed + marginal * launches) * (1 + (jitter > 0 ? u(rng) : 0.0));
    };
  }
  TimingResult time(TimingOptions o) {
    o.mode = TimingMode::queued;
    o.on_call = nullptr;
    // begin() is not observable through ScriptedClock; count launches from the last end().
    at_begin = trial.launches;
    return time_routine(trial, clock, o);
  }
};

TEST(DepthPolicy, PureFunction) {
  // Exact line: 50 us fixed + 10 us per launch -> 995 launches reach 10 ms, capped at 200.
  std::vector<DepthProbe> probes{{1, 60e-6}, {16, 210e-6}};
  EXPECT_EQ(choose_depth(probes, 0.010, 2048), 995);
  EXPECT_EQ(choose_depth(probes, 0.010, 200), 200);
  // One launch already over the target: depth 1.
  EXPECT_EQ(choose_depth(std::vector<DepthProbe>{{1, 0.02}}, 0.010, 200), 1);
  // Unresolvable (noise makes the marginal negative): the deepest batch within the target.
  std::vector<DepthProbe> noisy{{1, 9e-3}, {2, 8e-3}, {4, 2e-3}};
  EXPECT_EQ(choose_depth(noisy, 0.010, 200), 4);
  std::vector<DepthProbe> single{{32, 4e-3}};
  EXPECT_EQ(choose_depth(single, 0.010, 200), 32);
}

TEST(QueuedTiming, FastRoutineReachesTheTarget) {
  LinearDevice dev(20e-6, 5e-6);  // 5 us kernels, 20 us launch/sync overhead
  TimingOptions o;
  o.depth_cap = 2048;
  TimingResult r = dev.time(o);
  ASSERT_TRUE(r.ok()) << r.outcome.message;
  EXPECT_EQ(r.mode, TimingMode::queued);
  EXPECT_NEAR(r.depth, 1996, 2);                        // (10 ms - 20 us) / 5 us
  EXPECT_NEAR(r.median, 5e-6 + 20e-6 / r.depth, 1e-9);  // per-launch: overhead amortised
  EXPECT_GE(r.samples.size(), 2u);
  EXPECT_EQ(r.dispatches, dev.trial.launches);
  EXPECT_GE(r.probes.size(), 2u);
}

TEST(QueuedTiming, SlowRoutineStaysAtDepthOne) {
  LinearDevice dev(0, 0.015);
  TimingResult r = dev.time({});
  EXPECT_EQ(r.depth, 1);
  EXPECT_EQ(r.samples.size(), 16u);
}

TEST(QueuedTiming, RespectsTheCap) {
  LinearDevice dev(0, 1e-7);
  TimingResult r = dev.time({});  // host cap 200
  EXPECT_EQ(r.depth, 200);
  for (const auto& p : r.probes) EXPECT_LE(p.depth, 200);
}

TEST(QueuedTiming, NoisyFitsNeverGoDeeperThanMeasuredWithinTarget) {
  for (int seed = 0; seed < 50; ++seed) {
    LinearDevice dev(1e-3, 2e-6, 0.9);  // noise far above the marginal
    dev.rng.seed(static_cast<unsigned>(seed));
    TimingOptions o;
    o.depth_cap = 2048;
    TimingResult r = dev.time(o);
    ASSERT_TRUE(r.ok());
    int deepest_within = 1;
    for (const auto& p : r.probes)
      if (p.seconds <= o.batch_target) deepest_within = std::max(deepest_within, p.depth);
    // Either the fit resolved (then the depth is its answer) or the bound holds.
    int fitted = choose_depth(std::span(r.probes).first(r.probes.size()), o.batch_target, 2048);
    EXPECT_TRUE(r.depth <= deepest_within || r.depth == fitted) << seed;
    EXPECT_LE(r.depth, 2048);
  }
}

TEST(QueuedTiming, StopHonouredWithinOneBatch) {
  LinearDevice dev(0, 1e-5);
  int asked = 0;
  TimingOptions o;
  o.stop = [&] { return ++asked > 8; };
  TimingResult r = dev.time(o);
  EXPECT_EQ(r.outcome.status, Status::stopped);
  EXPECT_EQ(dev.trial.launches, r.dispatches);  // nothing launched after stop said true
  EXPECT_EQ(dev.trial.syncs,
            1 + static_cast<int>(r.probes.size()) + static_cast<int>(r.samples.size()));
}

TEST(HopelessCut, FiresExactlyWhenTheIncumbentCanNoLongerBeReached) {
  // Samples of 10 ms against an incumbent of 1 ms (ratio 1.5): the 25 ms budget is spent at
  // the third sample, so the window can end with at most 16 samples; the median is out of
  // reach once 9 of them are slow. (The far-behind cut, off here, would end it sooner.)
  CountingTrial trial;
  ScriptedClock clock;
  clock.then = [] { return 0.010; };
  TimingOptions o;
  o.hopeless_against = 1e-3;
  o.far_behind_ratio = 0;
  TimingResult r = time_routine(trial, clock, o);
  EXPECT_EQ(r.outcome.status, Status::hopeless);
  EXPECT_EQ(r.samples.size(), 9u);

  // Fast samples mixed in: 8 fast then slow ones. With 16 final samples, 8 fast keep the
  // median reachable until a 9th slow one... which cannot happen before 17 samples: the
  // window ends ok at 16 and is ranked normally.
  ScriptedClock mixed;
  for (int i = 0; i < 8; ++i) mixed.script.push_back(1e-3);
  mixed.then = [] { return 0.010; };
  TimingResult m = time_routine(trial, mixed, o);
  EXPECT_TRUE(m.ok()) << m.outcome.message;
  EXPECT_EQ(m.samples.size(), 16u);

  // While the budget is not spent the window could still grow to 64: no cut before 33 slow.
  ScriptedClock small;
  small.then = [] { return 1e-4; };
  TimingOptions tiny = o;
  tiny.hopeless_against = 1e-5;
  TimingResult t = time_routine(trial, small, tiny);
  EXPECT_EQ(t.outcome.status, Status::hopeless);
  EXPECT_EQ(t.samples.size(), 33u);
}

// The far-behind cut (TimingOptions::far_behind_ratio, default 8): two samples whose fastest
// (the validation run's reading included) is 8x the incumbent end the window.
TEST(FarBehindCut, TheValidationRunAndTwoSamplesSufficeAndTheWarmupIsSkipped) {
  CountingTrial trial;
  ScriptedClock clock;
  clock.then = [] { return 0.300; };  // 300x an incumbent of 1 ms
  TimingOptions o;
  o.hopeless_against = 1e-3;
  o.prior_reading = 0.300;
  const TimingResult r = time_routine(trial, clock, o);
  EXPECT_EQ(r.outcome.status, Status::hopeless);
  EXPECT_EQ(r.samples.size(), 2u);
  EXPECT_EQ(trial.launches, 2) << "the warmup ran, or more than two samples";
  EXPECT_NE(r.outcome.message.find("validation run included"), std::string::npos)
      << r.outcome.message;
  EXPECT_NE(r.outcome.message.find("far_behind_ratio 8"), std::string::npos) << r.outcome.message;
}

TEST(FarBehindCut, WithoutAPriorReadingTheWarmupRuns) {
  CountingTrial trial;
  ScriptedClock clock;
  clock.then = [] { return 0.300; };
  TimingOptions o;
  o.hopeless_against = 1e-3;
  const TimingResult r = time_routine(trial, clock, o);
  EXPECT_EQ(r.outcome.status, Status::hopeless);
  EXPECT_EQ(r.samples.size(), 2u);
  EXPECT_EQ(trial.launches, 3) << "the warmup and two samples";
}

TEST(FarBehindCut, AColdRunAndAStalledSampleNeverCutAFastKernel) {
  // A cold validation run and a first sample during a stall, both far behind; the second
  // sample is the kernel's real speed, within reach: the fastest reading decides, no cut.
  CountingTrial trial;
  ScriptedClock clock;
  clock.script = {0.050};
  clock.then = [] { return 1.1e-3; };
  TimingOptions o;
  o.hopeless_against = 1e-3;
  o.prior_reading = 0.050;
  const TimingResult r = time_routine(trial, clock, o);
  EXPECT_TRUE(r.ok()) << r.outcome.message;
  EXPECT_EQ(trial.launches, static_cast<int>(r.samples.size())) << "warmup skipped: cold 50x";
  EXPECT_NEAR(r.median, 1.1e-3, 1e-12);
}

TEST(FarBehindCut, OneFastReadingAmongSlowOnesKeepsTheWindowOpen) {
  CountingTrial trial;
  ScriptedClock clock;
  clock.script = {0.300, 0.300};
  clock.then = [] { return 0.300; };
  TimingOptions o;
  o.hopeless_against = 1e-3;
  o.prior_reading = 1e-3;  // a validation run at the incumbent's speed
  const TimingResult r = time_routine(trial, clock, o);
  EXPECT_EQ(r.outcome.status, Status::hopeless);
  EXPECT_EQ(r.samples.size(), 9u) << "the median rule, not the far-behind cut, ended it";
}

TEST(FarBehindCut, JustUnderTheRatioIsLeftToTheMedianRule) {
  CountingTrial trial;
  ScriptedClock clock;
  clock.then = [] { return 7.9e-3; };
  TimingOptions o;
  o.hopeless_against = 1e-3;
  o.prior_reading = 7.9e-3;
  const TimingResult r = time_routine(trial, clock, o);
  EXPECT_EQ(r.outcome.status, Status::hopeless);
  EXPECT_EQ(r.samples.size(), 9u) << "cut by the median rule, as without the far-behind cut";
  EXPECT_EQ(trial.launches, 9) << "the prior reading was over 1.5x: no warmup";
}

TEST(FarBehindCut, APriorReadingUnderTheHopelessLineKeepsTheWarmup) {
  CountingTrial trial;
  ScriptedClock clock;
  clock.then = [] { return 1.2e-3; };
  TimingOptions o;
  o.hopeless_against = 1e-3;
  o.prior_reading = 1.2e-3;
  const TimingResult r = time_routine(trial, clock, o);
  EXPECT_TRUE(r.ok()) << r.outcome.message;
  EXPECT_EQ(trial.launches, 1 + static_cast<int>(r.samples.size()));
}

TEST(FarBehindCut, QueuedWindowsKeepTheirWarmup) {
  // In queued mode the incumbent is a per-launch time of batches: one cold launch and its
  // sync over it says nothing, so the warmup runs.
  CountingTrial trial;
  ScriptedClock clock;
  clock.then = [] { return 0.020; };  // every batch 20 ms: depth calibration settles at once
  TimingOptions o;
  o.mode = TimingMode::queued;
  o.hopeless_against = 1e-3;
  o.prior_reading = 0.020;
  o.far_behind_ratio = 0;
  const TimingResult r = time_routine(trial, clock, o);
  EXPECT_EQ(trial.launches, r.dispatches);
  EXPECT_EQ(r.dispatches, 1 + static_cast<long long>(r.probes.size()) * r.depth +
                              static_cast<long long>(r.samples.size()) * r.depth)
      << "the warmup launch is missing";
}

TEST(FarBehindCut, OffWithoutAnIncumbentOrWhenZero) {
  CountingTrial trial;
  ScriptedClock clock;
  clock.then = [] { return 0.300; };
  TimingOptions o;
  o.prior_reading = 0.300;  // no incumbent: the default's own window
  TimingResult r = time_routine(trial, clock, o);
  EXPECT_TRUE(r.ok()) << r.outcome.message;
  EXPECT_EQ(trial.launches, 1 + static_cast<int>(r.samples.size())) << "its warmup ran";
  o.hopeless_against = 1e-3;
  o.far_behind_ratio = 0;
  r = time_routine(trial, clock, o);
  EXPECT_EQ(r.outcome.status, Status::hopeless);
  EXPECT_EQ(r.samples.size(), 9u) << "the median rule alone";
  // A loosened median rule loosens the far-behind line with it: 300x is not 1000x.
  o.far_behind_ratio = 8;
  o.hopeless_ratio = 1000;
  r = time_routine(trial, clock, o);
  EXPECT_TRUE(r.ok()) << r.outcome.message;
}

TEST(FarBehindCut, BadRatiosAndReadingsAreRefused) {
  CountingTrial trial;
  ScriptedClock clock;
  clock.then = [] { return 1e-3; };
  for (double bad : {0.5, -1.0, std::nan("")}) {
    TimingOptions o;
    o.far_behind_ratio = bad;  // under 1, negative, NaN
    EXPECT_THROW(time_routine(trial, clock, o), UsageError) << bad;
  }
  for (double bad : {-1.0, std::nan(""), std::numeric_limits<double>::infinity()}) {
    TimingOptions o;
    o.prior_reading = bad;
    EXPECT_THROW(time_routine(trial, clock, o), UsageError) << bad;
  }
}

// A trial that counts how its launches arrive: one by one, or as batches (a CUDA graph replay).
class BatchCountingTrial final : public Trial {
 public:
  int launches = 0;
  std::vector<int> batches;
  Outcome prepare() override { return Outcome::success(); }
  void launch() override { ++launches; }
  void launch_batch(int count) override { batches.push_back(count); }
  void sync() override {}
  void release() override {}
};

TEST(TimeRoutine, QueuedBatchesGoThroughLaunchBatchInOneCall) {
  BatchCountingTrial trial;
  ScriptedClock clock;
  clock.then = [] { return 0.01; };
  TimingOptions o;
  o.mode = TimingMode::queued;
  o.fixed_depth = 20;
  o.repeats_floor = 5;
  o.max_runs = 5;
  o.sample_budget = 0;
  TimingResult r = time_routine(trial, clock, o);
  ASSERT_TRUE(r.ok()) << r.outcome.message;
  EXPECT_EQ(trial.launches, 1);  // the warmup, alone
  EXPECT_EQ(trial.batches, std::vector<int>(5, 20));
  EXPECT_DOUBLE_EQ(r.median, 0.01 / 20);
}

TEST(TimeRoutine, TheDefaultLaunchBatchLaunchesCountTimes) {
  CountingTrial trial;
  trial.launch_batch(7);
  EXPECT_EQ(trial.launches, 7);
}

TEST(TimeRoutine, IsolatedSamplesNeverBatch) {
  BatchCountingTrial trial;
  ScriptedClock clock;
  clock.then = [] { return 1e-3; };
  TimingResult r = time_routine(trial, clock, {});
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(trial.batches.empty());
  EXPECT_EQ(trial.launches, r.dispatches);
}

}  // namespace
}  // namespace tunekit
