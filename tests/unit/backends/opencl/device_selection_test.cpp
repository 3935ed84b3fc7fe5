// device_list.cpp: select_device by index or name substring; the messages when nothing
// matches or no platform exists. Pure logic: runs without an OpenCL runtime.
#include <gtest/gtest.h>

#include <vector>

#include "tunekit/errors.hpp"
#include "tunekit/opencl.hpp"

namespace tunekit::opencl {
namespace {

std::vector<DeviceInfo> two_devices() {
  std::vector<DeviceInfo> devices(2);
  devices[0].index = 0;
  devices[0].platform = "Portable Computing Language";
  devices[0].identity.product = "pthread-haswell-AMD EPYC";
  devices[1].index = 1;
  devices[1].platform = "NVIDIA CUDA";
  devices[1].identity.product = "NVIDIA GeForce RTX 4090";
  return devices;
}

std::string usage_message(const std::vector<DeviceInfo>& devices, std::string_view selector) {
  try {
    select_device(devices, selector);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

TEST(OpenclDeviceSelection, EmptySelectorIsTheFirstDevice) {
  EXPECT_EQ(select_device(two_devices(), ""), 0u);
}

TEST(OpenclDeviceSelection, DigitsAreAnIndex) {
  EXPECT_EQ(select_device(two_devices(), "1"), 1u);
  EXPECT_EQ(select_device(two_devices(), "0"), 0u);
}

TEST(OpenclDeviceSelection, OtherTextIsACaseInsensitiveNameSubstring) {
  EXPECT_EQ(select_device(two_devices(), "rtx"), 1u);
  EXPECT_EQ(select_device(two_devices(), "Haswell"), 0u);
}

TEST(OpenclDeviceSelection, AnIndexPastTheEndNamesTheDevices) {
  const std::string m = usage_message(two_devices(), "7");
  EXPECT_NE(m.find("2 OpenCL device(s)"), std::string::npos) << m;
  EXPECT_NE(m.find("1: NVIDIA GeForce RTX 4090"), std::string::npos) << m;
}

TEST(OpenclDeviceSelection, NoMatchListsTheDevices) {
  const std::string m = usage_message(two_devices(), "radeon");
  EXPECT_NE(m.find("matches no OpenCL device"), std::string::npos) << m;
  EXPECT_NE(m.find("0: pthread-haswell-AMD EPYC"), std::string::npos) << m;
}

TEST(OpenclDeviceSelection, NoPlatformSaysHowToInstallOne) {
  const std::string m = usage_message({}, "");
  EXPECT_NE(m.find("no OpenCL platform found"), std::string::npos) << m;
  EXPECT_NE(m.find("pocl-opencl-icd"), std::string::npos) << m;
}

}  // namespace
}  // namespace tunekit::opencl
