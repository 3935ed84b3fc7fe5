// kernels/cuda on the fake driver (tests/unit/backends/cuda/fake_driver.hpp; no GPU needed):
// a candidate's run function only enqueues kernels — no copy, no synchronisation — with the
// grid and block its point asks for (split-k adds its reduction); the host mirror moves only in
// the validation hooks; the build step compiles a point once and the launch then compiles
// nothing; a queued batch captures into a graph; a cuBLAS point whose handle cannot be made is
// compile_failed naming cuBLAS.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "backends/cuda/fake_driver.hpp"
#include "cuda/cu_common.hpp"
#include "cuda/cu_ops.hpp"
#include "tunekit/cpu.hpp"
#include "tunekit/cuda.hpp"

namespace tunekit::kernels::cu {
namespace {

using testing::FakeDriver;

Config with(Config c, std::string_view changes) {
  const Config parsed = Config::parse(changes);  // kept: fields() refers into it
  for (const Field& f : parsed.fields()) c.set(f.name, f.value);
  return c;
}

// The copies and synchronisations the driver saw so far.
int host_traffic(const FakeDriver& d) {
  return d.calls("cuMemcpyHtoDAsync") + d.calls("cuMemcpyDtoHAsync") +
         d.calls("cuStreamSynchronize") + d.calls("cuEventSynchronize");
}

struct Fixture {
  FakeDriver driver;
  int compiles = 0;
  std::shared_ptr<cuda::Context> context = testing::open_fake_context(driver, "", {}, &compiles);
  cpu::ThreadPool pool{1};

