// Tests src/backends/cpu/cross_cpu_probe.cpp: how far apart the host runs two CPUs.
#include <pthread.h>
#include <sched.h>
#include <unistd.h>

#include <cmath>

#include <gtest/gtest.h>

#include "tunekit/cpu.hpp"

namespace tunekit::cpu {
namespace {

cpu_set_t own_mask() {
  cpu_set_t mask;
  CPU_ZERO(&mask);
  EXPECT_EQ(::pthread_getaffinity_np(::pthread_self(), sizeof mask, &mask), 0);
  return mask;
}

// With two CPUs or more, a round trip between cores: more than nothing, at most what a burst of
// 500 trips completed within 1 ms allows (2 µs); the caller's mask stays its own. A machine
// loaded by other tests may hold a CPU through all five bursts of one probe (NaN: cannot
// tell), not through twenty probes.
TEST(CrossCpuProbe, ReadsARoundTripBetweenTwoCpusAndLeavesTheCallersMaskAlone) {
  const cpu_set_t before = own_mask();
  double ns = cross_cpu_round_trip_ns();
  const cpu_set_t after = own_mask();
  EXPECT_TRUE(CPU_EQUAL(&before, &after));
  if (CPU_COUNT(&before) < 2) {
    EXPECT_TRUE(std::isnan(ns)) << "one CPU: nothing to measure";
    return;
  }
  for (int attempt = 0; attempt < 20 && std::isnan(ns); ++attempt) ns = cross_cpu_round_trip_ns();
  ASSERT_FALSE(std::isnan(ns));
  EXPECT_GT(ns, 0);
  EXPECT_LE(ns, 2000);
  CpuDevice device;
  std::optional<double> read = device.cross_cpu_round_trip();
  for (int attempt = 0; attempt < 20 && !read; ++attempt) read = device.cross_cpu_round_trip();
  ASSERT_TRUE(read.has_value());
  EXPECT_GT(*read, 0);
}

// A caller allowed one CPU has no pair to probe: NaN (the device: none), not a probe of one
// CPU with itself, and its one-CPU mask is kept.
TEST(CrossCpuProbe, ACallerAllowedOneCpuReadsNothing) {
  const cpu_set_t mask = own_mask();
  int first = -1;
  for (int c = 0; c < CPU_SETSIZE && first < 0; ++c)
    if (CPU_ISSET(c, &mask)) first = c;
  ASSERT_GE(first, 0);
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(first, &one);
  ASSERT_EQ(::pthread_setaffinity_np(::pthread_self(), sizeof one, &one), 0);
  const double ns = cross_cpu_round_trip_ns();
  const std::optional<double> read = CpuDevice().cross_cpu_round_trip();
  const cpu_set_t during = own_mask();
  ASSERT_EQ(::pthread_setaffinity_np(::pthread_self(), sizeof mask, &mask), 0);
  EXPECT_TRUE(std::isnan(ns));
  EXPECT_FALSE(read.has_value());
  EXPECT_TRUE(CPU_EQUAL(&one, &during));
}

}  // namespace
}  // namespace tunekit::cpu
