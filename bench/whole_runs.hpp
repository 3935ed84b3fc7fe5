// Timing whole runs for the attention and stack benches: one run on the steady clock, a paired
// A B B A score of two runs, the load the numbers were taken under. Private to bench/.
#pragma once

#include <stdlib.h>

#include <chrono>
#include <functional>
#include <vector>

#include "tunekit/stats.hpp"

namespace tunekit::bench {

inline double time_once(const std::function<void()>& fn) {
  const auto t0 = std::chrono::steady_clock::now();
  fn();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// `c` against `b` in A B B A order (b first in even pairs), whole runs each; every pair must
// count (min_pairs = pairs).
inline stats::PairedScore paired(const std::function<void()>& b, const std::function<void()>& c,
                                 int pairs) {
  std::vector<double> ref, cand;
  for (int i = 0; i < pairs; ++i) {
    if (i % 2 == 0) {
      ref.push_back(time_once(b));
      cand.push_back(time_once(c));
    } else {
      cand.push_back(time_once(c));
      ref.push_back(time_once(b));
    }
  }
  stats::PairedPolicy policy;
  policy.min_pairs = pairs;
  return stats::paired_score(ref, cand, policy);
}

// The 1-minute load average (-1 when unknown).
inline double load_average() {
  double load[1] = {0};
  return getloadavg(load, 1) == 1 ? load[0] : -1.0;
}

}  // namespace tunekit::bench
