// End-to-end tests of `tunekit stack tune|explain|ls`: the built binary on the attention block
// at a tiny shape, each test with its own temporary store; bad input exits non-zero with a
// message that says what to do.
#include <filesystem>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "integration/cli_runner.hpp"

namespace {

using nlohmann::json;
using tunekit::testing::CliResult;
using tunekit::testing::contains;
using tunekit::testing::parse_json;
using tunekit::testing::TempDir;

// A tiny block: every kernel search measures the default and at most 2 more points, and each
// stack level 4 A B B A pairs per candidate: seconds, not minutes.
constexpr const char* kShape = "--shape tokens=64,d=64,heads=4";

class StackCli : public ::testing::Test {
 protected:
  std::string store() const { return "--store 'sqlite:" + (dir_ / "store.db").string() + "'"; }
  CliResult tunekit(const std::string& args) {
    return tunekit::testing::run_cli(args, dir_ / "cache", dir_.path());
  }
  json tune() {
    const CliResult run = tunekit(std::string("stack tune attention ") + kShape +
                                  " --budget-evals 2 --samples 4 --json " + store());
    EXPECT_EQ(run.status, 0) << run.err << run.out;
    return parse_json(run);
  }
  json cache_ls() {
    const CliResult run = tunekit("cache ls --json " + store());
    EXPECT_EQ(run.status, 0) << run.err << run.out;
    return parse_json(run);
  }
  // The entry of `scope` named `op` (and with key `key` when given), or null.
  static json find_entry(const json& entries, const std::string& scope, const std::string& op,
                         const std::string& key = "") {
    for (const json& e : entries)
      if (e.value("scope", "") == scope && e.value("op", "") == op &&
          (key.empty() || e.value("key", "") == key))
        return e;
    return nullptr;
  }

