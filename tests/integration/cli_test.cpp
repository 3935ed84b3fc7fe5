// End-to-end tests of the tunekit tool (tools/tunekit): runs the built binary.
#include <set>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "integration/cli_runner.hpp"

namespace {

using nlohmann::json;
using Result = tunekit::testing::CliResult;
using tunekit::testing::contains;
using tunekit::testing::parse_json;

// Runs `tunekit <args>` in a fresh private cache directory; `env` adds NAME=value words.
Result tunekit(const std::string& args, const std::string& env = "") {
  return tunekit::testing::run_cli_fresh(args, env);
}

const json* candidate_named(const json& report, const std::string& name) {
  for (const json& c : report.at("candidates"))
    if (c.at("name") == name) return &c;
  return nullptr;
}

// The end-to-end run: a search of the sgemm space (the default strategy under an evaluation
// budget) picks a validated winner that is no slower than the default (the advisory promise).
TEST(Cli, TuneSgemmPicksAValidatedWinnerNoSlowerThanTheDefault) {
  const Result run = tunekit("tune sgemm --shape m=256,n=256,k=256 --budget-evals 40 --json");
  ASSERT_EQ(run.status, 0) << run.err;
  const json report = parse_json(run);
  ASSERT_TRUE(report.contains("winner")) << run.out;
  EXPECT_EQ(report.at("op"), "sgemm");
  EXPECT_EQ(report.at("key").get<std::string>().rfind("m=256,n=256,k=256", 0), 0u);
  EXPECT_EQ(report.at("source"), "searched");
  ASSERT_FALSE(report.at("candidates").empty());
  // At 256³ every nc (512-4096) blocks all 256 columns, and kc 256-512 all of k: the search
  // proposes one point of each such class (Op::effective_config).
  const json& search = report.at("search");
  EXPECT_LT(search.at("distinct_points").get<std::size_t>(),
            search.at("space_size").get<std::size_t>() / 4)
      << search.dump(2);

  const json* winner = candidate_named(report, report.at("winner").get<std::string>());
  ASSERT_NE(winner, nullptr) << "the winner is not among the candidates";
  EXPECT_EQ(winner->at("status"), "ok") << winner->dump(2);
  EXPECT_TRUE(winner->at("winner").get<bool>());
  EXPECT_TRUE(winner->at("timing").is_object());

  const json* fallback = candidate_named(report, report.at("default").get<std::string>());
  ASSERT_NE(fallback, nullptr) << "the default is not among the candidates";
  EXPECT_TRUE(fallback->at("is_default").get<bool>());
  ASSERT_EQ(fallback->at("status"), "ok") << "the default must always be measured";
  const double tie_band = report.at("tie_band").get<double>();
  EXPECT_LE(winner->at("score").get<double>(),
            fallback->at("score").get<double>() * (1.0 + tie_band))
      << "the winner is slower than the default";
  // Progress goes to stderr, one line per finished candidate when stderr is not a terminal.
  EXPECT_TRUE(contains(run.err, "[1/")) << run.err;
}

TEST(Cli, ConsoleReportShowsTheTable) {
  const Result run = tunekit("tune sgemm --shape m=16,n=16,k=16 --quiet");
  ASSERT_EQ(run.status, 0) << run.err;
  for (const char* part : {"sgemm", "m=16,n=16,k=16", "winner", "candidate", "status", "median",
                           "distinct for this key"})
    EXPECT_TRUE(contains(run.out, part)) << part << " missing from\n" << run.out;
  EXPECT_TRUE(run.err.empty()) << "--quiet still wrote:\n" << run.err;
}

TEST(Cli, OpsListsTheBuiltinOps) {
  const Result run = tunekit("ops");
  ASSERT_EQ(run.status, 0) << run.err;
  for (const char* op : {"sgemm", "softmax", "rmsnorm", "sum"})
    EXPECT_TRUE(contains(run.out, op)) << op << " missing from\n" << run.out;
}

TEST(Cli, OpsJsonDescribesKeyFieldsAndCandidates) {
  const Result run = tunekit("ops --json");
  ASSERT_EQ(run.status, 0) << run.err;
  const json ops = parse_json(run);
  ASSERT_TRUE(ops.is_array());
  std::set<std::string> names;
  for (const json& op : ops) {
    names.insert(op.at("name").get<std::string>());
    EXPECT_GT(op.at("candidates").get<int>(), 0) << op.dump(2);
    EXPECT_FALSE(op.at("key").empty()) << op.dump(2);
    EXPECT_FALSE(op.at("example_shape").get<std::string>().empty()) << op.dump(2);
    for (const json& field : op.at("key")) {
      EXPECT_TRUE(field.contains("name") && field.contains("type") && field.contains("default"))
          << field.dump();
    }
  }
  for (const char* op : {"sgemm", "softmax", "rmsnorm", "sum"}) EXPECT_TRUE(names.count(op)) << op;
}

TEST(Cli, ModeOffServesTheDefaultWithoutMeasuring) {
  const Result run = tunekit("tune sgemm --shape m=8,n=8,k=8 --mode off --json");
  ASSERT_EQ(run.status, 0) << run.err;
  const json report = parse_json(run);
  EXPECT_EQ(report.at("source"), "default");
  EXPECT_TRUE(report.at("candidates").empty());
  EXPECT_EQ(report.at("winner"), report.at("default"));
}

// Shared searches need a server store (docs/fleet.md): without one, --share (and TUNEKIT_SHARE)
// warn once and the search runs here, as it would alone.
TEST(Cli, ShareWithoutAServerStoreWarnsAndSearchesHere) {
  const Result run = tunekit("tune sum --shape n=1000 --store none --share --json --quiet");
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_EQ(parse_json(run).at("source"), "searched");
  EXPECT_NE(run.err.find("searches are not shared: no store (memory-only)"), std::string::npos)
      << run.err;
  const Result env =
      tunekit("tune sum --shape n=1000 --store none --json --quiet", "TUNEKIT_SHARE=1");
  ASSERT_EQ(env.status, 0) << env.err;
  EXPECT_NE(env.err.find("searches are not shared"), std::string::npos) << env.err;
  const Result bad = tunekit("tune sum --shape n=1000 --store none --quiet", "TUNEKIT_SHARE=yes");
  EXPECT_EQ(bad.status, 2);
  EXPECT_NE(bad.err.find("TUNEKIT_SHARE: 'yes' is not 1"), std::string::npos) << bad.err;
}

TEST(Cli, FlagsWinOverTunekitMode) {
  const Result off = tunekit("tune sgemm --shape m=8,n=8,k=8 --json --quiet", "TUNEKIT_MODE=off");
  ASSERT_EQ(off.status, 0) << off.err;
  EXPECT_EQ(parse_json(off).at("source"), "default");

  const Result tuned =
      tunekit("tune sgemm --shape m=8,n=8,k=8 --json --quiet --mode tune", "TUNEKIT_MODE=off");
  ASSERT_EQ(tuned.status, 0) << tuned.err;
  EXPECT_EQ(parse_json(tuned).at("source"), "searched");

  // A bad TUNEKIT_MODE is an error only when --mode does not override it.
  const Result bad = tunekit("tune sgemm --shape m=8,n=8,k=8 --json", "TUNEKIT_MODE=sometimes");
  EXPECT_NE(bad.status, 0);
  EXPECT_TRUE(contains(bad.err, "TUNEKIT_MODE")) << bad.err;
  const Result overridden =
      tunekit("tune sgemm --shape m=8,n=8,k=8 --json --mode off", "TUNEKIT_MODE=sometimes");
  EXPECT_EQ(overridden.status, 0) << overridden.err;
}

TEST(Cli, MissingShapeUsesTheExampleShapeAndSaysSo) {
  const Result run = tunekit("tune sgemm --mode off --json");
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_TRUE(contains(run.err, "example shape")) << run.err;
  EXPECT_FALSE(parse_json(run).at("key").get<std::string>().empty());
}

TEST(Cli, UnknownOpFailsAndListsTheKnownOnes) {
  const Result run = tunekit("tune nosuchop --shape m=8");
  EXPECT_NE(run.status, 0);
  EXPECT_TRUE(run.out.empty()) << run.out;
  EXPECT_TRUE(contains(run.err, "nosuchop")) << run.err;
  EXPECT_TRUE(contains(run.err, "sgemm")) << run.err;
}

TEST(Cli, BadShapesFailWithAMessage) {
  for (const char* shape : {"m=abc,n=8,k=8", "m=0,n=8,k=8", "m=1000000000000,n=8,k=8",
                            "m=8,n=8,k=8,bogus=3", "m=8,,k", "m"}) {
    const Result run = tunekit(std::string("tune sgemm --mode tune --shape '") + shape + "'");
    EXPECT_NE(run.status, 0) << shape;
    EXPECT_NE(run.status, 128 + 6) << shape << ": aborted";
    EXPECT_TRUE(run.out.empty()) << shape << ": " << run.out;
    EXPECT_TRUE(contains(run.err, "error")) << shape << ": " << run.err;
    EXPECT_TRUE(contains(run.err, "--shape")) << shape << ": " << run.err;
  }
  EXPECT_TRUE(contains(tunekit("tune sgemm --shape m=8,n=8,k=8,bogus=3").err, "bogus"));
}

TEST(Cli, BadOptionsFailWithAMessage) {
  for (const char* args : {"tune sgemm --shape m=8,n=8,k=8 --mode sometimes",
                           "tune sgemm --shape m=8,n=8,k=8 --statistic mean",
                           "tune sgemm --shape m=8,n=8,k=8 --tie-band 2",
                           "tune sgemm --shape m=8,n=8,k=8 --threads -1",
                           "tune sgemm --shape m=8,n=8,k=8 --threads many",
                           "tune sgemm --shape m=8,n=8,k=8 --reporter xml",
                           "tune sgemm --no-such-flag", "tune", "", "frobnicate"}) {
    const Result run = tunekit(args);
    EXPECT_NE(run.status, 0) << args;
    EXPECT_FALSE(run.err.empty()) << args;
  }
  const Result mode = tunekit("tune sgemm --shape m=8,n=8,k=8 --mode sometimes");
  EXPECT_TRUE(contains(mode.err, "sometimes") && contains(mode.err, "cached")) << mode.err;
  EXPECT_TRUE(contains(tunekit("tune sgemm --reporter xml").err, "console"));
}

TEST(Cli, SearchFlagsReachTheReport) {
  const Result run = tunekit(
      "tune sum --shape n=4096 --strategy random --schedule racing --seed 5 --budget-evals 3 "
      "--json --quiet");
  ASSERT_EQ(run.status, 0) << run.err;
  const json report = parse_json(run);
  const json& search = report.at("search");
  EXPECT_EQ(search.at("strategy"), "random");
  EXPECT_EQ(search.at("schedule"), "racing");
  EXPECT_EQ(search.at("seed"), 5);
  EXPECT_EQ(search.at("budget").at("evaluations"), 3);
  EXPECT_LE(report.at("candidates").size(), 4u);                    // 3 beyond the default
  EXPECT_EQ(report.at("candidates").at(0).at("is_default"), true);  // evaluation order
  // Every candidate measured ok is checked when asked (by default only those that could win).
  // (softmax: its online_v1 points trail the two_pass ones 2-3x, unchecked by default.)
  const Result audit =
      tunekit("tune softmax --shape rows=64,cols=512 --check-every-candidate --json --quiet");
  ASSERT_EQ(audit.status, 0) << audit.err;
  const json audited = parse_json(audit);
  for (const json& c : audited.at("candidates"))
    if (c.at("status") == "ok") {
      EXPECT_TRUE(c.at("checked").get<bool>()) << c.at("name");
    }
  const Result budget = tunekit("tune sum --shape n=4096 --budget 2s --json --quiet");
  ASSERT_EQ(budget.status, 0) << budget.err;
  EXPECT_EQ(parse_json(budget).at("search").at("budget").at("seconds"), 2.0);
  const Result listing = tunekit("strategies --json");
  ASSERT_EQ(listing.status, 0) << listing.err;
  const json lists = parse_json(listing);  // named: a loop over a temporary's member dangles
  std::set<std::string> names;
  for (const json& s : lists.at("strategies")) names.insert(s.at("name").get<std::string>());
  for (const char* name : {"auto", "exhaustive", "random", "genetic", "bayes", "model"})
    EXPECT_TRUE(names.count(name)) << name;
  EXPECT_EQ(lists.at("schedules").size(), 2u);
}

TEST(Cli, BadSearchFlagsFailWithAMessageThatSaysWhatToWrite) {
  for (const char* budget : {"nan", "-3s", "0", "inf", "5 parsecs", "1e30h", "s"}) {
    const Result run = tunekit(std::string("tune sum --shape n=64 --budget '") + budget + "'");
    EXPECT_EQ(run.status, 2) << budget << ": " << run.err;
    EXPECT_TRUE(contains(run.err, "--budget")) << budget << ": " << run.err;
  }
  const Result racing = tunekit("tune sum --shape n=64 --strategy racing");
  EXPECT_EQ(racing.status, 2);
  EXPECT_TRUE(contains(racing.err, "--schedule racing")) << racing.err;
  const Result unknown = tunekit("tune sum --shape n=64 --strategy simplex");
  EXPECT_EQ(unknown.status, 2);
  EXPECT_TRUE(contains(unknown.err, "genetic")) << unknown.err;  // lists what exists
  const Result option = tunekit("tune sum --shape n=64 --strategy genetic:popsize=3");
  EXPECT_EQ(option.status, 2);
  EXPECT_TRUE(contains(option.err, "pop")) << option.err;
  EXPECT_NE(tunekit("tune sum --shape n=64 --budget-evals -4").status, 0);
  EXPECT_NE(tunekit("tune sum --shape n=64 --build-threads 100000").status, 0);
}

TEST(Cli, HelpEverywhere) {
  const Result top = tunekit("--help");
  EXPECT_EQ(top.status, 0);
  EXPECT_TRUE(contains(top.out, "tune") && contains(top.out, "ops")) << top.out;
  const Result tune = tunekit("tune --help");
  EXPECT_EQ(tune.status, 0);
  EXPECT_TRUE(contains(tune.out, "--shape") && contains(tune.out, "--mode")) << tune.out;
  EXPECT_EQ(tunekit("ops --help").status, 0);
  // The export flags are one section of their own in every command that takes them.
  for (const char* command : {"tune --help", "replay --help"}) {
    const Result help = tunekit(command);
    EXPECT_EQ(help.status, 0);
    EXPECT_TRUE(contains(help.out, "Exports:") && contains(help.out, "--export-kt"))
        << command << "\n"
        << help.out;
  }
}

}  // namespace
