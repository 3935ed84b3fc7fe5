// src/model/calibration.cpp: the calibration logic against a fake probe whose bandwidth vs
// working-set curve and FMA throughput are known.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <vector>

#include "tunekit/calibration.hpp"

namespace tunekit {
namespace {

constexpr double kMiB = 1024.0 * 1024;

class FakeProbe final : public CalibrationProbe {
 public:
  std::function<double(double)> curve = [](double bytes) {
    return bytes <= 1 * kMiB ? 100e9 : 10e9;  // one step at 1 MiB
  };
  std::uint64_t hint = 4 << 20;
  int reads = 0;
  int max_threads() const override { return 2; }
  int simd_lanes() const override { return 8; }
  std::uint64_t cache_hint_bytes() const override { return hint; }
  // 10 GFLOP/s per chain up to 6 chains (latency 6, one port), times the threads.
  double fma_flops(int threads, int chains) override {
    return 10e9 * std::min(chains, 6) * std::min(threads, 2);
  }
  double read_bandwidth(std::size_t bytes) override {
    ++reads;
    return curve(static_cast<double>(bytes));
  }
  double triad_bandwidth(std::size_t bytes, int threads) override {
    last_triad_bytes = bytes;
    return threads > 1 ? 15e9 : 9e9;
  }
  double dispatch_seconds() override { return 5e-6; }
  std::size_t last_triad_bytes = 0;
};

TEST(Calibration, FindsTheCapacityStepOfAKnownCurve) {
  FakeProbe probe;
  const Calibration c = calibrate(probe, {});
  const Envelope& e = c.envelope;
  EXPECT_TRUE(c.cache_step_found);
  // The sweep moves in quarter octaves: the step is found within one grid step below 1 MiB.
  EXPECT_LE(e.cache_bytes.value, 1 * kMiB);
  EXPECT_GE(e.cache_bytes.value, 1 * kMiB / std::pow(2.0, 0.25));
  EXPECT_DOUBLE_EQ(e.cache_bw_1.value, 100e9);
  EXPECT_DOUBLE_EQ(e.cache_bw_1.spread, 0);
  EXPECT_DOUBLE_EQ(e.peak_flops_1.value, 60e9);
  EXPECT_DOUBLE_EQ(e.peak_flops_all.value, 120e9);
  EXPECT_EQ(e.fma_chains, 6);
  EXPECT_DOUBLE_EQ(e.dram_bw_1.value, 9e9);
  EXPECT_DOUBLE_EQ(e.dram_bw_all.value, 15e9);
  EXPECT_DOUBLE_EQ(e.launch_seconds.value, 5e-6);
  EXPECT_EQ(e.threads, 2);
  EXPECT_EQ(e.simd_lanes, 8);
  EXPECT_TRUE(e.usable());
  // The DRAM set is far beyond the reported cache: 4x it.
  EXPECT_GE(static_cast<double>(probe.last_triad_bytes), 4.0 * static_cast<double>(probe.hint));
  // The sweep reaches 8x the reported cache.
  EXPECT_GE(c.sweep.back().bytes, 8.0 * static_cast<double>(probe.hint) * 0.99);
}

TEST(Calibration, FindsTheLastStepOfAThreeLevelCurve) {
  FakeProbe probe;
  probe.hint = 16 << 20;
  // L1 32 KiB at 400 GB/s, L2 512 KiB at 200, L3 8 MiB at 80, DRAM 12.
  probe.curve = [](double b) {
    return b <= 32 * 1024 ? 400e9 : b <= 512 * 1024 ? 200e9 : b <= 8 * kMiB ? 80e9 : 12e9;
  };
  const Calibration c = calibrate(probe, {});
  EXPECT_LE(c.envelope.cache_bytes.value, 8 * kMiB);
  EXPECT_GE(c.envelope.cache_bytes.value, 8 * kMiB / std::pow(2.0, 0.25));
  EXPECT_DOUBLE_EQ(c.envelope.cache_bw_1.value, 80e9);
}

TEST(Calibration, AGradualFallIsPlacedAtItsGeometricMidpoint) {
  // 100 GB/s up to 1 MiB, falling log-linearly to 10 GB/s at 16 MiB.
  std::vector<SweepPoint> sweep;
  for (double b : sweep_sizes(8 << 20, false)) {
    double bw = 100e9;
    if (b > kMiB) bw = 100e9 * std::pow(0.1, std::min(1.0, std::log2(b / kMiB) / 4));
    sweep.push_back({b, bw});
  }
  const CacheStep step = find_cache_step(sweep);
  ASSERT_TRUE(step.found);
  // sqrt(100 x 10) = 31.6 GB/s is reached at 4 MiB.
  EXPECT_NEAR(std::log2(step.capacity_bytes / (4 * kMiB)), 0, 0.26);
  EXPECT_DOUBLE_EQ(step.beyond_bandwidth, 10e9);
}

TEST(Calibration, AFlatCurveHasNoStepAndFallsBackToTheReportedCache) {
  FakeProbe probe;
  probe.curve = [](double) { return 30e9; };
  const Calibration c = calibrate(probe, {});
  EXPECT_FALSE(c.cache_step_found);
  EXPECT_DOUBLE_EQ(c.envelope.cache_bytes.value, static_cast<double>(probe.hint));
  EXPECT_DOUBLE_EQ(c.envelope.cache_bw_1.value, 30e9);
  probe.hint = 0;  // nothing reported either: the envelope cannot rank
  EXPECT_FALSE(calibrate(probe, {}).envelope.usable());
}

TEST(Calibration, QuickTakesFewerReadings) {
  FakeProbe full, quick;
  calibrate(full, {});
  CalibrationOptions q;
  q.quick = true;
  calibrate(quick, q);
  EXPECT_LT(quick.reads * 2, full.reads + 2);
}

TEST(Calibration, ProgressCountsEveryStep) {
  FakeProbe probe;
  CalibrationOptions o;
  std::size_t last = 0, total = 0, calls = 0;
  o.on_progress = [&](std::string_view, std::size_t done, std::size_t all) {
    EXPECT_EQ(done, last + 1);
    last = done;
    total = all;
    ++calls;
  };
  calibrate(probe, o);
  EXPECT_EQ(calls, total);
  EXPECT_GT(total, 10u);
}

TEST(Calibration, EstimateIsTheMedianWithItsRelativeMad) {
  const std::vector<double> xs{10, 11, 9, 10, 30};
  const Estimate e = estimate_of(xs);
  EXPECT_DOUBLE_EQ(e.value, 10);
  EXPECT_DOUBLE_EQ(e.spread, 0.1);  // deviations 0 1 1 0 20: median 1, over 10
}

TEST(Calibration, ChainsForPeakIsTheSmallestWithinTenPercent) {
  const std::vector<ChainPoint> pts{{1, 10}, {2, 20}, {4, 37}, {6, 40}, {8, 41}};
  EXPECT_EQ(chains_for_peak(pts), 4);
  EXPECT_EQ(chains_for_peak(std::vector<ChainPoint>{}), 1);
}

}  // namespace
}  // namespace tunekit
