// Calibration (DESIGN §9): measures a device's envelope. A small probe seam measures (FMA
// peak, bandwidth at a working-set size, dispatch overhead); calibrate() is pure logic over it
// (sweeps, the capacity step, medians and spreads), so a fake probe with a known curve tests
// it. The CPU probe is cpu::make_calibration_probe (tunekit/cpu.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tunekit/cost_model.hpp"
#include "tunekit/device.hpp"

namespace tunekit {

class CalibrationProbe {
 public:
  virtual ~CalibrationProbe() = default;
  virtual int max_threads() const = 0;
  virtual int simd_lanes() const = 0;  // f32 lanes of one vector FMA
  // The size of the largest cache as the device reports it (0: unknown); it sizes the sweep.
  virtual std::uint64_t cache_hint_bytes() const = 0;
  // FLOP/s of the FMA micro-kernel with `chains` independent accumulator vectors per thread.
  virtual double fma_flops(int threads, int chains) = 0;
  // Bytes per second one thread reads from a warm working set of `bytes`.
  virtual double read_bandwidth(std::size_t bytes) = 0;
  // Bytes per second of a triad (a = b + s·c) over three arrays of `bytes` in all.
  virtual double triad_bandwidth(std::size_t bytes, int threads) = 0;
  // Seconds of one empty parallel dispatch with its synchronisation.
  virtual double dispatch_seconds() = 0;
};

struct CalibrationOptions {
  int repeats = 5;     // each constant is the median of this many readings
  bool quick = false;  // fewer repeats, a coarser sweep, smaller DRAM set: seconds, not tens
  // Steps of the calibration, for a progress bar: (what, steps done, steps in all).
  std::function<void(std::string_view what, std::size_t done, std::size_t total)> on_progress;
};

struct SweepPoint {
  double bytes = 0;
  double bandwidth = 0;  // bytes per second
};

// Where a bandwidth vs working-set curve falls for the last time: the largest working set
// still served well above the tail's bandwidth. found is false when the curve has no step.
struct CacheStep {
  bool found = false;
  double capacity_bytes = 0;
  double cache_bandwidth = 0;   // median of the plateau just before the fall
  double beyond_bandwidth = 0;  // median of the tail
};
CacheStep find_cache_step(std::span<const SweepPoint> sweep);

// Working sets the sweep visits: quarter-octave steps from 4 KiB to 8× the cache hint (or
// 256 MiB when unknown); half-octave steps when quick.
std::vector<double> sweep_sizes(std::uint64_t cache_hint_bytes, bool quick);

struct ChainPoint {
  int chains = 0;
  double flops = 0;
};
// The chain counts the FMA sweep visits.
std::vector<int> chain_counts();
// The smallest number of chains whose FLOP/s reaches 90 % of the best of the points.
int chains_for_peak(std::span<const ChainPoint> points);

// The median of the readings and their relative MAD.
Estimate estimate_of(std::span<const double> readings);

struct Calibration {
  Envelope envelope;
  std::vector<SweepPoint> sweep;
  // False when the sweep showed no step: the capacity is then the device's reported cache
  // size (or 0 when unknown, which leaves the envelope unusable).
  bool cache_step_found = true;
  std::vector<ChainPoint> fma_by_chains;  // one thread
  double seconds = 0;
};

Calibration calibrate(CalibrationProbe& probe, const CalibrationOptions& options);

// The hex digest a device's profile is stored under (of its identity fields, device_text).
std::string device_digest(const DeviceIdentity& device);
// A profile of `device` holding the calibration's envelope, stamped now.
DeviceProfile make_profile(const DeviceIdentity& device, const Calibration& calibration,
                           bool quick);

}  // namespace tunekit
