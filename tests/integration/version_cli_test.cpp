// tunekit --version (tools/tunekit/main.cpp): the version CMake was configured with, the commit
// and the backends compiled in; it needs no subcommand.
#include <string>

#include <gtest/gtest.h>

#include "integration/cli_runner.hpp"

namespace {

using tunekit::testing::contains;

TEST(VersionCli, PrintsVersionCommitAndBackendsWithoutACommand) {
  const tunekit::testing::CliResult run = tunekit::testing::run_cli_fresh("--version");
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_EQ(run.out.rfind("tunekit " TUNEKIT_EXPECTED_VERSION "\n", 0), 0u) << run.out;
  EXPECT_TRUE(contains(run.out, "\ncommit: ")) << run.out;
  EXPECT_FALSE(contains(run.out, "commit: \n")) << "an empty commit, not 'unknown':\n" << run.out;
  EXPECT_TRUE(contains(run.out, "\nbackends: cpu, opencl")) << run.out;
  EXPECT_TRUE(run.err.empty()) << run.err;
}

TEST(VersionCli, HelpListsTheVersionFlag) {
  const tunekit::testing::CliResult run = tunekit::testing::run_cli_fresh("--help");
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_TRUE(contains(run.out, "--version")) << run.out;
}

}  // namespace
