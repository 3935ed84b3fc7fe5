// Tests for src/interop/recording_import.cpp: a Kernel Tuner cache file as a stored choice
// with its evidence, and the T4 reader on real-shaped files.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "fakes/datasets.hpp"
#include "fakes/hostile_files.hpp"
#include "fakes/temp_dir.hpp"
#include "store/evidence_codec.hpp"
#include "tunekit/errors.hpp"
#include "tunekit/interop.hpp"

namespace tunekit {
namespace {

using testing::datasets;

namespace fs = std::filesystem;

using testing::TempDir;

TEST(RecordingImport, ASharedDatasetBecomesAStoredChoiceWithEveryConfiguration) {
  REQUIRE_DATASETS();
  const Recording r = Recording::load(datasets() / "convolution_milo/A100.json.gz");
  const ImportedRecording imported = import_recording(r);
  EXPECT_EQ(imported.configurations, 4362u);
  EXPECT_EQ(imported.valid, 4201u);
  EXPECT_NEAR(imported.best_ms, 0.5536, 1e-4);
  const StoredChoice& c = imported.choice;
  EXPECT_EQ(c.op, "kt:convolution_kernel");
  EXPECT_EQ(c.key, "x=4096,y=4096");
  EXPECT_EQ(c.winner, r.space().config(*r.best()).text());
  EXPECT_EQ(c.winner_config, c.winner);
  EXPECT_EQ(c.device.backend, "kt");
  EXPECT_EQ(c.device.product, "NVIDIA A100-PCIE-40GB");
  const nlohmann::json evidence = nlohmann::json::parse(detail::evidence_text(c.evidence, {}));
  ASSERT_EQ(evidence.size(), 4362u);
  std::size_t compile = 0, runtime = 0, winners = 0;
  for (const auto& e : evidence) {
    compile += e["status"] == "compile_failed";
    runtime += e["status"] == "launch_failed";
    winners += e["winner"].get<bool>();
    if (e["winner"].get<bool>()) {
      EXPECT_NEAR(e["score"].get<double>() * 1000, 0.5536, 1e-4);
      EXPECT_EQ(e["timing"]["samples"].size(), 32u);
    }
  }
  EXPECT_EQ(compile, 6u);
  EXPECT_EQ(runtime, 155u);
  EXPECT_EQ(winners, 1u);
  // Another recording of the same kernel on another device is another identity.
  const Recording other = Recording::load(datasets() / "convolution_milo/A4000.json.gz");
  EXPECT_NE(import_recording(other).choice.identity_digest, c.identity_digest);
}

TEST(RecordingImport, StoredAndListed) {
  TempDir dir;
  const Enumeration space = Space().param("b", {32, 64}).enumerate();
  std::vector<RecordedResult> results(2);
  results[0].time_ms = 3;
  results[1].time_ms = 2;
  const Recording r = Recording::from_results(space, std::move(results), "", "k", {100});
  const ImportedRecording imported = import_recording(r);
  EXPECT_EQ(imported.choice.winner, "b=64");
  auto store = open_store("sqlite:" + (dir.path() / "s.db").string(), {});
  ASSERT_TRUE(store);
  store->put(imported.choice);
  const auto listed = store->list("kt:k");
  ASSERT_EQ(listed.size(), 1u);
  EXPECT_EQ(listed[0].key, "x=100");
  EXPECT_EQ(detail::evidence_text(listed[0].evidence, listed[0].search),
            detail::evidence_text(imported.choice.evidence, imported.choice.search));
}

TEST(RecordingImport, NothingValidIsAnError) {
  const Enumeration space = Space().param("b", {32}).enumerate();
  std::vector<RecordedResult> results(1);
  results[0].status = Status::compile_failed;
  EXPECT_THROW(import_recording(Recording::from_results(space, std::move(results))), UsageError);
}

// Shaped as Kernel Tuner's store_output_file writes T4 (kernel_tuner/file_utils.py): timings
// under "compilation", "benchmark", "framework", "search_algorithm", "validation", "runtimes";
// "correct" for a valid result; a failed one keeps its error string as the time measurement.
TEST(RecordingImport, ReadsT4AsKernelTunerWritesIt) {
  TempDir dir;
  const fs::path file = dir.write("kt_t4.json", R"({"results": [
    {"timestamp": "2023-12-22 09:54:05.502007+00:00",
     "configuration": {"block_size_x": 16, "tile_size_x": 1},
     "times": {"compilation": 918.6, "benchmark": 126.4, "framework": 105.2,
               "search_algorithm": 0, "validation": 0, "runtimes": [3.8, 3.9, 3.95]},
     "invalidity": "correct", "correctness": 1,
     "measurements": [{"name": "time", "value": 3.875, "unit": "ms"},
                      {"name": "GFLOP/s", "value": 1948.2, "unit": ""}],
     "objectives": ["time"]},
    {"timestamp": "2023-12-22 09:54:06.0+00:00",
     "configuration": {"block_size_x": 32, "tile_size_x": 1},
     "times": {"compilation": 12.0, "benchmark": 0, "framework": 1, "search_algorithm": 0,
               "validation": 0, "runtimes": []},
     "invalidity": "compile", "correctness": 1,
     "measurements": [{"name": "time", "value": "CompilationFailedConfig", "unit": "ms"}],
     "objectives": ["time"]}],
    "schema_version": "1.0.0"})");
  const Recording r = Recording::load(file);
  ASSERT_EQ(r.size(), 2u);
  const std::size_t ok = *r.space().index_of(Config{{"block_size_x", 16}, {"tile_size_x", 1}});
  EXPECT_DOUBLE_EQ(r.result(ok).time_ms, 3.875);
  EXPECT_EQ(r.result(ok).times_ms.size(), 3u);
  EXPECT_DOUBLE_EQ(r.result(ok).compile_ms, 918.6);
  EXPECT_DOUBLE_EQ(r.result(ok).benchmark_ms, 126.4);
  EXPECT_EQ(r.result(1 - ok).status, Status::compile_failed);
  EXPECT_TRUE(r.problem_size().empty());
}

