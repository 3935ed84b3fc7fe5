// The timing instrument (DESIGN §5). time_routine is public so a harness ranks exactly as a
// search ranks.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "tunekit/device.hpp"
#include "tunekit/outcome.hpp"

namespace tunekit {

enum class TimingMode { isolated, queued };
std::string_view to_string(TimingMode mode);

struct TimingResult;

struct TimingOptions {
  TimingMode mode = TimingMode::isolated;
  int warmup = 1;
  int repeats_floor = 16;           // at least this many samples
  double sample_budget = 0.025;     // seconds of per-launch time to top up to
  int max_runs = 64;                // cap (unless the floor is larger)
  double stall_ratio = 2.0;         // a sample over ratio x the window's minimum is stalled
  double contended_fraction = 0.5;  // more than this fraction stalled: contended
  Evictor* evictor = nullptr;       // flush caches before each sample when set
  std::function<bool()> stop;       // asked before the warmup and before every sample
  std::function<void(const TimingResult&)> on_call;  // every completed timing
};

struct TimingResult {
  // ok, stopped, not_measured (zero-length reading), launch_failed (the routine threw).
  Outcome outcome;
  TimingMode mode = TimingMode::isolated;
  std::string clock;
  std::vector<double> samples;  // seconds per launch, in order taken
  double min = 0, median = 0, mean = 0, mad = 0, p10 = 0, p90 = 0;
  int depth = 1;             // launches per sample
  long long dispatches = 0;  // launches, warmup included
  double stalled_fraction = 0;
  bool contended = false;
  double wall_seconds = 0;  // host time the call took
  bool ok() const { return outcome.ok(); }
};

// Sampling policy, a pure function: how many more samples to take given the options, the
// count so far and the per-launch seconds accumulated so far (0 means done).
int more_samples_wanted(const TimingOptions& options, int taken, double accumulated_seconds);

// Measures trial.launch() (already prepared) with clock. Never throws for a classified
// failure: a TrialError or std::exception from the routine becomes the outcome.
TimingResult time_routine(Trial& trial, Clock& clock, const TimingOptions& options);

}  // namespace tunekit
