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

#include "fakes/report_lookup.hpp"
#include "tunekit/cpu.hpp"
#include "tunekit/tuner.hpp"

namespace tunekit {
namespace {

struct IsolationArgs {
  std::vector<float> a, b, out;
};

// Set by a candidate that is correct but leaves its process unfit for the next one.
bool process_poisoned = false;

void add(IsolationArgs& x) {
  if (process_poisoned) std::abort();
  for (std::size_t i = 0; i < x.out.size(); ++i) x.out[i] = x.a[i] + x.b[i];
}

// Calls counted per process: a worker starts from the host's count at its fork.
std::atomic<int> flaky_calls{0};

IsolationArgs make_args(const Key& key, int input_set = 0) {
  const auto n = static_cast<std::size_t>(key.integer("n"));
  IsolationArgs x{std::vector<float>(n), std::vector<float>(n), std::vector<float>(n)};
  const float shift = 10.0f * static_cast<float>(input_set);  // a second set, other values
  for (std::size_t i = 0; i < n; ++i)
    x.a[i] = 1.0f + shift + static_cast<float>(i), x.b[i] = 2.0f * static_cast<float>(i);
  return x;
}

std::unique_ptr<Op<IsolationArgs>> hostile_op(const std::vector<std::string>& hostile) {
  auto op = std::make_unique<Op<IsolationArgs>>("hostile", 1);
  op->key_field({"n", Value::Type::integer, "length", std::nullopt, 1, 1 << 20});
  const std::map<std::string, std::function<void(IsolationArgs&)>> all{
      {"segfault",
       [](IsolationArgs& x) {
         add(x);
         *static_cast<volatile int*>(nullptr) = 1;
       }},
      {"abort", [](IsolationArgs&) { std::abort(); }},
      {"hang",
       [](IsolationArgs&) {
         volatile unsigned spin = 0;  // unsigned: wrapping is defined (UBSan stays quiet)
         while (true) spin = static_cast<unsigned>(spin) + 1;
       }},
      {"huge_allocation",
       [](IsolationArgs& x) {
         std::vector<char> huge(std::size_t{1} << 40, 1);  // 1 TiB
         x.out[0] = huge[12345];
       }},
      {"throw_42", [](IsolationArgs&) { throw 42; }},
      {"scribble",
       [](IsolationArgs& x) {
         add(x);
         float* far = x.out.data() + (std::size_t{1} << 36);  // far out of bounds
         for (int i = 0; i < 64; ++i) far[i * 4096] = 1;
       }},
      {"flaky_nan",
       [](IsolationArgs& x) {
         add(x);
         if (flaky_calls.fetch_add(1) % 5 == 4) x.out[3] = std::numeric_limits<float>::quiet_NaN();
       }},
      {"poison_process",
       [](IsolationArgs& x) {
         for (std::size_t i = 0; i < x.out.size(); ++i) x.out[i] = x.a[i] + x.b[i];
         process_poisoned = true;  // right, but every later add() in this process aborts
         volatile int spin = 0;    // slower than the default: it never wins
         while (spin < 60000) spin = static_cast<int>(spin) + 1;
       }},
      {"clobber",
       [](IsolationArgs& x) {
         add(x);
         std::fill(x.a.begin(), x.a.end(), 0.0f);  // right once, wrong for every later call
       }},
  };
  op->candidate("default", [](IsolationArgs& x) {
    add(x);
    // Slower than every hostile candidate, so each of them would win if it were not caught.
    volatile int spin = 0;
    while (spin < 20000) spin = static_cast<int>(spin) + 1;
  });
  op->candidate("good", add);
  for (const auto& name : hostile) op->candidate(name, all.at(name));
  op->candidate("late", add);  // correct, measured after every hostile one
  op->default_candidate("default")
      .inputs([](const Key& key, int input_set) { return make_args(key, input_set); })
      .outputs([](IsolationArgs& x) {
        return std::vector<OutputView>{OutputView::of(std::span(x.out))};
      })
      .key([](const IsolationArgs& x) {
        return Key{{"n", static_cast<std::int64_t>(x.out.size())}};
      });
  return op;
}

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
  Tuner tuner(device, quick(GetParam()));
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
