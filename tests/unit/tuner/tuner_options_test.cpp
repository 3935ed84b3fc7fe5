// Tests for src/tuner/tuner_options.cpp: the bounds of TunerOptions and TimingOptions, checked
// by the Tuner constructor before anything is measured.
#include "tuner/tuner_options.hpp"

#include <gtest/gtest.h>

#include <climits>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "fakes/fake_device.hpp"
#include "tunekit/errors.hpp"
#include "tunekit/tuner.hpp"

namespace tunekit {
namespace {

constexpr double kNan = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

struct Bad {
  std::string field;  // as the message names it
  std::function<void(TunerOptions&)> set;
};

// One bad value of every numeric field; each must be refused naming the field.
std::vector<Bad> bad_values() {
  return {
      {"decide.tie_band", [](TunerOptions& o) { o.decide.tie_band = kNan; }},
      {"decide.tie_band", [](TunerOptions& o) { o.decide.tie_band = 1; }},
      {"measure.rotate", [](TunerOptions& o) { o.measure.rotate = -1; }},
      {"measure.rotate", [](TunerOptions& o) { o.measure.rotate = 100000; }},
      {"measure.placement.wait_seconds",
       [](TunerOptions& o) { o.measure.placement.wait_seconds = kNan; }},
      {"measure.placement.wait_seconds",
       [](TunerOptions& o) { o.measure.placement.wait_seconds = -1; }},
      {"measure.placement.check_seconds",
       [](TunerOptions& o) { o.measure.placement.check_seconds = kInf; }},
      {"measure.placement.far_ratio", [](TunerOptions& o) { o.measure.placement.far_ratio = 0.5; }},
      {"measure.placement.poll_seconds",
       [](TunerOptions& o) { o.measure.placement.poll_seconds = 0; }},
      {"decide.budget_seconds", [](TunerOptions& o) { o.decide.budget_seconds = -1; }},
      {"decide.budget_seconds", [](TunerOptions& o) { o.decide.budget_seconds = kNan; }},
      {"decide.budget_seconds", [](TunerOptions& o) { o.decide.budget_seconds = 1e300; }},
      {"measure.build_threads", [](TunerOptions& o) { o.measure.build_threads = -2; }},
      {"measure.build_threads", [](TunerOptions& o) { o.measure.build_threads = 1 << 20; }},
      {"decide.limit", [](TunerOptions& o) { o.decide.limit = kNan; }},
      {"decide.limit", [](TunerOptions& o) { o.decide.limit = -0.5; }},
      {"decide.limit", [](TunerOptions& o) { o.decide.limit = kInf; }},
      {"decide.confirm_pairs", [](TunerOptions& o) { o.decide.confirm_pairs = -1; }},
      {"decide.confirm_pairs", [](TunerOptions& o) { o.decide.confirm_pairs = INT_MAX; }},
      {"decide.paired.min_pairs", [](TunerOptions& o) { o.decide.paired.min_pairs = 0; }},
      {"decide.paired.max_relative_mad",
       [](TunerOptions& o) { o.decide.paired.max_relative_mad = kNan; }},
      {"measure.timing.warmup", [](TunerOptions& o) { o.measure.timing.warmup = -1; }},
      {"measure.timing.repeats_floor", [](TunerOptions& o) { o.measure.timing.repeats_floor = 0; }},
      // Would take forever: refused before the first window.
      {"measure.timing.repeats_floor",
       [](TunerOptions& o) { o.measure.timing.repeats_floor = INT_MAX; }},
      {"measure.timing.max_runs", [](TunerOptions& o) { o.measure.timing.max_runs = 0; }},
      {"measure.timing.max_runs", [](TunerOptions& o) { o.measure.timing.max_runs = 100001; }},
      {"measure.timing.sample_budget",
       [](TunerOptions& o) { o.measure.timing.sample_budget = kNan; }},
      {"measure.timing.sample_budget",
       [](TunerOptions& o) { o.measure.timing.sample_budget = -1; }},
      {"measure.timing.stall_ratio", [](TunerOptions& o) { o.measure.timing.stall_ratio = 0.5; }},
      {"measure.timing.stall_ratio", [](TunerOptions& o) { o.measure.timing.stall_ratio = kNan; }},
      {"measure.timing.contended_fraction",
       [](TunerOptions& o) { o.measure.timing.contended_fraction = 2; }},
      {"measure.timing.batch_target", [](TunerOptions& o) { o.measure.timing.batch_target = 0; }},
      {"measure.timing.batch_target",
       [](TunerOptions& o) { o.measure.timing.batch_target = kInf; }},
      {"measure.timing.depth_cap", [](TunerOptions& o) { o.measure.timing.depth_cap = 0; }},
      {"measure.timing.fixed_depth", [](TunerOptions& o) { o.measure.timing.fixed_depth = -1; }},
      {"measure.timing.hopeless_against",
       [](TunerOptions& o) { o.measure.timing.hopeless_against = -1; }},
      {"measure.timing.hopeless_ratio",
       [](TunerOptions& o) { o.measure.timing.hopeless_ratio = 0.9; }},
      {"measure.timing.hopeless_ratio",
       [](TunerOptions& o) { o.measure.timing.hopeless_ratio = kNan; }},
      {"measure.timing.lone_cut_seconds",
       [](TunerOptions& o) { o.measure.timing.lone_cut_seconds = -0.1; }},
      {"measure.timing.lone_cut_seconds",
       [](TunerOptions& o) { o.measure.timing.lone_cut_seconds = kNan; }},
      {"measure.timing.clean_far_behind_ratio",
       [](TunerOptions& o) { o.measure.timing.clean_far_behind_ratio = 0.5; }},
      {"measure.timing.clean_far_behind_ratio",
       [](TunerOptions& o) { o.measure.timing.clean_far_behind_ratio = kNan; }},
  };
}

TEST(TunerOptionsCheck, TheDefaultsPass) {
  EXPECT_NO_THROW(detail::check_tuner_options(TunerOptions{}));
  EXPECT_NO_THROW(detail::check_timing_options(TimingOptions{}, "TimingOptions: "));
}

TEST(TunerOptionsCheck, EveryBadValueIsRefusedByTheTunerNamingTheFieldAndTheRange) {
  fakes::FakeDevice dev;
  for (const Bad& bad : bad_values()) {
    TunerOptions o;
    bad.set(o);
    try {
      Tuner tuner(dev, o);
      ADD_FAILURE() << bad.field << ": accepted";
    } catch (const UsageError& e) {
      const std::string m = e.what();
      EXPECT_NE(m.find("TunerOptions: " + bad.field + " must be"), std::string::npos) << m;
      EXPECT_NE(m.find("got"), std::string::npos) << m;
      EXPECT_NE(m.find('['), std::string::npos) << m;  // the allowed range
    }
  }
}

TEST(TunerOptionsCheck, TheMessageSaysWhatIsAllowedAndWhatWasGiven) {
  TunerOptions o;
  o.measure.timing.repeats_floor = 4194304;
  try {
    detail::check_tuner_options(o);
    FAIL() << "accepted";
  } catch (const UsageError& e) {
    EXPECT_STREQ(
        e.what(),
        "TunerOptions: measure.timing.repeats_floor must be an integer in [1, 100000] (samples "
        "per window), got 4194304");
  }
}

TEST(TunerOptionsCheck, ScheduleOptionsOutOfRangeAreRefusedByTheTuner) {
  fakes::FakeDevice dev;
  for (const char* spec : {"racing:round=0", "racing:round=1025", "racing:z=nan", "racing:z=inf",
                           "racing:min_samples=1", "racing:max_samples=-4"}) {
    TunerOptions o;
    o.decide.schedule = spec;
    try {
      Tuner tuner(dev, o);
      ADD_FAILURE() << spec << ": accepted";
    } catch (const UsageError& e) {
      const std::string m = e.what();
      EXPECT_NE(m.find("schedule 'racing'"), std::string::npos) << spec << ": " << m;
      EXPECT_NE(m.find(", got "), std::string::npos) << spec << ": " << m;
    }
  }
}

TEST(TunerOptionsCheck, BoundaryValuesAreAccepted) {
  TunerOptions o;
  o.decide.tie_band = 0;
  o.measure.rotate = 64;
  o.decide.budget_seconds = 0;
  o.decide.limit = 0;
  o.decide.confirm_pairs = 0;
  o.measure.timing.warmup = 0;
  o.measure.timing.repeats_floor = 100000;
  o.measure.timing.max_runs = 1;
  o.measure.timing.sample_budget = 0;
  o.measure.timing.stall_ratio = 1;
  o.measure.timing.contended_fraction = 1;
  o.measure.timing.hopeless_ratio = kInf;  // never cut
  EXPECT_NO_THROW(detail::check_tuner_options(o));
}

}  // namespace
}  // namespace tunekit
