// Tests for src/backends/replay/recording.cpp (Recording, ReplayBackend) on the shared
// recorded GPU spaces.
#include "tunekit/replay.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>

#include <nlohmann/json.hpp>

#include "fakes/datasets.hpp"
#include "fakes/recordings.hpp"
#include "tunekit/errors.hpp"
#include "tunekit/strategy.hpp"

namespace tunekit {
namespace {

using testing::datasets;

using testing::convolution_a100;

TEST(Recording, LoadsAKernelTunerCacheFile) {
  REQUIRE_DATASETS();
  const Recording& r = convolution_a100();
  EXPECT_EQ(r.size(), 4362u);
  EXPECT_EQ(r.valid_count(), 4201u);
  EXPECT_EQ(r.device_name(), "NVIDIA A100-PCIE-40GB");
  EXPECT_NEAR(r.optimum_ms(), 0.5536, 1e-4);
  std::size_t compile = 0, runtime = 0;
  for (std::size_t i = 0; i < r.size(); ++i) {
    compile += r.result(i).status == Status::compile_failed;
    runtime += r.result(i).status == Status::launch_failed;
  }
  EXPECT_EQ(compile, 6u);
  EXPECT_EQ(runtime, 155u);
  // The recorded configurations are exactly the T1 space's enumeration.
  const Enumeration t1 = read_t1_space(datasets() / "spaces/convolution_milo.json").enumerate();
  ASSERT_EQ(t1.size(), r.space().size());
  for (std::size_t i = 0; i < t1.size(); ++i) ASSERT_TRUE(r.space().index_of(t1.config(i)));
}

TEST(ReplayBackend, SamplesComeFromTimesAndChargeTheRecordedCost) {
  REQUIRE_DATASETS();
  const Recording& r = convolution_a100();
  ReplayBackend a(r, 42), b(r, 42);
  double charged = 0;
  for (std::size_t i = 0; i < r.size(); i += 97) {
    const ReplayMeasurement m = a.measure(i);
    EXPECT_EQ(m.status, r.result(i).status);
    charged += r.result(i).charge_ms();
    EXPECT_DOUBLE_EQ(m.charged_ms, r.result(i).charge_ms());
    if (m.ok()) {
      const auto& times = r.result(i).times_ms;
      EXPECT_NE(std::find(times.begin(), times.end(), m.time_ms), times.end());
      EXPECT_DOUBLE_EQ(m.recorded_ms, r.result(i).time_ms);
    }
    EXPECT_EQ(b.measure(i).time_ms, m.time_ms);  // same seed, same samples
  }
  EXPECT_NEAR(a.clock_ms(), charged, 1e-6);
  EXPECT_EQ(a.measure(Config{{"block_size_x", 7}}).status, Status::rejected);
}

TEST(ReplayBackend, ExhaustiveReplayFindsTheFilesMinimum) {
  REQUIRE_DATASETS();
  // Every shared file: the replay smoke test (tests/CMakeLists.txt) runs the CLI on all of them.
  {
    const Recording& r = convolution_a100();
    ReplayBackend backend(r, 1);
    std::unique_ptr<Strategy> s = StrategyRegistry::builtin().make("exhaustive");
    const SearchResult result = search(
        r.space(), *s,
        [&](std::size_t i) {
          const ReplayMeasurement m = backend.measure(i);
          return ObjectiveResult{m.status, m.recorded_ms, m.charged_ms / 1000, m.message};
        },
        Budget{}, 1);
    ASSERT_NE(result.history.best(), nullptr);
    EXPECT_EQ(result.history.size(), r.size());
    EXPECT_EQ(result.history.best()->value, r.optimum_ms());
  }
}

TEST(Recording, ClblastSpaceEnumeratesToTheFilesConfigs) {
  REQUIRE_DATASETS();
  const Recording r = Recording::load(datasets() / "gemm_clblast/RTX_Titan.json.gz");
  ASSERT_EQ(r.size(), 17956u);
  // The file's tune_params value lists under the first seven conditions of gemm_milo.json.
  std::ifstream in(datasets() / "spaces/gemm_milo.json");
  const nlohmann::json doc = nlohmann::json::parse(in);
  Space space;
  for (const Parameter& p : r.space().parameters()) space.param(p.name, p.values);
  const auto& conditions = doc["ConfigurationSpace"]["Conditions"];
  for (std::size_t i = 0; i < 7; ++i)
    space.constraint(conditions[i]["Expression"].get<std::string>());
  const auto start = std::chrono::steady_clock::now();
  const Enumeration e = space.enumerate();
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  RecordProperty("enumerate_ms", std::to_string(ms));
  std::cout << "CLBlast space: " << e.size() << " configurations enumerated in " << ms << " ms\n";
  ASSERT_EQ(e.size(), 17956u);
  for (std::size_t i = 0; i < e.size(); ++i) ASSERT_TRUE(r.space().index_of(e.config(i)));
}

TEST(Recording, ReadsT4AndRejectsGarbage) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "tunekit_t4_test";
  std::filesystem::create_directories(dir);
  {
    std::ofstream out(dir / "t4.json");
    out << R"({"schema_version": "1.0.0", "results": [
      {"configuration": {"x": 1, "y": "a"}, "invalidity": "correct",
       "measurements": [{"name": "time", "value": 2.0, "unit": "ms"}],
       "times": {"compilation": 10, "runtimes": [1.5, 2.5], "validation": 1}},
      {"configuration": {"x": 2, "y": "a"}, "invalidity": "compile", "times": {"compilation": 4}}]})";
  }
  const Recording r = Recording::load(dir / "t4.json");
  EXPECT_EQ(r.format(), Recording::Format::t4);
  ASSERT_EQ(r.size(), 2u);
  const std::size_t ok = *r.space().index_of(Config{{"x", 1}, {"y", "a"}});
  EXPECT_EQ(r.result(ok).time_ms, 2.0);
  EXPECT_DOUBLE_EQ(r.result(ok).charge_ms(), 10 + 4 + 1);
  EXPECT_EQ(r.result(1 - ok).status, Status::compile_failed);
  {
    std::ofstream out(dir / "bad.json");
    out << "{not json";
  }
  EXPECT_THROW(Recording::load(dir / "bad.json"), UsageError);
  EXPECT_THROW(Recording::load(dir / "missing.json"), UsageError);
  std::filesystem::remove_all(dir);
}