// Shaped as the T4 results schema names things (results-schema.json): "compilation_time",
// "timeout", and an objective other than time.
TEST(RecordingImport, ReadsT4AsTheSchemaNamesIt) {
  TempDir dir;
  const fs::path file = dir.write("schema_t4.json", R"({"schema_version": "1.0.0", "results": [
    {"configuration": {"w": 4}, "times": {"compilation_time": 7, "runtimes": [2, 4]},
     "invalidity": "correct", "correctness": 1, "objectives": ["energy"],
     "measurements": [{"name": "time", "value": 3, "unit": "ms"},
                      {"name": "energy", "value": 0.25, "unit": "J"}]},
    {"configuration": {"w": 8}, "times": {"compilation_time": 9}, "invalidity": "timeout",
     "correctness": 0},
    {"configuration": {"w": 16}, "times": {"runtimes": [5, 7]}, "invalidity": "correct",
     "correctness": 1}]})");
  const Recording r = Recording::load(file);
  ASSERT_EQ(r.size(), 3u);
  const auto at = [&](int w) { return r.result(*r.space().index_of(Config{{"w", w}})); };
  EXPECT_DOUBLE_EQ(at(4).time_ms, 0.25);  // the declared objective
  EXPECT_DOUBLE_EQ(at(4).compile_ms, 7);
  EXPECT_EQ(at(8).status, Status::timed_out);
  EXPECT_DOUBLE_EQ(at(16).time_ms, 6);  // no measurement: the mean of the runtimes
}

