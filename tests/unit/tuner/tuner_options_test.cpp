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
      {"tie_band", [](TunerOptions& o) { o.tie_band = kNan; }},
      {"tie_band", [](TunerOptions& o) { o.tie_band = 1; }},
      {"rotate", [](TunerOptions& o) { o.rotate = -1; }},
      {"rotate", [](TunerOptions& o) { o.rotate = 100000; }},
      {"budget_seconds", [](TunerOptions& o) { o.budget_seconds = -1; }},
      {"budget_seconds", [](TunerOptions& o) { o.budget_seconds = kNan; }},
      {"budget_seconds", [](TunerOptions& o) { o.budget_seconds = 1e300; }},
      {"build_threads", [](TunerOptions& o) { o.build_threads = -2; }},
      {"build_threads", [](TunerOptions& o) { o.build_threads = 1 << 20; }},
      {"limit", [](TunerOptions& o) { o.limit = kNan; }},
      {"limit", [](TunerOptions& o) { o.limit = -0.5; }},
      {"limit", [](TunerOptions& o) { o.limit = kInf; }},
      {"confirm_pairs", [](TunerOptions& o) { o.confirm_pairs = -1; }},
      {"confirm_pairs", [](TunerOptions& o) { o.confirm_pairs = INT_MAX; }},
      {"paired.min_pairs", [](TunerOptions& o) { o.paired.min_pairs = 0; }},
      {"paired.max_relative_mad", [](TunerOptions& o) { o.paired.max_relative_mad = kNan; }},
      {"timing.warmup", [](TunerOptions& o) { o.timing.warmup = -1; }},
      {"timing.repeats_floor", [](TunerOptions& o) { o.timing.repeats_floor = 0; }},
      // Would take forever: refused before the first window.
      {"timing.repeats_floor", [](TunerOptions& o) { o.timing.repeats_floor = INT_MAX; }},
      {"timing.max_runs", [](TunerOptions& o) { o.timing.max_runs = 0; }},
      {"timing.max_runs", [](TunerOptions& o) { o.timing.max_runs = 100001; }},
      {"timing.sample_budget", [](TunerOptions& o) { o.timing.sample_budget = kNan; }},
      {"timing.sample_budget", [](TunerOptions& o) { o.timing.sample_budget = -1; }},
      {"timing.stall_ratio", [](TunerOptions& o) { o.timing.stall_ratio = 0.5; }},
      {"timing.stall_ratio", [](TunerOptions& o) { o.timing.stall_ratio = kNan; }},
      {"timing.contended_fraction", [](TunerOptions& o) { o.timing.contended_fraction = 2; }},
      {"timing.batch_target", [](TunerOptions& o) { o.timing.batch_target = 0; }},
      {"timing.batch_target", [](TunerOptions& o) { o.timing.batch_target = kInf; }},
      {"timing.depth_cap", [](TunerOptions& o) { o.timing.depth_cap = 0; }},
      {"timing.fixed_depth", [](TunerOptions& o) { o.timing.fixed_depth = -1; }},
      {"timing.hopeless_against", [](TunerOptions& o) { o.timing.hopeless_against = -1; }},
      {"timing.hopeless_ratio", [](TunerOptions& o) { o.timing.hopeless_ratio = 0.9; }},
      {"timing.hopeless_ratio", [](TunerOptions& o) { o.timing.hopeless_ratio = kNan; }},
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
  o.timing.repeats_floor = 4194304;
  try {
    detail::check_tuner_options(o);
    FAIL() << "accepted";
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(),
                 "TunerOptions: timing.repeats_floor must be an integer in [1, 100000] (samples "
                 "per window), got 4194304");
  }
}

TEST(TunerOptionsCheck, ScheduleOptionsOutOfRangeAreRefusedByTheTuner) {
  fakes::FakeDevice dev;
  for (const char* spec : {"racing:round=0", "racing:round=1025", "racing:z=nan", "racing:z=inf",
                           "racing:min_samples=1", "racing:max_samples=-4"}) {
    TunerOptions o;
    o.schedule = spec;
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
  o.tie_band = 0;
  o.rotate = 64;
  o.budget_seconds = 0;
  o.limit = 0;
  o.confirm_pairs = 0;
  o.timing.warmup = 0;
  o.timing.repeats_floor = 100000;
  o.timing.max_runs = 1;
  o.timing.sample_budget = 0;
  o.timing.stall_ratio = 1;
  o.timing.contended_fraction = 1;
  o.timing.hopeless_ratio = kInf;  // never cut
  EXPECT_NO_THROW(detail::check_tuner_options(o));
}

}  // namespace
}  // namespace tunekit
