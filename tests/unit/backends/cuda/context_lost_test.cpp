// context.cpp: the lost state. The first sticky error marks the context lost and every later
// operation throws device_lost naming it, without calling the driver; a watchdog timeout is
// timed_out and sticky too; out of memory is a candidate's failure, not a lost device.
#include <gtest/gtest.h>

#include <functional>

#include "backends/cuda/fake_driver.hpp"
#include "tunekit/errors.hpp"

namespace tunekit::cuda {
namespace {

using testing::FakeDriver;

constexpr std::string_view kSource = R"(extern "C" __global__ void k() {})";

Status status_of(const std::function<void()>& operation, std::string* message = nullptr) {
  try {
    operation();
  } catch (const TrialError& e) {
    if (message) *message = e.what();
    return e.status();
  }
  return Status::ok;
}

TEST(CudaContextLost, AnIllegalAddressAtSynchronizeLosesTheContextForGood) {
  FakeDriver driver;
  const auto context = testing::open_fake_context(driver);
  Function function = context->function(kSource, {}, "k");
  Buffer buffer(*context, 64);
  L2Evictor evictor(context);
  function.launch({1, 1, 1}, {32, 1, 1}, 0, {});

  driver.fail_next("cuStreamSynchronize", CUDA_ERROR_ILLEGAL_ADDRESS);
  std::string first;
  EXPECT_EQ(status_of([&] { context->synchronize(); }, &first), Status::device_lost);
  EXPECT_NE(first.find("cuStreamSynchronize failed: CUDA_ERROR_ILLEGAL_ADDRESS (700)"),
            std::string::npos)
      << first;
  EXPECT_TRUE(context->lost());
  EXPECT_EQ(context->lost_reason(), first);

  const int calls = driver.total_calls();
  char bytes[64] = {};
  const std::vector<std::pair<const char*, std::function<void()>>> operations = {
      {"synchronize", [&] { context->synchronize(); }},
      {"launch",
       [&] {
         function.launch({1, 1, 1}, {32, 1, 1}, 0, {});
       }},
      {"function", [&] { context->function(kSource, {"-DNEW"}, "k"); }},
      {"allocate", [&] { (void)Buffer(*context, 64); }},
      {"write", [&] { buffer.write(bytes, sizeof bytes); }},
      {"read", [&] { buffer.read(bytes, sizeof bytes); }},
      {"begin_window", [&] { context->begin_window(); }},
      {"end_window", [&] { context->end_window(); }},
      {"begin_capture", [&] { context->begin_capture(); }},
      {"launch_graph", [&] { context->launch_graph(reinterpret_cast<void*>(64)); }},
      {"evict", [&] { evictor.evict(); }},
  };
  for (const auto& [name, operation] : operations) {
    std::string message;
    EXPECT_EQ(status_of(operation, &message), Status::device_lost) << name;
    EXPECT_NE(message.find(first), std::string::npos) << name << ": " << message;
  }
  EXPECT_EQ(driver.total_calls(), calls) << "an operation reached the driver after the loss";
  context->destroy_graph(reinterpret_cast<void*>(64));  // cleanup neither throws nor calls
  EXPECT_EQ(driver.total_calls(), calls);
}

// The first sticky error is the reason kept; a later one does not replace it.
TEST(CudaContextLost, TheFirstStickyErrorIsTheReason) {
  FakeDriver driver;
  const auto context = testing::open_fake_context(driver);
  context->begin_window();
  Function function = context->function(kSource, {}, "k");
  function.launch({1, 1, 1}, {1, 1, 1}, 0, {});
  driver.fail_next("cuEventSynchronize", CUDA_ERROR_MISALIGNED_ADDRESS);
  EXPECT_EQ(status_of([&] { context->end_window(); }), Status::device_lost);
  EXPECT_NE(context->lost_reason().find("CUDA_ERROR_MISALIGNED_ADDRESS"), std::string::npos)
      << context->lost_reason();
}

TEST(CudaContextLost, AWatchdogTimeoutIsTimedOutAndLosesTheContext) {
  FakeDriver driver;
  const auto context = testing::open_fake_context(driver);
  driver.fail_next("cuStreamSynchronize", CUDA_ERROR_LAUNCH_TIMEOUT);
  EXPECT_EQ(status_of([&] { context->synchronize(); }), Status::timed_out);
  EXPECT_TRUE(context->lost());
  std::string message;
  EXPECT_EQ(status_of([&] { context->synchronize(); }, &message), Status::device_lost);
  EXPECT_NE(message.find("CUDA_ERROR_LAUNCH_TIMEOUT"), std::string::npos) << message;
}

TEST(CudaContextLost, OutOfMemoryAtAllocationIsOutOfMemoryAndTheContextLives) {
  FakeDriver driver;
  const auto context = testing::open_fake_context(driver);
  driver.fail_next("cuMemAlloc", CUDA_ERROR_OUT_OF_MEMORY);
  std::string message;
  EXPECT_EQ(status_of([&] { (void)Buffer(*context, std::size_t{1} << 40); }, &message),
            Status::out_of_memory);
  EXPECT_NE(message.find("cuMemAlloc of 1099511627776 bytes on NVIDIA H200"), std::string::npos)
      << message;
  EXPECT_NE(message.find("CUDA_ERROR_OUT_OF_MEMORY (2)"), std::string::npos) << message;
  EXPECT_FALSE(context->lost());
  Buffer buffer(*context, 16);
  EXPECT_NE(buffer.device_pointer(), 0u);
  EXPECT_EQ(driver.calls("cuMemAlloc"), 2);
}

// Buffers free their memory when the last copy goes; a non-sticky copy failure is launch_failed.
TEST(CudaContextLost, BuffersCopyOnTheStreamAndFreeOnce) {
  FakeDriver driver;
  const auto context = testing::open_fake_context(driver);
  {
    Buffer buffer(*context, 16);
    Buffer copy = buffer;
    char data[16] = {};
    copy.write(data, sizeof data);
    buffer.read(data, sizeof data);
    EXPECT_EQ(driver.calls("cuMemcpyHtoDAsync"), 1);
    EXPECT_EQ(driver.calls("cuMemcpyDtoHAsync"), 1);
    EXPECT_THROW(buffer.write(data, 17), UsageError);
    driver.fail_next("cuMemcpyDtoHAsync", CUDA_ERROR_INVALID_VALUE);
    EXPECT_EQ(status_of([&] { buffer.read(data, sizeof data); }), Status::launch_failed);
    EXPECT_FALSE(context->lost());
  }
  EXPECT_EQ(driver.calls("cuMemFree"), 1);
}

}  // namespace
}  // namespace tunekit::cuda
