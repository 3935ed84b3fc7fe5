// Does a window of OpenBLAS calls read slower when its helper threads were stopped after the
// last window (kernels::openblas_quiesce, what Op::quiesce does for the CPU sgemm) than when
// they went to sleep on their own? Interleaved trials, each window preceded by one warmup call
// (what the tuner gives a quiescing op's windows). docs/performance.md has the command and
// what it printed.
//   openblas_quiesce_bench [n (m = n = k), default 128] [calls per window, 20] [trials, 30]
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "sgemm/sgemm.hpp"

namespace {

using tunekit::kernels::SgemmArgs;

double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

int positive(const char* text, int fallback) {
  if (!text) return fallback;
  const int value = std::atoi(text);
  if (value < 1 || value > 100000) {
    std::fprintf(stderr, "openblas_quiesce_bench: '%s' is not a count in 1..100000\n", text);
    std::exit(2);
  }
  return value;
}

}  // namespace

int main(int argc, char** argv) {
  const int n = positive(argc > 1 ? argv[1] : nullptr, 128);
  const int calls = positive(argc > 2 ? argv[2] : nullptr, 20);
  const int trials = positive(argc > 3 ? argv[3] : nullptr, 30);
  const auto size = static_cast<std::size_t>(n);
  SgemmArgs args = tunekit::kernels::make_sgemm_args(size, size, size);
  auto call = [&] { tunekit::kernels::sgemm_openblas(2, args); };
  for (int i = 0; i < 20; ++i) call();
  std::vector<double> asleep, stopped, asleep_first, stopped_first, stop_cost;
  for (int t = 0; t < trials; ++t) {
    for (const bool stop : {false, true}) {
      if (stop) {
        const double s = now();
        tunekit::kernels::openblas_quiesce();
        stop_cost.push_back(now() - s);
      } else {
        ::usleep(150000);  // past OpenBLAS's ~0.1 s spin: its helper sleeps
      }
      double s = now();
      call();  // the warmup: wakes or restarts the helper
      (stop ? stopped_first : asleep_first).push_back(now() - s);
      std::vector<double> window;
      for (int i = 0; i < calls; ++i) {
        s = now();
        call();
        window.push_back(now() - s);
      }
      (stop ? stopped : asleep).push_back(median(window));
    }
  }
  std::printf(
      "sgemm %d^3, OpenBLAS 2 threads, %d trials of %d calls: window median %.1f us after its "
      "threads slept, %.1f us after they were stopped (ratio %.3f); the warmup call %.1f / %.1f "
      "us; stopping them %.1f us\n",
      n, trials, calls, median(asleep) * 1e6, median(stopped) * 1e6,
      median(stopped) / median(asleep), median(asleep_first) * 1e6, median(stopped_first) * 1e6,
      median(stop_cost) * 1e6);
}
