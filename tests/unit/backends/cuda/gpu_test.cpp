// The driver side on a real device: the identity read, a tiny kernel launched and timed by the
// events, a queued batch replayed as a graph, the L2 evictor, and an out-of-bounds kernel that
// ends as device_lost (in a child process: a lost context stays lost). Every test reports
// SKIPPED, with the reason, when there is no CUDA device.
#include <gtest/gtest.h>

#include <cstdlib>
#include <vector>

#include "tunekit/cuda.hpp"
#include "tunekit/errors.hpp"

namespace tunekit::cuda {
namespace {

std::string no_device_reason() {
  const DriverStatus status = driver_status();
  return "no CUDA device (" + (status.loaded ? "the driver lists none" : status.message) + ")";
}

#define TUNEKIT_CUDA_DEVICE_OR_SKIP() \
  if (list_devices().empty()) GTEST_SKIP() << no_device_reason()

constexpr std::string_view kAddOne = R"(
extern "C" __global__ void add_one(float* x, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] += 1.0f;
}
extern "C" __global__ void write_far(int* x) {
  x[threadIdx.x + (1LL << 40)] = 1;  // 4 TiB past the buffer: an illegal address
})";

constexpr int kN = 4096;

// One context per test process (opening one costs a primary context and an NVRTC compile).
std::shared_ptr<Context> shared_context() {
  static const std::shared_ptr<Context> context = Context::open("");
  return context;
}

struct AddOne {
  explicit AddOne(const std::shared_ptr<Context>& c)
      : context(c),
        buffer(*c, kN * sizeof(float)),
        function(c->function(kAddOne, {}, "add_one")),
        pointer(buffer.device_pointer()) {
    const std::vector<float> zeros(kN, 0.0f);
    buffer.write(zeros.data(), kN * sizeof(float));
  }
  void launch() {
    void* args[] = {&pointer, &n};
    function.launch({kN / 256, 1, 1}, {256, 1, 1}, 0, args);
  }
  std::vector<float> values() const {
    std::vector<float> out(kN);
    buffer.read(out.data(), kN * sizeof(float));
    return out;
  }
  std::shared_ptr<Context> context;
  Buffer buffer;
  Function function;
  std::uint64_t pointer;
  int n = kN;
};

class AddOneWorkload final : public Workload {
 public:
  explicit AddOneWorkload(AddOne& kernel) : kernel_(kernel) {}
  Outcome build_candidate(std::size_t) override { return Outcome::success(); }
  void run_candidate(std::size_t) override { kernel_.launch(); }
  void run_reference() override {}
  std::vector<OutputView> outputs() override { return {}; }

 private:
  AddOne& kernel_;
};

TEST(CudaGpuRuntime, TheIdentityIsRead) {
  TUNEKIT_CUDA_DEVICE_OR_SKIP();
  const DeviceInfo& info = shared_context()->info();
  const DeviceIdentity& id = info.identity;
  EXPECT_EQ(id.backend, "cuda");
  EXPECT_EQ(id.vendor, "NVIDIA");
  EXPECT_FALSE(id.product.empty());
  EXPECT_TRUE(id.known);
  EXPECT_EQ(id.architecture, info.arch());
  EXPECT_EQ(id.architecture.rfind("sm_", 0), 0u) << id.architecture;
  EXPECT_GT(id.compute_units, 0);
  EXPECT_GT(id.memory_bytes, 0u);
  EXPECT_GT(id.l2_bytes, 0u);
  EXPECT_NE(id.driver.find("(runtime "), std::string::npos) << id.driver;
  EXPECT_GT(info.clock_khz, 0);
  EXPECT_GE(info.shared_per_block_optin, info.shared_per_block);
  EXPECT_TRUE(driver_status().loaded);
}

TEST(CudaGpuRuntime, ATinyKernelRunsAndIsTimedByTheEvents) {
  TUNEKIT_CUDA_DEVICE_OR_SKIP();
  AddOne kernel(shared_context());
  EventClock clock(shared_context());
  clock.begin();
  kernel.launch();
  shared_context()->synchronize();
  const double seconds = clock.end();
  EXPECT_GT(seconds, 0.0);
  EXPECT_LT(seconds, 0.5);
  for (float v : kernel.values()) ASSERT_EQ(v, 1.0f);
}

TEST(CudaGpuRuntime, AQueuedBatchReplaysAGraph) {
  TUNEKIT_CUDA_DEVICE_OR_SKIP();
  AddOne kernel(shared_context());
  AddOneWorkload workload(kernel);
  CudaDevice device(shared_context());
  auto trial = device.make_trial(workload, 0);
  device.clock().begin();
  trial->launch_batch(10);  // captured (not run), then replayed once
  trial->sync();
  EXPECT_GT(device.clock().end(), 0.0);
  trial->launch_batch(10);  // replayed again
  trial->sync();
  for (float v : kernel.values()) ASSERT_EQ(v, 20.0f);
  trial->release();
}

TEST(CudaGpuRuntime, TheL2EvictorRuns) {
  TUNEKIT_CUDA_DEVICE_OR_SKIP();
  CudaDevice device(shared_context());
  ASSERT_NE(device.evictor(), nullptr);
  device.clock().begin();
  device.evictor()->evict();
  AddOne kernel(shared_context());
  kernel.launch();
  shared_context()->synchronize();
  EXPECT_GT(device.clock().end(), 0.0);
  EXPECT_FALSE(shared_context()->lost());
}

// Exits 0 when the out-of-bounds kernel ends as device_lost and the context stays lost.
[[noreturn]] void lose_the_device() {
  const std::shared_ptr<Context> context = Context::open("");
  Buffer buffer(*context, 1024);
  Function function = context->function(kAddOne, {}, "write_far");
  std::uint64_t pointer = buffer.device_pointer();
  void* args[] = {&pointer};
  try {
    function.launch({1, 1, 1}, {32, 1, 1}, 0, args);
    context->synchronize();
    std::exit(2);  // no error
  } catch (const TrialError& e) {
    if (e.status() != Status::device_lost) std::exit(3);
  }
  if (!context->lost()) std::exit(4);
  try {
    context->synchronize();
    std::exit(5);
  } catch (const TrialError& e) {
    std::exit(e.status() == Status::device_lost ? 0 : 6);
  }
}

TEST(CudaGpuRuntime, AnOutOfBoundsKernelEndsAsDeviceLost) {
  TUNEKIT_CUDA_DEVICE_OR_SKIP();
  GTEST_FLAG_SET(death_test_style, "threadsafe");  // a fresh process: no inherited context
  EXPECT_EXIT(lose_the_device(), ::testing::ExitedWithCode(0), "");
}

}  // namespace
}  // namespace tunekit::cuda
