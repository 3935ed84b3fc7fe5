// The far-behind cuts of a search (TimingOptions::far_behind_ratio, lone_cut_seconds;
// SearchContext::cut_on_validation) against the fake device: what a candidate far behind the
// incumbent costs before it is dropped.
#include <gtest/gtest.h>

#include <utility>

#include "fakes/fake_device.hpp"
#include "fakes/report_lookup.hpp"
#include "tunekit/tuner.hpp"

namespace tunekit {
namespace {

using fakes::FakeDevice;
using fakes::make_fake_op;
using testing::candidate_named;

// The default at 1 ms a call and a naive loop at `seconds`, whose readings the clock says
// waited `waited` seconds for a CPU (-1: it cannot tell), tuned with `options`; `launches`
// counts the loop's launches.
TuneReport tune_beside_naive(double seconds, double waited, TunerOptions options, int& launches) {
  FakeDevice dev;
  dev.behaviour["def"].seconds = 1e-3;
  dev.behaviour["naive"].seconds = seconds;
  dev.behaviour["naive"].waited = waited;
  dev.behaviour["naive"].hook = [&] { ++launches; };
  auto op = make_fake_op(dev, {"def", "naive"}, "def");
  options.persist.store = "none";
  TuneReport r;
  Tuner(dev, options).select(*op, Key{{"n", 8}}, &r);
  return r;
}

// A candidate 300x behind the incumbent costs its validation run and two samples (the
// far-behind cut), not a warmup and half a window.
TEST(FarBehindCut, AFarBehindCandidateCostsItsValidationRunAndTwoSamples) {
  int naive_launches = 0;
  const TuneReport r = tune_beside_naive(0.3, -1, {}, naive_launches);
  const CandidateReport& naive = candidate_named(r, "naive");
  EXPECT_EQ(naive.outcome.status, Status::hopeless);
  ASSERT_TRUE(naive.timing);
  EXPECT_EQ(naive.timing->samples.size(), 2u);
  EXPECT_NE(naive.outcome.message.find("validation run included"), std::string::npos)
      << naive.outcome.message;
  EXPECT_EQ(naive_launches, 3) << "validation run + two samples, no warmup";
  EXPECT_EQ(r.winner_name, "def");
}

// With two input sets the validation runs are two cold readings (a cold run only adds time):
// a candidate far behind the incumbent on both is cut before any window, at no launch more.
TEST(FarBehindCut, AFarBehindCandidateOnTwoInputSetsCostsItsValidationRunsOnly) {
  FakeDevice dev;
  dev.behaviour["def"].seconds = 1e-3;
  dev.behaviour["naive"].seconds = 0.3;
  dev.behaviour["near"].seconds = 1.2e-3;
  int naive_launches = 0;
  dev.behaviour["naive"].hook = [&] { ++naive_launches; };
  auto op = make_fake_op(dev, {"def", "naive", "near"}, "def");
  op->inputs([](const Key& k, int) {
    return fakes::FakeArgs{std::vector<float>(static_cast<std::size_t>(k.integer("n")))};
  });
  ASSERT_EQ(op->input_sets(), 2);
  TunerOptions options;
  options.persist.store = "none";
  TuneReport r;
  Tuner(dev, options).select(*op, Key{{"n", 8}}, &r);
  const CandidateReport& naive = candidate_named(r, "naive");
  EXPECT_EQ(naive.outcome.status, Status::hopeless);
  EXPECT_NE(naive.outcome.message.find("cut on its validation runs"), std::string::npos)
      << naive.outcome.message;
  EXPECT_EQ(naive_launches, 2) << "one validation run per input set, no window";
  ASSERT_TRUE(naive.timing);
  EXPECT_EQ(naive.timing->samples.size(), 2u);  // the validation readings, reported
  // One within the far-behind ratio is timed in a window as before.
  const CandidateReport& near = candidate_named(r, "near");
  EXPECT_TRUE(near.outcome.ok()) << near.outcome.message;
  EXPECT_GE(near.timing->samples.size(), 8u);
  EXPECT_EQ(r.winner_name, "def");
}

// A validation run the clock knows did not wait for a CPU, far behind and long past a first
// call's one-time costs (TimingOptions::lone_cut_seconds), is one reading enough: no window.
// One that waited, or a short one, is timed on as before.
TEST(FarBehindCut, AFarBehindValidationRunThatNeverWaitedCutsItAlone) {
  for (const double waited : {0.0, 0.2}) {  // 0: clean; 0.2 of 0.3 s: it waited
    int naive_launches = 0;
    const TuneReport r = tune_beside_naive(0.3, waited, {}, naive_launches);
    const CandidateReport& naive = candidate_named(r, "naive");
    EXPECT_EQ(naive.outcome.status, Status::hopeless) << naive.outcome.message;
    ASSERT_TRUE(naive.timing);
    if (waited == 0) {
      EXPECT_NE(naive.outcome.message.find("validation run alone"), std::string::npos)
          << naive.outcome.message;
      EXPECT_EQ(naive_launches, 1) << "the validation run only";
      EXPECT_EQ(naive.timing->samples.size(), 1u);
    } else {
      EXPECT_EQ(naive_launches, 3) << "validation run + two samples, no warmup";
    }
    EXPECT_EQ(r.winner_name, "def");
  }
}

// The line is 8x the incumbent plus lone_cut_seconds (an allowance for one-time costs): 8 ms +
// 0.1 s here. A run under it takes the second reading; with the allowance 0 the cut is off.
TEST(FarBehindCut, AFarBehindValidationRunUnderTheAllowanceIsNotCutAlone) {
  for (const auto& [seconds, allowance] : {std::pair{0.05, 0.1}, {0.105, 0.1}, {0.05, 0.0}}) {
    TunerOptions options;
    options.measure.timing.lone_cut_seconds = allowance;
    int naive_launches = 0;
    const TuneReport r = tune_beside_naive(seconds, 0, options, naive_launches);
    const CandidateReport& naive = candidate_named(r, "naive");
    EXPECT_EQ(naive.outcome.status, Status::hopeless) << naive.outcome.message;
    EXPECT_EQ(naive.outcome.message.find("alone"), std::string::npos) << naive.outcome.message;
    EXPECT_EQ(naive_launches, 3) << seconds << " s, allowance " << allowance;
  }
}

}  // namespace
}  // namespace tunekit
