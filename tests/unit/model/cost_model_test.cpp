// src/model/cost_model.cpp: ranking_seconds on hand-computed cases (DESIGN §9).
#include <gtest/gtest.h>

#include <limits>

#include "fakes/test_envelope.hpp"
#include "tunekit/cost_model.hpp"

namespace tunekit {
namespace {

// 100 GFLOP/s on one thread, 150 on two; DRAM 10 / 16 GB/s; cache 50 GB/s per thread, 1 MiB;
// 8 lanes, 8 chains; 10 us per dispatch.
Envelope cost_model_envelope() {
  return testing::test_envelope(
      {.peak_1 = 100e9, .peak_all = 150e9, .dram_1 = 10e9, .dram_all = 16e9, .launch = 10e-6});
}

TEST(CostModel, ComputeBound) {
  Work w;
  w.flops = 2e9;              // 2e9 / 100e9 = 20 ms
  w.compulsory_bytes = 10e6;  // 10e6 / 10e9 = 1 ms
  const ModelTime t = model_time(w, cost_model_envelope());
  EXPECT_DOUBLE_EQ(t.compute_seconds, 0.02);
  EXPECT_DOUBLE_EQ(t.dram_seconds, 1e-3);
  EXPECT_DOUBLE_EQ(t.seconds, 0.02);
  EXPECT_DOUBLE_EQ(ranking_seconds(w, cost_model_envelope()), 0.02);
}

TEST(CostModel, DramBoundWhenTheBlockExceedsTheCache) {
  Work w;
  w.flops = 1e6;                  // 10 us
  w.compulsory_bytes = 100e6;     // 10 ms at DRAM
  w.reread_bytes = 200e6;         // beyond the cache: DRAM too, 20 ms
  w.working_set_bytes = 4 << 20;  // 4 MiB > 1 MiB
  const ModelTime t = model_time(w, cost_model_envelope());
  EXPECT_FALSE(t.reread_in_cache);
  EXPECT_DOUBLE_EQ(t.dram_seconds, 0.03);
  EXPECT_DOUBLE_EQ(t.cache_seconds, 0);
  EXPECT_DOUBLE_EQ(t.seconds, 0.03);
}

TEST(CostModel, CacheResidentRereadsMoveAtCacheBandwidth) {
  Work w;
  w.flops = 1e6;
  w.compulsory_bytes = 100e6;       // 10 ms at DRAM
  w.reread_bytes = 200e6;           // within the cache: 200e6 / 50e9 = 4 ms
  w.working_set_bytes = 512 << 10;  // 512 KiB <= 1 MiB
  const ModelTime t = model_time(w, cost_model_envelope());
  EXPECT_TRUE(t.reread_in_cache);
  EXPECT_DOUBLE_EQ(t.dram_seconds, 0.01);
  EXPECT_DOUBLE_EQ(t.cache_seconds, 0.004);
  EXPECT_DOUBLE_EQ(t.seconds, 0.014);
  // The same re-reads over a block just past the capacity cost DRAM time instead.
  w.working_set_bytes = (1 << 20) + 64;
  EXPECT_DOUBLE_EQ(ranking_seconds(w, cost_model_envelope()), 0.03);
}

TEST(CostModel, WarmCallsFindACompulsoryFootprintInTheCache) {
  Work w;
  w.compulsory_bytes = 500e3;  // fits the 1 MiB cache
  EXPECT_DOUBLE_EQ(ranking_seconds(w, cost_model_envelope()), 500e3 / 10e9);  // cold: DRAM
  w.warm = true;
  EXPECT_DOUBLE_EQ(ranking_seconds(w, cost_model_envelope()), 500e3 / 50e9);  // warm: cache
  EXPECT_DOUBLE_EQ(floor_seconds(w, cost_model_envelope()), 500e3 / 100e9);  // both threads' caches
  w.compulsory_bytes = 2e6;  // beyond the cache: DRAM even when warm
  EXPECT_DOUBLE_EQ(ranking_seconds(w, cost_model_envelope()), 2e6 / 10e9);
}

TEST(CostModel, ThreadsScaleUpToTheAllThreadRates) {
  Work w;
  w.flops = 3e9;
  w.threads = 2;  // min(2 x 100, 150) = 150 GFLOP/s: 20 ms
  EXPECT_DOUBLE_EQ(ranking_seconds(w, cost_model_envelope()), 0.02);
  w.threads = 64;  // capped at the all-thread rate
  EXPECT_DOUBLE_EQ(ranking_seconds(w, cost_model_envelope()), 0.02);
  Work m;
  m.compulsory_bytes = 32e6;
  m.threads = 2;  // min(2 x 10, 16) GB/s: 2 ms
  EXPECT_DOUBLE_EQ(ranking_seconds(m, cost_model_envelope()), 0.002);
  Work c;
  c.reread_bytes = 100e6;
  c.working_set_bytes = 1024;
  c.threads = 2;  // private caches: 2 x 50 GB/s, 1 ms
  EXPECT_DOUBLE_EQ(ranking_seconds(c, cost_model_envelope()), 0.001);
}

TEST(CostModel, AContendedAllThreadRateMakesThreadsSlower) {
  Envelope e = cost_model_envelope();
  e.peak_flops_all = {60e9, 0};  // measured while the other core was busy
  Work w;
  w.flops = 6e9;
  EXPECT_DOUBLE_EQ(ranking_seconds(w, e), 0.06);  // one thread keeps its 100 GFLOP/s
  w.threads = 2;
  EXPECT_DOUBLE_EQ(ranking_seconds(w, e), 0.1);  // two get what was measured on two
}

TEST(CostModel, LanesChainsAndSerialFlopsLowerThePeak) {
  Work w;
  w.flops = 1e9;
  w.vector_lanes = 4;  // half the vector: 50 GFLOP/s, 20 ms
  EXPECT_DOUBLE_EQ(ranking_seconds(w, cost_model_envelope()), 0.02);
  w.chains = 2;  // and a quarter of the chains: 12.5 GFLOP/s, 80 ms
  EXPECT_DOUBLE_EQ(ranking_seconds(w, cost_model_envelope()), 0.08);
  Work s;
  s.serial_flops = 1e9;  // one dependent scalar chain: 100e9 / 64 per second
  EXPECT_DOUBLE_EQ(ranking_seconds(s, cost_model_envelope()), 0.64);
  Work i;
  i.scalar_flops = 1e9;  // independent scalar work: 100e9 / 8 per second
  EXPECT_DOUBLE_EQ(ranking_seconds(i, cost_model_envelope()), 0.08);
  i.flops = 1e9;  // plus full-vector work: 10 ms more
  EXPECT_DOUBLE_EQ(ranking_seconds(i, cost_model_envelope()), 0.09);
}

TEST(CostModel, DispatchesAddLaunchOverhead) {
  Work w;
  w.flops = 1e9;  // 10 ms
  w.dispatches = 100;
  EXPECT_DOUBLE_EQ(ranking_seconds(w, cost_model_envelope()), 0.011);
}

TEST(CostModel, FloorIsCompulsoryWorkAtFullPeak) {
  Work w;
  w.flops = 1.5e9;           // 10 ms at 150 GFLOP/s
  w.compulsory_bytes = 8e6;  // 0.5 ms at 16 GB/s
  w.reread_bytes = 1e12;     // ignored by the floor
  w.vector_lanes = 1;        // ignored by the floor
  w.dispatches = 1000;       // ignored by the floor
  EXPECT_DOUBLE_EQ(floor_seconds(w, cost_model_envelope()), 0.01);
  EXPECT_LE(floor_seconds(w, cost_model_envelope()), ranking_seconds(w, cost_model_envelope()));
}

TEST(CostModel, FloorHoldsForMoreThreadsThanTheEnvelopeMeasured) {
  // All threads measured superlinear (300 > 2 x 100): a work model asking for 4 threads gets
  // the 300 GFLOP/s cap, more than peak_flops(2) = 200; the floor must allow for it.
  Envelope e = cost_model_envelope();
  e.peak_flops_all = {300e9, 0};
  e.dram_bw_all = {30e9, 0};
  Work w;
  w.flops = 3e9;
  w.compulsory_bytes = 30e6;
  w.threads = 4;
  EXPECT_DOUBLE_EQ(floor_seconds(w, e), 0.01);
  EXPECT_LE(floor_seconds(w, e), ranking_seconds(w, e));
  w.flops = 0;  // memory-bound: 30 GB/s cap, not dram_bw(2) = 20 GB/s
  EXPECT_DOUBLE_EQ(floor_seconds(w, e), 1e-3);
  EXPECT_LE(floor_seconds(w, e), ranking_seconds(w, e));
}

TEST(CostModel, UsableNeedsEveryRankingConstant) {
  EXPECT_TRUE(cost_model_envelope().usable());
  Envelope e = cost_model_envelope();
  e.launch_seconds.value = std::numeric_limits<double>::infinity();
  EXPECT_FALSE(e.usable());
  e.launch_seconds.value = std::numeric_limits<double>::quiet_NaN();
  EXPECT_FALSE(e.usable());
  e = cost_model_envelope();
  e.cache_bytes.value = 0;
  EXPECT_FALSE(e.usable());
  EXPECT_FALSE(Envelope{}.usable());
}

}  // namespace
}  // namespace tunekit
