// The roofline that ranks candidates (DESIGN §9).
#include "tunekit/cost_model.hpp"

#include <algorithm>
#include <cmath>

namespace tunekit {
namespace {

// One thread's rate for one thread; for more, one thread's rate times threads capped by the
// rate measured on every thread. An all-thread rate under the one-thread rate (a contended
// machine) is what several threads get there, so it is not raised to the one-thread rate.
double scaled(const Estimate& one, const Estimate& all, int measured_threads, int threads) {
  if (threads <= 1) return one.value;
  const double cap = all.value > 0 ? all.value : one.value * std::max(1, measured_threads);
  return std::min(one.value * threads, cap);
}

// A warm call whose compulsory traffic fits the cache finds it there.
bool warm_fit(const Work& work, const Envelope& envelope) {
  return work.warm && work.compulsory_bytes <= envelope.cache_bytes.value;
}

double share(int used, int full) {
  if (used <= 0 || full <= 0) return 1;
  return std::min(1.0, static_cast<double>(used) / full);
}

}  // namespace

double Envelope::peak_flops(int t) const {
  return scaled(peak_flops_1, peak_flops_all, threads, t);
}
double Envelope::dram_bw(int t) const {
  return scaled(dram_bw_1, dram_bw_all, threads, t);
}
double Envelope::cache_bw(int t) const {
  // Private caches scale with threads up to the threads the device has.
  return cache_bw_1.value * std::clamp(t, 1, std::max(1, threads));
}

bool Envelope::usable() const {
  for (const Estimate* e :
       {&peak_flops_1, &peak_flops_all, &dram_bw_1, &dram_bw_all, &cache_bw_1, &cache_bytes})
    if (!(e->value > 0) || !std::isfinite(e->value)) return false;
  return threads >= 1 && simd_lanes >= 1 && fma_chains >= 1 && launch_seconds.value >= 0 &&
         std::isfinite(launch_seconds.value);
}

ModelTime model_time(const Work& work, const Envelope& envelope) {
  ModelTime t;
  const double peak = envelope.peak_flops(work.threads) *
                      share(work.vector_lanes, envelope.simd_lanes) *
                      share(work.chains, envelope.fma_chains);
  t.compute_seconds = work.flops > 0 ? work.flops / peak : 0;
  if (work.scalar_flops > 0) {
    t.compute_seconds +=
        work.scalar_flops / (envelope.peak_flops(work.threads) / std::max(1, envelope.simd_lanes));
  }
  if (work.serial_flops > 0) {
    const double serial_peak =
        envelope.peak_flops(work.threads) /
        (std::max(1, envelope.simd_lanes) * std::max(1, envelope.fma_chains));
    t.compute_seconds += work.serial_flops / serial_peak;
  }
  t.reread_in_cache = work.working_set_bytes <= envelope.cache_bytes.value;
  const bool compulsory_in_cache = warm_fit(work, envelope);
  const double dram_bytes = (compulsory_in_cache ? 0 : work.compulsory_bytes) +
                            (t.reread_in_cache ? 0 : work.reread_bytes);
  const double cache_bytes = (compulsory_in_cache ? work.compulsory_bytes : 0) +
                             (t.reread_in_cache ? work.reread_bytes : 0);
  t.dram_seconds = dram_bytes > 0 ? dram_bytes / envelope.dram_bw(work.threads) : 0;
  t.cache_seconds = cache_bytes > 0 ? cache_bytes / envelope.cache_bw(work.threads) : 0;
  t.launch_seconds = std::max(0, work.dispatches) * envelope.launch_seconds.value;
  t.seconds = std::max(t.compute_seconds, t.dram_seconds + t.cache_seconds) + t.launch_seconds;
  return t;
}

double ranking_seconds(const Work& work, const Envelope& envelope) {
  return model_time(work, envelope).seconds;
}

double floor_seconds(const Work& work, const Envelope& envelope) {
  // The best rate any thread count can get: peak_flops(t) and dram_bw(t) never exceed the
  // larger of the one-thread and all-thread constants (a work model may ask for more threads
  // than the envelope was measured with, and then gets the all-thread cap), and cache_bw(t)
  // is largest at the envelope's threads.
  const int t = envelope.threads;
  const double flops = work.flops + work.scalar_flops + work.serial_flops;
  const double peak = std::max(envelope.peak_flops_1.value, envelope.peak_flops_all.value);
  const double compute = flops > 0 ? flops / peak : 0;
  const double bw = warm_fit(work, envelope)
                        ? envelope.cache_bw(t)
                        : std::max(envelope.dram_bw_1.value, envelope.dram_bw_all.value);
  const double memory = work.compulsory_bytes > 0 ? work.compulsory_bytes / bw : 0;
  return std::max(compute, memory);
}

}  // namespace tunekit