  // Builds candidate `config` of `op` on `shape`, then runs it once and returns its launches.
  std::vector<FakeDriver::Launch> launches_of(const OpBase& op, const std::string& shape,
                                              const Config& config) {
    std::unique_ptr<Workload> w = op.make_workload(op.parse_shape(shape));
    const std::size_t i = *op.enumeration().index_of(config);
    const Outcome built = w->build_candidate(i);
    EXPECT_TRUE(built.ok()) << built.message;
    const int compiled = compiles, traffic = host_traffic(driver);
    driver.launches.clear();
    w->run_candidate(i);
    EXPECT_EQ(compiles, compiled) << "the launch compiled";
    EXPECT_EQ(host_traffic(driver), traffic) << "the launch copied or synchronised";
    return driver.launches;
  }
};

void expect_launch(const FakeDriver::Launch& l, const std::string& name, std::vector<unsigned> grid,
                   std::vector<unsigned> block) {
  EXPECT_EQ(l.function, name);
  EXPECT_EQ(std::vector<unsigned>(l.grid, l.grid + 3), grid) << name;
  EXPECT_EQ(std::vector<unsigned>(l.block, l.block + 3), block) << name;
  EXPECT_EQ(l.shared, 0u) << name;
}

TEST(CudaOpsFake, SgemmTilesLaunchOneKernelPerPartialTileGrid) {
  Fixture f;
  auto op = make_sgemm_op(f.context, f.pool);
  // 67 x 45: two 64-row tiles, one 64-column tile, 128 threads.
  const auto l = f.launches_of(*op, "m=67,n=45,k=300", sgemm_default_config());
  ASSERT_EQ(l.size(), 1u);
  expect_launch(l[0], "sgemm", {1, 2, 1}, {128, 1, 1});
}

TEST(CudaOpsFake, SplitKAddsItsReductionInTheSameEnqueue) {
  Fixture f;
  auto op = make_sgemm_op(f.context, f.pool);
  const Config split =
      with(sgemm_default_config(),
           "BM=128,BN=128,WM=64,WN=32,TM=8,TN=4,WTN=4,BK=16,VW=4,STAGES=2,SPLITK=4");
  const auto l = f.launches_of(*op, "m=300,n=45,k=300", split);
  ASSERT_EQ(l.size(), 2u);
  expect_launch(l[0], "sgemm", {1, 3, 4}, {256, 1, 1});
  expect_launch(l[1], "sgemm_reduce", {1, 300, 1}, {256, 1, 1});
}

TEST(CudaOpsFake, RowOpsLaunchRowsPerBlockGroupsOfThreadsPerRow) {
  Fixture f;
  auto softmax = make_softmax_op(f.context, f.pool);
  const auto s = f.launches_of(*softmax, "rows=7,cols=301",
                               Config{{"TPR", 64}, {"RPB", 4}, {"VW", 4}, {"EXP", "__expf"}});
  ASSERT_EQ(s.size(), 1u);
  expect_launch(s[0], "softmax", {2, 1, 1}, {256, 1, 1});
  auto rmsnorm = make_rmsnorm_op(f.context, f.pool);
  const auto r =
      f.launches_of(*rmsnorm, "rows=5,cols=1001", Config{{"TPR", 32}, {"RPB", 16}, {"VW", 2}});
  ASSERT_EQ(r.size(), 1u);
  expect_launch(r[0], "rmsnorm", {1, 1, 1}, {512, 1, 1});
}

TEST(CudaOpsFake, Conv2dLaunchesTheTilesOfTheOutput) {
  Fixture f;
  auto op = make_conv2d_op(f.context, f.pool);
  // 37 x 29 output, 32 x 8 tiles (16 x 4 threads, 2 x 2 outputs each): 1 x 5 blocks.
  const auto l = f.launches_of(*op, "h=37,w=29,fh=5,fw=3",
                               Config{{"BX", 16}, {"BY", 4}, {"TX", 2}, {"TY", 2}, {"SL", 1}});
  ASSERT_EQ(l.size(), 1u);
  expect_launch(l[0], "conv2d", {1, 5, 1}, {16, 4, 1});
}

TEST(CudaOpsFake, TheBuildStepCompilesAPointOnceAndSplitKSharesItsKernel) {
  Fixture f;
  auto op = make_sgemm_op(f.context, f.pool);
  std::unique_ptr<Workload> w = op->make_workload(op->parse_shape("m=67,n=45,k=300"));
  const std::size_t d = op->default_index(op->parse_shape("m=67,n=45,k=300"));
  const std::size_t split = *op->find(with(sgemm_default_config(), "SPLITK=2").text());
  const int before = f.compiles;  // the context's own backlog kernel
  ASSERT_TRUE(w->build_candidate(d).ok());
  const int built = f.compiles;
  EXPECT_GT(built, before);
  // The fake compiler caches nothing; the context's function table does.
  ASSERT_TRUE(w->build_candidate(d).ok());
  ASSERT_TRUE(w->build_candidate(split).ok());
  EXPECT_EQ(f.compiles, built);
}

TEST(CudaOpsFake, TheHostMirrorMovesOnlyInTheValidationHooks) {
  Fixture f;
  auto op = make_rmsnorm_op(f.context, f.pool);
  std::unique_ptr<Workload> w = op->make_workload(op->parse_shape("rows=3,cols=77"));
  int htod = f.driver.calls("cuMemcpyHtoDAsync");
  w->before_check();  // the poison hook: the host's values to the device
  EXPECT_EQ(f.driver.calls("cuMemcpyHtoDAsync"), htod + 1);
  const int dtoh = f.driver.calls("cuMemcpyDtoHAsync");
  w->outputs();  // the device's values to the host
  EXPECT_EQ(f.driver.calls("cuMemcpyDtoHAsync"), dtoh + 1);
  htod = f.driver.calls("cuMemcpyHtoDAsync");
  w->run_reference();  // computed on the host, written to the device
  EXPECT_EQ(f.driver.calls("cuMemcpyHtoDAsync"), htod + 1);
  htod = f.driver.calls("cuMemcpyHtoDAsync");
  ASSERT_TRUE(w->restore_inputs());  // x and w uploaded again
  EXPECT_EQ(f.driver.calls("cuMemcpyHtoDAsync"), htod + 2);
}

TEST(CudaOpsFake, AQueuedBatchCapturesEveryLaunchIntoAGraph) {
  Fixture f;
  auto op = make_sgemm_op(f.context, f.pool);
  const Key key = op->parse_shape("m=67,n=45,k=300");
  std::unique_ptr<Workload> w = op->make_workload(key);
  const std::size_t split = *op->find(with(sgemm_default_config(), "SPLITK=2").text());
  cuda::CudaDevice device(f.context);
  std::unique_ptr<Trial> trial = device.make_trial(*w, split);
  ASSERT_TRUE(trial->build().ok());
  ASSERT_TRUE(trial->prepare().ok());
  f.driver.launches.clear();
  trial->launch_batch(8);  // throws launch_failed when a launch breaks the capture
  trial->sync();
  std::size_t captured = 0;
  for (const FakeDriver::Launch& l : f.driver.launches) captured += l.captured ? 1 : 0;
  EXPECT_EQ(captured, 16u);  // 8 x (sgemm + sgemm_reduce)
  EXPECT_EQ(f.driver.calls("cuGraphLaunch"), 1);
  trial->release();
}

TEST(CudaOpsFake, TheBuildStepCompilesWithNvrtcAndABrokenKernelIsCompileFailedWithTheLog) {
  FakeDriver driver;  // the fake device is an sm_90
  const std::shared_ptr<cuda::Context> context =
      detail::ContextAccess::open(driver.table(), "", {}, cuda::nvrtc_compiler());
  cpu::ThreadPool pool(1);
  auto op = make_conv2d_op(context, pool);
  const Key key = op->parse_shape("h=9,w=9,fh=3,fw=2");
  const Outcome built = op->make_workload(key)->build_candidate(op->default_index(key));
  EXPECT_TRUE(built.ok()) << built.message;
  const Outcome broken = build_functions(
      *context, R"(extern "C" __global__ void k(float* x) { x[0] = 1.0f + ; })", {}, {"k"});
  EXPECT_EQ(broken.status, Status::compile_failed);
  EXPECT_NE(broken.message.find("error"), std::string::npos) << broken.message;  // NVRTC's log
}

TEST(CudaOpsFake, ACublasPointWithoutAHandleIsCompileFailedNamingCublas) {
  if (!cuda::list_devices().empty())
    GTEST_SKIP() << "a real CUDA device is present: cuBLAS would make its handle on it";
  Fixture f;
  auto op = make_sgemm_op(f.context, f.pool);
  std::unique_ptr<Workload> w = op->make_workload(op->parse_shape("m=67,n=45,k=300"));
  const std::vector<std::size_t> anchors = op->anchor_indices();
  ASSERT_FALSE(anchors.empty());
  const Outcome o = w->build_candidate(anchors[0]);
  EXPECT_EQ(o.status, Status::compile_failed) << o.message;
  EXPECT_NE(o.message.find("cublasCreate failed"), std::string::npos) << o.message;
  // Remembered for the op: the other cuBLAS points answer the same without a second try.
  EXPECT_EQ(w->build_candidate(anchors[1]).message, o.message);
  // Running it anyway is the same classified failure, and nothing is launched.
  f.driver.launches.clear();
  try {
    w->run_candidate(anchors[0]);
    ADD_FAILURE() << "a cuBLAS point ran without a handle";
  } catch (const TrialError& e) {
    EXPECT_EQ(e.status(), Status::compile_failed);
  }
  EXPECT_TRUE(f.driver.launches.empty());
}

}  // namespace
}  // namespace tunekit::kernels::cu
