// `tunekit tune --wait-for-device` (tools/tunekit/commands/tune.cpp) against a device lock the
// test holds in the run's cache directory, as another tuning process would.
#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "integration/cli_runner.hpp"
#include "tunekit/cpu.hpp"
#include "tuner/device_lock.hpp"

namespace {

namespace fs = std::filesystem;
using tunekit::detail::DeviceLock;
using tunekit::testing::contains;
using tunekit::testing::parse_json;
using tunekit::testing::run_cli;

using tunekit::testing::kTuneSum;

class DeviceLockCli : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(dir_.path().empty());
    // The lock the CLI's CPU device takes: locks/ in its cache directory.
    other_ = std::make_unique<DeviceLock>(
        DeviceLock::path_for((cache() / "locks").string(), tunekit::cpu::host_identity()));
    ASSERT_EQ(other_->try_lock(), DeviceLock::State::held) << other_->problem();
  }
  fs::path cache() const { return dir_ / "cache"; }

  tunekit::testing::TempDir dir_;
  std::unique_ptr<DeviceLock> other_;  // "another process" searching on this host
};

TEST_F(DeviceLockCli, AnotherProcesssSearchServesTheDefaultAtOnce) {
  const auto run = run_cli(kTuneSum, cache(), dir_.path());
  ASSERT_EQ(run.status, 0) << run.err;
  const auto j = parse_json(run);
  EXPECT_EQ(j["source"], "default");
  EXPECT_TRUE(contains(j["reason"].get<std::string>(), "another process is searching"))
      << j["reason"];
}

TEST_F(DeviceLockCli, WaitForDeviceSearchesOnceTheOtherProcessIsDone) {
  std::thread release([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    other_.reset();
  });
  const auto run = run_cli(std::string(kTuneSum) + " --wait-for-device 60s", cache(), dir_.path());
  release.join();
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_EQ(parse_json(run)["source"], "searched");
}

TEST_F(DeviceLockCli, ABadWaitIsRefusedWithTheFlagsName) {
  for (const char* bad : {"nan", "-1", "soon"}) {
    const auto run =
        run_cli(std::string(kTuneSum) + " --wait-for-device " + bad, cache(), dir_.path());
    EXPECT_NE(run.status, 0) << bad;
    EXPECT_TRUE(contains(run.err, "--wait-for-device")) << bad << ": " << run.err;
  }
}

}  // namespace
