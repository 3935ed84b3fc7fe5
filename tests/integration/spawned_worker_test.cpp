// Spawned trial workers (issue #12: "for OpenCL/CUDA a worker owns its own device context"):
// a device whose trials cannot run in a fork of the host (Device::Workers::spawned) runs them
// in a fresh process of IsolationOptions::worker_program, which opens the device and the op
// again and makes its own inputs. Here the device is the CPU posing as such a device and the
// program is tests/integration/hostile_trial_worker.cpp: every hostile candidate is classified
// in it, the host survives, and a program that cannot serve is a clear UsageError.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "fakes/hostile_op.hpp"
#include "fakes/report_lookup.hpp"
#include "fakes/temp_dir.hpp"
#include "tunekit/cpu.hpp"
#include "tunekit/errors.hpp"
#include "tunekit/tuner.hpp"

namespace tunekit::testing {
namespace {

// The CPU device, saying its trials must run in a spawned worker that reopens "cpu".
class SpawningDevice final : public Device {
 public:
  const DeviceIdentity& identity() const override { return cpu_.identity(); }
  Clock& clock() override { return cpu_.clock(); }
  Evictor* evictor() override { return cpu_.evictor(); }
  std::unique_ptr<Trial> make_trial(Workload& workload, std::size_t index) override {
    return cpu_.make_trial(workload, index);
  }
  Workers workers() const override { return Workers::spawned; }
  std::optional<DeviceReopen> reopen() const override { return DeviceReopen{"cpu", "", ""}; }

