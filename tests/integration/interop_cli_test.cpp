// End-to-end tests of tunekit import-kt and --export-kt / --export-t4 (tune, replay): a Kernel
// Tuner cache file imported, then listed and shown by `tunekit cache`; exports read back by
// `tunekit replay`, in the order the run evaluated the configurations; bad files leave the
// store untouched.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "integration/cli_runner.hpp"

namespace {

namespace fs = std::filesystem;
using tunekit::testing::contains;
using tunekit::testing::parse_json;
using tunekit::testing::read_text;
using tunekit::testing::run_cli;
using tunekit::testing::TempDir;
using tunekit::testing::write_text;

// A small Kernel Tuner cache file: four configurations, one failed to compile.
constexpr const char* kCache = R"({
  "device_name": "Test GPU", "kernel_name": "vector_add", "problem_size": [1000000],
  "tune_params_keys": ["block_size_x", "vec"],
  "tune_params": {"block_size_x": [64, 128], "vec": [1, 2]},
  "objective": "time",
  "cache": {
    "64,1": {"block_size_x": 64, "vec": 1, "time": 2.0, "times": [1.9, 2.0, 2.1],
             "compile_time": 100, "verification_time": 0, "benchmark_time": 6},
    "64,2": {"block_size_x": 64, "vec": 2, "time": 1.5, "times": [1.5, 1.5, 1.5],
             "compile_time": 100, "verification_time": 0, "benchmark_time": 4.5},
    "128,1": {"block_size_x": 128, "vec": 1, "time": "CompilationFailedConfig",
              "compile_time": 50, "verification_time": 0, "benchmark_time": 0},
    "128,2": {"block_size_x": 128, "vec": 2, "time": 1.25, "times": [1.2, 1.25, 1.3],
              "compile_time": 100, "verification_time": 0, "benchmark_time": 3.75}}})";

class InteropCli : public ::testing::Test {
 protected:
  tunekit::testing::CliResult tunekit(const std::string& args) {
    return run_cli(args, dir_ / "cache", dir_.path());
  }
  std::string file(const std::string& name) const { return (dir_ / name).string(); }
  TempDir dir_;
};

TEST_F(InteropCli, ImportedCacheIsListedAndShown) {
  write_text(dir_ / "kt.json", kCache);
  const auto imported = tunekit("import-kt " + file("kt.json"));
  ASSERT_EQ(imported.status, 0) << imported.err;
  EXPECT_TRUE(contains(imported.out, "4 (3 valid, 1 failed: 1 compile_failed)")) << imported.out;
  EXPECT_TRUE(contains(imported.out, "1.25 ms at block_size_x=128,vec=2")) << imported.out;
  EXPECT_TRUE(contains(imported.out, "kt:vector_add x=1000000")) << imported.out;

  const auto ls = tunekit("cache ls --json");
  ASSERT_EQ(ls.status, 0) << ls.err;
  const auto entries = parse_json(ls);
  ASSERT_EQ(entries.size(), 1u) << ls.out;
  EXPECT_EQ(entries[0]["op"], "kt:vector_add");
  EXPECT_EQ(entries[0]["winner"], "block_size_x=128,vec=2");

  const auto show = tunekit("cache show x=1000000");
  ASSERT_EQ(show.status, 0) << show.err;
  EXPECT_TRUE(contains(show.out, "Test GPU (kt")) << show.out;
  EXPECT_TRUE(contains(show.out, "compile_failed")) << show.out;
  EXPECT_TRUE(contains(show.out, "block_size_x=128,vec=2 *")) << show.out;

  // Importing again replaces the entry, never duplicates it.
  const auto again = tunekit("import-kt " + file("kt.json") + " --json");
  ASSERT_EQ(again.status, 0) << again.err;
  EXPECT_EQ(parse_json(again)["replaced"], true);
  EXPECT_EQ(parse_json(tunekit("cache ls --json")).size(), 1u);
}