TEST(RecordingImport, CorruptFilesAreClearErrors) {
  TempDir dir;
  const std::pair<const char*, const char*> bad[] = {
      {"truncated.json", R"({"tune_params_keys": ["a"], "tune_params": {"a": [1]}, "cache": {)"},
      {"null_time.json",
       R"({"tune_params_keys": ["a"], "tune_params": {"a": [1]}, "cache": {"1": {"a": 1, "time": null}}})"},
      {"negative.json",
       R"({"tune_params_keys": ["a"], "tune_params": {"a": [1]}, "cache": {"1": {"a": 1, "time": -1}}})"},
      {"unlisted.json",
       R"({"tune_params_keys": ["a"], "tune_params": {"a": [1]}, "cache": {"2": {"a": 2, "time": 1}}})"},
      {"keys_not_list.json", R"({"tune_params_keys": 3, "tune_params": {}, "cache": {}})"},
      {"t4_ragged.json",
       R"({"results": [{"configuration": {"a": 1}, "times": {"runtimes": [1]}, "invalidity": "correct"},
                       {"configuration": {"a": 2, "b": 1}, "times": {}, "invalidity": "compile"}]})"},
      {"t4_no_time.json",
       R"({"results": [{"configuration": {"a": 1}, "times": {}, "invalidity": "correct"}]})"},
      {"array.json", "[1, 2]"},
      {"huge_value.json",
       R"({"tune_params_keys": ["a"], "tune_params": {"a": [18446744073709551615]},
           "cache": {"18446744073709551615": {"a": 18446744073709551615, "time": 1}}})"},
      {"gzip_garbage.json.gz", "\x1f\x8b garbage"},
  };
  for (const auto& [name, text] : bad) {
    const fs::path file = dir.write(name, text);
    try {
      Recording::load(file);
      ADD_FAILURE() << name << " was accepted";
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find(name), std::string::npos) << e.what();
    }
  }
}

using testing::error_within;
using testing::gzipped_zeros;

// Bounded: a FIFO or a device that blocks or never ends must fail the test, not hang it.
std::string load_error(const fs::path& file) {
  const std::string m = error_within(std::chrono::seconds(30), [file] { Recording::load(file); });
  EXPECT_NE(m, "blocked") << "Recording::load(" << file << ") blocked";
  EXPECT_NE(m, "") << file << " was accepted";
  return m;
}

TEST(RecordingImport, AFifoIsRefusedWithoutBlocking) {
  TempDir dir;
  ASSERT_EQ(::mkfifo((dir / "cache.json").c_str(), 0600), 0);
  EXPECT_NE(load_error(dir / "cache.json").find("FIFO"), std::string::npos);
}

TEST(RecordingImport, ASymlinkToADeviceOrADirectoryIsRefused) {
  TempDir dir;
  fs::create_symlink("/dev/zero", dir / "zero.json");
  EXPECT_NE(load_error(dir / "zero.json").find("character device"), std::string::npos);
  fs::create_directories(dir / "dir.json");
  EXPECT_NE(load_error(dir / "dir.json").find("directory"), std::string::npos);
}

TEST(RecordingImport, AnOversizeFileIsRefusedNamingSizeAndCap) {
  TempDir dir;
  const fs::path file = dir.write("big.json", "{");
  fs::resize_file(file, (std::size_t{128} << 20) + 1);  // sparse: costs no disk
  const std::string m = load_error(file);
  EXPECT_NE(m.find(std::to_string((std::size_t{128} << 20) + 1) + " bytes"), std::string::npos)
      << m;
  EXPECT_NE(m.find("cap"), std::string::npos) << m;
}

TEST(RecordingImport, AGzipBombIsRefused) {
  TempDir dir;
  // 160 MiB of zeros behind a KT-looking head: a few hundred KB on disk.
  const std::string bomb = gzipped_zeros(std::size_t{160} << 20, R"({"cache": {"x": ")");
  ASSERT_LT(bomb.size(), std::size_t{1} << 20);
  const std::string m = load_error(dir.write("bomb.json.gz", bomb));
  EXPECT_NE(m.find("gzip bomb"), std::string::npos) << m;
  EXPECT_NE(m.find("bomb.json.gz"), std::string::npos) << m;
}

TEST(RecordingImport, ATruncatedGzipIsRefused) {
  TempDir dir;
  const std::string whole = gzipped_zeros(std::size_t{4} << 20);
  const std::string m = load_error(dir.write("cut.json.gz", whole.substr(0, whole.size() / 2)));
  EXPECT_NE(m.find("truncated"), std::string::npos) << m;
}

}  // namespace
}  // namespace tunekit