 private:
  cpu::CpuDevice cpu_;
};

std::string op_name(const std::vector<std::string>& hostile) {
  std::string name = "hostile:";
  for (const auto& h : hostile) name += h + ",";
  return name;
}

TunerOptions spawned(std::string program = TUNEKIT_HOSTILE_TRIAL_WORKER) {
  TunerOptions o;
  o.measure.isolation.mode = IsolationOptions::Mode::worker;
  o.measure.isolation.worker_program = std::move(program);
  o.measure.isolation.limit_seconds = 5;
  o.measure.isolation.floor_seconds = 1;
  o.decide.confirm_pairs = 0;
  o.measure.timing.contended_fraction = 1.0;  // classification, not speed, on a noisy machine
  o.measure.timing.hopeless_ratio = 1e6;
  return o;
}

TEST(SpawnedWorker, CrashesHangsAndThrowsAreClassifiedAndTheHostSurvives) {
  SpawningDevice device;
  const std::vector<std::string> hostile{"segfault", "abort", "hang", "throw_42", "scribble"};
  auto op = hostile_op(hostile, op_name(hostile));
  Tuner tuner(device, spawned());
  TuneReport r;
  tuner.select(*op, Key{{"n", 64}}, &r);
  EXPECT_EQ(r.isolation, std::string("worker (spawned: ") + TUNEKIT_HOSTILE_TRIAL_WORKER + ")");
  EXPECT_EQ(candidate_named(r, "segfault").outcome.status, Status::crashed)
      << candidate_named(r, "segfault").outcome.message;
  EXPECT_EQ(candidate_named(r, "abort").outcome.status, Status::crashed);
  EXPECT_EQ(candidate_named(r, "hang").outcome.status, Status::timed_out)
      << candidate_named(r, "hang").outcome.message;
  EXPECT_EQ(candidate_named(r, "throw_42").outcome.status, Status::launch_failed);
  EXPECT_EQ(candidate_named(r, "scribble").outcome.status, Status::crashed);
  for (const char* correct : {"default", "good", "late"})
    EXPECT_EQ(candidate_named(r, correct).outcome.status, Status::ok)
        << correct << ": " << candidate_named(r, correct).outcome.message;
  EXPECT_TRUE(r.winner_name == "good" || r.winner_name == "default" || r.winner_name == "late")
      << r.winner_name;
}

// The worker makes its own inputs and restores them before every phase: a candidate that
// clobbers them, or is wrong one call in five, fails there and harms no other.
TEST(SpawnedWorker, ValidationHoldsOnTheWorkersOwnInputs) {
  SpawningDevice device;
  const std::vector<std::string> hostile{"flaky_nan", "clobber", "wrong_on_set_2"};
  auto op = hostile_op(hostile, op_name(hostile));
  TunerOptions o = spawned();
  o.measure.check_every_candidate = true;  // each liar checked, whatever it reads
  Tuner tuner(device, o);
  TuneReport r;
  tuner.select(*op, Key{{"n", 64}}, &r);
  EXPECT_EQ(candidate_named(r, "flaky_nan").outcome.status, Status::validation_failed)
      << candidate_named(r, "flaky_nan").outcome.message;
  EXPECT_EQ(candidate_named(r, "clobber").outcome.status, Status::validation_failed)
      << candidate_named(r, "clobber").outcome.message;
  // The worker validates on every input set the host does.
  const Outcome& second = candidate_named(r, "wrong_on_set_2").outcome;
  EXPECT_EQ(second.status, Status::validation_failed) << second.message;
  EXPECT_NE(second.message.find("input set 2"), std::string::npos) << second.message;
  EXPECT_EQ(candidate_named(r, "late").outcome.status, Status::ok)
      << candidate_named(r, "late").outcome.message;
}

// A replacement worker that cannot set up (a candidate left the device unusable) fails the
// phase it was started for, after one more try; the search goes on and is not aborted.
TEST(SpawnedWorker, AReplacementThatCannotSetUpFailsItsPhaseNotTheSearch) {
  TempDir dir;
  const std::string marker = (dir / "broken").string();
  ::setenv("TUNEKIT_TEST_BROKEN_DEVICE", marker.c_str(), 1);
  SpawningDevice device;
  const std::vector<std::string> hostile{"break_device"};
  auto op = hostile_op(hostile, op_name(hostile));
  Tuner tuner(device, spawned());
  TuneReport r;
  tuner.select(*op, Key{{"n", 64}}, &r);
  ::unsetenv("TUNEKIT_TEST_BROKEN_DEVICE");
  EXPECT_EQ(candidate_named(r, "break_device").outcome.status, Status::crashed);
  const Outcome& late = candidate_named(r, "late").outcome;
  EXPECT_EQ(late.status, Status::launch_failed) << late.message;
  EXPECT_NE(late.message.find("could not set up: the device is broken"), std::string::npos)
      << late.message;
  EXPECT_EQ(candidate_named(r, "good").outcome.status, Status::ok);
}

// A caller's stop() that never fires, and no budget: the worker gets no stop time and every
// window runs in full (nothing is `stopped`).
TEST(SpawnedWorker, ACallersStopWithoutABudgetCutsNothing) {
  SpawningDevice device;
  auto op = hostile_op({}, op_name({}));
  TunerOptions o = spawned();
  o.measure.timing.stop = [] { return false; };
  Tuner tuner(device, o);
  TuneReport r;
  tuner.select(*op, Key{{"n", 64}}, &r);
  for (const char* name : {"default", "good", "late"})
    EXPECT_EQ(candidate_named(r, name).outcome.status, Status::ok)
        << name << ": " << candidate_named(r, name).outcome.message;
}

// Opt-in: 'automatic' runs a spawning device's trials in process.
TEST(SpawnedWorker, AutomaticRunsInProcess) {
  SpawningDevice device;
  auto op = hostile_op({}, op_name({}));
  TunerOptions o = spawned();
  o.measure.isolation.mode = IsolationOptions::Mode::automatic;
  Tuner tuner(device, o);
  TuneReport r;
  tuner.select(*op, Key{{"n", 64}}, &r);
  EXPECT_EQ(r.isolation, "in_process");
}

std::string usage_error_of(const OpBase& op, const TunerOptions& options) {
  SpawningDevice device;
  Tuner tuner(device, options);
  try {
    TuneReport r;
    tuner.select(op, Key{{"n", 64}}, &r);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "no UsageError";
}

TEST(SpawnedWorker, AWorkerThatCannotServeIsAUsageErrorSayingWhy) {
  const std::vector<std::string> hostile{"abort"};
  auto op = hostile_op(hostile, op_name(hostile));

  std::string e = usage_error_of(*op, spawned(""));
  EXPECT_NE(e.find("TUNEKIT_WORKER_PROGRAM"), std::string::npos) << e;

  e = usage_error_of(*op, spawned("tunekit"));  // never looked up in PATH
  EXPECT_NE(e.find("'tunekit' is not a path"), std::string::npos) << e;

  e = usage_error_of(*op, spawned("/nonexistent/trial-worker"));
  EXPECT_NE(e.find("/nonexistent/trial-worker could not be started"), std::string::npos) << e;
  EXPECT_NE(e.find("in_process"), std::string::npos) << e;

  // An op the program does not have: its own words.
  auto unknown = hostile_op(hostile, "another op");
  e = usage_error_of(*unknown, spawned());
  EXPECT_NE(e.find("could not set up: no op another op here"), std::string::npos) << e;

  // The program makes an op of the same name with other candidates: refused by checksum.
  auto other = hostile_op({"segfault"}, op_name(hostile));
  e = usage_error_of(*other, spawned());
  EXPECT_NE(e.find("is not the host's"), std::string::npos) << e;

  // A host hook cannot run in another program.
  TunerOptions with_hook = spawned();
  with_hook.measure.timing.on_call = [](const TimingResult&) {};
  e = usage_error_of(*op, with_hook);
  EXPECT_NE(e.find("on_call"), std::string::npos) << e;
  // Nor an evictor of the caller's (the worker would use the device's instead, silently).
  cpu::CacheEvictor evictor(1 << 20);
  TunerOptions with_evictor = spawned();
  with_evictor.measure.timing.evictor = &evictor;
  e = usage_error_of(*op, with_evictor);
  EXPECT_NE(e.find("evictor"), std::string::npos) << e;
}

}  // namespace
}  // namespace tunekit::testing