TEST_F(InteropCli, BadFilesAreClearErrorsAndLeaveTheStoreUntouched) {
  write_text(dir_ / "kt.json", kCache);
  ASSERT_EQ(tunekit("import-kt " + file("kt.json")).status, 0);
  const std::string before = read_text(dir_ / "cache" / "choices.db");
  const std::pair<const char*, std::string> bad[] = {
      {"truncated.json", std::string(kCache).substr(0, 200)},
      {"wrong_type.json", R"({"tune_params_keys": "a", "tune_params": {}, "cache": {}})"},
      {"all_failed.json",
       R"({"tune_params_keys": ["a"], "tune_params": {"a": [1]},
           "cache": {"1": {"a": 1, "time": "RuntimeFailedConfig"}}})"},
      {"empty.json", ""},
  };
  for (const auto& [name, text] : bad) {
    write_text(dir_ / name, text);
    const auto run = tunekit(std::string("import-kt ") + file(name));
    EXPECT_EQ(run.status, 2) << name << ": " << run.out;
    EXPECT_TRUE(contains(run.err, name)) << run.err;
  }
  const auto missing = tunekit("import-kt " + file("missing.json"));
  EXPECT_EQ(missing.status, 2);
  EXPECT_TRUE(contains(missing.err, "cannot read")) << missing.err;
  EXPECT_EQ(read_text(dir_ / "cache" / "choices.db"), before);
  EXPECT_EQ(parse_json(tunekit("cache ls --json")).size(), 1u);
}

TEST_F(InteropCli, StoreNonePrintsTheSummaryOnly) {
  write_text(dir_ / "kt.json", kCache);
  const auto run = tunekit("import-kt " + file("kt.json") + " --store none");
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_TRUE(contains(run.out, "not stored")) << run.out;
  EXPECT_FALSE(fs::exists(dir_ / "cache" / "choices.db"));
}

TEST_F(InteropCli, ReplayExportsReadBackWithTheSameBest) {
  write_text(dir_ / "kt.json", kCache);
  const auto run =
      tunekit("replay --dataset " + file("kt.json") + " --strategy exhaustive --json --export-kt " +
              file("out_kt.json") + " --export-t4 " + file("out_t4.json"));
  ASSERT_EQ(run.status, 0) << run.err;
  const auto original = parse_json(run);
  for (const char* exported : {"out_kt.json", "out_t4.json"}) {
    const auto back =
        tunekit("replay --dataset " + file(exported) + " --strategy exhaustive --json");
    ASSERT_EQ(back.status, 0) << back.err;
    const auto j = parse_json(back);
    EXPECT_EQ(j["configurations"], 4);
    EXPECT_EQ(j["optimum_ms"], original["optimum_ms"]);
    EXPECT_EQ(j["runs"][0]["best_config"], "block_size_x=128,vec=2");
    EXPECT_EQ(j["runs"][0]["failed"], 1);
  }
}

TEST_F(InteropCli, TuneExportsTheMeasuredCandidates) {
  const auto run = tunekit("tune sum --shape n=4096 --quiet --store none --json --export-kt " +
                           file("tune_kt.json") + " --export-t4 " + file("tune_t4.json"));
  ASSERT_EQ(run.status, 0) << run.err;
  const auto report = parse_json(run);
  std::size_t measured = 0;
  std::string measured_config;
  for (const auto& c : report["candidates"])
    if (c["status"] == "ok") ++measured, measured_config = c.value("config", "");
  for (const char* exported : {"tune_kt.json", "tune_t4.json"}) {
    const auto back =
        tunekit("replay --dataset " + file(exported) + " --strategy exhaustive --json");
    ASSERT_EQ(back.status, 0) << back.err;
    const auto j = parse_json(back);
    EXPECT_EQ(j["kernel"], "sum");
    if (measured == 1 && j["configurations"] == 1) {
      // A loaded machine (ASan in CI) cut every point but the default: a one-point space has
      // nothing to search, and the replay serves that point without an evaluation.
      EXPECT_EQ(j["runs"][0]["winner"], measured_config) << back.out;
      EXPECT_EQ(j["runs"][0]["fraction_of_optimum"], 1.0) << back.out;
      continue;
    }
    EXPECT_EQ(
        j["runs"][0]["evaluations"].get<std::size_t>() - j["runs"][0]["failed"].get<std::size_t>(),
        measured)
        << back.out;
  }
}

