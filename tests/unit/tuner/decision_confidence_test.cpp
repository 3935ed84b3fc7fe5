// A decision's confidence (src/tuner/decision_confidence.cpp): the winner against the
// runner-up from both windows' medians and MADs; kept with the stored entry.
#include "tuner/decision_confidence.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "fakes/fake_device.hpp"
#include "fakes/temp_dir.hpp"
#include "tunekit/model_report.hpp"
#include "tunekit/tuner.hpp"

namespace tunekit {
namespace {

CandidateReport measured_candidate(std::size_t index, std::string name, double median, double mad,
                                   std::size_t samples) {
  CandidateReport c;
  c.index = index;
  c.name = std::move(name);
  c.score = median;
  TimingResult t;
  t.median = median;
  t.mad = mad;
  t.samples.assign(samples, median);
  c.timing = t;
  return c;
}

TuneReport report_deciding(std::vector<CandidateReport> candidates, std::size_t winner) {
  TuneReport r;
  r.candidates = std::move(candidates);
  r.winner = winner;
  r.tie_band = 0.02;
  return r;
}

TEST(DecisionConfidence, AWinnerFarAheadOfTightWindowsIsClear) {
  const auto d =
      detail::decision_confidence(report_deciding({measured_candidate(0, "def", 1.5e-3, 1e-6, 16),
                                                   measured_candidate(1, "fast", 1.0e-3, 1e-6, 16)},
                                                  1));
  ASSERT_TRUE(d);
  EXPECT_EQ(d->runner_up, "def");
  EXPECT_NEAR(d->advantage, 1.5, 1e-9);
  EXPECT_GT(d->advantage_low, 1.45);
  EXPECT_LT(d->advantage_low, d->advantage);
  EXPECT_EQ(d->verdict, "clear");
}

TEST(DecisionConfidence, TheBestOtherCandidateIsTheRunnerUp) {
  const auto d = detail::decision_confidence(report_deciding(
      {measured_candidate(0, "def", 3e-3, 1e-6, 16), measured_candidate(1, "fast", 1e-3, 1e-6, 16),
       measured_candidate(2, "close", 1.2e-3, 1e-6, 16)},
      1));
  ASSERT_TRUE(d);
  EXPECT_EQ(d->runner_up, "close");
}

TEST(DecisionConfidence, NoisyWindowsCloseTogetherAreWithinNoise) {
  const auto d = detail::decision_confidence(
      report_deciding({measured_candidate(0, "def", 1.05e-3, 0.2e-3, 4),
                       measured_candidate(1, "fast", 1.0e-3, 0.2e-3, 4)},
                      1));
  ASSERT_TRUE(d);
  EXPECT_LT(d->advantage_low, 1.0);
  EXPECT_EQ(d->verdict, "within noise");
}

TEST(DecisionConfidence, ASureButSmallLeadIsInTheTieBand) {
  const auto d =
      detail::decision_confidence(report_deciding({measured_candidate(0, "def", 1.015e-3, 1e-8, 64),
                                                   measured_candidate(1, "fast", 1.0e-3, 1e-8, 64)},
                                                  1));
  ASSERT_TRUE(d);
  EXPECT_GT(d->advantage_low, 1.0);
  EXPECT_LT(d->advantage_low, 1.02);
  EXPECT_EQ(d->verdict, "in the tie band");
}

TEST(DecisionConfidence, ALoneMeasuredWinnerHasNoRunnerUpAndAnUnmeasuredOneNoConfidence) {
  CandidateReport failed = measured_candidate(0, "def", 1e-3, 0, 4);
  failed.outcome = Outcome{Status::validation_failed, "bad"};
  const auto alone = detail::decision_confidence(
      report_deciding({failed, measured_candidate(1, "fast", 1e-3, 1e-6, 8)}, 1));
  ASSERT_TRUE(alone);
  EXPECT_TRUE(alone->runner_up.empty());
  EXPECT_EQ(alone->verdict, "no runner-up");
  EXPECT_FALSE(detail::decision_confidence(report_deciding({failed}, 0)));
}

TEST(DecisionConfidence, ASearchReportsItTheStoreKeepsItAndExplainShowsIt) {
  testing::TempDir dir;
  fakes::FakeDevice dev;
  dev.behaviour["def"].seconds = 2e-3;
  dev.behaviour["fast"].seconds = 1e-3;
  auto op = fakes::make_fake_op(dev, {"def", "fast"}, "def");
  TunerOptions options;
  options.persist.store = "sqlite:" + (dir / "choices.db").string();
  Tuner tuner(dev, options);
  TuneReport r;
  ASSERT_EQ(tuner.select(*op, Key{{"n", 1}}, &r).source, Source::searched);
  ASSERT_TRUE(r.confidence);
  EXPECT_EQ(r.confidence->runner_up, "def");
  EXPECT_NEAR(r.confidence->advantage, 2.0, 0.01);
  EXPECT_EQ(r.confidence->verdict, "clear");
  const auto entries = tuner.store()->list("fake");
  ASSERT_EQ(entries.size(), 1u);
  ASSERT_TRUE(entries[0].search && entries[0].search->confidence);
  EXPECT_EQ(entries[0].search->confidence->runner_up, "def");
  EXPECT_DOUBLE_EQ(entries[0].search->confidence->advantage_low, r.confidence->advantage_low);
  const ModelReport m = tuner.explain(*op, Key{{"n", 1}});
  EXPECT_EQ(m.measured_winner, "fast");
  ASSERT_TRUE(m.measured_confidence);
  EXPECT_EQ(m.measured_confidence->verdict, "clear");
  EXPECT_NE(to_json(m).find("\"measured_confidence\""), std::string::npos);
}

}  // namespace
}  // namespace tunekit
