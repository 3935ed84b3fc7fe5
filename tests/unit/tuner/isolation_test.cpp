// Hostile candidates through the library (issue #12): each is contained and classified, the
// host survives, a correct candidate wins and nothing wrong is chosen. Runs with trials in
// worker processes (the CPU device's default) and, for what can be contained without a
// process boundary, in process.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <map>
#include <new>
#include <thread>
#include <vector>

#include "fakes/hostile_op.hpp"
#include "fakes/report_lookup.hpp"
#include "tunekit/cpu.hpp"
#include "tunekit/tuner.hpp"

namespace tunekit {
namespace {

TunerOptions quick(IsolationOptions::Mode mode) {
  TunerOptions o;
  o.measure.isolation.mode = mode;
  o.measure.isolation.limit_seconds = 5;
  o.measure.isolation.floor_seconds = 1;
  o.measure.isolation.memory_bytes = std::uint64_t{1} << 30;
  o.decide.confirm_pairs = 0;
  // These tests are about classification, on a real clock that a loaded CI machine makes
  // noisy: neither contention nor a slow window may turn a validated candidate away.
  o.measure.timing.contended_fraction = 1.0;
  o.measure.timing.hopeless_ratio = 1e6;
  return o;
}

using testing::candidate_named;
using testing::hostile_op;
using testing::IsolationArgs;
using testing::make_args;
using testing::process_poisoned;

void expect_correct_winner(Tuner& tuner, const Op<IsolationArgs>& op, const TuneReport& r) {
  EXPECT_TRUE(r.winner_name == "good" || r.winner_name == "default" || r.winner_name == "late")
      << r.winner_name;
  // What the tuner now serves is correct on the caller's data.
  IsolationArgs x = make_args(Key{{"n", 64}});
  tuner.run(op, x);
  for (std::size_t i = 0; i < x.out.size(); ++i) ASSERT_EQ(x.out[i], x.a[i] + x.b[i]) << i;
}

TEST(Isolation, CrashesHangsAndHugeAllocationsAreClassifiedAndTheHostSurvives) {
  cpu::CpuDevice device;
  auto op = hostile_op({"segfault", "abort", "hang", "huge_allocation", "throw_42", "scribble"});
  Tuner tuner(device, quick(IsolationOptions::Mode::automatic));
  TuneReport r;
  tuner.select(*op, Key{{"n", 64}}, &r);
  EXPECT_EQ(r.isolation, "worker");
  EXPECT_EQ(candidate_named(r, "segfault").outcome.status, Status::crashed)
      << candidate_named(r, "segfault").outcome.message;
  EXPECT_EQ(candidate_named(r, "abort").outcome.status, Status::crashed);
  EXPECT_EQ(candidate_named(r, "hang").outcome.status, Status::timed_out)
      << candidate_named(r, "hang").outcome.message;
  const Status huge = candidate_named(r, "huge_allocation").outcome.status;
#if defined(__SANITIZE_ADDRESS__)
  // AddressSanitizer's allocator reports the allocation and ends the worker itself.
  EXPECT_TRUE(huge == Status::out_of_memory || huge == Status::crashed);
#else
  EXPECT_EQ(huge, Status::out_of_memory) << candidate_named(r, "huge_allocation").outcome.message;
#endif
  EXPECT_EQ(candidate_named(r, "throw_42").outcome.status, Status::launch_failed);
  EXPECT_EQ(candidate_named(r, "scribble").outcome.status, Status::crashed);
#if !defined(__SANITIZE_ADDRESS__)  // AddressSanitizer reports a SIGSEGV and exits with 1
  EXPECT_NE(candidate_named(r, "segfault").outcome.message.find("SIGSEGV"), std::string::npos)
      << candidate_named(r, "segfault").outcome.message;
#endif
  EXPECT_EQ(candidate_named(r, "good").outcome.status, Status::ok);
  expect_correct_winner(tuner, *op, r);
}

class ValidationHolds : public ::testing::TestWithParam<IsolationOptions::Mode> {};

TEST_P(ValidationHolds, IntermittentNaNAndInputClobberingLose) {
  cpu::CpuDevice device;
  auto op = hostile_op({"flaky_nan", "clobber", "throw_42"});
  // Every candidate checked, whatever its reading (by default only those that could win are).
  TunerOptions o = quick(GetParam());
  o.measure.check_every_candidate = true;
  Tuner tuner(device, o);
  TuneReport r;
  tuner.select(*op, Key{{"n", 64}}, &r);
  EXPECT_EQ(candidate_named(r, "flaky_nan").outcome.status, Status::validation_failed)
      << candidate_named(r, "flaky_nan").outcome.message;
  EXPECT_EQ(candidate_named(r, "clobber").outcome.status, Status::validation_failed)
      << candidate_named(r, "clobber").outcome.message;
  EXPECT_EQ(candidate_named(r, "throw_42").outcome.status, Status::launch_failed);
  // The clobberer's side effects reached no one: the candidates after it validated.
  EXPECT_EQ(candidate_named(r, "default").outcome.status, Status::ok);
  EXPECT_EQ(candidate_named(r, "good").outcome.status, Status::ok);
  expect_correct_winner(tuner, *op, r);
}

// By default only a candidate that could win is checked: a liar as fast as the correct ones
// is caught, or trailed them and was ranked unchecked; no unchecked candidate is chosen.
TEST_P(ValidationHolds, NoUncheckedCandidateIsChosen) {
  cpu::CpuDevice device;
  auto op = hostile_op({"flaky_nan", "clobber"});
  Tuner tuner(device, quick(GetParam()));
  TuneReport r;
  tuner.select(*op, Key{{"n", 64}}, &r);
  for (const char* liar : {"flaky_nan", "clobber"}) {
    const CandidateReport& c = candidate_named(r, liar);
    EXPECT_TRUE(c.outcome.status == Status::validation_failed || (c.outcome.ok() && !c.checked))
        << liar << ": " << to_string(c.outcome.status) << " " << c.outcome.message;
    EXPECT_FALSE(c.winner) << liar;
  }
  const CandidateReport* winner = nullptr;
  for (const auto& c : r.candidates)
    if (c.winner) winner = &c;
  ASSERT_NE(winner, nullptr);
  EXPECT_TRUE(winner->checked) << winner->name;
  expect_correct_winner(tuner, *op, r);
}

INSTANTIATE_TEST_SUITE_P(Modes, ValidationHolds,
                         ::testing::Values(IsolationOptions::Mode::worker,
                                           IsolationOptions::Mode::in_process),
                         [](const auto& mode) { return std::string(to_string(mode.param)); });

TEST(Isolation, ACandidateThatSpoilsItsWorkerIsNotBlamedOnTheNext) {
  cpu::CpuDevice device;
  auto op = hostile_op({"poison_process"});
  Tuner tuner(device, quick(IsolationOptions::Mode::worker));
  TuneReport r;
  tuner.select(*op, Key{{"n", 64}}, &r);
  EXPECT_FALSE(process_poisoned);  // the host never ran it
  // "late" failed in the spoiled worker, ran again in a fresh one and passed.
  EXPECT_EQ(candidate_named(r, "late").outcome.status, Status::ok)
      << candidate_named(r, "late").outcome.message;
  const Status poisoner =
      candidate_named(r, "poison_process").outcome.status;  // slow: cut or measured
  EXPECT_TRUE(poisoner == Status::ok || poisoner == Status::hopeless) << to_string(poisoner);
  expect_correct_winner(tuner, *op, r);
}

TEST(Isolation, TheHostsBuildIsInheritedNotRepeatedInsideTheTimeLimit) {
  cpu::CpuDevice device;
  auto op = hostile_op({});
  std::atomic<int> builds{0};
  op->build([&](const Config&) {
    builds.fetch_add(1);
    std::this_thread::sleep_for(std::chrono::milliseconds(700));  // longer than the limits
    return Outcome::success();
  });
  TunerOptions o = quick(IsolationOptions::Mode::worker);
  o.measure.isolation.limit_seconds = 0.5;
  o.measure.isolation.floor_seconds = 0.5;
  Tuner tuner(device, o);
  TuneReport r;
  tuner.select(*op, Key{{"n", 64}}, &r);
  EXPECT_EQ(candidate_named(r, "default").outcome.status, Status::ok)
      << candidate_named(r, "default").outcome.message;
  EXPECT_EQ(candidate_named(r, "good").outcome.status, Status::ok)
      << candidate_named(r, "good").outcome.message;
  EXPECT_EQ(builds.load(), static_cast<int>(op->size()));  // once each, by the host
}

TEST(Isolation, AnOpThatOptsOutRunsInProcessAndSaysWhy) {
  cpu::CpuDevice device;
  auto op = hostile_op({});
  op->in_process("its candidates call back into the caller's runtime");
  Tuner tuner(device, quick(IsolationOptions::Mode::automatic));
  TuneReport r;
  tuner.select(*op, Key{{"n", 16}}, &r);
  EXPECT_EQ(r.isolation, "in_process (the op: its candidates call back into the caller's runtime)");
}

}  // namespace
}  // namespace tunekit
