// End-to-end test of issue #11's "same seed → same trace through Tuner on ReplayDevice and
// through tunekit replay": the CLI's `runs[0].trace` (the configurations it evaluated, in
// order) equals the order of the candidates in the report of a Tuner built here by hand — a
// ReplayDevice reading recorded times, make_replay_op, the same strategy, schedule, seed and
// evaluation budget, no paired confirmation, the device's simulated seconds as the budget
// clock — not through replay_search, so the CLI and a hand-built tuner are shown to agree.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "fakes/datasets.hpp"
#include "integration/cli_runner.hpp"
#include "tunekit/replay.hpp"
#include "tunekit/tuner.hpp"

namespace tunekit {
namespace {

using testing::datasets;
using testing::parse_json;
using testing::run_cli_fresh;

std::string w6600_path() {
  return (datasets() / "convolution_milo/W6600.json.gz").string();
}

// Loaded once: parsing the file dominates these tests.
const Recording& w6600() {
  static const Recording r = Recording::load(w6600_path());
  return r;
}

struct Settings {
  std::string strategy;
  std::string schedule = "full";
  std::uint64_t seed = 7;
  std::size_t budget_evaluations = 40;
};

// The evaluated candidates, in the order of the hand-built tuner's report.
std::vector<std::size_t> tuner_trace(const Recording& recording, const Settings& run) {
  ReplayDeviceOptions device_options;
  device_options.reading = ReplayDeviceOptions::Reading::recorded_time;
  device_options.seed = run.seed;
  ReplayDevice device(recording, device_options);
  const std::unique_ptr<OpBase> op = make_replay_op(recording);
  TunerOptions options;
  options.persist.store = "none";
  options.decide.strategy = run.strategy;
  options.decide.schedule = run.schedule;
  options.decide.seed = run.seed;
  options.decide.budget_evaluations = run.budget_evaluations;
  options.decide.confirm_pairs = 0;
  options.measure.now = [&device] { return device.simulated_seconds(); };
  Tuner tuner(device, options);
  const TuneReport report = tuner.tune(*op, recording_key(recording));
  EXPECT_EQ(report.source, Source::searched) << report.reason;
  std::vector<std::size_t> trace;
  for (const CandidateReport& c : report.candidates) trace.push_back(c.index);
  return trace;
}

// runs[0].trace of `tunekit replay` on the same file with the same settings.
std::vector<std::size_t> cli_trace(const Settings& run) {
  const auto result = run_cli_fresh("replay --dataset " + w6600_path() + " --strategy " +
                                    run.strategy + " --schedule " + run.schedule +
                                    " --budget-evals " + std::to_string(run.budget_evaluations) +
                                    " --seed " + std::to_string(run.seed) + " --json");
  EXPECT_EQ(result.status, 0) << result.err;
  const nlohmann::json j = parse_json(result);
  std::vector<std::size_t> trace;
  if (!j.contains("runs") || j["runs"].empty()) {
    ADD_FAILURE() << "no runs in:\n" << result.out;
    return trace;
  }
  for (const auto& i : j["runs"][0]["trace"]) trace.push_back(i.get<std::size_t>());
  return trace;
}

class ReplayCliTrace : public ::testing::TestWithParam<Settings> {};

TEST_P(ReplayCliTrace, SameSeedGivesTheSameTraceAsAHandBuiltTuner) {
  REQUIRE_DATASETS();
  const Settings& run = GetParam();
  const std::vector<std::size_t> library = tuner_trace(w6600(), run);
  const std::vector<std::size_t> cli = cli_trace(run);
  // The default and at most the budget's evaluations beyond it.
  ASSERT_GE(library.size(), 2u);
  EXPECT_LE(library.size(), run.budget_evaluations + 1);
  EXPECT_EQ(cli, library);
  // Deterministic: the same again.
  EXPECT_EQ(tuner_trace(w6600(), run), library);
}

INSTANTIATE_TEST_SUITE_P(Strategies, ReplayCliTrace,
                         ::testing::Values(Settings{"random"}, Settings{"genetic"},
                                           Settings{"anneal"}, Settings{"genetic", "racing"}),
                         [](const ::testing::TestParamInfo<Settings>& param) {
                           return param.param.strategy + "_" + param.param.schedule;
                         });

TEST(ReplayCli, ADifferentSeedGivesADifferentRandomTrace) {
  REQUIRE_DATASETS();
  Settings a{"random"};
  Settings b{"random"};
  b.seed = 8;
  const std::vector<std::size_t> seven = cli_trace(a);
  const std::vector<std::size_t> eight = cli_trace(b);
  ASSERT_EQ(seven.size(), eight.size());
  EXPECT_NE(seven, eight);
  // Both start at the default; the points after it differ.
  ASSERT_FALSE(seven.empty());
  EXPECT_EQ(seven.front(), eight.front());
  EXPECT_EQ(tuner_trace(w6600(), b), eight);
}

}  // namespace
}  // namespace tunekit
