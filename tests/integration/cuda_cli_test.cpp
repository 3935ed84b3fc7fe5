// tunekit devices, ops and tune --backend cuda end to end: the CUDA section of the device list
// (none here without a driver, and why), the CUDA ops listed from their spaces without a
// device, a clear error for --backend cuda without a device, and on a GPU a budgeted sgemm
// tune at an odd shape whose winner validated.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "integration/cli_runner.hpp"
#include "tunekit/cuda.hpp"

namespace tunekit::testing {
namespace {

TEST(CudaCli, DevicesHasACudaSectionAndSaysWhyItIsEmpty) {
  const CliResult run = run_cli_fresh("devices");
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_TRUE(contains(run.out, "cuda: (NVRTC " + cuda::nvrtc_version() + ")")) << run.out;
  const auto devices = cuda::list_devices();
  if (devices.empty()) {
    EXPECT_TRUE(contains(run.out, "no CUDA device (")) << run.out;
  } else {
    for (const auto& d : devices) EXPECT_TRUE(contains(run.out, d.identity.product)) << run.out;
  }
  const CliResult json = run_cli_fresh("devices --json");
  ASSERT_EQ(json.status, 0) << json.err;
  const auto j = parse_json(json);
  ASSERT_TRUE(j.contains("cuda")) << json.out;
  EXPECT_EQ(j["cuda"].size(), devices.size());
  EXPECT_EQ(j["cuda_driver"]["loaded"].get<bool>(), cuda::driver_status().loaded);
  if (!cuda::driver_status().loaded) {
    EXPECT_FALSE(j["cuda_driver"]["message"].get<std::string>().empty()) << json.out;
  }
}

TEST(CudaCli, VersionNamesTheCudaBackend) {
  const CliResult run = run_cli_fresh("--version");
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_TRUE(contains(run.out, ", cuda (toolkit ")) << run.out;
}

TEST(CudaCli, OpsListsTheCudaSpacesWithoutADevice) {
  const CliResult run = run_cli_fresh("ops --backend cuda --json");
  ASSERT_EQ(run.status, 0) << run.err;
  const auto j = parse_json(run);
  std::map<std::string, std::size_t> sizes;
  for (const auto& op : j) {
    EXPECT_EQ(op["backend"], "cuda") << run.out;
    sizes[op["name"].get<std::string>()] = op["space_size"].get<std::size_t>();
  }
  ASSERT_EQ(sizes.size(), 4u) << run.out;
  EXPECT_GE(sizes["sgemm"], 1000u) << "sgemm's tile space is a realistic size";
  EXPECT_GT(sizes["softmax"], 1u);
  EXPECT_GT(sizes["rmsnorm"], 1u);
  EXPECT_GT(sizes["conv2d"], 1u);
}

TEST(CudaCli, UnknownCudaOpNamesTheCudaOps) {
  const CliResult run = run_cli_fresh("tune sum --backend cuda -q");
  EXPECT_EQ(run.status, 2) << run.out;
  EXPECT_TRUE(contains(run.err, "the CUDA ops are: ")) << run.err;
}

TEST(CudaCli, ArchIsForCudaOnlyAndMustNameAnArchitecture) {
  const CliResult cpu = run_cli_fresh("tune sum --arch sm_80 -q");
  EXPECT_EQ(cpu.status, 2);
  EXPECT_TRUE(contains(cpu.err, "--arch names the architecture CUDA kernels")) << cpu.err;
  const CliResult bad = run_cli_fresh("tune sgemm --backend cuda --arch volta -q");
  EXPECT_EQ(bad.status, 2);
  EXPECT_TRUE(contains(bad.err, "--arch 'volta' is not a CUDA architecture")) << bad.err;
}

TEST(CudaCli, WithoutADeviceTuneFailsClearly) {
  if (!cuda::list_devices().empty()) GTEST_SKIP() << "a CUDA device is present";
  const CliResult run = run_cli_fresh("tune sgemm --backend cuda --shape m=8,n=8,k=8 -q");
  EXPECT_EQ(run.status, 2) << run.out;
  EXPECT_TRUE(contains(run.err, "CUDA")) << run.err;
  EXPECT_TRUE(contains(run.err, cuda::driver_status().message.substr(0, 20))) << run.err;
}

TEST(CudaGpu, TuneSgemmAtAnOddShapeOnTheDevice) {
  if (cuda::list_devices().empty())
    GTEST_SKIP() << "no CUDA device: " << cuda::driver_status().message;
  const CliResult run = run_cli_fresh(
      "tune sgemm --backend cuda --shape m=67,n=93,k=41 --budget-evals 24 --store none -q --json");
  ASSERT_EQ(run.status, 0) << run.err;
  const auto j = parse_json(run);
  EXPECT_FALSE(j["winner"].get<std::string>().empty()) << run.out;
}

}  // namespace
}  // namespace tunekit::testing
