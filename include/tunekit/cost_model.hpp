// Cost model (DESIGN §9): a device's calibrated envelope, a candidate's work on a key, and the
// roofline that ranks candidates without running them. Light on purpose: no JSON types here.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace tunekit {

// One calibrated constant: the median of its repeats and their spread (relative MAD: 0.02 is
// 2 %). A constant that was not measured has value 0.
struct Estimate {
  double value = 0;
  double spread = 0;
};

// What a device can do at best. Rates per second; bandwidths in bytes per second.
struct Envelope {
  Estimate peak_flops_1;    // FMA micro-kernel, one thread
  Estimate peak_flops_all;  // the same on every thread
  Estimate dram_bw_1;       // triad far beyond the last-level cache, one thread
  Estimate dram_bw_all;     // the same on every thread
  Estimate cache_bw_1;      // read bandwidth inside the cache, one thread (scales per thread)
  Estimate cache_bytes;     // where the bandwidth vs working-set curve falls
  Estimate launch_seconds;  // one parallel dispatch and its synchronisation
  int threads = 1;          // threads the "_all" constants were measured with
  int simd_lanes = 1;       // f32 lanes of one vector FMA of the peak kernel
  int fma_chains = 1;       // independent accumulators the peak kernel needed to reach peak

  // Rates for `threads` threads: one thread's rate for one; beyond, one thread's rate times
  // threads capped by the all-thread rate (even when that is lower: a contended machine).
  double peak_flops(int threads) const;
  double dram_bw(int threads) const;
  double cache_bw(int threads) const;
  // Whether every constant ranking needs is positive (a profile that can rank).
  bool usable() const;
};

// A candidate's work on one key, as its op declares it. Bytes are counted once per pass.
struct Work {
  double flops = 0;
  double compulsory_bytes = 0;   // inputs read once and outputs written once
  double reread_bytes = 0;       // operand traffic beyond that (per-block re-reads)
  double working_set_bytes = 0;  // of one block: decides where re-reads are served from
  int threads = 1;
  // How much of the FMA peak the inner loop can reach: lanes it fills (0: the full vector) and
  // independent accumulator chains it keeps in flight (0: enough).
  int vector_lanes = 0;
  int chains = 0;
  // Flops in one dependent scalar chain per thread (an in-order running sum): each waits for
  // the last, so they run at the peak / (simd_lanes · fma_chains).
  double serial_flops = 0;
  // Independent scalar flops (a library call per element, code that does not vectorise):
  // one lane, enough chains, so they run at the peak / simd_lanes.
  double scalar_flops = 0;
  int dispatches = 0;  // parallel dispatches each paying the envelope's launch overhead
  // Calls run back to back on warm caches (no eviction between them, as the tuner times an op
  // that does not evict): compulsory traffic that fits the cache moves at cache bandwidth.
  // The tuner sets it from the op and its options; false: every call starts cold.
  bool warm = false;
};

struct ModelTime {
  double seconds = 0;  // the ranking score (not a prediction of absolute time)
  double compute_seconds = 0;
  double dram_seconds = 0;
  double cache_seconds = 0;
  double launch_seconds = 0;
  bool reread_in_cache = true;  // the block's working set fits the cache
};

// ranking_seconds = max(flops / peak + scalar_flops / scalar_peak + serial_flops / serial_peak,
//                       bytes_dram / dram_bw + bytes_cache / cache_bw)
//                   + dispatches · launch overhead.
// Compulsory bytes move at DRAM bandwidth (at cache bandwidth when `warm` and they fit the
// cache); re-reads at cache bandwidth while the block's working set fits the cache capacity,
// at DRAM bandwidth once it exceeds it. The peak is the
// thread count's, scaled by the share of lanes and chains the inner loop fills.
ModelTime model_time(const Work& work, const Envelope& envelope);
double ranking_seconds(const Work& work, const Envelope& envelope);
// The floor: compulsory traffic and flops at the device's full peak (every thread, every
// lane; traffic at the bandwidth model_time would use for it), no re-reads, no dispatch
// overhead. No candidate doing `work` can rank below it.
double floor_seconds(const Work& work, const Envelope& envelope);

// A device profile: who the envelope describes, and the envelope. Stored as JSON:
//   {"format": "tunekit-device-profile", "version": 1,
//    "device": {"backend", "vendor", "product", "architecture", "compute_units", "digest"},
//    "envelope": {"peak_flops_1": {"value", "spread"}, ..., "threads", "simd_lanes",
//                 "fma_chains"},
//    "calibration": {"quick": bool, "seconds": number, "created_at": unix seconds}}
struct DeviceProfile {
  std::string backend;
  std::string vendor;
  std::string product;
  std::string architecture;
  int compute_units = 0;
  std::string device_digest;  // hex digest of the device identity it was measured on
  Envelope envelope;
  bool quick = false;  // measured with the quick (short, noisier) calibration
  double calibration_seconds = 0;
  std::int64_t created_at = 0;

  std::string to_json() const;
  // A ParseError/UsageError naming `origin` (a file name) and the field at fault.
  static DeviceProfile parse(std::string_view text, std::string_view origin);
};

// Reads a profile file; a missing, unreadable or malformed file is a UsageError naming it.
DeviceProfile read_profile(const std::string& path);
// Writes atomically (temp file, rename), creating the directory; returns the path.
std::string write_profile(const std::string& path, const DeviceProfile& profile);
// Where the stored profile of a device lives: <dir>/<device digest>.json.
std::string profile_path(const std::string& dir, std::string_view device_digest);

}  // namespace tunekit
