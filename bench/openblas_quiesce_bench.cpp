// Does a window of OpenBLAS calls read slower when its helper threads were stopped after the
// last window (kernels::openblas_quiesce, what Op::quiesce does for the CPU sgemm) than when
// they went to sleep on their own, and than when the restarted helpers are spread off the
// caller's CPU (what sgemm_openblas does after a stop)? Interleaved trials, each window
// preceded by one warmup call (what the tuner gives a quiescing op's windows).
// docs/performance.md has the command and what it printed.
//   openblas_quiesce_bench [n (m = n = k), default 128] [calls per window, 20] [trials, 30]
#include <cblas.h>
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
  // The restart as it was before sgemm_openblas spread the new threads: a plain call.
  auto plain_call = [&] {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, args.a.data(), n,
                args.b.data(), n, 0.0f, args.c.data(), n);
  };
  for (int i = 0; i < 20; ++i) call();
  // Three ways into a window, interleaved: the helper asleep, stopped and restarted by a plain
  // call (left where it started), stopped and restarted by sgemm_openblas (spread).
  enum Way { asleep, stopped_plain, stopped_spread, ways };
  const char* const names[ways] = {"threads slept", "stopped, restarted in place",
                                   "stopped, restarted and spread"};
  std::vector<double> window_median[ways], first[ways], stop_cost;
  for (int t = 0; t < trials; ++t) {
    for (int way = 0; way < ways; ++way) {
      if (way == asleep) {
        ::usleep(150000);  // past OpenBLAS's ~0.1 s spin: its helper sleeps
      } else {
        const double s = now();
        tunekit::kernels::openblas_quiesce();
        stop_cost.push_back(now() - s);
      }
      double s = now();
      way == stopped_plain ? plain_call() : call();  // the warmup: wakes or restarts the helper
      first[way].push_back(now() - s);
      std::vector<double> window;
      for (int i = 0; i < calls; ++i) {
        s = now();
        call();
        window.push_back(now() - s);
      }
      window_median[way].push_back(median(window));
    }
  }
  std::printf(
      "sgemm %d^3, OpenBLAS 2 threads, %d trials of %d calls each way (interleaved); "
      "stopping the threads %.1f us\n",
      n, trials, calls, median(stop_cost) * 1e6);
  for (int way = 0; way < ways; ++way) {
    std::vector<double> w = window_median[way];
    std::sort(w.begin(), w.end());
    std::printf(
        "  %-30s window median of medians %7.1f us (p10 %7.1f, p90 %7.1f); warmup %7.1f us\n",
        names[way], median(w) * 1e6, w[w.size() / 10] * 1e6, w[w.size() * 9 / 10] * 1e6,
        median(first[way]) * 1e6);
  }
}