// A Kernel Tuner cache file of one parameter x = 1..n: x's time is (n + 1 - x) ms, compiles
// take 10 x ms, every seventh fails to compile.
std::string ramp_cache(int n) {
  nlohmann::ordered_json doc;
  doc["device_name"] = "Ramp GPU";
  doc["kernel_name"] = "ramp";
  doc["tune_params_keys"] = {"x"};
  doc["tune_params"]["x"] = nlohmann::ordered_json::array();
  for (int x = 1; x <= n; ++x) {
    doc["tune_params"]["x"].push_back(x);
    nlohmann::ordered_json entry;
    entry["x"] = x;
    if (x % 7 == 0) {
      entry["time"] = "CompilationFailedConfig";
    } else {
      entry["time"] = n + 1 - x;
      entry["times"] = {n + 1 - x};
    }
    entry["compile_time"] = 10 * x;
    entry["verification_time"] = 0;
    entry["benchmark_time"] = 1;
    doc["cache"][std::to_string(x)] = std::move(entry);
  }
  return doc.dump();
}

TEST_F(InteropCli, AOnePointSpaceReportsItsPointsRecordedTime) {
  // Nothing to search: the only point is served without an evaluation, and the run still says
  // what it costs (its recorded 1 ms, the optimum).
  write_text(dir_ / "one.json", ramp_cache(1));
  const auto run =
      tunekit("replay --dataset " + file("one.json") + " --strategy exhaustive --json");
  ASSERT_EQ(run.status, 0) << run.err;
  const auto j = parse_json(run);
  EXPECT_EQ(j["configurations"], 1);
  EXPECT_EQ(j["runs"][0]["best_ms"], 1.0) << run.out;
  EXPECT_EQ(j["runs"][0]["fraction_of_optimum"], 1.0) << run.out;
  EXPECT_EQ(j["runs"][0]["best_config"], "x=1") << run.out;
}

TEST_F(InteropCli, ReplayExportsAreInEvaluationOrderWithTheRecordedCompileTimes) {
  write_text(dir_ / "ramp.json", ramp_cache(60));
  const auto run = tunekit("replay --dataset " + file("ramp.json") +
                           " --strategy random --budget-evals 25 --seed 4 --json --export-kt " +
                           file("out_kt.json") + " --export-t4 " + file("out_t4.json"));
  ASSERT_EQ(run.status, 0) << run.err;
  // The space is x = 1..60 in order: configuration i is x = i + 1.
  const auto result = parse_json(run);
  std::vector<int> evaluated;
  for (const auto& i : result["runs"][0]["trace"]) evaluated.push_back(i.get<int>() + 1);
  ASSERT_EQ(evaluated.size(), 26u);  // the default and 25 more
  ASSERT_FALSE(std::is_sorted(evaluated.begin(), evaluated.end()));
  const auto listed = [&](const char* name) {
    const nlohmann::ordered_json doc = nlohmann::ordered_json::parse(read_text(dir_ / name));
    std::vector<int> xs;
    if (doc.contains("cache")) {
      for (const auto& [key, entry] : doc["cache"].items()) {
        EXPECT_EQ(key, std::to_string(entry["x"].get<int>()));
        const int x = entry["x"].get<int>();
        EXPECT_EQ(entry["compile_time"], 10 * x) << key;
        EXPECT_EQ(entry["time"] == "CompilationFailedConfig", x % 7 == 0) << key;
        xs.push_back(x);
      }
    } else {
      for (const auto& entry : doc["results"]) {
        const int x = entry["configuration"]["x"].get<int>();
        EXPECT_EQ(entry["times"]["compilation_time"], 10 * x);
        EXPECT_EQ(entry["times"]["compilation"], 10 * x);
        EXPECT_EQ(entry["invalidity"], x % 7 == 0 ? "compile" : "correct");
        xs.push_back(x);
      }
    }
    return xs;
  };
  EXPECT_EQ(listed("out_kt.json"), evaluated);
  EXPECT_EQ(listed("out_t4.json"), evaluated);
  // Both read back: the evaluated configurations and their best.
  for (const char* exported : {"out_kt.json", "out_t4.json"}) {
    const auto back =
        tunekit("replay --dataset " + file(exported) + " --strategy exhaustive --json");
    ASSERT_EQ(back.status, 0) << back.err;
    const auto j = parse_json(back);
    EXPECT_EQ(j["configurations"], 26);
    const int best = *std::max_element(evaluated.begin(), evaluated.end(), [](int a, int b) {
      return (a % 7 == 0 ? 0 : a) < (b % 7 == 0 ? 0 : b);
    });
    EXPECT_EQ(j["runs"][0]["best_config"], "x=" + std::to_string(best)) << exported;
  }
}

