// The timing instrument (DESIGN §5). time_routine is public so a harness ranks exactly as a
// search ranks.
#pragma once

#include <functional>
#include <span>
#include <string>
#include <vector>

#include "tunekit/device.hpp"
#include "tunekit/outcome.hpp"

namespace tunekit {

enum class TimingMode { isolated, queued };
std::string_view to_string(TimingMode mode);

// One calibration probe: a batch of `depth` launches took `seconds`.
struct DepthProbe {
  int depth = 1;
  double seconds = 0;
};

struct TimingResult;

struct TimingOptions {
  TimingMode mode = TimingMode::isolated;
  int warmup = 1;
  int repeats_floor = 16;           // at least this many samples
  double sample_budget = 0.025;     // seconds of per-launch time to top up to
  int max_runs = 64;                // cap (unless the floor is larger)
  double stall_ratio = 2.0;         // a sample over ratio x the window's minimum is stalled
  double contended_fraction = 0.5;  // more than this fraction stalled: contended
  Evictor* evictor = nullptr;       // flush caches before each sample (batch) when set
  // Queued mode: each sample is a batch of `depth` launches and one sync; the depth is
  // calibrated per candidate so a batch takes about batch_target.
  double batch_target = 0.010;
  int depth_cap = 200;  // host backends; device backends use 2048
  int fixed_depth = 0;  // queued mode: use this depth instead of calibrating (0: calibrate)
  // Cut the window (status hopeless) as soon as its median can no longer come within
  // hopeless_ratio of this incumbent reading (seconds per launch). 0: never.
  double hopeless_against = 0;
  double hopeless_ratio = 1.5;
  // The far-behind cut, with an incumbent (hopeless_against > 0): the window is cut as
  // hopeless once it holds two samples and the fastest of them (and of prior_reading) is at
  // least far_behind_ratio x the incumbent. Interference only ever adds time, so the fastest of
  // two or three readings that far behind is not a fast kernel seen during a stall. 0: off
  // (the median rule above alone); a ratio under hopeless_ratio counts as hopeless_ratio.
  double far_behind_ratio = 8;
  // The same cut on readings known clean: the clock answered that the process's threads did
  // not wait for a CPU during them (Clock::waited_seconds within wait_tolerance). A reading
  // the scheduler did not stretch is the kernel's own time on this machine, so two such
  // samples whose fastest (and the prior reading) is clean_far_behind_ratio x the incumbent
  // end the window. A clock that cannot tell (-1) never makes a reading clean. 0: off; a
  // ratio under hopeless_ratio counts as hopeless_ratio.
  double clean_far_behind_ratio = 2;
  // The far-behind cut on one reading: a candidate's validation run (cold: it only adds time)
  // that the clock knows did not wait for a CPU (as above) cuts it alone, with no second run,
  // when it is at least far_behind_ratio x the incumbent plus this many seconds — an allowance
  // for what a first call costs once and a wait for a CPU does not show (a library's set-up,
  // first touch of its buffers, a lazy load): up to it, such costs cannot make a kernel read
  // far behind. Shorter runs, or runs that waited, need the second reading. 0: off.
  double lone_cut_seconds = 0.1;
  // One launch read before this window on the same clock (the tuner passes the validation
  // run: cold, so never faster than the kernel); 0: none. The far-behind cut takes it into
  // its fastest reading, and in isolated mode, when it is already over hopeless_ratio x the
  // incumbent, the warmup is skipped (that run was the warmup).
  double prior_reading = 0;
  // A sample during which the process's threads waited for a CPU (Clock::waited_seconds)
  // longer than wait_tolerance x the reading "waited": the scheduler stretched it (another
  // process had the core, or the candidate's threads did not run at once). Such readings are
  // counted (TimingResult::waited), and with retake_waited refused and taken again while the
  // refusals are fewer than two or than the clean readings kept (a persistent load then costs
  // two). Retaking is off by default: on a 2-core machine it made decisions no more stable
  // (docs/performance.md "Readings that waited for a CPU").
  double wait_tolerance = 0.02;
  bool retake_waited = false;
  // Before the window the device waits up to this long for threads earlier candidates left
  // running (Device::settle: OpenBLAS's spin ~0.1 s after each call and took a core from the
  // next window). 0: no wait.
  double settle_seconds = 0.3;
  std::function<bool()> stop;  // asked before the warmup and before every sample (batch)
  std::function<void(const TimingResult&)> on_call;  // every completed timing
};

struct TimingResult {
  // ok, stopped, hopeless, not_measured (zero-length reading), launch_failed (it threw).
  Outcome outcome;
  TimingMode mode = TimingMode::isolated;
  std::string clock;
  std::vector<double> samples;  // seconds per launch, in order taken
  double min = 0, median = 0, mean = 0, mad = 0, p10 = 0, p90 = 0;
  int depth = 1;                   // launches per sample
  long long dispatches = 0;        // launches, warmup and depth calibration included
  std::vector<DepthProbe> probes;  // queued mode: the calibration batches
  double stalled_fraction = 0;
  bool contended = false;
  int waited = 0;           // kept readings during which the threads waited for a CPU
  int retaken = 0;          // such readings refused and taken again (retake_waited)
  int clean = 0;            // kept readings the clock knows did not wait for a CPU
  double wall_seconds = 0;  // host time the call took
  bool ok() const { return outcome.ok(); }
};

// Queued-mode depth policy, a pure function of the probes so far: fit seconds = fixed +
// marginal x depth (least squares) and take the depth whose fit reaches `target`, clamped to
// [1, cap]. A single launch already over the target stays at 1. When the fit cannot be
// resolved (fewer than two depths, or a non-positive marginal), never deeper than the
// deepest probe measured within the target.
int choose_depth(std::span<const DepthProbe> probes, double target, int cap);

// The largest number of samples the window could still end with: the cap while the budget
// is not spent, else what is taken (or the floor).
int max_final_samples(const TimingOptions& options, int taken, double accumulated_seconds);

// Sampling policy, a pure function: how many more samples to take given the options, the
// count so far and the per-launch seconds accumulated so far (0 means done).
int more_samples_wanted(const TimingOptions& options, int taken, double accumulated_seconds);

// The far-behind cuts (far_behind_ratio, clean_far_behind_ratio) as a pure function of the
// samples so far, `clean` of them known not to have waited for a CPU, against
// options.hopeless_against (and options.prior_reading): why the window is hopeless, or ""
// while it is not. time_routine asks it after every sample; racing after every round.
std::string far_behind_cut(const TimingOptions& options, std::span<const double> samples,
                           int clean);

// Measures trial.launch() (already prepared) with clock. In queued mode the budget counts
// batch time (so a calibrated candidate takes about repeats_floor batches). Never throws for a
// classified failure: a TrialError or std::exception from the routine becomes the outcome.
TimingResult time_routine(Trial& trial, Clock& clock, const TimingOptions& options);

// Fills a result's statistics (min, median, mean, MAD, p10/p90, stalled fraction, contended)
// from its samples, as time_routine does: for readings gathered elsewhere (a race's rounds,
// a recording).
void summarise(TimingResult& result, const TimingOptions& options);

}  // namespace tunekit
