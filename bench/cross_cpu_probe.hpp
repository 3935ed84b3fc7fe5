// The cross-CPU probe of the benches (decision_bench): how far apart the host runs two CPUs.
#pragma once

#include <pthread.h>
#include <sched.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <thread>
#include <vector>

#include "tunekit/stats.hpp"

namespace bench {

// The round trip of one cache line between two threads pinned to the first two CPUs of this
// process, in ns: the median of 5 bursts of up to 2000 trips or 2 ms each (NaN with fewer than
// two CPUs). On a VM the host places the two vCPUs near each other (~60-85 ns round trips on
// the 2-vCPU EPYC VM) or far (~350 ns) and moves them over minutes; kernels whose threads share
// data (a packed panel, OpenBLAS's threads) then run up to 1.8x slower (docs/performance.md
// "Two threads, two machines"), so a row's decisions are read beside it. Neither of the probe's
// threads is the caller: its CPU mask stays as it was.
inline double cross_cpu_round_trip_ns() {
  using Clock = std::chrono::steady_clock;
  cpu_set_t own;
  CPU_ZERO(&own);
  if (::sched_getaffinity(0, sizeof own, &own) != 0) return std::nan("");
  std::vector<int> cpus;
  for (int c = 0; c < CPU_SETSIZE && cpus.size() < 2; ++c)
    if (CPU_ISSET(c, &own)) cpus.push_back(c);
  if (cpus.size() < 2) return std::nan("");
  auto pin = [](int cpu) {
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    ::pthread_setaffinity_np(::pthread_self(), sizeof one, &one);
  };
  alignas(64) std::atomic<int> ball{0};
  std::atomic<bool> done{false};
  std::vector<double> bursts;
  std::thread partner([&] {
    pin(cpus[1]);
    while (!done.load(std::memory_order_relaxed))
      if (ball.load(std::memory_order_acquire) == 1) ball.store(0, std::memory_order_release);
  });
  std::thread pinger([&] {
    pin(cpus[0]);
    for (int b = 0; b < 5; ++b) {
      const auto start = Clock::now();
      int trips = 0;
      bool late = false;
      while (trips < 2000 && !late) {
        ball.store(1, std::memory_order_release);
        // A partner that lost its CPU to a co-runner: the burst ends at 2 ms, not at its return.
        for (long spins = 0; ball.load(std::memory_order_acquire) != 0; ++spins)
          if ((spins & 1023) == 1023 &&
              std::chrono::duration<double>(Clock::now() - start).count() > 0.002)
            late = true;
        ++trips;
      }
      bursts.push_back(std::chrono::duration<double>(Clock::now() - start).count() * 1e9 / trips);
    }
    done.store(true, std::memory_order_relaxed);
  });
  pinger.join();
  partner.join();
  return tunekit::stats::median(bursts);
}

}  // namespace bench
