// PlacementGuard: a far placement of the CPUs waited out before a window.
#include "tuner/placement_guard.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <thread>
#include <utility>

#include "tunekit/device.hpp"

namespace tunekit::detail {

PlacementGuard::PlacementGuard(Device& device, const PlacementWait& options,
                               std::function<double()> now)
    : device_(device), options_(options), now_(std::move(now)) {}

void PlacementGuard::start(double before_ns) {
  if (!(before_ns > 0) || !(options_.wait_seconds > 0)) return;
  lowest_ = highest_ran_ = before_ns;
  last_check_ = now_();
}

double PlacementGuard::read() {
  const double ns = device_.cross_cpu_round_trip().value_or(0);
  return std::isfinite(ns) && ns > 0 ? ns : 0;
}

void PlacementGuard::idle(double seconds) const {
  if (options_.sleep) return options_.sleep(seconds);
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
}

double PlacementGuard::before_window(double budget_left) {
  if (!(lowest_ > 0) || given_up_) return 0;
  const double start = now_();
  if (start - last_check_ < options_.check_seconds) return 0;
  last_check_ = start;
  double ns = read();
  if (!(ns > 0)) return 0;  // this reading could not tell (every burst waited for a CPU)
  lowest_ = std::min(lowest_, ns);
  if (!far(ns)) {
    highest_ran_ = std::max(highest_ran_, ns);
    return 0;
  }
  // Both CPUs idle while waiting: the host places a vCPU again when it wakes.
  const double limit = std::min(options_.wait_seconds - waited_, budget_left);
  if (!(limit > 0)) {  // nothing left to wait: the windows run far from now on
    ++ran_far_;
    given_up_ = true;
    return 0;
  }
  ++waits_;
  // Bounded in polls too: a clock that does not move while idling (a test's) ends it.
  const double polls = std::ceil(limit / std::max(options_.poll_seconds, 1e-6)) + 1;
  for (double poll = 0; far(ns) && now_() - start < limit && poll < polls; ++poll) {
    idle(std::min(options_.poll_seconds, std::max(0.0, limit - (now_() - start))));
    if (const double again = read(); again > 0) {
      ns = again;
      lowest_ = std::min(lowest_, ns);
    }
  }
  const double end = now_();
  waited_ += end - start;
  last_check_ = end;
  if (far(ns)) {
    ++ran_far_;
    given_up_ = true;
  }
  return end - start;
}

void PlacementGuard::report(CpuPlacement& p) const {
  p.lowest_ns = lowest_;
  p.waits = waits_;
  p.waited_seconds = waited_;
  // Windows let run at a reading that a later, lower one showed to be far ran far too.
  p.ran_far = ran_far_ + (lowest_ > 0 && far(highest_ran_) ? 1 : 0);
}

}  // namespace tunekit::detail
