// Tests for src/backends/cpu: identity, clock, evictor.
#include <gtest/gtest.h>

#include <thread>

#include "tunekit/cpu.hpp"

namespace tunekit::cpu {
namespace {

TEST(CpuDevice, IdentityFromHwloc) {
  DeviceIdentity id = host_identity();
  EXPECT_EQ(id.backend, "cpu");
  EXPECT_TRUE(id.known);
  EXPECT_FALSE(id.product.empty());
  EXPECT_GE(id.compute_units, 1);
  EXPECT_GT(id.memory_bytes, 0u);
  EXPECT_GT(id.l1d_bytes, 0u);
  EXPECT_GE(id.l3_bytes, id.l2_bytes);
}

TEST(CpuDevice, SteadyClockMeasuresElapsedTime) {
  SteadyClock clock;
  clock.begin();
  std::this_thread::sleep_for(std::chrono::milliseconds(2));
  double t = clock.end();
  EXPECT_GE(t, 0.002);
  EXPECT_LT(t, 5.0);
}

TEST(CpuDevice, EvictorRunsAndTheDeviceOffersIt) {
  CpuDevice dev;
  ASSERT_NE(dev.evictor(), nullptr);
  dev.evictor()->evict();
  dev.evictor()->evict();
  EXPECT_EQ(dev.clock().name(), "steady_clock");
}

}  // namespace
}  // namespace tunekit::cpu
