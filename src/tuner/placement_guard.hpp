// Waiting out a far placement of the CPUs during a search (MeasureOptions::placement,
// docs/guide.md "Where the host runs the CPUs").
#pragma once

#include <cmath>
#include <functional>

#include "tunekit/report.hpp"
#include "tunekit/tuner_options.hpp"

namespace tunekit {
class Device;
}

namespace tunekit::detail {

// Reads the device's cross-CPU round trip before windows, at most every check_seconds of the
// search's clock, and waits while a reading is far from the search's lowest. Like a stall,
// a far placement is the host's, not the candidate's: the windows are taken near, where the
// host runs the CPUs most of the time. A wait that ends with the CPUs still far ends the
// waiting for the rest of the search (a host that keeps them apart — a co-runner that never
// lets a vCPU idle — would only cost every later window the same wait).
class PlacementGuard {
 public:
  PlacementGuard(Device& device, const PlacementWait& options, std::function<double()> now);

  // The reading before the search (0: the device cannot tell, and the guard does nothing).
  void start(double before_ns);
  // Before a window; waits at most `limit` seconds (what a budget leaves); the seconds it
  // waited (0: none).
  double before_window(double limit = HUGE_VAL);
  // What the search saw and waited; `before_ns`/`after_ns` are the caller's.
  void report(CpuPlacement& p) const;

 private:
  bool far(double ns) const { return ns > options_.far_ratio * lowest_; }
  double read();  // 0 when the device cannot tell
  void idle(double seconds) const;

  Device& device_;
  PlacementWait options_;
  std::function<double()> now_;
  double lowest_ = 0;       // 0: not measured, the guard is off
  double highest_ran_ = 0;  // the highest reading windows were let run at
  double last_check_ = 0;
  bool given_up_ = false;
  int waits_ = 0;
  int ran_far_ = 0;
  double waited_ = 0;
};

}  // namespace tunekit::detail
