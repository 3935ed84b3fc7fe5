// The stored identity (src/core/identity.cpp): what makes two devices the same device.
#include "tunekit/identity.hpp"

#include <gtest/gtest.h>

#include "tunekit/calibration.hpp"

namespace tunekit {
namespace {

DeviceIdentity a_device() {
  DeviceIdentity d;
  d.backend = "cpu";
  d.vendor = "GenuineIntel";
  d.product = "Intel(R) Xeon(R) Processor";
  d.architecture = "x86_64";
  d.features = {"avx2", "fma"};
  d.compute_units = 2;
  d.memory_bytes = std::uint64_t{17786616} * 1024;
  d.l1d_bytes = 49152;
  d.l2_bytes = 2 << 20;
  d.l3_bytes = 480 << 20;
  d.driver = "hwloc 2.9.0";
  d.known = true;
  return d;
}

// hwloc's memory reading moved by 512 MB between two processes on one virtual machine: the
// machine must stay itself (its stored choices, its profile, its device lock).
TEST(IdentityDigest, MemorySizeIsNotPartOfTheDevice) {
  Identity id;
  id.device = a_device();
  id.op = "sum";
  id.key = Key{{"n", 4}};
  const std::string digest = id.digest().hex();
  const std::string profile = device_digest(id.device);
  id.device.memory_bytes = std::uint64_t{17262328} * 1024;
  EXPECT_EQ(id.digest().hex(), digest);
  EXPECT_EQ(device_digest(id.device), profile);
}

TEST(IdentityDigest, WhatMakesTheKernelFastestStillDoes) {
  const std::string base = device_digest(a_device());
  auto changed = [&](auto&& edit) {
    DeviceIdentity d = a_device();
    edit(d);
    return device_digest(d) != base;
  };
  EXPECT_TRUE(changed([](DeviceIdentity& d) { d.product = "AMD EPYC"; }));
  EXPECT_TRUE(changed([](DeviceIdentity& d) { d.features.push_back("avx512f"); }));
  EXPECT_TRUE(changed([](DeviceIdentity& d) { d.compute_units = 4; }));
  EXPECT_TRUE(changed([](DeviceIdentity& d) { d.l1d_bytes = 32768; }));
  EXPECT_TRUE(changed([](DeviceIdentity& d) { d.l2_bytes = 1 << 20; }));
  EXPECT_TRUE(changed([](DeviceIdentity& d) { d.l3_bytes = 32 << 20; }));
  EXPECT_TRUE(changed([](DeviceIdentity& d) { d.driver = "hwloc 2.10.0"; }));
}

}  // namespace
}  // namespace tunekit
