#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <limits>

#include <fmt/format.h>

#include "tunekit/errors.hpp"
#include "tunekit/tuner_options.hpp"
#include "tuner/tuner_options.hpp"

namespace tunekit {

std::string_view to_string(Mode mode) {
  switch (mode) {
    case Mode::off:
      return "off";
    case Mode::cached:
      return "cached";
    case Mode::tune:
      return "tune";
    case Mode::force:
      return "force";
  }
  return "unknown";
}

Mode mode_from_string(std::string_view text) {
  for (Mode m : {Mode::off, Mode::cached, Mode::tune, Mode::force})
    if (to_string(m) == text) return m;
  throw UsageError("unknown mode '" + std::string(text) + "': use off, cached, tune or force");
}

TunerOptions TunerOptions::from_environment(const std::function<const char*(const char*)>& getenv) {
  TunerOptions o;
  if (const char* mode = getenv("TUNEKIT_MODE"); mode && *mode) {
    try {
      o.decide.mode = mode_from_string(mode);
    } catch (const UsageError& e) {
      throw UsageError(std::string("TUNEKIT_MODE: ") + e.what());
    }
  }
  o.persist.store = store_spec_from_environment(getenv);  // TUNEKIT_STORE, else the SQLite file
  o.persist.store_options = store_options_from_environment(getenv);
  // Device profiles (tunekit calibrate) live beside the store file.
  o.model.profile_dir =
      (std::filesystem::path(default_store_path(getenv)).parent_path() / "profiles").string();
  // Device locks live in the cache directory whatever the store: they guard the device.
  o.persist.lock_dir =
      (std::filesystem::path(default_store_path(getenv)).parent_path() / "locks").string();
  if (const char* dir = getenv("TUNEKIT_ARTIFACT_DIR"); dir && *dir) o.persist.artifact_dir = dir;
  if (const char* program = getenv("TUNEKIT_WORKER_PROGRAM"); program && *program)
    o.measure.isolation.worker_program = program;
  // The model link of the chain (ModelOptions::serve), for applications run in mode cached.
  if (const char* serve = getenv("TUNEKIT_MODEL_SERVE"); serve && *serve) {
    const std::string_view v = serve;
    if (v != "0" && v != "1")
      throw UsageError("TUNEKIT_MODEL_SERVE: '" + std::string(v) +
                       "' is not 1 (serve the cost model's pick on a miss) or 0 (the default)");
    o.model.serve = v == "1";
  }
  // Shared searches (ShareOptions): the points of a search queued for `tunekit worker`s.
  if (const char* share = getenv("TUNEKIT_SHARE"); share && *share) {
    const std::string_view v = share;
    if (v != "0" && v != "1")
      throw UsageError("TUNEKIT_SHARE: '" + std::string(v) +
                       "' is not 1 (share searches with the store's workers) or 0 (the default)");
    o.decide.share.enabled = v == "1";
  }
  if (const char* ttl = getenv("TUNEKIT_LEASE_TTL"); ttl && *ttl) {
    char* end = nullptr;
    const double seconds = std::strtod(ttl, &end);
    if (end == ttl || *end != '\0' || !(seconds >= 1 && seconds <= 86400))
      throw UsageError("TUNEKIT_LEASE_TTL: '" + std::string(ttl) +
                       "' is not a number of seconds in [1, 86400] (how long a tuning lease "
                       "lives past its last renewal)");
    o.persist.lease_ttl_seconds = seconds;
  }
  o.hooks.log = Log(
      make_stream_logger(std::cerr, log_level_from_environment(getenv).value_or(LogLevel::warn)));
  return o;
}

TunerOptions TunerOptions::from_environment() {
  return from_environment([](const char* name) { return std::getenv(name); });
}

std::string_view to_string(IsolationOptions::Mode mode) {
  switch (mode) {
    case IsolationOptions::Mode::automatic:
      return "automatic";
    case IsolationOptions::Mode::worker:
      return "worker";
    case IsolationOptions::Mode::in_process:
      return "in_process";
  }
  return "automatic";
}

std::optional<IsolationOptions::Mode> isolation_mode_from_string(std::string_view name) {
  for (auto m : {IsolationOptions::Mode::automatic, IsolationOptions::Mode::worker,
                 IsolationOptions::Mode::in_process})
    if (to_string(m) == name) return m;
  return std::nullopt;
}

}  // namespace tunekit

