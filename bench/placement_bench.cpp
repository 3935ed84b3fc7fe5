// Where the host runs the CPUs over time (docs/performance.md "Waiting for the CPUs to be near
// again"): the cross-CPU round trip (tunekit::cpu::cross_cpu_round_trip_ns) read N times with
// the process asleep (`--idle sleep`) or both CPUs kept busy (`--idle spin`) for `--gap` ms
// between two readings; prints how many readings were far (over twice the lowest), in how many
// spells, and the longest spell.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "tunekit/cpu.hpp"

namespace {

using Clock = std::chrono::steady_clock;

// Both CPUs busy until `until`: this thread and one more spin.
void spin_until(Clock::time_point until) {
  std::atomic<bool> stop{false};
  std::thread other([&stop] {
    while (!stop.load(std::memory_order_relaxed)) {
    }
  });
  while (Clock::now() < until) {
  }
  stop = true;
  other.join();
}

}  // namespace

int main(int argc, char** argv) {
  std::string idle = "sleep";
  int readings = 200;
  double gap_ms = 5;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--idle") && i + 1 < argc)
      idle = argv[++i];
    else if (!std::strcmp(argv[i], "--readings") && i + 1 < argc)
      readings = std::max(1, std::atoi(argv[++i]));
    else if (!std::strcmp(argv[i], "--gap") && i + 1 < argc)
      gap_ms = std::max(0.0, std::atof(argv[++i]));
    else {
      std::fprintf(stderr,
                   "usage: placement_bench [--idle sleep|spin] [--readings N] [--gap MS]\n");
      return 2;
    }
  }
  if (idle != "sleep" && idle != "spin") {
    std::fprintf(stderr, "placement_bench: --idle is sleep or spin, got %s\n", idle.c_str());
    return 2;
  }
  std::vector<double> ns;
  const auto start = Clock::now();
  for (int i = 0; i < readings; ++i) {
    const auto until = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                          std::chrono::duration<double, std::milli>(gap_ms));
    if (idle == "spin")
      spin_until(until);
    else
      std::this_thread::sleep_until(until);
    ns.push_back(tunekit::cpu::cross_cpu_round_trip_ns());
  }
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  double lowest = HUGE_VAL;
  for (double x : ns)
    if (x > 0) lowest = std::min(lowest, x);
  if (!std::isfinite(lowest)) {
    std::printf("the device cannot tell (one CPU, or no reading completed)\n");
    return 0;
  }
  int far = 0, spells = 0, longest = 0, run = 0, unread = 0;
  double far_high = 0;
  for (double x : ns) {
    if (!(x > 0)) {
      ++unread;
      continue;
    }
    const bool is_far = x > 2 * lowest;
    if (is_far) {
      ++far;
      far_high = std::max(far_high, x);
      if (run++ == 0) ++spells;
      longest = std::max(longest, run);
    } else {
      run = 0;
    }
  }
  std::printf(
      "idle %s, gap %.1f ms, %d readings in %.1f s: lowest %.0f ns; far (over %.0f ns) %d "
      "(%.0f %%) in %d spells, the longest %d readings (~%.0f ms), highest %.0f ns; %d could "
      "not tell\n",
      idle.c_str(), gap_ms, readings, seconds, lowest, 2 * lowest, far, 100.0 * far / readings,
      spells, longest, longest * seconds / readings * 1e3, far_high, unread);
}
