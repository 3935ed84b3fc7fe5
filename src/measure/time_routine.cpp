#include <chrono>
#include <cmath>
#include <exception>

#include "core/classify.hpp"
#include "tunekit/errors.hpp"
#include "tunekit/stats.hpp"
#include "tunekit/timing.hpp"

namespace tunekit {

std::string_view to_string(TimingMode mode) {
  return mode == TimingMode::isolated ? "isolated" : "queued";
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
  if (o.mode != TimingMode::isolated)
    throw UsageError("time_routine: queued timing is not available yet; use TimingMode::isolated");
  if (o.repeats_floor < 1 || o.max_runs < 1 || o.warmup < 0)
    throw UsageError("time_routine: repeats_floor and max_runs must be >= 1, warmup >= 0");
  if (!(o.sample_budget >= 0) || !(o.stall_ratio > 1) || !(o.contended_fraction >= 0))
    throw UsageError("time_routine: sample_budget >= 0, stall_ratio > 1, contended_fraction >= 0");
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

}  // namespace

TimingResult time_routine(Trial& trial, Clock& clock, const TimingOptions& options) {
  check_options(options);
  using Wall = std::chrono::steady_clock;
  const auto wall_start = Wall::now();
  TimingResult r;
  r.mode = options.mode;
  r.clock = std::string(clock.name());
  auto stopped = [&] { return options.stop && options.stop(); };
  auto finish = [&](Outcome outcome) {
    r.outcome = std::move(outcome);
    if (!r.samples.empty()) summarise(r, options);
    r.wall_seconds = std::chrono::duration<double>(Wall::now() - wall_start).count();
    if (options.on_call) options.on_call(r);
    return r;
  };

  try {
    if (stopped()) return finish({Status::stopped, "stopped before the warmup"});
    for (int w = 0; w < options.warmup; ++w) {
      trial.launch();
      trial.sync();
      ++r.dispatches;
    }
    double accumulated = 0;
    while (int want =
               more_samples_wanted(options, static_cast<int>(r.samples.size()), accumulated)) {
      for (int i = 0; i < want; ++i) {
        if (stopped()) {
          return finish(
              {Status::stopped, "stopped after " + std::to_string(r.samples.size()) + " samples"});
        }
        if (options.evictor) options.evictor->evict();
        clock.begin();
        trial.launch();
        trial.sync();
        double t = clock.end();
        ++r.dispatches;
        if (!(t > 0) || !std::isfinite(t)) {
          return finish(
              {Status::not_measured, "the clock returned a zero-length or invalid reading (" +
                                         std::to_string(t) + " s); the window is refused"});
        }
        r.samples.push_back(t);
        accumulated += t;
      }
    }
  } catch (...) {
    return finish(detail::classify_exception(std::current_exception(), "launch"));
  }
  return finish(Outcome::success());
}

}  // namespace tunekit
