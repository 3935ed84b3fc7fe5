// The CPU backend: steady clock, thread pool, identity from hwloc, last-level-cache evictor.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <vector>

#include "tunekit/device.hpp"

namespace tunekit {
class CalibrationProbe;  // tunekit/calibration.hpp
}

namespace tunekit::cpu {

// A fixed pool of worker threads. parallel_for runs fn(task) for task in [0, tasks) on at
// most `threads` threads (the caller is one of them) and returns when all are done. Safe to
// call from several threads (jobs queue up); a call from inside a task runs inline.
// Fork-aware: in a child process (a trial's worker) the pool starts its threads again on
// first use. A waiting thread (a helper between jobs, the caller for its helpers) spins for up
// to 200 µs, yielding, before it blocks, so back-to-back jobs keep their threads on their own
// CPUs; a helper that finds itself on its caller's CPU when a job starts (woken there after
// it blocked) moves off it while another CPU is idle. Construction that cannot start its threads
// throws UsageError.
class ThreadPool {
 public:
  explicit ThreadPool(int threads = 0);  // 0: one per core
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int size() const;
  void parallel_for(std::size_t tasks, int threads, const std::function<void(std::size_t)>& fn);

 private:
  class Impl;
  void respawn();
  std::unique_ptr<Impl> impl_;
  unsigned generation_ = 0;  // the process's fork generation the threads belong to
};

// Thread placement, for an op that wraps a threaded library (the CPU sgemm's OpenBLAS). A
// library's helper started or woken by the caller is often placed on the caller's CPU, where
// the two share one core at one thread's speed until the scheduler moves one of them; a process
// calling the library back to back has them on separate CPUs within a few hundred calls. After
// restarting a library's threads, an op spreads the new ones so every window times the library
// as that process has it (docs/performance.md "A library's restarted threads on the caller's
// CPU").
//
// The ids of this process's threads (Linux: /proc/self/task), in no order; empty where the
// system cannot tell.
std::vector<int> thread_ids();
// Moves each of `threads` off the caller's CPU, one after another onto the other CPUs of its
// own CPU mask, and gives each that mask back (the scheduler stays free to move it). Returns
// how many moved: not those that may run on the caller's CPU only, ended or may not be moved.
int spread_threads(const std::vector<int>& threads);
// How far apart the host runs two CPUs: the round trip of one cache line between two threads
// pinned to the first two CPUs of the calling thread's mask, in ns, the fastest of five bursts
// of 500 round trips that each completed within 1 ms (a burst during which a co-runner held one
// of the CPUs does not count; none completed: NaN). The first two CPUs: where they are SMT
// siblings of one core they read as near whatever the host does. About 50-85 ns between cores that
// share a cache; on a VM the host also runs the vCPUs on cores that do not (~330-350 ns on a 2-vCPU
// EPYC VM), and moves them between the two for minutes at a time, and multi-threaded kernels whose
// threads share data then run up to 2x slower (docs/performance.md "Two threads, two
// machines"). NaN with fewer than two CPUs or where threads cannot be pinned. The caller's CPU
// mask is not touched (neither probe thread is the caller).
double cross_cpu_round_trip_ns();

// Reads std::chrono::steady_clock; beside each reading, how long the process's threads waited
// for a CPU (Linux: /proc/self/task/*/schedstat, read outside the timed interval).
class SteadyClock final : public Clock {
 public:
  SteadyClock();
  ~SteadyClock() override;
  SteadyClock(const SteadyClock&) = delete;
  SteadyClock& operator=(const SteadyClock&) = delete;
  std::string_view name() const override { return "steady_clock"; }
  void begin() override;
  double end() override;
  double waited_seconds() const override { return waited_; }

 private:
  class Waits;
  std::unique_ptr<Waits> waits_;
  long long start_ns_ = 0;
  double waited_ = -1;
};

// Writes a buffer of `bytes` (default: twice the last-level cache) on every evict(). The
// buffer is allocated on first use, so a device that never evicts pays nothing.
class CacheEvictor final : public Evictor {
 public:
  explicit CacheEvictor(std::size_t bytes);
  void evict() override;

 private:
  std::unique_ptr<unsigned char[]> buffer_;
  std::size_t bytes_;
  unsigned char round_ = 0;
};

// Reads the host's identity with hwloc (vendor, model, cores, caches) and the ISA flags the
// compiler's CPU detection reports. known is false when hwloc could not read the topology.
DeviceIdentity host_identity();

class CpuDevice final : public Device {
 public:
  CpuDevice();
  const DeviceIdentity& identity() const override { return identity_; }
  Clock& clock() override { return clock_; }
  Evictor* evictor() override { return &evictor_; }
  Workers workers() const override { return Workers::by_default; }
  bool trial_builds_beyond_op() const override { return false; }  // host trials
  // Waits up to limit_seconds until no other thread of this process is running (OpenBLAS's
  // threads spin ~0.1 s after a call); a thread still running then is a co-runner, not waited
  // for again.
  double settle(double limit_seconds) override;
  std::optional<double> cross_cpu_round_trip() override;

 private:
  DeviceIdentity identity_;
  SteadyClock clock_;
  CacheEvictor evictor_;
  std::vector<int> co_runners_;  // threads that did not settle (thread ids)
};

// The probe `tunekit calibrate` measures this host with (tunekit/calibration.hpp): each
// reading runs for about `seconds_per_reading`.
std::unique_ptr<CalibrationProbe> make_calibration_probe(ThreadPool& pool,
                                                         double seconds_per_reading = 0.03);

}  // namespace tunekit::cpu