namespace tunekit::detail {
namespace {

constexpr double kYear = 365.0 * 24 * 3600;  // no budget or reading is meant to be longer

void integer_in(std::string_view where, std::string_view field, long long value, long long min,
                long long max, std::string_view hint = "") {
  if (value < min || value > max)
    throw UsageError(fmt::format("{}{} must be an integer in [{}, {}]{}, got {}", where, field, min,
                                 max, hint, value));
}

// NaN fails both comparisons, so it is refused with the range.
void real_in(std::string_view where, std::string_view field, double value, double min, double max,
             std::string_view hint = "") {
  if (!(value >= min && value <= max))
    throw UsageError(fmt::format("{}{} must be a number in [{:g}, {:g}]{}, got {}", where, field,
                                 min, max, hint, value));
}

}  // namespace

void check_timing_options(const TimingOptions& t, std::string_view where) {
  integer_in(where, "warmup", t.warmup, 0, 1000);
  integer_in(where, "repeats_floor", t.repeats_floor, 1, 100000, " (samples per window)");
  integer_in(where, "max_runs", t.max_runs, 1, 100000, " (samples per window)");
  real_in(where, "sample_budget", t.sample_budget, 0, 3600, " (seconds)");
  real_in(where, "stall_ratio", t.stall_ratio, 1, 1e6, " (a factor over the window's minimum)");
  real_in(where, "contended_fraction", t.contended_fraction, 0, 1);
  real_in(where, "batch_target", t.batch_target, 1e-6, 60, " (seconds per queued batch)");
  integer_in(where, "depth_cap", t.depth_cap, 1, 1 << 20, " (launches per batch)");
  integer_in(where, "fixed_depth", t.fixed_depth, 0, 1 << 20, " (0: calibrate)");
  real_in(where, "hopeless_against", t.hopeless_against, 0, kYear, " (seconds; 0: never)");
  // Infinity is allowed: it never cuts a window.
  real_in(where, "hopeless_ratio", t.hopeless_ratio, 1, std::numeric_limits<double>::infinity());
  if (t.far_behind_ratio != 0)
    real_in(where, "far_behind_ratio", t.far_behind_ratio, 1,
            std::numeric_limits<double>::infinity(), " (0: off)");
  if (t.clean_far_behind_ratio != 0)
    real_in(where, "clean_far_behind_ratio", t.clean_far_behind_ratio, 1,
            std::numeric_limits<double>::infinity(), " (0: off)");
  real_in(where, "lone_cut_seconds", t.lone_cut_seconds, 0, kYear, " (seconds; 0: off)");
  real_in(where, "prior_reading", t.prior_reading, 0, kYear, " (seconds; 0: none)");
  real_in(where, "settle_seconds", t.settle_seconds, 0, 60, " (0: no wait)");
  real_in(where, "wait_tolerance", t.wait_tolerance, 0, 1e6,
          " (a share of the reading: a reading that waited longer for a CPU is counted)");
}

void check_tuner_options(const TunerOptions& o) {
  constexpr std::string_view decide = "TunerOptions: decide.";
  constexpr std::string_view measure = "TunerOptions: measure.";
  const DecideOptions& d = o.decide;
  const MeasureOptions& m = o.measure;
  if (!(d.tie_band >= 0 && d.tie_band < 1))
    throw UsageError(fmt::format(
        "TunerOptions: decide.tie_band must be in [0, 1), e.g. 0.02 for 2 %, got {}", d.tie_band));
  integer_in(measure, "rotate", m.rotate, 0, 64, " (0: what the op declares, 1: none)");
  real_in(measure, "placement.wait_seconds", m.placement.wait_seconds, 0, 3600, " (0: off)");
  real_in(measure, "placement.check_seconds", m.placement.check_seconds, 0, 3600);
  real_in(measure, "placement.far_ratio", m.placement.far_ratio, 1, 1e6,
          " (a factor over the search's lowest cross-CPU round trip)");
  real_in(measure, "placement.poll_seconds", m.placement.poll_seconds, 1e-6, 60);
  real_in(decide, "budget_seconds", d.budget_seconds, 0, kYear, " (0: no budget)");
  integer_in(measure, "build_threads", m.build_threads, 0, 1024, " (0: one per hardware thread)");
  real_in(decide, "limit", d.limit, 0, kYear, " (seconds per launch; 0: off)");
  integer_in(decide, "confirm_pairs", d.confirm_pairs, 0, 10000, " (0: off)");
  real_in(decide, "confirm_share", d.confirm_share, 0, 100, " (0: no cap)");
  integer_in(decide, "finalists", d.finalists, 0, 1000, " (0: no final race)");
  if (d.finalists == 1)
    throw UsageError(
        "TunerOptions: decide.finalists must be 0 (no final race) or at least 2 (a race needs "
        "two), got 1");
  real_in(decide, "finalist_band", d.finalist_band, 0, 10,
          " (a share of the best reading: 0.25 takes points within 25 % of it)");
  integer_in(decide, "paired.min_pairs", d.paired.min_pairs, 1, 10000);
  real_in(decide, "paired.max_relative_mad", d.paired.max_relative_mad, 0, 100);
  real_in(decide, "paired.sign_p", d.paired.sign_p, 0, 1);
  integer_in(measure, "check_calls", m.check_calls, 0, 1000, " (0: none)");
  real_in(measure, "isolation.limit_seconds", m.isolation.limit_seconds, 0.001, kYear);
  real_in(measure, "isolation.floor_seconds", m.isolation.floor_seconds, 0.001, kYear);
  check_timing_options(m.timing, "TunerOptions: measure.timing.");
  real_in("TunerOptions: persist.", "lease_ttl_seconds", o.persist.lease_ttl_seconds, 0, 86400,
          " (seconds a tuning lease lives past its last renewal; 0: no leases)");
  if (o.persist.lease_ttl_seconds > 0 && o.persist.lease_ttl_seconds < 0.01)
    throw UsageError(fmt::format(
        "TunerOptions: persist.lease_ttl_seconds must be 0 (no leases) or at least 0.01 s, got {}",
        o.persist.lease_ttl_seconds));
}

}  // namespace tunekit::detail
