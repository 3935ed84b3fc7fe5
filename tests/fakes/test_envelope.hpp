// A hand-made device envelope for cost-model tests: round numbers so expected scores can be
// computed by hand. Cache: 50 GB/s per thread, 1 MiB; 8 lanes, 8 accumulator chains.
#pragma once

#include "tunekit/cost_model.hpp"

namespace tunekit::testing {

struct EnvelopeRates {
  double peak_1 = 100e9, peak_all = 200e9;  // FLOP/s
  double dram_1 = 10e9, dram_all = 20e9;    // bytes/s
  double launch = 0;                        // seconds per dispatch
  int threads = 2;
};

// Work that takes `seconds` of compute on one thread of test_envelope() (100 GFLOP/s).
inline Work compute_work(double seconds) {
  Work w;
  w.flops = seconds * 100e9;
  return w;
}

inline Envelope test_envelope(const EnvelopeRates& r = {}) {
  Envelope e;
  e.peak_flops_1 = {r.peak_1, 0};
  e.peak_flops_all = {r.peak_all, 0};
  e.dram_bw_1 = {r.dram_1, 0};
  e.dram_bw_all = {r.dram_all, 0};
  e.cache_bw_1 = {50e9, 0};
  e.cache_bytes = {1 << 20, 0};
  e.launch_seconds = {r.launch, 0};
  e.threads = r.threads;
  e.simd_lanes = 8;
  e.fma_chains = 8;
  return e;
}

}  // namespace tunekit::testing
