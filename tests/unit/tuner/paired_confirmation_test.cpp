// The paired confirmation against the default (src/tuner/paired_confirmation.cpp
// SearchContext::confirm): pairs too noisy to score are taken once more, so a disturbance that
// crossed them (the host moving a vCPU, a co-runner's burst) does not keep a slower default;
// pairs that scored stand, and so do the first when no second can be taken.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <string_view>

#include "fakes/fake_device.hpp"
#include "tunekit/log.hpp"
#include "tunekit/report.hpp"
#include "tunekit/tuner.hpp"

namespace tunekit {
namespace {

using fakes::FakeDevice;
using fakes::make_fake_op;

// "fast" is twice as fast as the default in its windows; while `disturbed`, its launches read
// 0.5 and 4 ms in turn (each side of a clear winner's pairs is one launch: pair ratios 0.25 and 2,
// half under the bar, the relative MAD far over the limit).
struct Disturbance {
  FakeDevice dev;
  bool disturbed = false;
  int confirmations = 0;  // the confirmation's pairs taken (one sizing each)
  int disturbed_launches = 0;
  // The confirmations (counted from 1) during which "fast" is disturbed.
  int first_disturbed = 1;
  int last_disturbed = 1;

  Disturbance() {
    dev.behaviour["def"].seconds = 2e-3;
    dev.behaviour["fast"].seconds = 1e-3;
    dev.behaviour["fast"].hook = [this] {
      if (!disturbed) return;
      dev.behaviour["fast"].seconds = disturbed_launches++ % 2 ? 4e-3 : 0.5e-3;
    };
  }

  TunerOptions options() {
    TunerOptions o;
    o.persist.store = "none";
    o.decide.finalists = 0;
    o.hooks.log = Log(make_function_logger(LogLevel::debug, [this](LogLevel, std::string_view m) {
      if (!m.starts_with("paired confirmation of fast against def")) return;
      ++confirmations;
      disturbed = confirmations >= first_disturbed && confirmations <= last_disturbed;
      if (!disturbed) dev.behaviour["fast"].seconds = 1e-3;
    }));
    return o;
  }

  TuneReport tune(const TunerOptions& o) {
    auto op = make_fake_op(dev, {"def", "fast"}, "def");
    TuneReport r;
    Tuner(dev, o).select(*op, Key{{"n", 2}}, &r);
    return r;
  }
};

TEST(PairedConfirmation, PairsADisturbanceCrossedAreTakenOnceMore) {
  Disturbance d;
  const TuneReport r = d.tune(d.options());
  EXPECT_EQ(d.confirmations, 2);
  EXPECT_EQ(d.disturbed_launches, 10);  // the first pairs: ten, one launch a side
  EXPECT_EQ(r.winner_name, "fast") << r.reason;
  EXPECT_TRUE(r.confirmed);
  EXPECT_NEAR(r.paired_ratio, 0.5, 1e-9);  // the second pairs' verdict
  EXPECT_NE(r.reason.find("paired confirmation (taken once more: the first pairs' pairs too noisy"),
            std::string::npos)
      << r.reason;
}

TEST(PairedConfirmation, PairsTooNoisyTwiceKeepTheDefaultAfterTwoTakes) {
  Disturbance d;
  d.last_disturbed = 1000;
  const TuneReport r = d.tune(d.options());
  EXPECT_EQ(d.confirmations, 2);  // once more, not more
  EXPECT_EQ(r.winner_name, "def");
  EXPECT_FALSE(r.confirmed);
  EXPECT_NE(r.reason.find("paired confirmation kept the default: pairs too noisy"),
            std::string::npos)
      << r.reason;
  EXPECT_NE(r.reason.find("taken once more"), std::string::npos) << r.reason;
}

// Pairs that scored are a verdict, even against the winner's windows: not taken again.
TEST(PairedConfirmation, PairsThatScoredAreNotTakenAgain) {
  Disturbance d;
  d.first_disturbed = d.last_disturbed = 0;
  TunerOptions o = d.options();
  // In the pairs "fast" reads the default's 2 ms, cleanly.
  d.dev.behaviour["fast"].hook = [&d] {
    if (d.confirmations > 0) d.dev.behaviour["fast"].seconds = 2e-3;
  };
  const TuneReport r = d.tune(o);
  EXPECT_EQ(d.confirmations, 1);
  EXPECT_EQ(r.winner_name, "def");
  EXPECT_NEAR(r.paired_ratio, 1.0, 1e-9);
  EXPECT_EQ(r.reason.find("taken once more"), std::string::npos) << r.reason;
}

// No time left for a second take: the first pairs stand (too noisy: the default).
TEST(PairedConfirmation, NoSecondTakeWithoutTheTimeForIt) {
  Disturbance d;
  d.last_disturbed = 1000;  // a second take would be disturbed too, and counted
  TunerOptions o = d.options();
  o.decide.budget_seconds = 10;
  // The budget's clock stands still until the first pairs are done, then it is spent.
  o.measure.now = [&d] { return d.disturbed_launches >= 10 ? 10.0 : 0.0; };
  const TuneReport r = d.tune(o);
  EXPECT_EQ(d.disturbed_launches, 10);  // one take only
  EXPECT_EQ(r.winner_name, "def");
  EXPECT_NE(r.reason.find("paired confirmation kept the default: pairs too noisy"),
            std::string::npos)
      << r.reason;
  EXPECT_EQ(r.reason.find("taken once more"), std::string::npos) << r.reason;
}

}  // namespace
}  // namespace tunekit
