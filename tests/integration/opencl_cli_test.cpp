// tunekit devices and tunekit tune --backend opencl end to end: the device list, the skip path
// without a platform (OCL_ICD_VENDORS pointed at an empty directory), sgemm 256³ on the OpenCL
// device (a random sample of its 876,532-point space under an evaluation budget) with
// validation, the spread line, and a store key that keeps OpenCL and CPU choices apart; the
// row ops searched in full and conv2d under a budget; `ops --backend opencl` with the space sizes;
// --isolation worker in a spawned `tunekit trial-worker` with a context of its own.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "backends/opencl/opencl_support.hpp"
#include "integration/cli_runner.hpp"

namespace tunekit::testing {
namespace {

// An ICD vendors directory with no vendor in it: the loader finds no platform.
std::string no_platform_env(const TempDir& dir) {
  std::filesystem::create_directories(dir / "vendors");
  return "OCL_ICD_VENDORS='" + (dir / "vendors").string() + "'";
}

TEST(OpenclCli, DevicesListsTheCpuAndEveryOpenclDevice) {
  const CliResult run = run_cli_fresh("devices");
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_TRUE(contains(run.out, "cpu:")) << run.out;
  EXPECT_TRUE(contains(run.out, "opencl:")) << run.out;
  const auto devices = opencl::list_devices();
  for (const auto& d : devices) EXPECT_TRUE(contains(run.out, d.identity.product)) << run.out;

  const CliResult json = run_cli_fresh("devices --json");
  ASSERT_EQ(json.status, 0) << json.err;
  const auto j = parse_json(json);
  EXPECT_EQ(j["cpu"].size(), 1u);
  EXPECT_EQ(j["opencl"].size(), devices.size());
}

TEST(OpenclCli, WithoutAPlatformDevicesSaysSoAndTuneFailsClearly) {
  TempDir dir;
  const std::string env = no_platform_env(dir);
  const CliResult devices = run_cli(std::string("devices"), dir / "cache", dir.path(), env);
  ASSERT_EQ(devices.status, 0) << devices.err;
  EXPECT_TRUE(contains(devices.out, "no OpenCL platform found")) << devices.out;

  const CliResult tune =
      run_cli("tune sgemm --backend opencl --shape m=8,n=8,k=8 -q", dir / "cache", dir.path(), env);
  EXPECT_EQ(tune.status, 2) << tune.out;
  EXPECT_TRUE(contains(tune.err, "no OpenCL platform found")) << tune.err;
  EXPECT_TRUE(contains(tune.err, "pocl-opencl-icd")) << tune.err;
}

TEST(OpenclCli, BadBackendDeviceAndOpAreUsageErrors) {
  const CliResult backend = run_cli_fresh("tune sgemm --backend vulkan -q");
  EXPECT_EQ(backend.status, 2);
  EXPECT_TRUE(contains(backend.err, "unknown --backend 'vulkan'")) << backend.err;
  const CliResult cpu_device = run_cli_fresh("tune sgemm --device 0 -q");
  EXPECT_EQ(cpu_device.status, 2);
  EXPECT_TRUE(contains(cpu_device.err, "add --backend opencl")) << cpu_device.err;
  TUNEKIT_OPENCL_CONTEXT_OR_SKIP(context);
  const CliResult op = run_cli_fresh("tune sum --backend opencl -q");
  EXPECT_EQ(op.status, 2);
  EXPECT_TRUE(contains(op.err, "the OpenCL ops are: sgemm, softmax, rmsnorm, conv2d")) << op.err;
  const CliResult device = run_cli_fresh("tune sgemm --backend opencl --device no-such-gpu -q");
  EXPECT_EQ(device.status, 2);
  EXPECT_TRUE(contains(device.err, "matches no OpenCL device")) << device.err;
}

TEST(OpenclCli, OpsListsTheOpenclSpacesAndTheirDefaults) {
  // No device needed: the ops are listed from their spaces.
  const CliResult run = run_cli_fresh("ops --backend opencl --json");
  ASSERT_EQ(run.status, 0) << run.err;
  const auto j = parse_json(run);
  std::map<std::string, std::size_t> sizes;
  for (const auto& op : j) {
    EXPECT_EQ(op["backend"], "opencl") << run.out;
    sizes[op["name"].get<std::string>()] = op["space_size"].get<std::size_t>();
    if (op["name"] == "sgemm") {
      EXPECT_EQ(op["default"],
                "MWG=32,NWG=32,KWG=16,MDIMC=8,NDIMC=8,VWM=1,VWN=1,SA=0,SB=0,MDIMA=8,NDIMB=8,KWI=1,"
                "STRM=0,STRN=1");
    }
  }
  EXPECT_EQ(sizes, (std::map<std::string, std::size_t>{
                       {"sgemm", 876532}, {"softmax", 30}, {"rmsnorm", 15}, {"conv2d", 60}}));
}

// A full search of sgemm's space would take hours on PoCL: a seeded random sample of 6 points
// beside the default (about 7 builds).
constexpr const char* kSgemmBudget = " --strategy random --seed 3 --budget-evals 6";

TEST(OpenclCli, TuneSgemmOnOpenclPicksAValidatedWinnerAndKeepsItApartFromTheCpu) {
  TUNEKIT_OPENCL_CONTEXT_OR_SKIP(context);
  TempDir dir;
  const auto cache = dir / "cache";
  const std::string tune =
      std::string("tune sgemm --backend opencl --shape m=256,n=256,k=256") + kSgemmBudget + " -q";
  const CliResult run = run_cli(tune, cache, dir.path());
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_TRUE(contains(run.out, "source     searched")) << run.out;
  EXPECT_TRUE(contains(run.out, context->info().identity.product)) << run.out;
  EXPECT_TRUE(contains(run.out, "spread     best")) << run.out;

  // The stored choice answers the same OpenCL device again (same budget), with its evidence.
  const CliResult again = run_cli(tune + " --json", cache, dir.path());
  ASSERT_EQ(again.status, 0) << again.err;
  const auto j = parse_json(again);
  EXPECT_EQ(j["source"], "cache_replay") << again.out;
  const std::string winner = j["winner"].get<std::string>();
  EXPECT_TRUE(contains(winner, "MWG=")) << winner;     // an OpenCL configuration (Config text)
  EXPECT_LE(j["candidates"].size(), 7u) << again.out;  // the budget and the default

  // The CPU never sees the OpenCL choice: the store key includes the device identity.
  const CliResult cpu =
      run_cli("tune sgemm --shape m=256,n=256,k=256 -q --json --mode cached", cache, dir.path());
  ASSERT_EQ(cpu.status, 0) << cpu.err;
  const auto c = parse_json(cpu);
  EXPECT_NE(c["source"], "cache_replay") << cpu.out;
  EXPECT_FALSE(contains(c["winner"].get<std::string>(), "MWG=")) << cpu.out;
}

TEST(OpenclCli, TuneSoftmaxRmsnormAndConv2dOnOpencl) {
  TUNEKIT_OPENCL_CONTEXT_OR_SKIP(context);
  for (const char* args : {"tune softmax --backend opencl --shape rows=64,cols=333 -q --json",
                           "tune rmsnorm --backend opencl --shape rows=64,cols=333 -q --json",
                           "tune conv2d --backend opencl --shape h=37,w=29,fh=3,fw=3 -q --json "
                           "--strategy random --budget-evals 4"}) {
    const CliResult run = run_cli_fresh(std::string(args) + " --store none");
    ASSERT_EQ(run.status, 0) << args << "\n" << run.err;
    const auto j = parse_json(run);
    EXPECT_EQ(j["source"], "searched") << run.out;
    std::size_t ok = 0;
    for (const auto& c : j["candidates"]) ok += c["status"] == "ok";
    EXPECT_GE(ok, 1u) << run.out;
  }
}

// Issue #12: OpenCL trials under --isolation worker run in a spawned worker (`tunekit
// trial-worker`) that opens the device again with a context of its own; the same candidates
// validate as in process, and the pick is one of them.
TEST(OpenclCli, IsolatedTrialsRunInASpawnedWorkerWithItsOwnContext) {
  TUNEKIT_OPENCL_CONTEXT_OR_SKIP(context);
  const std::string tune =
      "tune softmax --backend opencl --shape rows=64,cols=333 -q --json --store none";
  const CliResult spawned = run_cli_fresh(tune + " --isolation worker");
  ASSERT_EQ(spawned.status, 0) << spawned.err;
  const CliResult here = run_cli_fresh(tune + " --isolation in_process");
  ASSERT_EQ(here.status, 0) << here.err;
  const auto s = parse_json(spawned), h = parse_json(here);
  EXPECT_TRUE(contains(s["isolation"].get<std::string>(), "worker (spawned: ")) << spawned.out;
  EXPECT_EQ(h["isolation"], "in_process") << here.out;
  std::map<std::string, std::string> status_here;
  for (const auto& c : h["candidates"]) status_here[c["name"]] = c["status"];
  ASSERT_EQ(s["candidates"].size(), h["candidates"].size()) << spawned.out;
  for (const auto& c : s["candidates"]) {
    const bool validated = c["status"] == "ok" || c["status"] == "hopeless";
    const bool validated_here =
        status_here[c["name"]] == "ok" || status_here[c["name"]] == "hopeless";
    EXPECT_EQ(validated, validated_here)
        << c["name"] << ": " << c["status"] << " vs " << status_here[c["name"]];
  }
  EXPECT_EQ(s["source"], "searched") << spawned.out;
  EXPECT_TRUE(status_here.count(s["winner"].get<std::string>())) << spawned.out;
}

// Without a program to spawn (TUNEKIT_WORKER_PROGRAM names none that exists), the search says
// what to do and tunes nothing.
TEST(OpenclCli, ASpawnedWorkerThatCannotStartIsAClearError) {
  TUNEKIT_OPENCL_CONTEXT_OR_SKIP(context);
  TempDir dir;
  const CliResult run = run_cli(
      "tune softmax --backend opencl --shape rows=8,cols=33 -q --store none --isolation worker",
      dir / "cache", dir.path(), "TUNEKIT_WORKER_PROGRAM=/nonexistent/tunekit");
  EXPECT_EQ(run.status, 2) << run.out << run.err;
  EXPECT_TRUE(contains(run.err, "/nonexistent/tunekit could not be started")) << run.err;
  EXPECT_TRUE(contains(run.err, "in_process")) << run.err;
}

}  // namespace
}  // namespace tunekit::testing
