// Calibration logic over a probe: which readings to take, the capacity step, medians and
// spreads. Nothing here touches hardware, so a fake probe with a known curve tests it.
#include "tunekit/calibration.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "tunekit/identity.hpp"
#include "tunekit/key.hpp"

namespace tunekit {
namespace {

double median_of(std::vector<double> xs) {
  if (xs.empty()) return 0;
  std::sort(xs.begin(), xs.end());
  const std::size_t n = xs.size();
  return n % 2 ? xs[n / 2] : (xs[n / 2 - 1] + xs[n / 2]) / 2;
}

}  // namespace

Estimate estimate_of(std::span<const double> readings) {
  Estimate e;
  std::vector<double> xs(readings.begin(), readings.end());
  e.value = median_of(xs);
  if (e.value <= 0 || xs.size() < 2) return e;
  std::vector<double> dev;
  for (double x : xs) dev.push_back(std::abs(x - e.value));
  e.spread = median_of(dev) / e.value;
  return e;
}

CacheStep find_cache_step(std::span<const SweepPoint> sweep) {
  std::vector<SweepPoint> pts(sweep.begin(), sweep.end());
  std::sort(pts.begin(), pts.end(),
            [](const SweepPoint& a, const SweepPoint& b) { return a.bytes < b.bytes; });
  CacheStep step;
  if (pts.size() < 4) return step;
  // The tail: the largest working sets, served from beyond every cache.
  const std::size_t tail_n = std::max<std::size_t>(2, pts.size() / 6);
  std::vector<double> tail;
  for (std::size_t i = pts.size() - tail_n; i < pts.size(); ++i) tail.push_back(pts[i].bandwidth);
  step.beyond_bandwidth = median_of(tail);
  // The last point clearly above the tail (2x: well outside DRAM noise) ends the plateau.
  std::size_t last = pts.size();
  for (std::size_t i = pts.size() - tail_n; i-- > 0;) {
    if (pts[i].bandwidth >= 2 * step.beyond_bandwidth) {
      last = i;
      break;
    }
  }
  if (last == pts.size()) return step;
  // A gradual fall: walk back up it while each smaller set is clearly (10 %) faster, to the
  // end of the flat part before it.
  std::size_t end = last;
  while (end > 0 && pts[end - 1].bandwidth >= 1.1 * pts[end].bandwidth) --end;
  // The plateau: points within 4x below its end (one cache level, not the levels above it).
  std::vector<double> plateau;
  for (std::size_t i = 0; i <= end; ++i)
    if (pts[i].bytes * 4 >= pts[end].bytes) plateau.push_back(pts[i].bandwidth);
  step.cache_bandwidth = median_of(plateau);
  // Where the curve falls: the largest working set still above the geometric midpoint.
  const double threshold = std::sqrt(step.cache_bandwidth * step.beyond_bandwidth);
  std::size_t cap = end;
  for (std::size_t i = end; i < pts.size(); ++i)
    if (pts[i].bandwidth >= threshold) cap = i;
  step.capacity_bytes = pts[cap].bytes;
  step.found = true;
  return step;
}

std::vector<double> sweep_sizes(std::uint64_t cache_hint_bytes, bool quick) {
  const double top =
      cache_hint_bytes > 0 ? 8.0 * static_cast<double>(cache_hint_bytes) : 256.0 * 1024 * 1024;
  const double factor = quick ? std::sqrt(2.0) : std::pow(2.0, 0.25);
  std::vector<double> sizes;
  for (double s = 4096; s <= top * 1.0001; s *= factor) sizes.push_back(std::round(s / 64) * 64);
  return sizes;
}

std::vector<int> chain_counts() {
  return {1, 2, 4, 6, 8, 10, 12, 16};
}

int chains_for_peak(std::span<const ChainPoint> points) {
  double best = 0;
  for (const auto& p : points) best = std::max(best, p.flops);
  int chains = 0;
  for (const auto& p : points)
    if (p.flops >= 0.9 * best && (chains == 0 || p.chains < chains)) chains = p.chains;
  return std::max(1, chains);
}

Calibration calibrate(CalibrationProbe& probe, const CalibrationOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  const int repeats = std::max(1, options.quick ? std::min(options.repeats, 3) : options.repeats);
  const int threads = std::max(1, probe.max_threads());
  const std::uint64_t hint = probe.cache_hint_bytes();
  const std::vector<double> sizes = sweep_sizes(hint, options.quick);
  const std::vector<int> chains = chain_counts();
  // The DRAM set: far beyond the largest cache (4x, at least 64 MiB; 2x and 32 MiB when quick).
  const double mib = 1024.0 * 1024;
  const double dram_set = options.quick ? std::max(2.0 * static_cast<double>(hint), 32 * mib)
                                        : std::max(4.0 * static_cast<double>(hint), 64 * mib);

  const std::size_t total = chains.size() + 5 * static_cast<std::size_t>(repeats) + sizes.size();
  std::size_t done = 0;
  auto tick = [&](std::string_view what) {
    ++done;
    if (options.on_progress) options.on_progress(what, done, total);
  };
  auto repeat = [&](std::string_view what, auto&& read) {
    std::vector<double> xs;
    for (int r = 0; r < repeats; ++r) {
      xs.push_back(read());
      tick(what);
    }
    return estimate_of(xs);
  };

  Calibration c;
  Envelope& e = c.envelope;
  e.threads = threads;
  e.simd_lanes = std::max(1, probe.simd_lanes());
  for (int n : chains) {
    c.fma_by_chains.push_back({n, probe.fma_flops(1, n)});
    tick("FMA chains");
  }
  e.fma_chains = chains_for_peak(c.fma_by_chains);
  // The peak with enough chains in flight whatever the noise of the chain sweep.
  const int peak_chains = chains.back();
  e.peak_flops_1 = repeat("FMA peak, 1 thread", [&] { return probe.fma_flops(1, peak_chains); });
  e.peak_flops_all =
      repeat("FMA peak, all threads", [&] { return probe.fma_flops(threads, peak_chains); });
  for (double s : sizes) {
    c.sweep.push_back({s, probe.read_bandwidth(static_cast<std::size_t>(s))});
    tick("cache sweep");
  }
  const CacheStep step = find_cache_step(c.sweep);
  if (step.found) {
    e.cache_bytes = {step.capacity_bytes, 0};
    // The plateau's spread: the readings it was the median of.
    std::vector<double> plateau;
    for (const auto& p : c.sweep)
      if (p.bytes <= step.capacity_bytes && p.bytes * 4 >= step.capacity_bytes)
        plateau.push_back(p.bandwidth);
    e.cache_bw_1 = estimate_of(plateau);
    e.cache_bw_1.value = step.cache_bandwidth;
    // Resolution of the sweep: the capacity is known to within one step of the grid.
    e.cache_bytes.spread = options.quick ? std::sqrt(2.0) - 1 : std::pow(2.0, 0.25) - 1;
  } else if (hint > 0) {
    // No step (a noisy or flat curve): the cache the device reports, and the sweep's median
    // inside it. Said in the result so a caller can warn.
    c.cache_step_found = false;
    e.cache_bytes = {static_cast<double>(hint), 0};
    std::vector<double> inside;
    for (const auto& p : c.sweep)
      if (p.bytes <= static_cast<double>(hint)) inside.push_back(p.bandwidth);
    e.cache_bw_1 = estimate_of(inside);
  } else {
    c.cache_step_found = false;
  }
  const auto dram_bytes = static_cast<std::size_t>(dram_set);
  e.dram_bw_1 =
      repeat("DRAM triad, 1 thread", [&] { return probe.triad_bandwidth(dram_bytes, 1); });
  e.dram_bw_all =
      repeat("DRAM triad, all threads", [&] { return probe.triad_bandwidth(dram_bytes, threads); });
  e.launch_seconds = repeat("dispatch overhead", [&] { return probe.dispatch_seconds(); });
  c.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return c;
}

std::string device_digest(const DeviceIdentity& device) {
  return Digest::of(device_text(device)).hex();
}

DeviceProfile make_profile(const DeviceIdentity& device, const Calibration& calibration,
                           bool quick) {
  DeviceProfile p;
  p.backend = device.backend;
  p.vendor = device.vendor;
  p.product = device.product;
  p.architecture = device.architecture;
  p.compute_units = device.compute_units;
  p.device_digest = device_digest(device);
  p.envelope = calibration.envelope;
  p.quick = quick;
  p.calibration_seconds = calibration.seconds;
  p.created_at = std::chrono::duration_cast<std::chrono::seconds>(
                     std::chrono::system_clock::now().time_since_epoch())
                     .count();
  return p;
}

}  // namespace tunekit
