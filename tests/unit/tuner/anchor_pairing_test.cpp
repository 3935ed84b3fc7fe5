// A measured winner that is not one of the op's anchors is paired A B B A with the best anchor
// measured (src/tuner/search_context.cpp SearchContext::pair_with_anchor): the library stands
// unless the winner is surely faster by the tie band. The anchors are measured right after the
// default, early in a search; a machine that speeds up later (drift) must not hand the pick to
// a kernel that only looked faster in a faster minute.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "fakes/fake_device.hpp"
#include "fakes/report_lookup.hpp"
#include "fakes/temp_dir.hpp"
#include "report/console_reporter.hpp"
#include "tunekit/model_report.hpp"
#include "tunekit/report.hpp"
#include "tunekit/reporter.hpp"
#include "tunekit/tuner.hpp"

namespace tunekit {
namespace {

using fakes::FakeBehaviour;
using fakes::FakeDevice;
using fakes::make_fake_op;
using testing::candidate_named;

TuneReport tune(FakeDevice& dev, const std::vector<std::string>& names,
                const std::vector<std::string>& anchors, TunerOptions o = {}) {
  auto op = make_fake_op(dev, names, "def");
  std::vector<Config> configs;
  for (const std::string& a : anchors) configs.push_back(Config{{"candidate", a}});
  op->anchors(std::move(configs));
  o.persist.store = "none";
  TuneReport r;
  Tuner(dev, o).select(*op, Key{{"n", 4}}, &r);
  return r;
}

// The library reads 3 ms in its window (measured first) and 1 ms once the search has moved on
// to "own" (the machine sped up); "own" reads 2 ms throughout.
void drift(FakeDevice& dev) {
  dev.behaviour["def"] = {.seconds = 5e-3};
  dev.behaviour["lib"] = {.seconds = 3e-3};
  dev.behaviour["own"] = {.seconds = 2e-3};
  dev.behaviour["own"].hook = [&dev] { dev.behaviour["lib"].seconds = 1e-3; };
}

// A library whose calls are not all alike: one launch in five is fast (0.6 ms), the others
// 1.1 ms, so its windows read 1.1 ms; "own" reads 1.0 ms, noisy enough (10 %) that the pairs
// take five launches a side. The fastest of five would read the library at 0.6 ms in every side
// and keep it against a kernel 9 % faster; a side's median reads what a caller pays.
TEST(AnchorPairing, ALibraryWithAnOccasionalFastCallIsPairedOnWhatACallerPays) {
  FakeDevice dev;
  dev.behaviour["def"] = {.seconds = 5e-3};
  dev.behaviour["own"] = {.seconds = 1e-3, .jitter = 0.1};
  dev.behaviour["lib"] = {.seconds = 1.1e-3};
  dev.behaviour["lib"].hook = [&dev, n = 0]() mutable {
    dev.behaviour["lib"].seconds = ++n % 5 == 0 ? 0.6e-3 : 1.1e-3;
  };
  const TuneReport r = tune(dev, {"def", "lib", "own"}, {"lib"});
  EXPECT_NEAR(candidate_named(r, "lib").score, 1.1e-3, 1e-12);
  ASSERT_TRUE(r.anchor_pairing);
  EXPECT_EQ(r.anchor_pairing->rival, "lib");
  EXPECT_TRUE(r.anchor_pairing->kept_candidate) << r.anchor_pairing->why;
  EXPECT_LT(r.anchor_pairing->ratio, 0.98);  // own / lib in pairs: about 1.0 / 1.1
  EXPECT_EQ(r.winner_name, "own") << r.reason;

  // Ranked by the fastest reading (statistic min, the caller's choice), the library's fast
  // call is its reading everywhere: it wins, no pairing.
  TunerOptions fastest;
  fastest.decide.statistic = Statistic::min;
  const TuneReport m = tune(dev, {"def", "lib", "own"}, {"lib"}, fastest);
  EXPECT_EQ(m.winner_name, "lib") << m.reason;
}

TEST(AnchorPairing, TheLibraryMeasuredInASlowerMinuteIsKeptWhenItIsFasterInPairs) {
  FakeDevice dev;
  drift(dev);
  const TuneReport r = tune(dev, {"def", "lib", "own"}, {"lib"});
  // The main windows read own (2 ms) ahead of lib (3 ms): the measured winner was own.
  EXPECT_LT(candidate_named(r, "own").score, candidate_named(r, "lib").score);
  ASSERT_TRUE(r.anchor_pairing);
  EXPECT_EQ(r.anchor_pairing->rival, "lib");
  EXPECT_EQ(r.anchor_pairing->candidate, "own");
  EXPECT_FALSE(r.anchor_pairing->kept_candidate) << r.anchor_pairing->why;
  EXPECT_NEAR(r.anchor_pairing->ratio, 2.0, 1e-9);  // own / lib in pairs
  EXPECT_GE(r.anchor_pairing->pairs, 8);
  EXPECT_EQ(r.winner_name, "lib");
  EXPECT_NE(r.reason.find("paired with the library anchor lib"), std::string::npos) << r.reason;
  // The anchor then stands against the default as any winner does.
  EXPECT_TRUE(r.confirmed);
  ASSERT_TRUE(r.confidence);
  EXPECT_EQ(r.confidence->anchor, "lib");
  EXPECT_EQ(r.confidence->anchor_paired_high, 0);
  // The JSON report carries the pairing.
  const std::string json = to_json(r, -1);
  EXPECT_NE(json.find("\"anchor_pairing\""), std::string::npos);
  EXPECT_NE(json.find("\"kept_candidate\":false"), std::string::npos) << json;
}

TEST(AnchorPairing, AWinnerSurelyFasterThanTheLibraryStands) {
  FakeDevice dev;
  dev.behaviour["def"] = {.seconds = 5e-3};
  dev.behaviour["lib"] = {.seconds = 3e-3};
  dev.behaviour["own"] = {.seconds = 1e-3};
  const TuneReport r = tune(dev, {"def", "lib", "own"}, {"lib"});
  EXPECT_EQ(r.winner_name, "own");
  ASSERT_TRUE(r.anchor_pairing);
  EXPECT_TRUE(r.anchor_pairing->kept_candidate) << r.anchor_pairing->why;
  EXPECT_NEAR(r.anchor_pairing->ratio, 1.0 / 3, 1e-9);
  EXPECT_GT(r.anchor_pairing->ratio_high, 0);
  EXPECT_LT(r.anchor_pairing->ratio_high, 1 / 1.02);
  ASSERT_TRUE(r.confidence);
  EXPECT_EQ(r.confidence->anchor, "lib");
  EXPECT_DOUBLE_EQ(r.confidence->anchor_paired_high, r.anchor_pairing->ratio_high);
  EXPECT_TRUE(r.confirmed);  // and against the default
}

TEST(AnchorPairing, TheBestOfSeveralAnchorsIsTheOnePairedWith) {
  FakeDevice dev;
  dev.behaviour["def"] = {.seconds = 5e-3};
  dev.behaviour["lib_t1"] = {.seconds = 4e-3};
  dev.behaviour["lib_t2"] = {.seconds = 3e-3};
  dev.behaviour["own"] = {.seconds = 1e-3};
  const TuneReport r = tune(dev, {"def", "lib_t1", "lib_t2", "own"}, {"lib_t1", "lib_t2"});
  ASSERT_TRUE(r.anchor_pairing);
  EXPECT_EQ(r.anchor_pairing->rival, "lib_t2");
}

TEST(AnchorPairing, NoPairingWhenTheWinnerIsAnAnchorOrTheOpHasNone) {
  {
    FakeDevice dev;
    dev.behaviour["def"] = {.seconds = 5e-3};
    dev.behaviour["lib"] = {.seconds = 1e-3};
    dev.behaviour["own"] = {.seconds = 3e-3};
    const TuneReport r = tune(dev, {"def", "lib", "own"}, {"lib"});
    EXPECT_EQ(r.winner_name, "lib");
    EXPECT_FALSE(r.anchor_pairing);
    EXPECT_EQ(to_json(r, -1).find("anchor_pairing"), std::string::npos);
  }
  {
    FakeDevice dev;
    drift(dev);
    const TuneReport r = tune(dev, {"def", "lib", "own"}, {});
    EXPECT_EQ(r.winner_name, "own");  // without an anchor the drift goes unnoticed
    EXPECT_FALSE(r.anchor_pairing);
  }
  {
    FakeDevice dev;  // the paired confirmations switched off: no pairing with the anchor
    drift(dev);
    TunerOptions o;
    o.decide.confirm_pairs = 0;
    const TuneReport r = tune(dev, {"def", "lib", "own"}, {"lib"}, o);
    EXPECT_EQ(r.winner_name, "own");
    EXPECT_FALSE(r.anchor_pairing);
  }
}

TEST(AnchorPairing, AnAnchorThatIsTheDefaultIsLeftToTheDefaultsConfirmation) {
  FakeDevice dev;
  dev.behaviour["def"] = {.seconds = 3e-3};
  dev.behaviour["own"] = {.seconds = 1e-3};
  const TuneReport r = tune(dev, {"def", "own"}, {"def"});
  EXPECT_EQ(r.winner_name, "own");
  EXPECT_FALSE(r.anchor_pairing);  // paired once, against the default, by the stricter rule
  EXPECT_TRUE(r.confirmed);
}

TEST(AnchorPairing, AnAnchorThatFailsItsCheckedCallsLeavesTheMeasuredWinner) {
  FakeDevice dev;
  // lib trails the default in its window (so it is ranked unchecked), then speeds up once own
  // is measured and lies from then on: the pairs hand it the win, its checked calls refuse it.
  dev.behaviour["def"] = {.seconds = 2e-3};
  dev.behaviour["lib"] = {.seconds = 3e-3};
  dev.behaviour["own"] = {.seconds = 1e-3};
  dev.behaviour["own"].hook = [&dev] {
    FakeBehaviour& lib = dev.behaviour["lib"];
    lib.seconds = 0.5e-3;
    if (lib.right_calls == 0) lib.right_calls = dev.launches["lib"];
  };
  const TuneReport r = tune(dev, {"def", "lib", "own"}, {"lib"});
  ASSERT_TRUE(r.anchor_pairing);
  EXPECT_NEAR(r.anchor_pairing->ratio, 2.0, 1e-9);
  EXPECT_TRUE(r.anchor_pairing->kept_candidate);
  EXPECT_NE(r.anchor_pairing->why.find("the library anchor failed its checked calls"),
            std::string::npos)
      << r.anchor_pairing->why;
  EXPECT_EQ(candidate_named(r, "lib").outcome.status, Status::validation_failed);
  EXPECT_EQ(r.winner_name, "own");
  EXPECT_TRUE(r.confirmed);  // and then against the default
}

TEST(AnchorPairing, AWinnerThatCrashesInThePairsIsDeclinedAndTheLibraryStands) {
  FakeDevice dev;
  dev.behaviour["def"] = {.seconds = 5e-3};
  dev.behaviour["lib"] = {.seconds = 3e-3};
  dev.behaviour["own"] = {.seconds = 1e-3};
  // Once own has been measured, lib's next launch is the pairing's first: own crashes after.
  bool own_measured = false;
  dev.behaviour["own"].hook = [&] { own_measured = true; };
  dev.behaviour["lib"].hook = [&] {
    if (own_measured) dev.behaviour["own"].throw_at_launch = true;
  };
  const TuneReport r = tune(dev, {"def", "lib", "own"}, {"lib"});
  EXPECT_EQ(r.winner_name, "lib");
  ASSERT_TRUE(r.anchor_pairing);
  EXPECT_FALSE(r.anchor_pairing->kept_candidate);
  EXPECT_NE(r.anchor_pairing->why.find("the winner's window ended launch_failed"),
            std::string::npos)
      << r.anchor_pairing->why;
  EXPECT_EQ(candidate_named(r, "own").outcome.status, Status::launch_failed);
}

TEST(AnchorPairing, TheStoreKeepsItAndExplainShowsIt) {
  testing::TempDir dir;
  FakeDevice dev;
  dev.behaviour["def"] = {.seconds = 5e-3};
  dev.behaviour["lib"] = {.seconds = 3e-3};
  dev.behaviour["own"] = {.seconds = 1e-3};
  auto op = make_fake_op(dev, {"def", "lib", "own"}, "def");
  op->anchors({Config{{"candidate", "lib"}}});
  TunerOptions o;
  o.persist.store = "sqlite:" + (dir / "choices.db").string();
  Tuner tuner(dev, o);
  TuneReport r;
  tuner.select(*op, Key{{"n", 4}}, &r);
  ASSERT_EQ(r.winner_name, "own");
  const auto entries = tuner.store()->list("fake");
  ASSERT_EQ(entries.size(), 1u);
  ASSERT_TRUE(entries[0].search && entries[0].search->confidence);
  const DecisionConfidence& kept = *entries[0].search->confidence;
  EXPECT_EQ(kept.anchor, "lib");
  EXPECT_DOUBLE_EQ(kept.anchor_paired_high, r.anchor_pairing->ratio_high);
  const std::string text = detail::confidence_text(kept);
  EXPECT_DOUBLE_EQ(kept.anchor_paired_ratio, r.anchor_pairing->ratio);
  EXPECT_NE(text.find("paired vs the library anchor lib: winner/anchor 0.333 (95 % <= 0.3"),
            std::string::npos)
      << text;
  const ModelReport m = tuner.explain(*op, Key{{"n", 4}});
  ASSERT_TRUE(m.measured_confidence);
  EXPECT_EQ(m.measured_confidence->anchor, "lib");
  EXPECT_NE(to_json(m).find("\"anchor_paired_high\""), std::string::npos);
}

}  // namespace
}  // namespace tunekit
