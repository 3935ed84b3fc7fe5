// Tests for src/backends/replay/replay_device.cpp: the replay backend as a Device the Tuner
// tunes over a recording's configurations, with a simulated clock.
#include <gtest/gtest.h>

#include <filesystem>

#include "fakes/datasets.hpp"
#include "fakes/recordings.hpp"
#include "tunekit/errors.hpp"
#include "tunekit/replay.hpp"
#include "tunekit/tuner.hpp"

namespace tunekit {
namespace {

using testing::datasets;

using testing::convolution_a100;

// Four configurations: a (2 ms), b (1 ms, the best), c (compile failure), d (3 ms).
Recording small() {
  const Enumeration space = Space().param("v", {"a", "b", "c", "d"}).enumerate();
  std::vector<RecordedResult> results(4);
  results[0].time_ms = 2;
  results[0].times_ms = {1.9, 2.1};
  results[0].compile_ms = 100;
  results[1].time_ms = 1;
  results[1].times_ms = {0.9, 1.1};
  results[1].compile_ms = 100;
  results[2].status = Status::compile_failed;
  results[2].failure = "CompilationFailedConfig";
  results[2].compile_ms = 50;
  results[3].time_ms = 3;
  results[3].times_ms = {3.0};
  return Recording::from_results(space, std::move(results), "Test GPU", "k", {64, 32});
}

TunerOptions exact_options() {
  TunerOptions o;
  o.decide.tie_band = 0;       // rank by the readings alone
  o.decide.confirm_pairs = 0;  // the readings are the recording: nothing to confirm against noise
  o.decide.strategy = "exhaustive";
  return o;
}

TEST(ReplayDevice, TrialsReadRecordedSamplesAndChargeTheSimulatedClock) {
  const Recording r = small();
  ReplayDevice device(r, {ReplayDeviceOptions::Reading::sample, 7});
  EXPECT_EQ(device.identity().backend, "replay");
  EXPECT_EQ(device.identity().product, "Test GPU");
  const auto op = make_replay_op(r);
  auto workload = op->make_workload(recording_key(r));
  auto trial = device.make_trial(*workload, 1);
  ASSERT_TRUE(trial->prepare().ok());
  EXPECT_DOUBLE_EQ(device.simulated_seconds(), 0.1);  // compile_ms charged
  for (int i = 0; i < 20; ++i) {
    device.clock().begin();
    trial->launch();
    trial->sync();
    const double s = device.clock().end();
    EXPECT_TRUE(s == 0.9e-3 || s == 1.1e-3) << s;
  }
  EXPECT_EQ(device.launches(), 20);
  auto failed = device.make_trial(*workload, 2);
  const Outcome o = failed->prepare();
  EXPECT_EQ(o.status, Status::compile_failed);
  EXPECT_NE(o.message.find("CompilationFailedConfig"), std::string::npos);
  EXPECT_THROW(device.make_trial(*workload, 4), UsageError);
}

TEST(ReplayDevice, TunerPicksTheRecordedBestAndReportsRecordedFailures) {
  const Recording r = small();
  ReplayDevice device(r, {ReplayDeviceOptions::Reading::recorded_time, 1});
  const auto op = make_replay_op(r);
  EXPECT_EQ(op->name(), "kt:k");
  EXPECT_EQ(recording_key(r).text(), "x=64,y=32");
  EXPECT_EQ(op->candidate(op->default_index(recording_key(r))).name, "v=a");
  Tuner tuner(device, exact_options());
  const TuneReport report = tuner.tune(*op, recording_key(r));
  EXPECT_EQ(report.source, Source::searched);
  EXPECT_EQ(report.winner_name, "v=b");
  EXPECT_EQ(report.candidates[2].outcome.status, Status::compile_failed);
  EXPECT_NEAR(report.winner_score, 1e-3, 1e-12);
  EXPECT_GT(device.simulated_seconds(), 0.25);  // three compiles of 100/100/50 ms and launches
}

TEST(ReplayDevice, OpNeedsAValidConfiguration) {
  const Enumeration space = Space().param("v", {1, 2}).enumerate();
  std::vector<RecordedResult> results(2);
  for (auto& x : results) x.status = Status::launch_failed;
  const Recording r = Recording::from_results(space, std::move(results));
  EXPECT_THROW(make_replay_op(r), UsageError);
}

TEST(ReplayDevice, ExhaustiveTuneOfASharedDatasetFindsTheFilesBest) {
  REQUIRE_DATASETS();
  const Recording& r = convolution_a100();
  ReplayDevice device(r, {ReplayDeviceOptions::Reading::recorded_time, 1});
  const auto op = make_replay_op(r);
  Tuner tuner(device, exact_options());
  const TuneReport report = tuner.tune(*op, recording_key(r));
  ASSERT_EQ(report.source, Source::searched);
  EXPECT_EQ(report.winner_name, r.space().config(*r.best()).text());
  EXPECT_NEAR(report.winner_score * 1000, r.optimum_ms(), 1e-9);
  std::size_t failed = 0;  // as recorded (others may be cut as hopeless: slower than the best)
  for (const CandidateReport& c : report.candidates)
    failed +=
        c.outcome.status == Status::compile_failed || c.outcome.status == Status::launch_failed;
  EXPECT_EQ(failed, r.size() - r.valid_count());
}

TEST(ReplayDevice, SampledReadingsAreSeededAndLandNearTheBest) {
  REQUIRE_DATASETS();
  const Recording& r = convolution_a100();
  auto run = [&](std::uint64_t seed) {
    ReplayDevice device(r, {ReplayDeviceOptions::Reading::sample, seed});
    const auto op = make_replay_op(r);
    TunerOptions o;
    o.decide.strategy = "exhaustive";  // every configuration: the pick is near the file's best
    Tuner tuner(device, o);
    const TuneReport report = tuner.tune(*op, recording_key(r));
    return std::make_pair(report.winner_name, device.simulated_seconds());
  };
  const auto a = run(3), b = run(3);
  EXPECT_EQ(a, b);
  // Medians of recorded samples and a 2 % tie band: the winner is near, not always at, the best.
  const std::size_t winner = *r.space().index_of(Config::parse(a.first));
  EXPECT_LE(r.result(winner).time_ms, 1.05 * r.optimum_ms());
}

}  // namespace
}  // namespace tunekit
