// driver_api.cpp: which CUresult is which Status, which errors are sticky, how codes are named,
// and loading a driver table (none on a machine without a driver; the toolkit's stub library
// loads but has no device).
#include <gtest/gtest.h>

#include <filesystem>

#include "backends/cuda/context_impl.hpp"
#include "backends/cuda/driver_api.hpp"

namespace tunekit::detail {
namespace {

struct Case {
  CUresult code;
  Status status;
  bool sticky;
};

TEST(CudaDriverErrors, EachCodeHasItsStatusAndStickiness) {
  const Case cases[] = {
      {CUDA_ERROR_OUT_OF_MEMORY, Status::out_of_memory, false},
      {CUDA_ERROR_ILLEGAL_ADDRESS, Status::device_lost, true},
      {CUDA_ERROR_LAUNCH_FAILED, Status::device_lost, true},
      {CUDA_ERROR_ECC_UNCORRECTABLE, Status::device_lost, true},
      {CUDA_ERROR_HARDWARE_STACK_ERROR, Status::device_lost, true},
      {CUDA_ERROR_ILLEGAL_INSTRUCTION, Status::device_lost, true},
      {CUDA_ERROR_MISALIGNED_ADDRESS, Status::device_lost, true},
      {CUDA_ERROR_INVALID_ADDRESS_SPACE, Status::device_lost, true},
      {CUDA_ERROR_INVALID_PC, Status::device_lost, true},
      {CUDA_ERROR_ASSERT, Status::device_lost, true},
      {CUDA_ERROR_CONTEXT_IS_DESTROYED, Status::device_lost, true},
      {CUDA_ERROR_NVLINK_UNCORRECTABLE, Status::device_lost, true},
      {CUDA_ERROR_TENSOR_MEMORY_LEAK, Status::device_lost, true},
      {CUDA_ERROR_EXTERNAL_DEVICE, Status::device_lost, true},
      {CUDA_ERROR_LAUNCH_TIMEOUT, Status::timed_out, true},
      {CUDA_ERROR_INVALID_VALUE, Status::launch_failed, false},
      {CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, Status::launch_failed, false},
      {CUDA_ERROR_INVALID_HANDLE, Status::launch_failed, false},
      {CUDA_ERROR_STREAM_CAPTURE_INVALIDATED, Status::launch_failed, false},
      {CUDA_ERROR_NOT_FOUND, Status::launch_failed, false},
      {CUDA_ERROR_UNKNOWN, Status::launch_failed, false},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(cu_error_name(nullptr, c.code));
    EXPECT_EQ(cu_failure_status(c.code), c.status);
    EXPECT_EQ(cu_is_sticky(c.code), c.sticky);
  }
}

TEST(CudaDriverErrors, CodesAreNamedWithTheirNumber) {
  EXPECT_EQ(cu_error_name(nullptr, CUDA_ERROR_ILLEGAL_ADDRESS), "CUDA_ERROR_ILLEGAL_ADDRESS (700)");
  EXPECT_EQ(cu_error_name(nullptr, CUDA_ERROR_OUT_OF_MEMORY), "CUDA_ERROR_OUT_OF_MEMORY (2)");
  EXPECT_EQ(cu_error_name(nullptr, static_cast<CUresult>(998)), "CUDA error (998)");
}

// A driver that names codes itself is preferred, with its explanation.
TEST(CudaDriverErrors, TheDriversOwnNameAndTextWin) {
  DriverApi api;
  api.get_error_name = [](CUresult, const char** name) {
    *name = "CUDA_ERROR_FROM_THE_DRIVER";
    return CUDA_SUCCESS;
  };
  api.get_error_string = [](CUresult, const char** text) {
    *text = "what the driver says";
    return CUDA_SUCCESS;
  };
  EXPECT_EQ(cu_error_name(&api, static_cast<CUresult>(998)),
            "CUDA_ERROR_FROM_THE_DRIVER (998): what the driver says");
}

TEST(CudaDriverErrors, AMissingLibraryIsNoTableWithTheReason) {
  const LoadedDriver driver = load_driver_library("libtunekit-no-such-driver.so.1");
  EXPECT_EQ(driver.api, nullptr);
  EXPECT_NE(driver.error.find("libtunekit-no-such-driver.so.1"), std::string::npos) << driver.error;
  const cuda::DriverStatus status = driver_status(nullptr, driver.error);
  EXPECT_FALSE(status.loaded);
  EXPECT_NE(status.message.find("could not be loaded"), std::string::npos) << status.message;
  EXPECT_NE(status.message.find("libtunekit-no-such-driver.so.1"), std::string::npos);
}

// The toolkit's stub libcuda.so exports every symbol and answers CUDA_ERROR_STUB_LIBRARY:
// driver_status says "stub" and there are no devices.
TEST(CudaDriverErrors, TheStubLibraryLoadsButHasNoDevice) {
  const std::filesystem::path stub = "/usr/local/cuda/lib64/stubs/libcuda.so";
  if (!std::filesystem::exists(stub)) GTEST_SKIP() << "no stub library at " << stub;
  const LoadedDriver driver = load_driver_library(stub.string());
  ASSERT_NE(driver.api, nullptr) << driver.error;
  const cuda::DriverStatus status = driver_status(driver.api.get(), "");
  EXPECT_FALSE(status.loaded);
  EXPECT_NE(status.message.find("stub"), std::string::npos) << status.message;
  EXPECT_TRUE(list_devices(driver.api.get()).empty());
}

}  // namespace
}  // namespace tunekit::detail
