// The tool's log (tools/tunekit/commands/verbosity.cpp): TUNEKIT_LOG sets the starting level
// (info for the tool), -v and -q move it, before or after the command.
#include <string>

#include <gtest/gtest.h>

#include "integration/cli_runner.hpp"

namespace {

using tunekit::testing::contains;
using tunekit::testing::run_cli_fresh;

// A search small enough to be quick: two candidates of a tiny sgemm.
constexpr const char* kSearch = "tune sgemm --shape m=16,n=16,k=16 --budget-evals 2 --json";

TEST(LogCli, ByDefaultTheToolSaysWhatItSearchedButNotEachCandidate) {
  const auto run = run_cli_fresh(kSearch);
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_TRUE(contains(run.err, "tunekit: sgemm m=16,n=16,k=16")) << run.err;
  EXPECT_TRUE(contains(run.err, ": searched ")) << run.err;
  EXPECT_FALSE(contains(run.err, "tunekit: debug:")) << run.err;
}

TEST(LogCli, VerboseAddsEachCandidateBeforeOrAfterTheCommand) {
  for (const std::string& args : {std::string("-v ") + kSearch, std::string(kSearch) + " -v"}) {
    const auto run = run_cli_fresh(args);
    ASSERT_EQ(run.status, 0) << args << "\n" << run.err;
    EXPECT_TRUE(contains(run.err, "tunekit: debug: sgemm m=16,n=16,k=16")) << run.err;
    EXPECT_TRUE(contains(run.err, ": candidate ")) << run.err;
  }
}

TEST(LogCli, QuietLeavesWarningsOnlyAndNoProgress) {
  for (const std::string& args : {std::string("-q ") + kSearch, std::string(kSearch) + " -q",
                                  std::string(kSearch) + " --quiet"}) {
    const auto run = run_cli_fresh(args);
    ASSERT_EQ(run.status, 0) << args << "\n" << run.err;
    EXPECT_TRUE(run.err.empty()) << args << "\n" << run.err;
    EXPECT_TRUE(contains(run.out, "\"winner\"")) << "the report is not the log's: " << run.out;
  }
}

TEST(LogCli, TunekitLogSetsTheStartingLevelAndFlagsMoveIt) {
  const auto warn = run_cli_fresh("tune sgemm --mode off --json", "TUNEKIT_LOG=warn");
  ASSERT_EQ(warn.status, 0) << warn.err;
  EXPECT_FALSE(contains(warn.err, "example shape")) << warn.err;
  const auto back = run_cli_fresh("-v tune sgemm --mode off --json", "TUNEKIT_LOG=warn");
  ASSERT_EQ(back.status, 0) << back.err;
  EXPECT_TRUE(contains(back.err, "tunekit: no --shape given")) << back.err;
  const auto debug = run_cli_fresh(kSearch, "TUNEKIT_LOG=debug");
  ASSERT_EQ(debug.status, 0) << debug.err;
  EXPECT_TRUE(contains(debug.err, "tunekit: debug: ")) << debug.err;
}

TEST(LogCli, ErrorsShowEvenWhenQuietest) {
  const auto run = run_cli_fresh("-qq tune no_such_op");
  EXPECT_EQ(run.status, 2);
  EXPECT_TRUE(contains(run.err, "tunekit: error: ")) << run.err;
}

TEST(LogCli, ABadTunekitLogIsAnErrorThatNamesIt) {
  const auto run = run_cli_fresh("tune sgemm --mode off", "TUNEKIT_LOG=loud");
  EXPECT_EQ(run.status, 2);
  EXPECT_TRUE(contains(run.err, "TUNEKIT_LOG='loud'")) << run.err;
  EXPECT_TRUE(contains(run.err, "error, warn, info or debug")) << run.err;
}

}  // namespace
