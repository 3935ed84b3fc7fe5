// Tests for src/interop/recording_export.cpp: a run exported as a Kernel Tuner cache file and a
// T4 results file reads back (with the replay backend's reader) to the same configurations,
// times and best, and lists them in the order the run evaluated them, with their compile times.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "fakes/datasets.hpp"
#include "fakes/hostile_files.hpp"
#include "fakes/temp_dir.hpp"
#include "tunekit/errors.hpp"
#include "tunekit/interop.hpp"
#include "tunekit/tuner.hpp"

namespace tunekit {
namespace {

using testing::datasets;

namespace fs = std::filesystem;

using testing::TempDir;

// Every kind of value and of failure the files can carry.
Recording mixed() {
  const Enumeration space = Space()
                                .param("n", {16, 32})
                                .param("scale", {0.5, 2.0})
                                .param("layout", {"row", "col"})
                                .param("fast", {true, false})
                                .enumerate();
  std::vector<RecordedResult> results(space.size());
  for (std::size_t i = 0; i < results.size(); ++i) {
    RecordedResult& r = results[i];
    r.compile_ms = 10.0 + static_cast<double>(i);
    r.verification_ms = 0.5;
    if (i % 5 == 3) {
      r.status = Status::compile_failed;
      r.failure = "CompilationFailedConfig";
    } else if (i % 7 == 4) {
      r.status = Status::launch_failed;
      r.failure = "RuntimeFailedConfig";
    } else {
      r.time_ms = 1.0 + 0.25 * static_cast<double>((i * 7) % 16);
      r.times_ms = {r.time_ms - 0.125, r.time_ms, r.time_ms + 0.125};
      r.benchmark_ms = 3 * r.time_ms;
    }
  }
  return Recording::from_results(space, std::move(results), "Test GPU", "mixed_kernel",
                                 {4096, 2048});
}

// Same configurations (as configs), statuses, times, samples and best.
void expect_same(const Recording& a, const Recording& b) {
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    const Config config = a.space().config(i);
    const std::optional<std::size_t> j = b.space().index_of(config);
    ASSERT_TRUE(j) << config.text();
    const RecordedResult &x = a.result(i), &y = b.result(*j);
    EXPECT_EQ(x.status, y.status) << config.text();
    EXPECT_DOUBLE_EQ(x.time_ms, y.time_ms) << config.text();
    EXPECT_EQ(x.times_ms, y.times_ms) << config.text();
    EXPECT_DOUBLE_EQ(x.compile_ms, y.compile_ms);
    EXPECT_DOUBLE_EQ(x.verification_ms, y.verification_ms);
  }
  // The same order too: the file lists the configurations as the recording does.
  ASSERT_EQ(a.order().size(), b.order().size());
  for (std::size_t k = 0; k < a.order().size(); ++k)
    EXPECT_EQ(a.space().config(a.order()[k]), b.space().config(b.order()[k])) << "position " << k;
  ASSERT_TRUE(a.best() && b.best());
  EXPECT_EQ(a.space().config(*a.best()), b.space().config(*b.best()));
  EXPECT_EQ(a.device_name(), b.device_name());
  EXPECT_EQ(a.kernel_name(), b.kernel_name());
  EXPECT_EQ(a.problem_size(), b.problem_size());
}

TEST(RecordingExport, KernelTunerCacheRoundTrip) {
  TempDir dir;
  const Recording original = mixed();
  write_kernel_tuner_cache(dir.path() / "kt.json", original);
  const Recording back = Recording::load(dir.path() / "kt.json");
  EXPECT_EQ(back.format(), Recording::Format::kernel_tuner_cache);
  expect_same(original, back);
  // Kernel Tuner's own shape: keys are Python's str() of the values joined by ','.
  std::ifstream in(dir.path() / "kt.json");
  const nlohmann::json doc = nlohmann::json::parse(in);
  EXPECT_EQ(doc["tune_params_keys"], nlohmann::json({"n", "scale", "layout", "fast"}));
  EXPECT_TRUE(doc["cache"].contains("16,0.5,row,True"));
  EXPECT_TRUE(doc["cache"].contains("32,2.0,col,False"));
  EXPECT_EQ(doc["objective"], "time");
  EXPECT_EQ(doc["problem_size"], nlohmann::json({4096, 2048}));
}

TEST(RecordingExport, T4RoundTripFollowsTheSchema) {
  TempDir dir;
  const Recording original = mixed();
  write_t4_results(dir.path() / "t4.json", original);
  const Recording back = Recording::load(dir.path() / "t4.json");
  EXPECT_EQ(back.format(), Recording::Format::t4);
  expect_same(original, back);
  std::ifstream in(dir.path() / "t4.json");
  const nlohmann::json doc = nlohmann::json::parse(in);
  EXPECT_EQ(doc["schema_version"], "1.0.0");
  for (const auto& entry : doc["results"]) {
    // results-schema.json's required fields.
    for (const char* field : {"configuration", "times", "invalidity", "correctness"})
      EXPECT_TRUE(entry.contains(field)) << field;
    const std::string invalidity = entry["invalidity"];
    EXPECT_TRUE(invalidity == "correct" || invalidity == "compile" || invalidity == "runtime")
        << invalidity;
  }
}

TEST(RecordingExport, AStrategyRunOverASharedDatasetRoundTrips) {
  REQUIRE_DATASETS();
  TempDir dir;
  const Recording r = Recording::load(datasets() / "convolution_milo/A4000.json.gz");
  std::unique_ptr<Strategy> strategy = StrategyRegistry::builtin().make("random");
  ReplayBackend backend(r, 5);
  Budget budget;
  budget.evaluations = 60;
  const SearchResult result = search(
      r.space(), *strategy,
      [&](std::size_t i) {
        const ReplayMeasurement m = backend.measure(i);
        return ObjectiveResult{m.status, m.recorded_ms, m.charged_ms / 1000, m.message};
      },
      budget, 5);
  const Recording run = recording_from_history(r, result.history);
  ASSERT_EQ(run.size(), 60u);
  write_kernel_tuner_cache(dir.path() / "run.json", run);
  write_t4_results(dir.path() / "run_t4.json", run);
  for (const char* file : {"run.json", "run_t4.json"}) {
    const Recording back = Recording::load(dir.path() / file);
    expect_same(run, back);
    // The best read back is the best the search found.
    ASSERT_NE(result.history.best(), nullptr);
    EXPECT_EQ(back.space().config(*back.best()), r.space().config(result.history.best()->index));
    EXPECT_DOUBLE_EQ(back.optimum_ms(), result.history.best()->value);
  }
}

TEST(RecordingExport, ATunerReportRoundTrips) {
  // A tune on the replay device: the report's candidates, samples and winner come back.
  const Enumeration space = Space().param("t", {1, 2, 4}).param("u", {"a", "b"}).enumerate();
  std::vector<RecordedResult> results(space.size());
  for (std::size_t i = 0; i < results.size(); ++i) {
    results[i].time_ms = 5.0 - static_cast<double>(i) * 0.5;
    results[i].times_ms = {results[i].time_ms};
  }
  results[3].status = Status::launch_failed;
  results[3].failure = "RuntimeFailedConfig";
  const Recording r = Recording::from_results(space, std::move(results), "Test GPU", "k", {8});
  ReplayDevice device(r);
  const auto op = make_replay_op(r);
  TunerOptions options;
  options.decide.confirm_pairs = 0;
  Tuner tuner(device, options);
  const TuneReport report = tuner.tune(*op, recording_key(r));
  const Recording exported = recording_from_report(report, recording_key(r));
  EXPECT_EQ(exported.kernel_name(), "kt:k");
  EXPECT_EQ(exported.problem_size(), std::vector<Value>{Value(8)});
  TempDir dir;
  write_kernel_tuner_cache(dir.path() / "tune.json", exported);
  write_t4_results(dir.path() / "tune_t4.json", exported);
  for (const char* file : {"tune.json", "tune_t4.json"}) {
    const Recording back = Recording::load(dir.path() / file);
    expect_same(exported, back);
    ASSERT_EQ(back.size(), space.size());
    EXPECT_EQ(back.space().config(*back.best()).text(), report.winner_name);
    EXPECT_EQ(back.result(*back.space().index_of(Config{{"t", 2}, {"u", "b"}})).status,
              Status::launch_failed);
    for (const CandidateReport& c : report.candidates) {
      if (!c.outcome.ok()) continue;
      const RecordedResult& got = back.result(*back.space().index_of(Config::parse(c.config)));
      EXPECT_NEAR(got.time_ms, c.score * 1000, 1e-9);
      ASSERT_TRUE(c.timing);
      EXPECT_EQ(got.times_ms.size(), c.timing->samples.size());
    }
  }
}

TEST(RecordingExport, CandidatesWithoutSharedParametersExportByName) {
  TuneReport report;
  report.op = "sum";
  report.device = "cpu";
  for (const char* name : {"naive", "blocked"}) {
    CandidateReport c;
    c.name = name;
    c.config = std::string(name) == "naive" ? "" : "block=64";
    c.score = std::string(name) == "naive" ? 2e-3 : 1e-3;
    report.candidates.push_back(c);
  }
  CandidateReport skipped;
  skipped.name = "approx";
  skipped.outcome = {Status::skipped, "numerics"};
  report.candidates.push_back(skipped);
  const Recording r = recording_from_report(report, Key{{"n", 100}});
  ASSERT_EQ(r.size(), 2u);  // the skipped candidate was not evaluated
  EXPECT_EQ(r.space().config(*r.best()).text(), "candidate=blocked");
  TuneReport nothing;
  nothing.candidates.push_back(skipped);
  EXPECT_THROW(recording_from_report(nothing, Key{}), UsageError);
}

TEST(RecordingExport, KernelTunerKeysThatWouldCollideAreRefused) {
  // ("a,b", "c") and ("a", "b,c") are both "a,b,c" to Kernel Tuner.
  const Enumeration space =
      Enumeration::from_points({{"p", {"a,b", "a"}}, {"q", {"c", "b,c"}}}, {0, 0, 1, 1});
  std::vector<RecordedResult> results(2);
  results[0].time_ms = 1;
  results[1].time_ms = 2;
  const Recording r = Recording::from_results(space, std::move(results));
  EXPECT_THROW(kernel_tuner_cache_json(r), UsageError);
  EXPECT_NO_THROW(t4_results_json(r));  // T4 keeps configurations as objects
}

// The configurations of `r` in its order(), as Config text.
std::vector<std::string> listed(const Recording& r) {
  std::vector<std::string> out;
  for (std::size_t i : r.order()) out.push_back(r.space().config(i).text());
  return out;
}

// The configurations a file lists, in the file's order, read without tunekit's reader: a
// Kernel Tuner cache's entries (their parameters, in tune_params_keys order), a T4 file's
// results.
std::vector<std::string> listed_in_file(const fs::path& file) {
  std::ifstream in(file);
  const nlohmann::ordered_json doc = nlohmann::ordered_json::parse(in);
  std::vector<std::string> out;
  const auto text = [](const nlohmann::ordered_json& config,
                       const std::vector<std::string>& names) {
    std::vector<Field> fields;
    for (const std::string& n : names) {
      const auto& v = config.at(n);
      if (v.is_boolean()) {
        fields.push_back({n, v.get<bool>()});
      } else if (v.is_number_integer()) {
        fields.push_back({n, v.get<std::int64_t>()});
      } else if (v.is_number()) {
        fields.push_back({n, v.get<double>()});
      } else {
        fields.push_back({n, v.get<std::string>()});
      }
    }
    return Config(std::move(fields)).text();
  };
  if (doc.contains("cache")) {
    const auto names = doc["tune_params_keys"].get<std::vector<std::string>>();
    for (const auto& [key, entry] : doc["cache"].items()) out.push_back(text(entry, names));
  } else {
    std::vector<std::string> names;
    for (const auto& [name, value] : doc["results"].front()["configuration"].items())
      names.push_back(name);
    for (const auto& entry : doc["results"]) out.push_back(text(entry["configuration"], names));
  }
  return out;
}

// Each entry's compile time as the file writes it, in the file's order.
std::vector<double> compile_times_in_file(const fs::path& file) {
  std::ifstream in(file);
  const nlohmann::ordered_json doc = nlohmann::ordered_json::parse(in);
  std::vector<double> out;
  if (doc.contains("cache")) {
    for (const auto& [key, entry] : doc["cache"].items())
      out.push_back(entry["compile_time"].get<double>());
  } else {
    for (const auto& entry : doc["results"]) {
      EXPECT_EQ(entry["times"]["compilation"], entry["times"]["compilation_time"]);
      out.push_back(entry["times"]["compilation_time"].get<double>());
    }
  }
  return out;
}

TEST(RecordingExport, AReplayRunIsWrittenInEvaluationOrderWithItsCompileTimes) {
  REQUIRE_DATASETS();
  TempDir dir;
  const Recording r = Recording::load(datasets() / "convolution_milo/A4000.json.gz");
  std::unique_ptr<Strategy> strategy = StrategyRegistry::builtin().make("random");
  ReplayBackend backend(r, 11);
  Budget budget;
  budget.evaluations = 40;
  const SearchResult result = search(
      r.space(), *strategy,
      [&](std::size_t i) {
        const ReplayMeasurement m = backend.measure(i);
        return ObjectiveResult{m.status, m.recorded_ms, m.charged_ms / 1000, m.message};
      },
      budget, 11);
  std::vector<std::string> evaluated;
  std::vector<double> compile_ms;
  for (const Evaluation& e : result.history.evaluations()) {
    evaluated.push_back(r.space().config(e.index).text());
    compile_ms.push_back(r.result(e.index).compile_ms);
  }
  ASSERT_EQ(evaluated.size(), 40u);
  // A random run: its order is not the enumeration's, so the test can tell them apart.
  std::vector<std::string> sorted = evaluated;
  std::sort(sorted.begin(), sorted.end(), [&](const std::string& a, const std::string& b) {
    return *r.space().index_of(Config::parse(a)) < *r.space().index_of(Config::parse(b));
  });
  ASSERT_NE(sorted, evaluated);
  EXPECT_GT(*std::min_element(compile_ms.begin(), compile_ms.end()), 0.0);

  const Recording run = recording_from_history(r, result.history);
  EXPECT_EQ(listed(run), evaluated);
  write_kernel_tuner_cache(dir.path() / "run.json", run);
  write_t4_results(dir.path() / "run_t4.json", run);
  for (const char* file : {"run.json", "run_t4.json"}) {
    EXPECT_EQ(listed_in_file(dir.path() / file), evaluated) << file;
    EXPECT_EQ(compile_times_in_file(dir.path() / file), compile_ms) << file;
    // Read back: the same order, and exported again, the same file.
    const Recording back = Recording::load(dir.path() / file);
    expect_same(run, back);
    EXPECT_EQ(listed(back), evaluated) << file;
  }
  EXPECT_EQ(kernel_tuner_cache_json(Recording::load(dir.path() / "run.json")),
            kernel_tuner_cache_json(run));
  EXPECT_EQ(t4_results_json(Recording::load(dir.path() / "run_t4.json")), t4_results_json(run));
}

TEST(RecordingExport, ATuneIsWrittenInTheReportsOrderWithItsCompileTimes) {
  // A random search on the replay device, its budget clock the simulated one: the report lists
  // the candidates in evaluation order (the default first), each with the recorded compile
  // time as its compile_seconds; the export lists them the same way. The times are close
  // together, so that no window is cut as hopeless (cut candidates are left out of an export).
  const Enumeration space =
      Space().param("t", {1, 2, 4, 8, 16}).param("u", {"a", "b", "c", "d"}).enumerate();
  std::vector<RecordedResult> results(space.size());
  for (std::size_t i = 0; i < results.size(); ++i) {
    results[i].time_ms = 1.0 + static_cast<double>((i * 7) % 20) * 0.01;
    results[i].times_ms = {results[i].time_ms};
    results[i].compile_ms = 100.0 + 10.0 * static_cast<double>(i);
  }
  results[5].status = Status::compile_failed;
  results[5].failure = "CompilationFailedConfig";
  results[5].time_ms = 0;
  results[5].times_ms.clear();
  const Recording r = Recording::from_results(space, std::move(results), "Test GPU", "k", {8});
  ReplayDeviceOptions device_options;
  device_options.reading = ReplayDeviceOptions::Reading::recorded_time;
  ReplayDevice device(r, device_options);
  const auto op = make_replay_op(r);
  TunerOptions options;
  options.decide.confirm_pairs = 0;
  options.decide.strategy = "random";
  options.decide.seed = 3;
  options.decide.budget_evaluations = 12;
  options.measure.now = [&device] { return device.simulated_seconds(); };
  Tuner tuner(device, options);
  const TuneReport report = tuner.tune(*op, recording_key(r));
  std::vector<std::string> evaluated;
  std::vector<std::size_t> indices;
  for (const CandidateReport& c : report.candidates) {
    EXPECT_TRUE(c.outcome.ok() || c.outcome.status == Status::compile_failed)
        << c.config << ": " << to_string(c.outcome.status) << " " << c.outcome.message;
    evaluated.push_back(c.config);
    indices.push_back(c.index);
    EXPECT_NEAR(c.compile_seconds * 1000, r.result(c.index).compile_ms, 1e-6) << c.config;
  }
  ASSERT_EQ(evaluated.size(), 13u);  // the default and 12 more
  EXPECT_TRUE(report.candidates.front().is_default);
  ASSERT_FALSE(std::is_sorted(indices.begin(), indices.end()));

  const Recording exported = recording_from_report(report, recording_key(r));
  EXPECT_EQ(listed(exported), evaluated);
  TempDir dir;
  write_kernel_tuner_cache(dir.path() / "tune.json", exported);
  write_t4_results(dir.path() / "tune_t4.json", exported);
  std::vector<double> compile_ms;
  for (const std::size_t i : indices) compile_ms.push_back(r.result(i).compile_ms);
  for (const char* file : {"tune.json", "tune_t4.json"}) {
    EXPECT_EQ(listed_in_file(dir.path() / file), evaluated) << file;
    const std::vector<double> written = compile_times_in_file(dir.path() / file);
    ASSERT_EQ(written.size(), compile_ms.size()) << file;
    for (std::size_t k = 0; k < written.size(); ++k)
      EXPECT_NEAR(written[k], compile_ms[k], 1e-6) << file << " position " << k;
    const Recording back = Recording::load(dir.path() / file);
    expect_same(exported, back);
    EXPECT_EQ(listed(back), evaluated) << file;
  }
}

TEST(RecordingExport, ARecordingWithoutAnOrderIsWrittenInSpaceOrder) {
  const Recording r = mixed();
  std::vector<std::string> in_space_order;
  for (std::size_t i = 0; i < r.size(); ++i) in_space_order.push_back(r.space().config(i).text());
  EXPECT_EQ(listed(r), in_space_order);
  TempDir dir;
  write_t4_results(dir.path() / "t4.json", r);
  write_kernel_tuner_cache(dir.path() / "kt.json", r);
  EXPECT_EQ(listed_in_file(dir.path() / "t4.json"), in_space_order);
  EXPECT_EQ(listed_in_file(dir.path() / "kt.json"), in_space_order);
}

TEST(RecordingExport, AnUnwritableFileIsAClearErrorAndLeavesNoTemporary) {
  TempDir dir;
  EXPECT_THROW(write_kernel_tuner_cache(dir.path() / "no_such_dir" / "kt.json", mixed()),
               UsageError);
  // An existing file is replaced only by a complete one.
  write_t4_results(dir.path() / "t4.json", mixed());
  write_t4_results(dir.path() / "t4.json", mixed());
  std::size_t files = 0;
  for (const auto& e : fs::directory_iterator(dir.path())) files += e.is_regular_file();
  EXPECT_EQ(files, 1u);
}

// The two export writers, each against what may sit at the target.
using Writer = void (*)(const fs::path&, const Recording&);
const Writer kWriters[] = {&write_kernel_tuner_cache, &write_t4_results};

using testing::error_within;
using testing::make_special_file;
TEST(RecordingExport, ASymlinkAtTheTargetIsRefusedAndNeverFollowed) {
  for (Writer write : kWriters) {
    TempDir dir;
    dir.write("victim", "precious");
    fs::create_symlink(dir / "victim", dir / "out.json");
    EXPECT_THROW(write(dir / "out.json", mixed()), UsageError);
    EXPECT_EQ(testing::file_text(dir / "victim"), "precious");
    EXPECT_TRUE(fs::is_symlink(dir / "out.json"));
  }
}

TEST(RecordingExport, AFifoAtTheTargetIsRefusedWithoutBlocking) {
  for (Writer write : kWriters) {
    TempDir dir;
    ASSERT_EQ(::mkfifo((dir / "out.json").c_str(), 0600), 0);
    const fs::path target = dir / "out.json";
    const std::string m =
        error_within(std::chrono::seconds(20), [write, target] { write(target, mixed()); });
    EXPECT_NE(m.find("FIFO"), std::string::npos) << m;
    EXPECT_TRUE(fs::is_fifo(dir / "out.json"));
  }
}

TEST(RecordingExport, ADeviceNodeIsNeverTurnedIntoAFile) {
  for (Writer write : kWriters) {
    TempDir dir;
    ASSERT_TRUE(make_special_file(dir / "full"));
    EXPECT_THROW(write(dir / "full", mixed()), UsageError);
    struct stat st {};
    ASSERT_EQ(::lstat((dir / "full").c_str(), &st), 0);
    EXPECT_FALSE(S_ISREG(st.st_mode));
    // A symlink to the real /dev/full is refused as a symlink, before any device is touched.
    fs::create_symlink("/dev/full", dir / "link");
    EXPECT_THROW(write(dir / "link", mixed()), UsageError);
    EXPECT_TRUE(fs::is_symlink(dir / "link"));
  }
}

TEST(RecordingExport, APlantedTempSymlinkIsNeverFollowedAndTheFileIsPrivate) {
  for (Writer write : kWriters) {
    TempDir dir;
    dir.write("victim", "precious");
    fs::create_symlink(dir / "victim", dir / (".out.json.tmp-" + std::to_string(::getpid())));
    write(dir / "out.json", mixed());
    EXPECT_EQ(testing::file_text(dir / "victim"), "precious");
    struct stat st {};
    ASSERT_EQ(::stat((dir / "out.json").c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0600u);
  }
}

}  // namespace
}  // namespace tunekit
