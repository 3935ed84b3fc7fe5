// Tests for TrialServer (src/tuner/trial_runner.cpp) as a spawned worker runs it: it has no
// copy of the host's stop(), so a window stops at the budget the request carries, or at once
// when the host's stop() had already said so.
#include <gtest/gtest.h>

#include <memory>
#include <optional>

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

TEST(TrialServer, WithoutABudgetTheWindowRunsInFull) {
  SlowCandidate s;
  TrialRequest q = slow_window();
  q.timing.repeats_floor = q.timing.max_runs = 5;
  const TrialAnswer a = s.window(q);
  EXPECT_EQ(a.outcome.status, Status::ok) << a.outcome.message;
  ASSERT_TRUE(a.timing);
  EXPECT_EQ(a.timing->samples.size(), 5u);
}

}  // namespace
}  // namespace tunekit::detail
