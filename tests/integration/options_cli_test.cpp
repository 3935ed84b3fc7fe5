// End-to-end tests of the bounds of every numeric flag and options string of the tunekit tool
// (tools/tunekit/commands/bounds.cpp, the strategy and schedule factories, TunerOptions): a
// hostile value is refused with a message that says what is allowed, never accepted, wrapped
// or left to hang.
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "integration/cli_runner.hpp"

namespace {

using Result = tunekit::testing::CliResult;
using tunekit::testing::contains;

// Every run is bounded by timeout(1): a value that makes the tool hang again fails the test
// (status 124) instead of hanging the suite.
Result run_bounded(const std::string& args) {
  return tunekit::testing::run_cli_fresh(args, "timeout 120");
}

struct Refusal {
  std::string args;
  std::string flag;     // named in the message
  std::string allowed;  // what the message says is allowed
};

void expect_refused(const Refusal& r) {
  const Result run = run_bounded(r.args);
  EXPECT_NE(run.status, 0) << r.args << " was accepted:\n" << run.out;
  EXPECT_NE(run.status, 124) << r.args << ": hung";
  EXPECT_LT(run.status, 128) << r.args << ": killed by a signal\n" << run.err;
  EXPECT_TRUE(run.out.empty()) << r.args << ": " << run.out;
  EXPECT_TRUE(contains(run.err, r.flag)) << r.args << ": " << run.err;
  EXPECT_TRUE(contains(run.err, r.allowed)) << r.args << ": " << run.err;
}

const std::string kTuneWithoutStore = "tune sum --shape n=64 --store none --quiet ";

TEST(CliOptions, TuneNumericFlagsRefuseNanNegativeAndHugeValues) {
  const std::vector<Refusal> cases = {
      {kTuneWithoutStore + "--limit nan", "--limit", "must be a number in [0, 3600], got nan"},
      {kTuneWithoutStore + "--limit inf", "--limit", "[0, 3600]"},
      {kTuneWithoutStore + "--limit -1", "--limit", "[0, 3600]"},
      {kTuneWithoutStore + "--budget -1", "--budget", "positive, finite"},
      {kTuneWithoutStore + "--budget nan", "--budget", "positive, finite"},
      {kTuneWithoutStore + "--budget 1e300", "--budget", "more than a year"},
      {kTuneWithoutStore + "--budget-evals 0", "--budget-evals",
       "must be an integer in [1, 1099511627776]"},
      {kTuneWithoutStore + "--budget-evals -3", "--budget-evals", "got -3"},
      {kTuneWithoutStore + "--budget-evals 1.5", "--budget-evals", "got 1.5"},
      {kTuneWithoutStore + "--threads 4294967295", "--threads", "must be an integer in [0, 4096]"},
      {kTuneWithoutStore + "--threads 100000", "--threads", "[0, 4096]"},
      {kTuneWithoutStore + "--threads 1e3", "--threads", "got 1e3"},
      {kTuneWithoutStore + "--build-threads 100000", "--build-threads", "[0, 1024]"},
      {kTuneWithoutStore + "--tie-band nan", "--tie-band", "must be a number in [0, 1], got nan"},
      {kTuneWithoutStore + "--tie-band 1", "tie_band", "[0, 1)"},  // the library's half-open range
      {kTuneWithoutStore + "--rotate 65", "--rotate", "[0, 64]"},
      {kTuneWithoutStore + "--placement-wait nan", "--placement-wait", "positive, finite"},
      {kTuneWithoutStore + "--placement-wait -2s", "--placement-wait", "positive, finite"},
      {kTuneWithoutStore + "--placement-wait soon", "--placement-wait", "not a duration"},
      {kTuneWithoutStore + "--confirm-pairs -1", "--confirm-pairs", "[0, 10000]"},
      {kTuneWithoutStore + "--finalists 1001", "--finalists", "[0, 1000]"},
      {kTuneWithoutStore + "--finalists 1", "finalists", "at least 2"},  // the library's rule
      {kTuneWithoutStore + "--finalist-band nan", "--finalist-band", "got nan"},
      {kTuneWithoutStore + "--finalist-band 11", "--finalist-band", "[0, 10]"},
      {kTuneWithoutStore + "--seed -1", "--seed", "got -1"},  // CLI11 alone wraps it to 2^64 - 1
  };
  for (const Refusal& r : cases) expect_refused(r);
}

// The wait for the CPUs to be near again: a duration, or 0 / off.
TEST(CliOptions, PlacementWaitTakesADurationOrOff) {
  for (const char* wait : {"500ms", "2s", "0", "off"}) {
    const Result run = run_bounded(kTuneWithoutStore + "--placement-wait " + wait);
    EXPECT_EQ(run.status, 0) << wait << ": " << run.err;
  }
}

TEST(CliOptions, StrategyAndScheduleOptionsOutOfRangeSayWhatIsAllowed) {
  const std::vector<Refusal> cases = {
      {kTuneWithoutStore + "--schedule racing:round=0", "schedule 'racing'",
       "round must be an integer in [1, 1024], got 0"},
      {kTuneWithoutStore + "--schedule racing:z=inf", "schedule 'racing'",
       "z must be a number in [0.1, 10]"},
      {kTuneWithoutStore + "--schedule racing:rounds=4", "has no option 'rounds'",
       "round (integer in"},
      {kTuneWithoutStore + "--strategy genetic:pop=0", "strategy 'genetic'",
       "pop must be an integer in [2, 10000], got 0"},
      {kTuneWithoutStore + "--strategy genetic:mutation=nan", "strategy 'genetic'", "got nan"},
      {kTuneWithoutStore + "--strategy anneal:alpha=-1", "strategy 'anneal'",
       "alpha must be a number"},
      {kTuneWithoutStore + "--strategy bayes:init=-1", "strategy 'bayes'", "got -1"},
      {kTuneWithoutStore + "--strategy random:x=nan", "strategy 'random' has no option 'x'",
       "accepts no options"},
      {kTuneWithoutStore + "--strategy surrogate:batch=4294967296", "strategy 'surrogate'",
       "[1, 1024]"},
  };
  for (const Refusal& r : cases) expect_refused(r);
}

TEST(CliOptions, OtherCommandsBoundTheirNumbers) {
  const std::vector<Refusal> cases = {
      // 4294967295 independent runs would never end.
      {"replay --dataset any.json --repeats 4294967295", "--repeats",
       "must be an integer in [1, 10000]"},
      {"replay --dataset any.json --repeats 0", "--repeats", "[1, 10000]"},
      {"replay --dataset any.json --repeats -1", "--repeats", "got -1"},
      {"replay --dataset any.json --budget-evals 0", "--budget-evals", "[1, 1099511627776]"},
      {"replay --dataset any.json --budget nan", "--budget", "positive, finite"},
      {"replay --dataset any.json --seed -5", "--seed", "got -5"},
      {"space any.json --list -1", "--list", "got -1"},
      {"explain sum --threads nan", "--threads", "[0, 4096]"},
      {"calibrate --threads 5000", "--threads", "[0, 4096]"},
  };
  for (const Refusal& r : cases) expect_refused(r);
}

TEST(CliOptions, NumbersAreReadInDecimal) {
  // CLI11 alone reads "010" as octal 8; the bounded parsers hand it ten.
  const Result run =
      run_bounded(kTuneWithoutStore + "--seed 010 --budget-evals 1 --confirm-pairs 0 --json");
  ASSERT_EQ(run.status, 0) << run.err;
  const nlohmann::json report = tunekit::testing::parse_json(run);
  EXPECT_EQ(report.at("search").at("seed"), 10);
}

}  // namespace
