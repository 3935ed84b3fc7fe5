#include <algorithm>
#include <chrono>
#include <cmath>
#include <exception>
#include <functional>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "core/classify.hpp"
#include "tunekit/errors.hpp"
#include "tunekit/stats.hpp"
#include "tunekit/timing.hpp"

namespace tunekit {

std::string_view to_string(TimingMode mode) {
  return mode == TimingMode::isolated ? "isolated" : "queued";
}

int max_final_samples(const TimingOptions& options, int taken, double accumulated_seconds) {
  const int cap = std::max(options.max_runs, options.repeats_floor);
  if (accumulated_seconds >= options.sample_budget) return std::max(options.repeats_floor, taken);
  return std::max(cap, taken);
}

int more_samples_wanted(const TimingOptions& options, int taken, double accumulated_seconds) {
  const int cap = std::max(options.max_runs, options.repeats_floor);
  if (taken >= cap) return 0;
  if (taken < options.repeats_floor) return options.repeats_floor - taken;
  if (accumulated_seconds >= options.sample_budget || taken <= 0) return 0;
  // Top up to the budget at the mean per-launch time seen so far.
  double per_sample = accumulated_seconds / taken;
  double wanted = std::ceil((options.sample_budget - accumulated_seconds) / per_sample);
  return static_cast<int>(std::clamp(wanted, 1.0, static_cast<double>(cap - taken)));
}

namespace {

void check_options(const TimingOptions& o) {
  if (o.mode == TimingMode::queued && (!(o.batch_target > 0) || o.depth_cap < 1))
    throw UsageError("time_routine: queued mode needs batch_target > 0 and depth_cap >= 1");
  if (o.hopeless_against < 0 || !(o.hopeless_ratio >= 1))
    throw UsageError("time_routine: hopeless_against >= 0 (0: off) and hopeless_ratio >= 1");
  if (!(o.far_behind_ratio == 0 || o.far_behind_ratio >= 1) ||
      !(o.clean_far_behind_ratio == 0 || o.clean_far_behind_ratio >= 1) ||
      !(o.prior_reading >= 0 && std::isfinite(o.prior_reading)))
    throw UsageError(
        "time_routine: far_behind_ratio and clean_far_behind_ratio 0 (off) or >= 1, "
        "prior_reading >= 0");
  if (o.repeats_floor < 1 || o.max_runs < 1 || o.warmup < 0)
    throw UsageError("time_routine: repeats_floor and max_runs must be >= 1, warmup >= 0");
  if (!(o.sample_budget >= 0) || !(o.stall_ratio > 1) || !(o.contended_fraction >= 0))
    throw UsageError("time_routine: sample_budget >= 0, stall_ratio > 1, contended_fraction >= 0");
  if (!(o.wait_tolerance >= 0 && std::isfinite(o.wait_tolerance)))
    throw UsageError("time_routine: wait_tolerance >= 0 (a share of the reading)");
}

}  // namespace

namespace {

// One timed batch: begin, `depth` launches, one sync, end.
double timed_batch(Trial& trial, Clock& clock, int depth) {
  clock.begin();
  if (depth == 1) {
    trial.launch();
  } else {
    trial.launch_batch(depth);
  }
  trial.sync();
  return clock.end();
}

bool valid_reading(double t) {
  return t > 0 && std::isfinite(t);
}

// The reading waited for a CPU past the tolerance (TimingOptions::wait_tolerance); a clock
// that cannot tell answers -1.
bool waited_for_cpu(const TimingOptions& o, const Clock& clock, double reading) {
  const double waited = clock.waited_seconds();
  return waited > 0 && waited > o.wait_tolerance * reading;
}

// The clock answered, and the reading did not wait past the tolerance.
bool known_clean(const TimingOptions& o, const Clock& clock, double reading) {
  const double waited = clock.waited_seconds();
  return waited >= 0 && waited <= o.wait_tolerance * reading;
}

// Another refusal is allowed while the refusals are fewer than two, or than the clean readings
// kept: a passing co-runner (a minority of readings) costs its retakes, a persistent one two.
bool may_retake(const TimingResult& r) {
  const int clean = static_cast<int>(r.samples.size()) - r.waited;
  return r.retaken < std::max(2, clean);
}

// True once the window's median can no longer come within the ratio of the incumbent: more
// than half of the largest possible final window is already above the threshold.
bool hopeless(const TimingOptions& o, const std::vector<double>& samples, double accumulated) {
  if (o.hopeless_against <= 0) return false;
  const double threshold = o.hopeless_against * o.hopeless_ratio;
  const auto above =
      std::count_if(samples.begin(), samples.end(), [&](double x) { return x > threshold; });
  const int n_max = max_final_samples(o, static_cast<int>(samples.size()), accumulated);
  return above > n_max / 2;
}

// The incumbent is so far ahead that the warmup would be wasted: the prior reading (the
// validation run) is already over the median rule's line, and it warmed the kernel anyway.
// Isolated mode only: in queued mode the incumbent is a per-launch time of batches, which one
// launch and its sync are no measure against.
bool warmup_skipped(const TimingOptions& o) {
  return o.mode == TimingMode::isolated && o.hopeless_against > 0 &&
         o.prior_reading >= o.hopeless_ratio * o.hopeless_against;
}

// The far-behind cuts (TimingOptions::far_behind_ratio, clean_far_behind_ratio): two samples
// at least, the fastest of them and of the prior reading that many times the incumbent. Two
// samples, not one and the prior: a cold validation run and one stalled sample must not cut a
// fast kernel. Never closer than the median rule's line: a caller who loosens hopeless_ratio
// loosens these.
double fastest_reading(const TimingOptions& o, std::span<const double> samples) {
  double fastest = *std::min_element(samples.begin(), samples.end());
  if (o.prior_reading > 0) fastest = std::min(fastest, o.prior_reading);
  return fastest;
}

}  // namespace

std::string far_behind_cut(const TimingOptions& o, std::span<const double> samples, int clean) {
  if (o.hopeless_against <= 0 || samples.size() < 2) return {};
  const double behind = fastest_reading(o, samples) / o.hopeless_against;
  double ratio = 0;
  bool on_clean = false;  // crossed only the line for readings that did not wait
  if (const double line = std::max(o.far_behind_ratio, o.hopeless_ratio);
      o.far_behind_ratio > 0 && behind >= line) {
    ratio = line;
  } else if (const double clean_line = std::max(o.clean_far_behind_ratio, o.hopeless_ratio);
             o.clean_far_behind_ratio > 0 && clean >= 2 && behind >= clean_line) {
    ratio = clean_line;
    on_clean = true;
  } else {
    return {};
  }
  return fmt::format(
      "cut after {} sample{}: its fastest reading{} is {:.3g}x the incumbent ({} {:g}{})",
      samples.size(), samples.size() == 1 ? "" : "s",
      o.prior_reading > 0 ? " (the validation run included)" : "", behind,
      on_clean ? "clean_far_behind_ratio" : "far_behind_ratio", ratio,
      on_clean ? ", on readings that did not wait for a CPU" : "");
}

void summarise(TimingResult& r, const TimingOptions& o) {
  const auto& s = r.samples;
  r.min = stats::min(s);
  r.median = stats::median(s);
  r.mean = stats::mean(s);
  r.mad = stats::mad(s);
  r.p10 = stats::quantile(s, 0.10);
  r.p90 = stats::quantile(s, 0.90);
  r.stalled_fraction = stats::stalled_fraction(s, o.stall_ratio);
  r.contended = r.stalled_fraction > o.contended_fraction;
}

namespace {

using Stopped = std::function<bool()>;

Outcome zero_reading(double t) {
  return {Status::not_measured, "the clock returned a zero-length or invalid reading (" +
                                    std::to_string(t) + " s); the window is refused"};
}

// Queued mode: probe growing depths until a batch nears the target, fit, confirm once. An
// outcome where the window ends here.
std::optional<Outcome> calibrate_depth(Trial& trial, Clock& clock, const TimingOptions& options,
                                       TimingResult& r, const Stopped& stopped) {
  int depth = 1;
  for (int probe = 0; probe < 12; ++probe) {
    if (stopped()) return Outcome{Status::stopped, "stopped during depth calibration"};
    double t = timed_batch(trial, clock, depth);
    r.dispatches += depth;
    if (!valid_reading(t)) return zero_reading(t);
    r.probes.push_back({depth, t});
    if (t >= options.batch_target / 2 || depth >= options.depth_cap) break;
    const double grow = options.batch_target / 2 / t;  // aim at half the target
    depth = static_cast<int>(std::clamp(std::ceil(depth * std::min(grow, 64.0)),
                                        static_cast<double>(depth) * 2,
                                        static_cast<double>(options.depth_cap)));
  }
  r.depth = choose_depth(r.probes, options.batch_target, options.depth_cap);
  if (r.depth > 1) {
    if (stopped()) return Outcome{Status::stopped, "stopped during depth calibration"};
    double t = timed_batch(trial, clock, r.depth);
    r.dispatches += r.depth;
    if (!valid_reading(t)) return zero_reading(t);
    r.probes.push_back({r.depth, t});
    if (t > 2 * options.batch_target || t < options.batch_target / 2)
      r.depth = choose_depth(r.probes, options.batch_target, options.depth_cap);
  }
  return std::nullopt;
}

// The samples, each refused or kept as the clock says it waited, the cuts asked after each.
// An outcome where the window ends before it has all it wants.
std::optional<Outcome> take_samples(Trial& trial, Clock& clock, const TimingOptions& options,
                                    TimingResult& r, const Stopped& stopped) {
  double accumulated = 0;
  while (int want = more_samples_wanted(options, static_cast<int>(r.samples.size()), accumulated)) {
    for (int i = 0; i < want;) {
      if (stopped())
        return Outcome{Status::stopped,
                       "stopped after " + std::to_string(r.samples.size()) + " samples"};
      if (options.evictor) options.evictor->evict();
      double t = timed_batch(trial, clock, r.depth);
      r.dispatches += r.depth;
      if (!valid_reading(t)) return zero_reading(t);
      if (waited_for_cpu(options, clock, t)) {
        if (options.retake_waited && may_retake(r)) {
          ++r.retaken;
          continue;
        }
        ++r.waited;
      }
      if (known_clean(options, clock, t)) ++r.clean;
      ++i;
      r.samples.push_back(t / r.depth);
      accumulated += t;
      if (std::string cut = far_behind_cut(options, r.samples, r.clean); !cut.empty())
        return Outcome{Status::hopeless, std::move(cut)};
      if (hopeless(options, r.samples, accumulated))
        return Outcome{Status::hopeless,
                       fmt::format("cut after {} samples: its median can no longer come within "
                                   "{:g}x of the incumbent",
                                   r.samples.size(), options.hopeless_ratio)};
    }
  }
  return std::nullopt;
}

}  // namespace

TimingResult time_routine(Trial& trial, Clock& clock, const TimingOptions& options) {
  check_options(options);
  using Wall = std::chrono::steady_clock;
  const auto wall_start = Wall::now();
  TimingResult r;
  r.mode = options.mode;
  r.clock = std::string(clock.name());
  const Stopped stopped = [&] { return options.stop && options.stop(); };
  auto finish = [&](Outcome outcome) {
    r.outcome = std::move(outcome);
    if (!r.samples.empty()) summarise(r, options);
    r.wall_seconds = std::chrono::duration<double>(Wall::now() - wall_start).count();
    if (options.on_call) options.on_call(r);
    return r;
  };
  try {
    if (stopped()) return finish({Status::stopped, "stopped before the warmup"});
    const int warmups = warmup_skipped(options) ? 0 : options.warmup;
    for (int w = 0; w < warmups; ++w) {
      trial.launch();
      trial.sync();
      ++r.dispatches;
    }
    if (options.mode == TimingMode::queued && options.fixed_depth > 0) {
      r.depth = std::min(options.fixed_depth, options.depth_cap);
    } else if (options.mode == TimingMode::queued) {
      if (std::optional<Outcome> ended = calibrate_depth(trial, clock, options, r, stopped))
        return finish(std::move(*ended));
    }
    if (std::optional<Outcome> ended = take_samples(trial, clock, options, r, stopped))
      return finish(std::move(*ended));
  } catch (...) {
    return finish(detail::classify_exception(std::current_exception(), "launch"));
  }
  return finish(Outcome::success());
}

}  // namespace tunekit
