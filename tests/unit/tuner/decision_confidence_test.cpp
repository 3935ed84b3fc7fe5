// A decision's confidence (src/tuner/decision_confidence.cpp): the winner against the
// runner-up from both windows' medians and MADs; kept with the stored entry.
#include "tuner/decision_confidence.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "fakes/fake_device.hpp"
#include "fakes/temp_dir.hpp"
#include "report/console_reporter.hpp"
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

// What the tie pairing measured speaks for the winner only where the pairs decided for it.
TEST(DecisionConfidence, TheTiePairingSpeaksForAWinnerThePairsDecidedFor) {
  auto report = [](std::size_t winner, bool kept, double ratio) {
    TuneReport r = report_deciding({measured_candidate(0, "def", 5e-3, 1e-8, 16),
                                    measured_candidate(1, "a", 1.015e-3, 1e-8, 16),
                                    measured_candidate(2, "b", 1.0e-3, 1e-8, 16)},
                                   winner);
    r.winner_name = r.candidates[winner].name;
    r.tie_pairing = PairedFinal{
        .rival = "b", .candidate = "a", .pairs = 10, .ratio = ratio, .kept_candidate = kept};
    return r;
  };
  // The rival took the decision: winner / the pick it displaced.
  const auto took = detail::decision_confidence(report(2, false, 1.02));
  ASSERT_TRUE(took);
  EXPECT_EQ(took->tie_rival, "a");
  EXPECT_NEAR(took->tie_paired_ratio, 1 / 1.02, 1e-12);
  // The pick kept by the pairs: the runner-up read faster, the order kept it.
  const auto kept = detail::decision_confidence(report(1, true, 1.004));
  ASSERT_TRUE(kept);
  EXPECT_EQ(kept->tie_rival, "b");
  EXPECT_NEAR(kept->tie_paired_ratio, 1.004, 1e-12);
  EXPECT_EQ(kept->verdict,
            "kept by the tie order (the pairs put the runner-up less than half the band ahead)");
  // Kept although the pairs preferred the rival (it then failed its checked calls): the pairs
  // did not decide for the winner.
  const auto failed_rival = detail::decision_confidence(report(1, true, 1.03));
  ASSERT_TRUE(failed_rival);
  EXPECT_EQ(failed_rival->tie_rival, "");
  EXPECT_EQ(failed_rival->tie_paired_ratio, 0);
  EXPECT_EQ(failed_rival->verdict, "kept by the decision rules (runner-up faster)");
  // A winner on neither side (the default, after the confirmation): nothing from the pairs.
  const auto other = detail::decision_confidence(report(0, false, 1.02));
  ASSERT_TRUE(other);
  EXPECT_EQ(other->tie_rival, "");
}

// The library anchor took the decision from a kernel that read faster in its window: the
// verdict names the rule, and only where the pairs measured a ratio.
TEST(DecisionConfidence, AnAnchorTakenInPairsOverAFasterReadingSaysSo) {
  auto report = [](double ratio) {
    TuneReport r = report_deciding({measured_candidate(0, "def", 5e-3, 1e-8, 16),
                                    measured_candidate(1, "own", 1.0e-3, 1e-8, 16),
                                    measured_candidate(2, "lib", 1.05e-3, 1e-8, 16)},
                                   2);
    r.winner_name = "lib";
    r.anchor_pairing = PairedFinal{
        .rival = "lib", .candidate = "own", .pairs = 10, .ratio = ratio, .kept_candidate = false};
    return r;
  };
  const auto taken = detail::decision_confidence(report(1.01));
  ASSERT_TRUE(taken);
  EXPECT_EQ(taken->runner_up, "own");
  EXPECT_EQ(taken->anchor, "lib");
  EXPECT_EQ(taken->verdict,
            "taken by the library anchor in pairs (the runner-up not surely faster than it)");
  // No ratio from the pairs (the winner's side failed): not the pairs' verdict.
  EXPECT_EQ(detail::decision_confidence(report(0))->verdict,
            "kept by the decision rules (runner-up faster)");
}

// Two fake candidates (def 2 ms, fast 1 ms) searched into an SQLite store; every reading
// waited `waited` seconds for a CPU (-1: the clock cannot tell).
struct StoredSearch {
  testing::TempDir dir;
  fakes::FakeDevice dev;
  std::unique_ptr<Op<fakes::FakeArgs>> op;
  std::unique_ptr<Tuner> tuner;
  TuneReport r;
  Source source = Source::use_default;

  explicit StoredSearch(double waited = -1) {
    dev.behaviour["def"].seconds = 2e-3;
    dev.behaviour["fast"].seconds = 1e-3;
    if (waited >= 0)
      for (int i = 0; i < 100000; ++i) dev.scripted_clock().waits.push_back(waited);
    op = fakes::make_fake_op(dev, {"def", "fast"}, "def");
    TunerOptions options;
    options.persist.store = "sqlite:" + (dir / "choices.db").string();
    tuner = std::make_unique<Tuner>(dev, options);
    source = tuner->select(*op, Key{{"n", 1}}, &r).source;
  }
};

TEST(DecisionConfidence, ASearchReportsItTheStoreKeepsItAndExplainShowsIt) {
  StoredSearch search;
  const TuneReport& r = search.r;
  Tuner& tuner = *search.tuner;
  const auto& op = search.op;
  ASSERT_EQ(search.source, Source::searched);
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

TEST(DecisionConfidence, TheShareOfReadingsThatWaitedForACpuIsKept) {
  auto with_waits = [](CandidateReport c, int waited) {
    c.timing->waited = waited;
    return c;
  };
  const auto d = detail::decision_confidence(
      report_deciding({with_waits(measured_candidate(0, "def", 2e-3, 1e-6, 16), 4),
                       with_waits(measured_candidate(1, "fast", 1e-3, 1e-6, 16), 12)},
                      1));
  ASSERT_TRUE(d);
  EXPECT_DOUBLE_EQ(d->waited_share, 0.5);  // 16 of 32 readings
  EXPECT_NE(detail::confidence_text(*d).find("decided under load: 50 %"), std::string::npos)
      << detail::confidence_text(*d);
  DecisionConfidence quiet = *d;
  quiet.waited_share = 0.01;  // a few readings wait anywhere: nothing said
  EXPECT_EQ(detail::confidence_text(quiet).find("under load"), std::string::npos);
}

TEST(DecisionConfidence, ASearchOnABusyMachineSaysSoAndTheStoreKeepsIt) {
  // Every reading waited for a CPU for longer than itself: another process had the core.
  StoredSearch search(/*waited=*/1.0);
  const TuneReport& r = search.r;
  Tuner& tuner = *search.tuner;
  const auto& op = search.op;
  ASSERT_EQ(search.source, Source::searched);
  ASSERT_TRUE(r.confidence);
  EXPECT_DOUBLE_EQ(r.confidence->waited_share, 1.0);
  const CandidateReport* fast = r.find(*op->find("fast"));
  ASSERT_TRUE(fast && fast->timing);
  EXPECT_EQ(fast->timing->waited, static_cast<int>(fast->timing->samples.size()));
  EXPECT_EQ(fast->timing->retaken, 0);  // kept: retaking is opt-in
  const auto entries = tuner.store()->list("fake");
  ASSERT_EQ(entries.size(), 1u);
  ASSERT_TRUE(entries[0].search && entries[0].search->confidence);
  EXPECT_DOUBLE_EQ(entries[0].search->confidence->waited_share, 1.0);
}

}  // namespace
}  // namespace tunekit