TEST(Recording, KeepsTheOrderTheFileListsItsConfigurationsIn) {
  // A Kernel Tuner cache lists its configurations in the order the run evaluated them (and
  // nlohmann::json would sort the keys); a T4 file's results are a list.
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / "tunekit_recording_order_test";
  std::filesystem::create_directories(dir);
  {
    std::ofstream out(dir / "kt.json");
    out << R"({"tune_params_keys": ["x"], "tune_params": {"x": [1, 2, 3, 10]},
      "cache": {
        "3": {"x": 3, "time": 3.0, "compile_time": 30},
        "10": {"x": 10, "time": 1.0, "compile_time": 100},
        "1": {"x": 1, "time": "CompilationFailedConfig", "compile_time": 10},
        "2": {"x": 2, "time": 2.0, "compile_time": 20}}})";
  }
  {
    std::ofstream out(dir / "t4.json");
    out << R"({"results": [
      {"configuration": {"x": 2}, "measurements": [{"name": "time", "value": 2.0}]},
      {"configuration": {"x": 10}, "measurements": [{"name": "time", "value": 1.0}]},
      {"configuration": {"x": 1}, "measurements": [{"name": "time", "value": 4.0}]}]})";
  }
  const auto listed = [](const Recording& r) {
    std::vector<std::int64_t> xs;
    for (std::size_t i : r.order()) xs.push_back(r.space().config(i).fields()[0].value.as_int());
    return xs;
  };
  const Recording kt = Recording::load(dir / "kt.json");
  EXPECT_EQ(listed(kt), (std::vector<std::int64_t>{3, 10, 1, 2}));
  EXPECT_EQ(kt.result(kt.order()[1]).compile_ms, 100);
  EXPECT_EQ(kt.result(kt.order()[2]).status, Status::compile_failed);
  EXPECT_EQ(kt.space().config(*kt.best()).text(), "x=10");
  const Recording t4 = Recording::load(dir / "t4.json");
  EXPECT_EQ(listed(t4), (std::vector<std::int64_t>{2, 10, 1}));
  // A parameter named "cache" inside an entry, or a nested object, does not disturb it.
  {
    std::ofstream out(dir / "nested.json");
    out << R"({"tune_params_keys": ["cache"], "tune_params": {"cache": [1, 2]},
      "meta": {"cache": {"9": 1}},
      "cache": {"2": {"cache": 2, "time": 1.0, "extra": {"1": 0}},
                "1": {"cache": 1, "time": 2.0}}})";
  }
  EXPECT_EQ(listed(Recording::load(dir / "nested.json")), (std::vector<std::int64_t>{2, 1}));
  std::filesystem::remove_all(dir);
}

TEST(Recording, FromResultsTakesAnOrderThatListsEveryConfigurationOnce) {
  const Enumeration space = Space().param("x", {1, 2, 3}).enumerate();
  const std::vector<RecordedResult> results(3);
  EXPECT_EQ(Recording::from_results(space, results).order(), (std::vector<std::size_t>{0, 1, 2}));
  EXPECT_EQ(Recording::from_results(space, results, {}, {}, {}, {2, 0, 1}).order(),
            (std::vector<std::size_t>{2, 0, 1}));
  for (const std::vector<std::size_t>& bad :
       std::vector<std::vector<std::size_t>>{{0, 1}, {0, 1, 1}, {0, 1, 3}, {0, 1, 2, 0}})
    EXPECT_THROW(Recording::from_results(space, results, {}, {}, {}, bad), UsageError);
}

}  // namespace
}  // namespace tunekit
