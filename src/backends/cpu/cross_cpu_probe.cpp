// cpu::cross_cpu_round_trip_ns: one cache line bounced between two pinned threads.
#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <system_error>
#include <thread>
#include <vector>

#include "tunekit/cpu.hpp"

namespace tunekit::cpu {
namespace {

using Clock = std::chrono::steady_clock;

constexpr int kBursts = 5;
constexpr int kTripsPerBurst = 500;
constexpr std::chrono::milliseconds kBurstLimit{1};

bool pin_to(int cpu) {
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(cpu, &one);
  return ::pthread_setaffinity_np(::pthread_self(), sizeof one, &one) == 0;
}

}  // namespace

double cross_cpu_round_trip_ns() {
  cpu_set_t own;
  CPU_ZERO(&own);
  if (::sched_getaffinity(0, sizeof own, &own) != 0) return std::nan("");
  std::vector<int> cpus;
  for (int c = 0; c < CPU_SETSIZE && cpus.size() < 2; ++c)
    if (CPU_ISSET(c, &own)) cpus.push_back(c);
  if (cpus.size() < 2) return std::nan("");

  alignas(64) std::atomic<int> ball{0};
  std::atomic<bool> done{false};
  std::atomic<int> pinned{0};  // threads pinned; negative once one could not be
  double fastest = HUGE_VAL;
  auto pin = [&](int cpu) {
    if (pin_to(cpu))
      pinned.fetch_add(1);
    else
      pinned.store(-100);
    // Both or neither: a probe with one thread free would time the scheduler, not the CPUs.
    while (pinned.load() >= 0 && pinned.load() < 2) std::this_thread::yield();
    return pinned.load() == 2;
  };
  auto answer = [&] {
    if (!pin(cpus[1])) return;
    while (!done.load(std::memory_order_relaxed))
      if (ball.load(std::memory_order_acquire) == 1) ball.store(0, std::memory_order_release);
  };
  auto ask = [&] {
    if (!pin(cpus[0])) return;
    for (int b = 0; b < kBursts; ++b) {
      const auto start = Clock::now();
      int trips = 0;
      bool late = false;
      while (trips < kTripsPerBurst && !late) {
        ball.store(1, std::memory_order_release);
        for (long spins = 0; ball.load(std::memory_order_acquire) != 0; ++spins)
          if ((spins & 1023) == 1023 && Clock::now() - start > kBurstLimit) late = true;
        ++trips;
      }
      // A burst cut at the limit waited for a CPU a co-runner held: not a reading of the
      // placement (a loaded machine must not read as CPUs far apart).
      if (late) continue;
      const double ns = std::chrono::duration<double, std::nano>(Clock::now() - start).count();
      fastest = std::min(fastest, ns / trips);
    }
    done.store(true, std::memory_order_relaxed);
  };
  // A process that may start no more threads (a limit, a sandbox) reads "cannot tell": the
  // partner already started is released (neither pins) and joined.
  std::thread partner;
  try {
    partner = std::thread(answer);
    std::thread pinger(ask);
    pinger.join();
  } catch (const std::system_error&) {
    pinned.store(-100);
    if (partner.joinable()) partner.join();
    return std::nan("");
  }
  partner.join();
  return fastest == HUGE_VAL ? std::nan("") : fastest;
}

}  // namespace tunekit::cpu