  TempDir dir_;
};

TEST_F(StackCli, TuneShowsSixOperatorsAndTwoLevelsEachWithAChoiceAndASource) {
  const json t = tune();
  EXPECT_EQ(t.value("workload", ""), "attention");
  EXPECT_EQ(t.value("shape", ""), "tokens=64,d=64,heads=4");
  EXPECT_FALSE(t.value("plan", "").empty()) << t.dump(2);
  ASSERT_TRUE(t.contains("operators") && t["operators"].is_array()) << t.dump(2);
  ASSERT_EQ(t["operators"].size(), 6u) << t.dump(2);
  const char* steps[] = {"rmsnorm", "qkv", "scores", "softmax", "context", "out"};
  for (std::size_t i = 0; i < 6; ++i) {
    const json& op = t["operators"][i];
    EXPECT_EQ(op.value("step", ""), steps[i]);
    EXPECT_FALSE(op.value("choice", "").empty()) << op.dump();
    EXPECT_FALSE(op.value("source", "").empty()) << op.dump();
    EXPECT_FALSE(op.value("key", "").empty()) << op.dump();
  }
  ASSERT_TRUE(t.contains("levels") && t["levels"].is_array());
  ASSERT_EQ(t["levels"].size(), 2u) << t.dump(2);
  EXPECT_EQ(t["levels"][0].value("scope", ""), "graph");
  EXPECT_EQ(t["levels"][0].value("problem", ""), "attention_block");
  EXPECT_EQ(t["levels"][1].value("scope", ""), "application");
  EXPECT_EQ(t["levels"][1].value("problem", ""), "attention_block.plan");
  for (const json& level : t["levels"]) {
    EXPECT_FALSE(level.value("choice", "").empty()) << level.dump(2);
    EXPECT_FALSE(level.value("source", "").empty()) << level.dump(2);
    // A tune measures each level: its report is there, with the reference's entry.
    ASSERT_TRUE(level.contains("report") && level["report"].is_object()) << level.dump(2);
  }
  // The graph level compares the all-defaults reference with the alternatives.
  EXPECT_TRUE(contains(t["levels"][0]["report"].dump(), "\"defaults\"")) << t.dump(2);
}

TEST_F(StackCli, DecisionsAreStoredBesideKernelChoicesAndListedWithTheirScope) {
  const json t = tune();
  ASSERT_EQ(t.value("operators", json::array()).size(), 6u) << t.dump(2);
  const json entries = cache_ls();
  ASSERT_TRUE(entries.is_array()) << entries.dump(2);
  // Every measured kernel search left its entry (scope kernel, the step's op and key). On a
  // loaded machine a search may measure nothing cleanly (served the default, stored nothing),
  // so only the searched ones are asserted, and that at least one was.
  int searched = 0;
  for (const json& op : t["operators"]) {
    if (op.value("source", "") != "searched") continue;
    ++searched;
    const json e = find_entry(entries, "kernel", op.value("op", ""), op.value("key", ""));
    ASSERT_FALSE(e.is_null()) << op.dump() << "\n" << entries.dump(2);
    EXPECT_EQ(e.value("winner", ""), op.value("choice", ""));
  }
  EXPECT_GT(searched, 0) << t.dump(2);
  // A level decided by measurement (source tuned) is stored, named by its problem, with its
  // scope; its winner is the level's choice. One that scored nothing stores nothing.
  int tuned = 0;
  for (const json& level : t["levels"]) {
    const std::string scope = level.value("scope", "");
    const json e = find_entry(entries, scope, level.value("problem", ""));
    if (level.value("source", "") == "tuned") {
      ++tuned;
      ASSERT_FALSE(e.is_null()) << level.dump(2) << "\n" << entries.dump(2);
      EXPECT_EQ(e.value("winner", ""), level.value("choice", ""));
      EXPECT_EQ(e.value("key", ""), "tokens=64,d=64,heads=4");
    } else {
      EXPECT_TRUE(e.is_null()) << level.dump(2) << "\n" << entries.dump(2);
    }
  }
  // The console listing has the scope column when a higher level is stored (under load a level
  // may score nothing and store nothing: then the listing is of kernel choices only).
  const CliResult text = tunekit("cache ls " + store());
  ASSERT_EQ(text.status, 0) << text.err;
  EXPECT_EQ(contains(text.out, "scope"), tuned > 0) << tuned << " levels tuned\n" << text.out;
}

TEST_F(StackCli, ExplainAfterTuneReplaysTheStoredDecisionsAndMeasuresNothing) {
  const json t = tune();
  ASSERT_EQ(t.value("operators", json::array()).size(), 6u) << t.dump(2);
  const CliResult run =
      tunekit(std::string("stack explain attention ") + kShape + " --json " + store());
  ASSERT_EQ(run.status, 0) << run.err << run.out;
  const json e = parse_json(run);
  ASSERT_EQ(e.value("operators", json::array()).size(), 6u) << e.dump(2);
  for (std::size_t i = 0; i < 6; ++i) {
    const json& tuned = t["operators"][i];
    const json& shown = e["operators"][i];
    EXPECT_EQ(shown.value("choice", ""), tuned.value("choice", "")) << shown.dump();
    if (tuned.value("source", "") == "searched") {
      EXPECT_EQ(shown.value("source", ""), "cache_replay") << shown.dump();
    }
  }
  ASSERT_EQ(e.value("levels", json::array()).size(), 2u) << e.dump(2);
  for (std::size_t i = 0; i < 2; ++i) {
    const json& tuned = t["levels"][i];
    const json& shown = e["levels"][i];
    // A stored decision is validated once and served: its report has no measured entries.
    if (tuned.value("source", "") != "tuned") continue;
    EXPECT_EQ(shown.value("source", ""), "stored") << shown.dump(2);
    EXPECT_EQ(shown.value("choice", ""), tuned.value("choice", "")) << shown.dump(2);
    ASSERT_TRUE(shown.contains("report") && shown["report"].is_object()) << shown.dump(2);
    EXPECT_EQ(shown["report"].value("source", ""), "stored") << shown.dump(2);
    EXPECT_TRUE(shown["report"].value("entries", json::array({1})).empty()) << shown.dump(2);
  }
}

TEST_F(StackCli, ExplainOnAnEmptyStoreServesTheReferencesAndStoresNothing) {
  const CliResult run =
      tunekit(std::string("stack explain attention ") + kShape + " --json " + store());
  ASSERT_EQ(run.status, 0) << run.err << run.out;
  const json e = parse_json(run);
  ASSERT_EQ(e.value("operators", json::array()).size(), 6u) << e.dump(2);
  for (const json& op : e["operators"]) EXPECT_TRUE(op.value("default", false)) << op.dump();
  ASSERT_EQ(e.value("levels", json::array()).size(), 2u) << e.dump(2);
  for (const json& level : e["levels"]) {
    EXPECT_TRUE(level.value("reference", false)) << level.dump(2);
    EXPECT_EQ(level.value("source", ""), "cache_only_miss") << level.dump(2);
    EXPECT_TRUE(level.contains("report") && level["report"].is_null()) << level.dump(2);
  }
  const json entries = cache_ls();
  EXPECT_TRUE(entries.is_array() && entries.empty()) << entries.dump(2);
}

TEST_F(StackCli, LsListsTheAttentionWorkloadWithAnExampleShape) {
  const CliResult run = tunekit("stack ls --json");
  ASSERT_EQ(run.status, 0) << run.err;
  const json all = parse_json(run);
  ASSERT_TRUE(all.is_array() && !all.empty()) << run.out;
  EXPECT_EQ(all[0].value("name", ""), "attention");
  EXPECT_TRUE(contains(all[0].value("example", ""), "tokens=")) << run.out;
}

TEST_F(StackCli, BadInputExitsNonZeroSayingWhatToDo) {
  const CliResult unknown = tunekit("stack tune nosuch " + std::string(kShape) + " " + store());
  EXPECT_NE(unknown.status, 0);
  EXPECT_TRUE(contains(unknown.err, "unknown stack workload 'nosuch'")) << unknown.err;
  EXPECT_TRUE(contains(unknown.err, "attention")) << unknown.err;  // the known ones

  const CliResult zero = tunekit("stack tune attention --shape tokens=0,d=64 " + store());
  EXPECT_NE(zero.status, 0);
  EXPECT_TRUE(contains(zero.err, "tokens=0 is not a positive whole number")) << zero.err;

  const CliResult field = tunekit("stack explain attention --shape rows=64,d=64 " + store());
  EXPECT_NE(field.status, 0);
  EXPECT_TRUE(contains(field.err, "write e.g. tokens=2048,d=512")) << field.err;

  const CliResult samples =
      tunekit("stack tune attention " + std::string(kShape) + " --samples 1 " + store());
  EXPECT_NE(samples.status, 0);
  EXPECT_TRUE(contains(samples.err, "--samples")) << samples.err;
  EXPECT_TRUE(contains(samples.err, "[2, 1000]")) << samples.err;

  // Nothing was decided, so nothing was stored.
  const json entries = cache_ls();
  EXPECT_TRUE(entries.is_array() && entries.empty()) << entries.dump(2);
}

}  // namespace
