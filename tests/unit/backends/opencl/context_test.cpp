// context.cpp, cl_compiler.cpp on a real OpenCL device (PoCL in CI): identity, compile
// failures with the build log, the program cache, classified launch failures and allocation
// failures, and the event clock. Skipped (reported as SKIPPED) when no platform exists.
#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

#include "backends/opencl/opencl_support.hpp"
#include "tunekit/opencl.hpp"
#include "tunekit/outcome.hpp"

namespace tunekit::opencl {
namespace {

// Each work-item spins `iterations` times: the work grows linearly with it.
constexpr std::string_view kSpin = R"(
__kernel void spin(const int iterations, __global float* out) {
  const int i = get_global_id(0);
  float x = (float)i;
  for (int k = 0; k < iterations; ++k) x = x * 0.999f + 1.0f;
  out[i] = x;
})";

TEST(OpenclContext, IdentityIsReadFromTheDevice) {
  TUNEKIT_OPENCL_CONTEXT_OR_SKIP(context);
  const DeviceInfo& info = context->info();
  EXPECT_EQ(info.identity.backend, "opencl");
  EXPECT_FALSE(info.identity.product.empty());
  EXPECT_FALSE(info.identity.vendor.empty());
  EXPECT_NE(info.identity.driver.find("OpenCL"), std::string::npos) << info.identity.driver;
  EXPECT_GT(info.identity.compute_units, 0);
  EXPECT_GT(info.global_memory, 0u);
  EXPECT_GT(info.local_memory, 0u);
  EXPECT_GT(info.max_work_group, 0u);
  EXPECT_TRUE(info.identity.known);
}

TEST(OpenclContext, ASyntaxErrorIsCompileFailedWithTheBuildLog) {
  TUNEKIT_OPENCL_CONTEXT_OR_SKIP(context);
  try {
    context->kernel("__kernel void broken(__global float* x) { x[0] = 1.0f +; }", "", "broken");
    FAIL() << "a kernel with a syntax error built";
  } catch (const TrialError& e) {
    EXPECT_EQ(e.status(), Status::compile_failed);
    const std::string message = e.what();
    EXPECT_NE(message.find("OpenCL build failed"), std::string::npos) << message;
    EXPECT_NE(message.find("error"), std::string::npos) << message;  // the compiler's log
  }
}

TEST(OpenclContext, TheProgramCacheHitsOnASecondBuild) {
  TUNEKIT_OPENCL_CONTEXT_OR_SKIP(context);
  const BuildStats before = context->compiler().stats();
  context->kernel(kSpin, "-DCACHE_TEST=1", "spin");
  const BuildStats once = context->compiler().stats();
  context->kernel(kSpin, "-DCACHE_TEST=1", "spin");
  const BuildStats twice = context->compiler().stats();
  EXPECT_EQ(once.builds, before.builds + 1);
  EXPECT_EQ(twice.builds, once.builds);  // nothing rebuilt
  EXPECT_EQ(twice.hits, once.hits + 1);
  context->kernel(kSpin, "-DCACHE_TEST=2", "spin");  // other options: a new build
  EXPECT_EQ(context->compiler().stats().builds, once.builds + 1);
}

TEST(OpenclContext, AMissingKernelNameIsCompileFailed) {
  TUNEKIT_OPENCL_CONTEXT_OR_SKIP(context);
  try {
    context->kernel(kSpin, "", "no_such_kernel");
    FAIL();
  } catch (const TrialError& e) {
    EXPECT_EQ(e.status(), Status::compile_failed);
    EXPECT_NE(std::string(e.what()).find("no_such_kernel"), std::string::npos);
  }
}

TEST(OpenclContext, AWorkGroupOverTheDeviceLimitIsALaunchFailure) {
  TUNEKIT_OPENCL_CONTEXT_OR_SKIP(context);
  Kernel k = context->kernel(kSpin, "", "spin");
  const std::size_t too_big = context->info().max_work_group * 2;
  Buffer out(*context, too_big * sizeof(float));
  k.set_arg(0, 1);
  k.set_arg(1, out);
  const std::size_t global[1] = {too_big};
  const std::size_t local[1] = {too_big};
  try {
    k.launch(global, local);
    FAIL() << "a work-group of " << too_big << " launched";
  } catch (const TrialError& e) {
    EXPECT_EQ(e.status(), Status::launch_failed);
    EXPECT_NE(std::string(e.what()).find("exceeds"), std::string::npos) << e.what();
  }
}

TEST(OpenclContext, AGlobalSizeNotAMultipleOfTheWorkGroupIsALaunchFailure) {
  TUNEKIT_OPENCL_CONTEXT_OR_SKIP(context);
  Kernel k = context->kernel(kSpin, "", "spin");
  Buffer out(*context, 100 * sizeof(float));
  k.set_arg(0, 1);
  k.set_arg(1, out);
  const std::size_t global[1] = {100};
  const std::size_t local[1] = {8};
  try {
    k.launch(global, local);
    FAIL();
  } catch (const TrialError& e) {
    EXPECT_EQ(e.status(), Status::launch_failed);
    EXPECT_NE(std::string(e.what()).find("not a multiple"), std::string::npos) << e.what();
  }
}

TEST(OpenclContext, ABufferOverTheLargestAllocationIsOutOfMemory) {
  TUNEKIT_OPENCL_CONTEXT_OR_SKIP(context);
  try {
    Buffer huge(*context, context->info().max_allocation + 1);
    FAIL() << "allocated more than the device's largest allocation";
  } catch (const TrialError& e) {
    EXPECT_EQ(e.status(), Status::out_of_memory);
  }
}

TEST(OpenclContext, BuffersRoundTrip) {
  TUNEKIT_OPENCL_CONTEXT_OR_SKIP(context);
  std::vector<float> in{1.5f, -2.0f, 3.25f}, out(3);
  Buffer b(*context, in.size() * sizeof(float));
  b.write(in.data(), in.size() * sizeof(float));
  b.read(out.data(), out.size() * sizeof(float));
  EXPECT_EQ(in, out);
}

// One window of `launches` dispatches of spin(iterations) on the event clock.
double window(Context& context, Kernel& k, int iterations, int launches) {
  k.set_arg(0, iterations);
  const std::size_t global[1] = {256};
  const std::size_t local[1] = {64};
  EventClock clock(context.shared_from_this());
  clock.begin();
  for (int i = 0; i < launches; ++i) k.launch(global, local);
  context.finish();
  return clock.end();
}

TEST(OpenclContext, EventTimingsGrowWithTheWork) {
  TUNEKIT_OPENCL_CONTEXT_OR_SKIP(context);
  Kernel k = context->kernel(kSpin, "", "spin");
  Buffer out(*context, 256 * sizeof(float));
  k.set_arg(1, out);
  window(*context, k, 1000, 1);  // warm: PoCL generates code on the first launch
  // The minimum of several windows: interference only adds time. 16x the work must read
  // well over 4x the time (margin for launch overheads on a loaded CPU device).
  double small = 1e9, large = 1e9;
  for (int rep = 0; rep < 5; ++rep) {
    small = std::min(small, window(*context, k, 20000, 1));
    large = std::min(large, window(*context, k, 320000, 1));
  }
  EXPECT_GT(small, 0);
  EXPECT_GT(large, 4 * small) << "small " << small << " s, large " << large << " s";
}

TEST(OpenclContext, AQueuedWindowSpansItsWholeBatch) {
  TUNEKIT_OPENCL_CONTEXT_OR_SKIP(context);
  Kernel k = context->kernel(kSpin, "", "spin");
  Buffer out(*context, 256 * sizeof(float));
  k.set_arg(1, out);
  window(*context, k, 1000, 1);
  double one = 1e9, eight = 1e9;
  for (int rep = 0; rep < 5; ++rep) {
    one = std::min(one, window(*context, k, 50000, 1));
    eight = std::min(eight, window(*context, k, 50000, 8));
  }
  // First start to last end of 8 in-order launches: at least several single launches.
  EXPECT_GT(eight, 4 * one) << "one " << one << " s, eight " << eight << " s";
}

TEST(OpenclContext, AWarmUpRunsOneWorkGroupOutsideTheEventWindow) {
  TUNEKIT_OPENCL_CONTEXT_OR_SKIP(context);
  Kernel k = context->kernel(kSpin, "-DWARM_TEST=1", "spin");
  Buffer out(*context, 64 * sizeof(float));
  k.set_arg(0, 10);
  k.set_arg(1, out);
  std::vector<float> host(64, -1.0f);
  out.write(host.data(), host.size() * sizeof(float));
  EventClock clock(context);
  clock.begin();
  const std::size_t local[1] = {64};
  k.warm_up(local);
  EXPECT_EQ(clock.end(), 0.0);  // its own queue: nothing entered the timing's window
  out.read(host.data(), host.size() * sizeof(float));
  EXPECT_GT(host[63], 0.0f);  // and it ran (one work-group of 64)
}

TEST(OpenclContext, AWarmUpOverTheWorkGroupLimitIsALaunchFailure) {
  TUNEKIT_OPENCL_CONTEXT_OR_SKIP(context);
  Kernel k = context->kernel(kSpin, "", "spin");
  Buffer out(*context, sizeof(float));
  k.set_arg(0, 1);
  k.set_arg(1, out);
  const std::size_t local[1] = {context->info().max_work_group * 2};
  try {
    k.warm_up(local);
    FAIL() << "a warm-up over the device's work-group limit was dispatched";
  } catch (const TrialError& e) {
    EXPECT_EQ(e.status(), Status::launch_failed);
  }
}

TEST(OpenclContext, ConcurrentBuildsShareTheCacheAndBuildEachProgramOnce) {
  TUNEKIT_OPENCL_CONTEXT_OR_SKIP(context);
  const BuildStats before = context->compiler().stats();
  {
    std::vector<std::jthread> threads;  // two programs at once, each asked for twice
    for (int t = 0; t < 4; ++t)
      threads.emplace_back([&context, t] {
        context->kernel(kSpin, "-DCONCURRENT_TEST=" + std::to_string(t % 2), "spin");
      });
  }
  const BuildStats after = context->compiler().stats();
  EXPECT_EQ(after.builds, before.builds + 2);
  EXPECT_EQ(after.hits, before.hits + 2);
}

TEST(OpenclContext, AnEmptyWindowReadsZero) {
  TUNEKIT_OPENCL_CONTEXT_OR_SKIP(context);
  EventClock clock(context);
  clock.begin();
  EXPECT_EQ(clock.end(), 0.0);  // time_routine refuses it as not_measured
}

}  // namespace
}  // namespace tunekit::opencl
