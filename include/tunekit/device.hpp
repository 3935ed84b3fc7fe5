// The backend seams (DESIGN §3): identity, a clock, an evictor, trials. Small interfaces,
// so a fake for a test costs a few lines.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tunekit/op.hpp"
#include "tunekit/outcome.hpp"

namespace tunekit {

// Times one window: begin() before the launch(es), end() after they were synchronised.
// A host clock reads a steady clock; a device clock records events.
class Clock {
 public:
  virtual ~Clock() = default;
  virtual std::string_view name() const = 0;
  virtual void begin() = 0;
  virtual double end() = 0;  // seconds since begin()
  // Seconds this process's threads spent runnable but waiting for a CPU during the last
  // begin()/end() (another process had the core, or the candidate's threads outnumbered the
  // free cores): the scheduler's share of the reading. -1 when the clock cannot tell (a device
  // clock times the device, where the host's scheduler is not the question).
  virtual double waited_seconds() const { return -1; }
};

// Flushes caches between samples so a candidate is not timed on a warm cache.
class Evictor {
 public:
  virtual ~Evictor() = default;
  virtual void evict() = 0;
};

// What measuring one candidate needs from a backend. The tuner calls build() for every
// proposed candidate before any timing (the compile pass, possibly on several threads at
// once), then prepare / launch / sync / release for one candidate at a time.
class Trial {
 public:
  virtual ~Trial() = default;
  // Compiles what the candidate launches (no working buffers): for host and OpenCL trials the
  // op's build step (Workload::build_candidate). May fail classified (compile_failed + log).
  virtual Outcome build() { return Outcome::success(); }
  virtual Outcome prepare() = 0;  // allocate (and build, when build() was not called)
  virtual void launch() = 0;      // enqueue one dispatch; no synchronisation inside
  // Enqueues `count` back-to-back dispatches (a queued-mode batch), no synchronisation inside.
  // The default calls launch() `count` times; a device that can replay a batch without the
  // host's per-launch cost (a CUDA graph) overrides it.
  virtual void launch_batch(int count) {
    for (int i = 0; i < count; ++i) launch();
  }
  virtual void sync() = 0;
  virtual void release() = 0;
};

struct DeviceIdentity {
  std::string backend;  // "cpu", "opencl", "fake", ...
  std::string vendor;
  std::string product;                // model name
  std::string architecture;           // e.g. "x86_64"
  std::vector<std::string> features;  // ISA flags
  int compute_units = 0;              // cores
  std::uint64_t memory_bytes = 0;
  std::uint64_t l1d_bytes = 0;
  std::uint64_t l2_bytes = 0;
  std::uint64_t l3_bytes = 0;  // last level when there is no L3: the largest cache
  std::string driver;
  bool known = false;  // false when the identity could not be read
};

// What a worker process of its own needs to open a device again: the backend's name (as
// `tunekit --backend` takes it), the device selector (an index) and the architecture a source
// backend compiles for ("" the device's own).
struct DeviceReopen {
  std::string backend;
  std::string device;
  std::string arch;
};

class Device {
 public:
  virtual ~Device() = default;
  virtual const DeviceIdentity& identity() const = 0;
  virtual Clock& clock() = 0;
  virtual Evictor* evictor() { return nullptr; }
  // A trial that runs candidate `index` of `workload`. The default runs it on the host.
  virtual std::unique_ptr<Trial> make_trial(Workload& workload, std::size_t index);
  // Whether this device's trials may run in a worker process (DESIGN §11): trials that run
  // host code can, in a fork of the host (the default Device::make_trial's; the CPU device
  // isolates by default). A driver's context does not survive fork(): such a device's trials
  // run, when asked, in a fresh process of IsolationOptions::worker_program that opens the
  // device again as reopen() says and the op by its name (`spawned`).
  enum class Workers { unsupported, supported, by_default, spawned };
  virtual Workers workers() const { return Workers::supported; }
  // How a fresh process opens this very device again (for `spawned` workers).
  virtual std::optional<DeviceReopen> reopen() const { return std::nullopt; }
  // Whether a trial's build() may do more than the op's build step (a device's program cache,
  // a loaded module). A forked worker is replaced after such a build, which it would lack;
  // host trials (the default make_trial's, the CPU device's) build nothing else.
  virtual bool trial_builds_beyond_op() const { return true; }
  // Whether trials' build() may run on several threads at once (a simulated device with one
  // clock says no, so its time stays deterministic).
  virtual bool parallel_builds() const { return true; }
  // Called before every timing window: waits, at most limit_seconds, until what earlier
  // candidates left running has stopped (a library's worker threads spin on after its call
  // returns and would take a core from the next window). Returns the seconds waited; the
  // default waits for nothing.
  virtual double settle(double /*limit_seconds*/) { return 0; }
  // How far apart the host runs two of the device's CPUs, in ns (cpu::cross_cpu_round_trip_ns),
  // read before and after every search (TuneReport::cpu_placement): a decision between
  // multi-threaded candidates holds for the placement it was made in. None where the device
  // has no such notion (the default).
  virtual std::optional<double> cross_cpu_round_trip() { return std::nullopt; }
  // The deepest queued-mode batch this device takes by default (DESIGN §5: 200 on host
  // backends, 2048 on GPUs); a caller that sets MeasureOptions::timing.depth_cap itself wins.
  virtual int default_depth_cap() const { return 200; }

  // One search at a time on this device (DESIGN §11): every Tuner on it try-locks this
  // around a search, and a contender is served the default instead of waiting.
  bool try_begin_search() { return !searching_.exchange(true, std::memory_order_acquire); }
  void end_search() { searching_.store(false, std::memory_order_release); }

 private:
  std::atomic<bool> searching_{false};
};

}  // namespace tunekit