TEST_F(InteropCli, TuneExportsAreInTheReportsOrder) {
  const auto run = tunekit(
      "tune sum --shape n=4096 --quiet --store none --json --strategy random --seed 3 "
      "--export-kt " +
      file("tune_kt.json") + " --export-t4 " + file("tune_t4.json"));
  ASSERT_EQ(run.status, 0) << run.err;
  const auto report = parse_json(run);
  const nlohmann::ordered_json kt = nlohmann::ordered_json::parse(read_text(dir_ / "tune_kt.json"));
  const nlohmann::ordered_json t4 = nlohmann::ordered_json::parse(read_text(dir_ / "tune_t4.json"));
  // The files name a candidate by its config when the recorded candidates share its parameters
  // (which depends on which ones a loaded machine cut as hopeless), else by its name.
  ASSERT_TRUE(kt.contains("tune_params_keys")) << kt.dump();
  std::vector<std::string> keys;
  for (const auto& k : kt.at("tune_params_keys")) keys.push_back(k.get<std::string>());
  const bool by_name = keys == std::vector<std::string>{"candidate"};
  const auto config_text = [&](const nlohmann::ordered_json& values) {
    std::string text;
    for (const auto& k : keys) {
      const auto& v = values.at(k);
      text +=
          (text.empty() ? "" : ",") + k + "=" + (v.is_string() ? v.get<std::string>() : v.dump());
    }
    return text;
  };
  // The candidates the files can record (measured, or failed classified), in report order.
  std::vector<std::string> evaluated;
  for (const auto& c : report.at("candidates")) {
    const std::string status = c.at("status");
    if (status != "hopeless" && status != "skipped" && status != "stopped" &&
        status != "not_measured" && status != "refused")
      evaluated.push_back(by_name ? "candidate=" + c.at("name").get<std::string>()
                                  : c.at("config").get<std::string>());
  }
  ASSERT_FALSE(evaluated.empty());
  EXPECT_EQ(report.at("candidates")[0].at("is_default"), true);
  std::vector<std::string> kt_listed, t4_listed;
  for (const auto& [key, entry] : kt.at("cache").items()) kt_listed.push_back(config_text(entry));
  for (const auto& entry : t4.at("results"))
    t4_listed.push_back(config_text(entry.at("configuration")));
  EXPECT_EQ(kt_listed, evaluated);
  EXPECT_EQ(t4_listed, evaluated);
}

// A planted Kernel Tuner file's names reach the terminal escaped (tunekit::terminal_safe), in the
// summary and in error messages alike.
TEST_F(InteropCli, EscapeSequencesInAFileNeverReachTheTerminal) {
  std::string hostile = kCache;
  hostile.replace(hostile.find("Test GPU"), 8, "Evil\\u001b]0;owned\\u0007\\u001b[2J GPU");
  write_text(dir_ / "kt.json", hostile);
  const auto run = tunekit("import-kt " + file("kt.json") + " --store none");
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_EQ(run.out.find('\x1b'), std::string::npos) << run.out;
  EXPECT_TRUE(contains(run.out, "Evil\\x1b]0;owned\\x07\\x1b[2J GPU")) << run.out;
  const auto json_run = tunekit("import-kt " + file("kt.json") + " --store none --json");
  ASSERT_EQ(json_run.status, 0) << json_run.err;
  EXPECT_EQ(parse_json(json_run)["device"], "Evil\x1b]0;owned\x07\x1b[2J GPU");

  std::string bad = kCache;  // a key name the entries lack: the error quotes it
  bad.replace(bad.find("[\"block_size_x\""), 15, "[\"block_size_x\\u001b[2J\"");
  write_text(dir_ / "bad.json", bad);
  const auto failed = tunekit("import-kt " + file("bad.json") + " --store none");
  EXPECT_NE(failed.status, 0);
  EXPECT_TRUE(contains(failed.err, "block_size_x\\x1b[2J")) << failed.err;
  EXPECT_EQ(failed.err.find('\x1b'), std::string::npos) << failed.err;
}

}  // namespace
