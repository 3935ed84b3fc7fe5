// Tests for TrialServer (src/tuner/trial_runner.cpp), the phases a worker serves: a spawned one
// has no copy of the host's stop() and a forked one a stale copy of its budget, so a window
// stops at the budget the request carries, or at once when the host's stop() had already said
// so; a worker times the trial its last phase
// prepared for the same candidate, and holds one candidate's at most.
#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <optional>

#include "fakes/fake_device.hpp"
#include "fakes/hostile_op.hpp"
#include "isolate/trial_messages.hpp"
#include "tunekit/cpu.hpp"
#include "tunekit/validate.hpp"
#include "tuner/trial_runner.hpp"

namespace tunekit::detail {
namespace {

struct SlowCandidate {
  std::unique_ptr<Op<testing::IsolationArgs>> op = testing::hostile_op({"slow"});
  Key key{{"n", 64}};
  std::unique_ptr<Workload> workload = op->make_workload(key);
  Reference reference = Reference::capture(*workload, op->has_reference(), 0);
  TrialInputs inputs;
  cpu::CpuDevice device;
  static constexpr std::size_t kSlow = 2;  // default, good, slow, late
  SlowCandidate() {
    inputs.workload = workload.get();
    inputs.reference = &reference;
    inputs.tolerance = op->tolerance(key);
  }
  TrialAnswer window(const TrialRequest& q) {
    TrialServer server(device, inputs, /*own_builds=*/true);
    std::optional<TrialAnswer> a = decode_trial_answer(server.serve(encode(q)));
    if (!a) throw std::runtime_error("unreadable answer");
    return *a;
  }
};

TrialRequest slow_window() {
  TrialRequest q;
  q.phase = TrialRequest::Phase::window;
  q.index = SlowCandidate::kSlow;
  q.timing.warmup = 0;
  q.timing.repeats_floor = 40;  // 40 x 20 ms: far past the budget below
  q.timing.max_runs = 40;
  q.timing.stop = [] { return false; };  // the host's window had a stop()
  return q;
}

TEST(TrialServer, ASpawnedWorkersWindowStopsAtTheBudgetItWasSent) {
  SlowCandidate s;
  TrialRequest q = slow_window();
  q.stop_after_seconds = 0.1;
  const TrialAnswer a = s.window(q);
  EXPECT_EQ(a.outcome.status, Status::stopped) << a.outcome.message;
  ASSERT_TRUE(a.timing);
  EXPECT_LT(a.timing->samples.size(), 20u);
}

TEST(TrialServer, AWindowTheHostHadStoppedDoesNotRun) {
  SlowCandidate s;
  TrialRequest q = slow_window();
  q.stopped = true;
  const TrialAnswer a = s.window(q);
  EXPECT_EQ(a.outcome.status, Status::stopped) << a.outcome.message;
  ASSERT_TRUE(a.timing);
  EXPECT_TRUE(a.timing->samples.empty());
}

// The window of 5 samples ran in full.
void expect_five_samples(const TrialAnswer& a) {
  EXPECT_EQ(a.outcome.status, Status::ok) << a.outcome.message;
  ASSERT_TRUE(a.timing);
  EXPECT_EQ(a.timing->samples.size(), 5u);
}

TEST(TrialServer, WithoutABudgetTheWindowRunsInFull) {
  SlowCandidate s;
  TrialRequest q = slow_window();
  q.timing.repeats_floor = q.timing.max_runs = 5;
  expect_five_samples(s.window(q));
}

// A forked worker's copy of the host's functions holds the budget as it was at the fork (the
// reserve and the projected builds move on in the host): the budget comes with the request
// instead, and the worker keeps only the caller's own stop() of its copy.
// A forked worker's copy of the host's functions, whose stop() is `stop`.
std::function<TimingOptions(std::size_t)> copy_holding(BudgetStop stop) {
  return [stop](std::size_t) {
    TimingOptions t;
    t.stop = stop;
    return t;
  };
}

TEST(TrialServer, AForkedWorkerDoesNotAskItsStaleCopyOfTheBudget) {
  SlowCandidate s;
  // The budget as it was at the fork: spent.
  s.inputs.functions = copy_holding({nullptr, [] { return true; }});
  TrialRequest q = slow_window();  // the host's budget admitted it, without a limit
  q.timing.repeats_floor = q.timing.max_runs = 5;
  expect_five_samples(s.window(q));
}

TEST(TrialServer, AForkedWorkerStillAsksTheCallersOwnStopInItsCopy) {
  SlowCandidate s;
  s.inputs.functions = copy_holding({[] { return true; }, [] { return false; }});
  const TrialAnswer a = s.window(slow_window());
  EXPECT_EQ(a.outcome.status, Status::stopped) << a.outcome.message;
}

// The slow candidate's window through a worker runner, its stop() the budget's (not spent).
TimingOptions budgeted_slow_window() {
  TimingOptions timing = slow_window().timing;
  timing.stop = BudgetStop{nullptr, [] { return false; }};
  return timing;
}
TrialAnswer slow_window_on(TrialRunner& runner, const TimingOptions& timing) {
  return runner.window(SlowCandidate::kSlow, timing, {}, 30, SlowCandidate::kSlow);
}

// The host side: a forked worker's window is sent the budget's seconds left, as a spawned
// worker's is, when its stop() is the budget's; a caller's own stop() alone sends none.
TEST(WorkerRunner, AForkedWorkersWindowStopsAtTheBudgetTheHostSent) {
  SlowCandidate s;
  const auto runner = make_worker_runner(s.device, s.inputs, 0, [] { return 0.1; });
  TimingOptions timing = budgeted_slow_window();
  const TrialAnswer a = slow_window_on(*runner, timing);
  EXPECT_EQ(a.outcome.status, Status::stopped) << a.outcome.message;
  ASSERT_TRUE(a.timing);
  EXPECT_LT(a.timing->samples.size(), 20u);

  timing.stop = [] { return false; };          // not the budget's
  timing.repeats_floor = timing.max_runs = 8;  // 160 ms: past the 0.1 s above
  const TrialAnswer b = slow_window_on(*runner, timing);
  EXPECT_EQ(b.outcome.status, Status::ok) << b.outcome.message;
  ASSERT_TRUE(b.timing);
  EXPECT_EQ(b.timing->samples.size(), 8u);
}

// The budget spent between the host's two readings of it (stop() said no, no time is left):
// the window is stopped, never sent without a budget.
TEST(WorkerRunner, ABudgetSpentAsTheWindowIsSentStopsIt) {
  SlowCandidate s;
  const auto runner = make_worker_runner(s.device, s.inputs, 0, [] { return 0.0; });
  const TrialAnswer a = slow_window_on(*runner, budgeted_slow_window());
  EXPECT_EQ(a.outcome.status, Status::stopped) << a.outcome.message;
  ASSERT_TRUE(a.timing);
  EXPECT_TRUE(a.timing->samples.empty());
}

// The fake op's candidates a, b (default a) on a fake device that counts prepares.
struct FakeCandidates {
  fakes::FakeDevice device;
  std::unique_ptr<Op<fakes::FakeArgs>> op = fakes::make_fake_op(device, {"a", "b"}, "a");
  Key key{{"n", 8}};
  std::unique_ptr<Workload> workload = op->make_workload(key);
  Reference reference = Reference::capture(*workload, op->has_reference(), 0);
  TrialInputs inputs;
  TrialServer server{device, inputs};
  FakeCandidates() {
    inputs.workload = workload.get();
    inputs.reference = &reference;
    inputs.tolerance = op->tolerance(key);
  }
  Status serve(TrialRequest::Phase phase, std::size_t index) {
    TrialRequest q;
    q.phase = phase;
    q.index = index;
    q.built = true;
    q.timing.warmup = 0;
    q.timing.repeats_floor = q.timing.max_runs = 3;
    std::optional<TrialAnswer> a = decode_trial_answer(server.serve(encode(q)));
    if (!a) throw std::runtime_error("unreadable answer");
    return a->outcome.status;
  }
};

TEST(TrialServer, AWindowTimesTheTrialTheLastPhasePreparedForTheSameCandidate) {
  using Phase = TrialRequest::Phase;
  FakeCandidates f;
  ASSERT_EQ(f.serve(Phase::admit, 1), Status::ok);
  const int admitted = f.device.prepares;
  EXPECT_EQ(f.device.trials_alive, 1);  // kept for its window
  ASSERT_EQ(f.serve(Phase::window, 1), Status::ok);
  ASSERT_EQ(f.serve(Phase::window, 1), Status::ok);
  EXPECT_EQ(f.device.prepares, admitted);  // no prepare: the admitted trial was timed
  // Another candidate: the kept trial goes before its own comes (one alive at a time).
  ASSERT_EQ(f.serve(Phase::window, 0), Status::ok);
  EXPECT_EQ(f.device.prepares, admitted + 1);
  EXPECT_EQ(f.device.trials_alive, 1);
  // Admission prepares afresh even for the candidate kept.
  ASSERT_EQ(f.serve(Phase::admit, 0), Status::ok);
  EXPECT_EQ(f.device.prepares, 2 * admitted + 1);
}

// The device settles (waits out threads the last candidate left spinning) before every window,
// and only then: admission's validation run is no reading.
TEST(TrialServer, EveryWindowSettlesTheDeviceFirst) {
  using Phase = TrialRequest::Phase;
  FakeCandidates f;
  ASSERT_EQ(f.serve(Phase::admit, 1), Status::ok);
  EXPECT_EQ(f.device.settles, 0);
  ASSERT_EQ(f.serve(Phase::window, 1), Status::ok);
  EXPECT_EQ(f.device.settles, 1);
  ASSERT_EQ(f.serve(Phase::window, 0), Status::ok);
  EXPECT_EQ(f.device.settles, 2);
}

}  // namespace
}  // namespace tunekit::detail
