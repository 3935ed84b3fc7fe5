// context.cpp (Function::launch): every limit is checked before cuLaunchKernel, and the refusal
// names the limit; a launch within the limits goes through as given; dynamic shared memory over
// 48 KiB opts in first. On the fake driver (an H200's limits).
#include <gtest/gtest.h>

#include "backends/cuda/fake_driver.hpp"
#include "tunekit/errors.hpp"

namespace tunekit::cuda {
namespace {

using testing::FakeDriver;

constexpr std::string_view kSource = R"(extern "C" __global__ void k(float* x) {})";

struct Fixture {
  Fixture() : context(testing::open_fake_context(driver)) {}
  Function function() { return context->function(kSource, {"-DX=1"}, "k"); }
  // The launch's refusal text, after checking it is launch_failed and nothing was enqueued.
  std::string refusal(Dim3 grid, Dim3 block, unsigned shared = 0) {
    Function f = function();
    const int before = driver.calls("cuLaunchKernel");
    try {
      f.launch(grid, block, shared, {});
    } catch (const TrialError& e) {
      EXPECT_EQ(e.status(), Status::launch_failed) << e.what();
      EXPECT_EQ(driver.calls("cuLaunchKernel"), before) << "enqueued before the check";
      EXPECT_FALSE(context->lost());
      return e.what();
    }
    ADD_FAILURE() << "the launch was not refused";
    return "";
  }
  FakeDriver driver;
  std::shared_ptr<Context> context;
};

TEST(CudaLaunchLimits, ThreadsPerBlockOverTheDevicesMaximum) {
  Fixture f;
  const std::string m = f.refusal({1, 1, 1}, {1024, 2, 1});
  EXPECT_NE(m.find("k: 2048 threads per block (1024x2x1)"), std::string::npos) << m;
  EXPECT_NE(m.find("device's maximum of 1024 threads per block"), std::string::npos) << m;
}

TEST(CudaLaunchLimits, ThreadsPerBlockOverTheFunctionsMaximum) {
  Fixture f;
  f.driver.function_max_threads = 256;
  const std::string m = f.refusal({1, 1, 1}, {512, 1, 1});
  EXPECT_NE(m.find("this function's maximum of 256"), std::string::npos) << m;
  EXPECT_NE(m.find("CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK"), std::string::npos) << m;
}

TEST(CudaLaunchLimits, BlockAndGridDimensions) {
  Fixture f;
  std::string m = f.refusal({1, 1, 1}, {1, 1, 128});
  EXPECT_NE(m.find("block dimension z of 128 exceeds the device's maximum 64"), std::string::npos)
      << m;
  m = f.refusal({1, 70000, 1}, {32, 1, 1});
  EXPECT_NE(m.find("grid dimension y of 70000 exceeds the device's maximum 65535"),
            std::string::npos)
      << m;
  m = f.refusal({0, 1, 1}, {32, 1, 1});
  EXPECT_NE(m.find("dimension is 0"), std::string::npos) << m;
}

TEST(CudaLaunchLimits, DynamicSharedMemoryOverTheOptInMaximumMinusStatic) {
  Fixture f;
  f.driver.function_static_shared = 16 * 1024;
  // 227 KiB opt-in - 16 KiB static = 211 KiB: one byte more is refused, the limit named.
  const std::string m = f.refusal({1, 1, 1}, {128, 1, 1}, 211 * 1024 + 1);
  EXPECT_NE(m.find("dynamic shared memory"), std::string::npos) << m;
  EXPECT_NE(m.find("opt-in maximum of 232448 bytes"), std::string::npos) << m;
  EXPECT_NE(m.find("16384 bytes of static shared memory"), std::string::npos) << m;
  EXPECT_EQ(f.driver.calls("cuFuncSetAttribute"), 0);
}

TEST(CudaLaunchLimits, RegistersTimesThreadsOverTheRegistersPerBlock) {
  Fixture f;
  f.driver.function_registers = 255;
  const std::string m = f.refusal({1, 1, 1}, {1024, 1, 1});
  EXPECT_NE(m.find("255 registers per thread x 1024 threads"), std::string::npos) << m;
  EXPECT_NE(m.find("65536 registers per block"), std::string::npos) << m;
}

TEST(CudaLaunchLimits, WithinTheLimitsTheLaunchGoesThroughAsGiven) {
  Fixture f;
  Function fn = f.function();
  EXPECT_EQ(fn.name(), "k");
  EXPECT_EQ(fn.max_threads_per_block(), 1024);
  EXPECT_EQ(fn.registers_per_thread(), 32);
  float value = 0;
  void* pointer = &value;
  void* args[] = {&pointer};
  fn.launch({2147483647u, 65535, 65535}, {1024, 1, 1}, 48 * 1024, args);
  ASSERT_EQ(f.driver.launches.size(), 1u);
  const FakeDriver::Launch& l = f.driver.launches[0];
  EXPECT_EQ(l.function, "k");
  EXPECT_EQ(l.grid[0], 2147483647u);
  EXPECT_EQ(l.grid[2], 65535u);
  EXPECT_EQ(l.block[0], 1024u);
  EXPECT_EQ(l.shared, 48u * 1024);
  EXPECT_FALSE(l.captured);
  EXPECT_EQ(f.driver.calls("cuFuncSetAttribute"), 0) << "48 KiB needs no opt-in";
}

TEST(CudaLaunchLimits, DynamicSharedMemoryOver48KiBOptsInBeforeTheLaunch) {
  Fixture f;
  f.driver.function_static_shared = 1024;
  Function fn = f.function();
  fn.launch({1, 1, 1}, {256, 1, 1}, 100 * 1024, {});
  ASSERT_EQ(f.driver.attributes_set.size(), 1u);
  EXPECT_EQ(f.driver.attributes_set[0].first, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES);
  EXPECT_EQ(f.driver.attributes_set[0].second, 100 * 1024);
  const int opt_in = f.driver.find("cuFuncSetAttribute");
  ASSERT_GE(opt_in, 0);
  EXPECT_GT(f.driver.find("cuLaunchKernel k", opt_in), opt_in);
  // Static + dynamic just over 48 KiB opts in too.
  fn.launch({1, 1, 1}, {256, 1, 1}, 48 * 1024, {});
  EXPECT_EQ(f.driver.attributes_set.size(), 2u);
}

TEST(CudaLaunchLimits, ARefusedEnqueueIsLaunchFailedAndTheContextLives) {
  Fixture f;
  Function fn = f.function();
  f.driver.fail_next("cuLaunchKernel", CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES);
  try {
    fn.launch({1, 1, 1}, {32, 1, 1}, 0, {});
    FAIL() << "no error";
  } catch (const TrialError& e) {
    EXPECT_EQ(e.status(), Status::launch_failed);
    EXPECT_NE(std::string(e.what()).find("cuLaunchKernel of k failed: "
                                         "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES (701)"),
              std::string::npos)
        << e.what();
  }
  EXPECT_FALSE(f.context->lost());
  fn.launch({1, 1, 1}, {32, 1, 1}, 0, {});
  EXPECT_EQ(f.driver.calls("cuLaunchKernel"), 2);
}

TEST(CudaLaunchLimits, AModuleIsLoadedOncePerImageAndFunctionsAreCached) {
  int compiles = 0;
  FakeDriver driver;
  ContextOptions options;
  options.backlog_seconds = 0;  // no spin kernel: only the test's modules count
  const auto context = testing::open_fake_context(driver, "", options, &compiles);
  context->function(kSource, {}, "k");
  context->function(kSource, {}, "k");
  EXPECT_EQ(compiles, 1);
  EXPECT_EQ(driver.calls("cuModuleLoadData"), 1);
  context->function(kSource, {"-DOTHER"}, "k");  // another image: its own module
  EXPECT_EQ(driver.calls("cuModuleLoadData"), 2);
  driver.fail_next("cuModuleGetFunction", CUDA_ERROR_NOT_FOUND);
  try {
    context->function(kSource, {}, "missing");
    FAIL() << "no error";
  } catch (const TrialError& e) {
    EXPECT_EQ(e.status(), Status::compile_failed);
    EXPECT_NE(std::string(e.what()).find("no kernel 'missing'"), std::string::npos) << e.what();
  }
  EXPECT_EQ(driver.calls("cuModuleLoadData"), 2) << "the image's module was loaded already";
  driver.fail_next("cuModuleLoadData", CUDA_ERROR_NO_BINARY_FOR_GPU);
  try {
    context->function("another source", {}, "k");
    FAIL() << "no error";
  } catch (const TrialError& e) {
    EXPECT_EQ(e.status(), Status::compile_failed);
    EXPECT_NE(std::string(e.what()).find("CUDA_ERROR_NO_BINARY_FOR_GPU"), std::string::npos);
  }
}

}  // namespace
}  // namespace tunekit::cuda
