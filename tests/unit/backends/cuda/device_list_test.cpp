// device_list.cpp: driver_status, list_devices and select_device, without a driver (this
// machine's case when it has none) and on a fake driver with two devices.
#include <gtest/gtest.h>

#include "backends/cuda/fake_driver.hpp"
#include "tunekit/errors.hpp"

namespace tunekit::cuda {
namespace {

using testing::FakeDriver;

std::string usage_message(std::span<const DeviceInfo> devices, std::string_view selector) {
  try {
    select_device(devices, selector);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

// This machine's own driver: what the tests see when libcuda.so.1 cannot be loaded.
TEST(CudaDeviceList, WithoutADriverNothingIsListedAndTheStatusSaysWhy) {
  if (detail::load_driver().api) GTEST_SKIP() << "a CUDA driver is installed here";
  const DriverStatus status = driver_status();
  EXPECT_FALSE(status.loaded);
  EXPECT_NE(status.message.find("libcuda.so.1"), std::string::npos) << status.message;
  EXPECT_TRUE(list_devices().empty());
  const std::string m = usage_message({}, "");
  EXPECT_NE(m.find("no CUDA device"), std::string::npos) << m;
  EXPECT_NE(m.find(status.message), std::string::npos) << m;
  EXPECT_THROW(Context::open(""), UsageError);
}

TEST(CudaDeviceList, NoDeviceAndTheStubAreNoDeviceNeverAnError) {
  FakeDriver driver;
  driver.init_result = CUDA_ERROR_NO_DEVICE;
  DriverStatus status = detail::driver_status(driver.table().get(), "");
  EXPECT_FALSE(status.loaded);
  EXPECT_NE(status.message.find("found no device"), std::string::npos) << status.message;
  EXPECT_TRUE(detail::list_devices(driver.table().get()).empty());
  driver.init_result = CUDA_ERROR_STUB_LIBRARY;
  status = detail::driver_status(driver.table().get(), "");
  EXPECT_FALSE(status.loaded);
  EXPECT_NE(status.message.find("stub library"), std::string::npos) << status.message;
  EXPECT_NE(status.message.find("CUDA_ERROR_STUB_LIBRARY"), std::string::npos);
  EXPECT_TRUE(detail::list_devices(driver.table().get()).empty());
  EXPECT_EQ(driver.calls("cuDeviceGetCount"), 0);
}

FakeDriver& two_devices(FakeDriver& driver) {
  driver.devices.resize(2);
  driver.devices[1].name = "NVIDIA A100-SXM4-80GB";
  driver.devices[1].memory = std::size_t{80} << 30;
  driver.devices[1].attributes[CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR] = 8;
  driver.devices[1].attributes[CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT] = 108;
  driver.devices[1].attributes[CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE] = 40 << 20;
  driver.driver_version = 12040;
  return driver;
}

TEST(CudaDeviceList, ListsEveryDeviceWithItsLimitsAndIdentity) {
  FakeDriver driver;
  const std::vector<DeviceInfo> devices = detail::list_devices(two_devices(driver).table().get());
  ASSERT_EQ(devices.size(), 2u);
  const DeviceInfo& h200 = devices[0];
  EXPECT_EQ(h200.index, 0u);
  EXPECT_EQ(h200.arch(), "sm_90");
  EXPECT_EQ(h200.sm_count, 132);
  EXPECT_EQ(h200.max_threads_per_block, 1024);
  EXPECT_EQ(h200.max_block[2], 64);
  EXPECT_EQ(h200.max_grid[1], 65535);
  EXPECT_EQ(h200.shared_per_block, 48 * 1024);
  EXPECT_EQ(h200.shared_per_block_optin, 227 * 1024);
  EXPECT_EQ(h200.registers_per_block, 65536);
  EXPECT_EQ(h200.clock_khz, 1980000);
  const DeviceIdentity& id = h200.identity;
  EXPECT_EQ(id.backend, "cuda");
  EXPECT_EQ(id.vendor, "NVIDIA");
  EXPECT_EQ(id.product, "NVIDIA H200");
  EXPECT_EQ(id.architecture, "sm_90");
  EXPECT_EQ(id.features, std::vector<std::string>{"cc9.0"});
  EXPECT_EQ(id.compute_units, 132);
  EXPECT_EQ(id.memory_bytes, std::uint64_t{141} << 30);
  EXPECT_EQ(id.l2_bytes, std::uint64_t{50} << 20);
  EXPECT_TRUE(id.known);
  EXPECT_EQ(id.driver.rfind("12.4 (runtime ", 0), 0u) << id.driver;
  EXPECT_NE(id.driver.find(", NVRTC "), std::string::npos) << id.driver;
  const DeviceInfo& a100 = devices[1];
  EXPECT_EQ(a100.index, 1u);
  EXPECT_EQ(a100.identity.architecture, "sm_80");
  EXPECT_EQ(a100.identity.features, std::vector<std::string>{"cc8.0"});
  EXPECT_EQ(a100.identity.compute_units, 108);
  EXPECT_EQ(a100.global_memory, std::uint64_t{80} << 30);
}

TEST(CudaDeviceList, SelectsByIndexOrCaseInsensitiveNameSubstring) {
  FakeDriver driver;
  const std::vector<DeviceInfo> devices = detail::list_devices(two_devices(driver).table().get());
  EXPECT_EQ(select_device(devices, ""), 0u);
  EXPECT_EQ(select_device(devices, "1"), 1u);
  EXPECT_EQ(select_device(devices, "a100"), 1u);
  EXPECT_EQ(select_device(devices, "H200"), 0u);
  std::string m = usage_message(devices, "7");
  EXPECT_NE(m.find("2 CUDA device(s)"), std::string::npos) << m;
  EXPECT_NE(m.find("1: NVIDIA A100-SXM4-80GB (sm_80)"), std::string::npos) << m;
  m = usage_message(devices, "rtx");
  EXPECT_NE(m.find("matches no CUDA device"), std::string::npos) << m;
  EXPECT_NE(m.find("0: NVIDIA H200"), std::string::npos) << m;
}

TEST(CudaDeviceList, OpenTakesTheSelectedDevicesPrimaryContext) {
  FakeDriver driver;
  const auto context = testing::open_fake_context(two_devices(driver), "a100");
  EXPECT_EQ(driver.opened_device, 1);
  EXPECT_EQ(context->info().identity.product, "NVIDIA A100-SXM4-80GB");
  EXPECT_EQ(context->arch(), "sm_80");
  EXPECT_EQ(driver.calls("cuStreamCreate"), 1);
  EXPECT_EQ(driver.calls("cuEventCreate"), 2);
}

TEST(CudaDeviceList, AnArchGivenInTheOptionsWins) {
  FakeDriver driver;
  ContextOptions options;
  options.arch = "sm_80";
  const auto context = testing::open_fake_context(driver, "", options);
  EXPECT_EQ(context->arch(), "sm_80");
  EXPECT_EQ(context->info().arch(), "sm_90");
}

}  // namespace
}  // namespace tunekit::cuda
