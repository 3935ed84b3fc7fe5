// The tie order's pick paired A B B A with the fastest reading it was tied with
// (src/tuner/paired_confirmation.cpp SearchContext::pair_with_tied_rival): among candidates
// within the tie band the order (default, preference, name) keeps a decision reproducible, but
// must not cost a difference the pairs can measure. The rival takes the pick when the pairs'
// median shows it faster by more than half the tie band.
#include <gtest/gtest.h>

#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "fakes/fake_device.hpp"
#include "fakes/report_lookup.hpp"
#include "fakes/simulated_space.hpp"
#include "fakes/temp_dir.hpp"
#include "report/console_reporter.hpp"
#include "tunekit/model_report.hpp"
#include "tunekit/report.hpp"
#include "tunekit/reporter.hpp"
#include "tunekit/tuner.hpp"

namespace tunekit {
namespace {

using fakes::FakeDevice;
using fakes::make_fake_op;

TuneReport tune(FakeDevice& dev, const std::vector<std::string>& names,
                const std::vector<std::string>& anchors = {}, TunerOptions o = {}) {
  auto op = make_fake_op(dev, names, "def");
  std::vector<Config> configs;
  for (const std::string& a : anchors) configs.push_back(Config{{"candidate", a}});
  if (!configs.empty()) op->anchors(std::move(configs));
  o.persist.store = "none";
  // The pairing is judged on the readings each test scripts: no final race times them again.
  o.decide.finalists = 0;
  TuneReport r;
  Tuner(dev, o).select(*op, Key{{"n", 4}}, &r);
  return r;
}

// Each candidate's reading per launch, in seconds.
void readings(FakeDevice& dev, std::initializer_list<std::pair<const char*, double>> seconds) {
  for (const auto& [name, t] : seconds) dev.behaviour[name] = {.seconds = t};
}

// "a" wins the tie by name; "b" reads 1.5 % faster, within the 2 % band.
TEST(TiePairing, ARivalMeasurablyFasterInPairsTakesThePick) {
  FakeDevice dev;
  readings(dev, {{"def", 5e-3}, {"a", 1.015e-3}, {"b", 1e-3}});
  const TuneReport r = tune(dev, {"def", "a", "b"});
  ASSERT_TRUE(r.tie_pairing);
  EXPECT_EQ(r.tie_pairing->rival, "b");
  EXPECT_EQ(r.tie_pairing->candidate, "a");
  EXPECT_NEAR(r.tie_pairing->ratio, 1.015, 1e-9);  // a / b in pairs
  EXPECT_GE(r.tie_pairing->pairs, 8);
  EXPECT_FALSE(r.tie_pairing->kept_candidate) << r.tie_pairing->why;
  EXPECT_EQ(r.winner_name, "b");
  EXPECT_NE(r.reason.find("paired with the tied rival b"), std::string::npos) << r.reason;
  EXPECT_TRUE(r.confirmed);  // then against the default, as any winner
  EXPECT_FALSE(r.anchor_pairing);
  ASSERT_TRUE(r.confidence);  // the winner / the pick it displaced, in pairs
  EXPECT_EQ(r.confidence->tie_rival, "a");
  EXPECT_NEAR(r.confidence->tie_paired_ratio, 1 / 1.015, 1e-9);
  const std::string json = to_json(r, -1);
  EXPECT_NE(json.find("\"tie_pairing\":{\"rival\":\"b\",\"candidate\":\"a\""), std::string::npos)
      << json;
}

// Sized by the main windows' gap to the pairing's bar (1 + tie_band / 2), as a confirmation is
// to its own: readings without noise need only the fewest pairs; 5 % jitter a side, 0.5 % from
// the bar, would need hundreds, so the most. (No share cap here: the fake device's pairs cost
// simulated seconds, the search's own time is real; the cap is confirmation_size_test's.)
TEST(TiePairing, ItsPairsAreSizedByTheGapToItsOwnBar) {
  auto tuned = [](double a, double jitter) {
    FakeDevice dev;
    dev.behaviour["def"] = {.seconds = 5e-3, .jitter = jitter};
    dev.behaviour["a"] = {.seconds = a, .jitter = jitter};
    dev.behaviour["b"] = {.seconds = 1e-3, .jitter = jitter};
    TunerOptions o;
    o.decide.confirm_share = 0;
    return tune(dev, {"def", "a", "b"}, {}, o);
  };
  const TuneReport clean = tuned(1.015e-3, 0);
  ASSERT_TRUE(clean.tie_pairing);
  EXPECT_EQ(clean.tie_pairing->pairs, 10) << clean.tie_pairing->why;
  const TuneReport noisy = tuned(1.015e-3, 0.05);
  ASSERT_TRUE(noisy.tie_pairing);  // the seeded jitter leaves "a" first in the order
  EXPECT_EQ(noisy.tie_pairing->pairs, 16) << noisy.tie_pairing->why;
  // 0.5 % apart with 1 % jitter: near the tie bar (1.01), far from a confirmation's (0.98).
  const TuneReport near = tuned(1.005e-3, 0.01);
  ASSERT_TRUE(near.tie_pairing);
  EXPECT_EQ(near.tie_pairing->pairs, 16) << near.tie_pairing->why;
}

// The main windows read "b" 1.5 % ahead (a faster minute); in pairs the two are all but equal.
TEST(TiePairing, ATieThePairsCannotSeparateKeepsTheTieOrder) {
  FakeDevice dev;
  readings(dev, {{"def", 5e-3}, {"a", 1e-3}, {"b", 0.985e-3}});
  // "a" runs again only in the pairs (after "b"'s window): from then on "b" reads 0.998 ms.
  dev.behaviour["a"].hook = [&dev] {
    if (dev.launches["b"] > 0) dev.behaviour["b"].seconds = 0.998e-3;
  };
  const TuneReport r = tune(dev, {"def", "a", "b"});
  EXPECT_NEAR(testing::candidate_named(r, "b").score, 0.985e-3, 1e-12);  // its main window
  ASSERT_TRUE(r.tie_pairing);
  EXPECT_TRUE(r.tie_pairing->kept_candidate) << r.tie_pairing->why;
  EXPECT_NEAR(r.tie_pairing->ratio, 1.0 / 0.998, 1e-9);
  EXPECT_EQ(r.winner_name, "a");
  EXPECT_TRUE(r.confirmed);
  // The confidence says why a slower runner-up did not win: the pairs, not the order alone.
  ASSERT_TRUE(r.confidence);
  EXPECT_EQ(r.confidence->runner_up, "b");
  EXPECT_EQ(r.confidence->tie_rival, "b");
  EXPECT_NEAR(r.confidence->tie_paired_ratio, 1.0 / 0.998, 1e-9);
  EXPECT_EQ(r.confidence->verdict,
            "kept by the tie order (the pairs put the runner-up less than half the band ahead)");
}

// What the tie pairing measured is kept with the stored decision; `explain` and `cache show`
// say it.
TEST(TiePairing, TheStoreKeepsWhatThePairsMeasuredAndExplainSaysIt) {
  testing::TempDir dir;
  FakeDevice dev;
  readings(dev, {{"def", 5e-3}, {"a", 1e-3}, {"b", 0.985e-3}});
  dev.behaviour["a"].hook = [&dev] {
    if (dev.launches["b"] > 0) dev.behaviour["b"].seconds = 0.998e-3;
  };
  auto op = make_fake_op(dev, {"def", "a", "b"}, "def");
  TunerOptions o;
  o.decide.finalists = 0;  // the scripted readings decide (no final race)
  o.persist.store = "sqlite:" + (dir / "choices.db").string();
  Tuner tuner(dev, o);
  TuneReport r;
  tuner.select(*op, Key{{"n", 4}}, &r);
  ASSERT_EQ(r.winner_name, "a");
  const auto entries = tuner.store()->list("fake");
  ASSERT_EQ(entries.size(), 1u);
  ASSERT_TRUE(entries[0].search && entries[0].search->confidence);
  const DecisionConfidence& kept = *entries[0].search->confidence;
  EXPECT_EQ(kept.tie_rival, "b");
  EXPECT_DOUBLE_EQ(kept.tie_paired_ratio, r.tie_pairing->ratio);
  EXPECT_EQ(kept.verdict, r.confidence->verdict);
  const std::string text = detail::confidence_text(kept);
  EXPECT_NE(text.find("paired with the tied b: winner/it 1.002"), std::string::npos) << text;
  const ModelReport m = tuner.explain(*op, Key{{"n", 4}});
  ASSERT_TRUE(m.measured_confidence);
  EXPECT_EQ(m.measured_confidence->tie_rival, "b");
  EXPECT_NE(to_json(m).find("\"tie_paired_ratio\""), std::string::npos);
}

TEST(TiePairing, NoPairingWhenThePickIsTheFastestOrTheDefaultOrAnAnchorIsOnOneSide) {
  {
    FakeDevice dev;  // the tie order and the readings agree
    readings(dev, {{"def", 5e-3}, {"a", 1e-3}, {"b", 1.01e-3}});
    const TuneReport r = tune(dev, {"def", "a", "b"});
    EXPECT_EQ(r.winner_name, "a");
    EXPECT_FALSE(r.tie_pairing);
    EXPECT_EQ(to_json(r, -1).find("tie_pairing"), std::string::npos);
  }
  {
    FakeDevice dev;  // the default in the tie set: ties go to the default (DESIGN §6)
    readings(dev, {{"def", 1.015e-3}, {"b", 1e-3}});
    const TuneReport r = tune(dev, {"def", "b"});
    EXPECT_EQ(r.winner_name, "def");
    EXPECT_FALSE(r.tie_pairing);
  }
  {
    FakeDevice dev;  // own pick, library fastest: the anchor pairing's rule (the library)
    readings(dev, {{"def", 5e-3}, {"a", 1.015e-3}, {"lib", 1e-3}});
    const TuneReport r = tune(dev, {"def", "a", "lib"}, {"lib"});
    EXPECT_FALSE(r.tie_pairing);
    ASSERT_TRUE(r.anchor_pairing);
    EXPECT_EQ(r.winner_name, "lib");
  }
  {
    FakeDevice dev;  // the paired confirmations switched off
    readings(dev, {{"def", 5e-3}, {"a", 1.015e-3}, {"b", 1e-3}});
    TunerOptions o;
    o.decide.confirm_pairs = 0;
    const TuneReport r = tune(dev, {"def", "a", "b"}, {}, o);
    EXPECT_EQ(r.winner_name, "a");
    EXPECT_FALSE(r.tie_pairing);
  }
}

// The library read fastest (it races in the final race whatever its reading): an own pick
// still has its tie with a faster own kernel paired, then the anchor pairing's rule.
TEST(TiePairing, AnOwnPickIsPairedWithTheFastestOwnRivalWhenTheLibraryReadsFastest) {
  FakeDevice dev;
  // All three within the 2 % band of the library: "a" wins the tie by name.
  readings(dev, {{"def", 5e-3}, {"a", 1.005e-3}, {"b", 1e-3}, {"lib", 0.99e-3}});
  const TuneReport r = tune(dev, {"def", "a", "b", "lib"}, {"lib"});
  ASSERT_TRUE(r.tie_pairing);
  EXPECT_EQ(r.tie_pairing->candidate, "a");
  EXPECT_EQ(r.tie_pairing->rival, "b");
  ASSERT_TRUE(r.anchor_pairing);
  EXPECT_EQ(r.winner_name, "lib");  // the library wins its ties
}

// Two thread counts of the library tied: the same rule between them, then no anchor pairing
// (the winner is an anchor).
TEST(TiePairing, TwoAnchorsTiedArePairedWithEachOther) {
  FakeDevice dev;
  readings(dev, {{"def", 5e-3}, {"lib_t1", 1.015e-3}, {"lib_t2", 1e-3}});
  const TuneReport r = tune(dev, {"def", "lib_t1", "lib_t2"}, {"lib_t1", "lib_t2"});
  ASSERT_TRUE(r.tie_pairing);
  EXPECT_EQ(r.winner_name, "lib_t2");
  EXPECT_FALSE(r.anchor_pairing);
}

TEST(TiePairing, ARivalThatFailsInThePairsIsNeverChosen) {
  FakeDevice dev;
  readings(dev, {{"def", 5e-3}, {"a", 1.015e-3}, {"b", 1e-3}});
  // "b" throws from its launches once the pairs have begun (its first side of the first pair
  // ran, then "a"'s).
  dev.behaviour["a"].hook = [&dev] {
    if (dev.launches["b"] > 0) dev.behaviour["b"].throw_at_launch = true;
  };
  const TuneReport r = tune(dev, {"def", "a", "b"});
  ASSERT_TRUE(r.tie_pairing);
  EXPECT_TRUE(r.tie_pairing->kept_candidate) << r.tie_pairing->why;
  EXPECT_EQ(r.winner_name, "a");
  EXPECT_EQ(testing::candidate_named(r, "b").outcome.status, Status::launch_failed);
  EXPECT_NE(r.tie_pairing->why.find("the tied rival's window ended"), std::string::npos)
      << r.tie_pairing->why;
  EXPECT_TRUE(r.confirmed);
}

// Under a time budget the reserve holds the tie pairing's floor back too: the pick is paired
// and then confirmed against the default inside the budget.
void budget_reserves_the_pairs(bool quiescing_op) {
  fakes::SimulatedDevice dev;
  // The enumeration order (the tie order) visits the slower points of the tie set first.
  dev.seconds = [](const Config& c) {
    const bool def = c["x"].as_int() == 0 && c["y"].as_int() == 0;
    return def ? 1e-3 : 0.5e-3 * (1 + 3e-4 * static_cast<double>(99 - c["x"].as_int()));
  };
  auto op = fakes::make_space_op(dev, fakes::grid_space(100), Config{{"x", 0}, {"y", 0}});
  // A quiescing op's windows each begin with an untimed call (trial_runner.cpp): at one
  // launch a side a pair costs twice its timed launches, and the reserve must know it.
  if (quiescing_op) op->quiesce([](const Candidate&) {});
  TunerOptions o;
  o.decide.finalists = 0;  // the scripted readings decide (no final race)
  o.measure.now = dev.clock_fn();
  o.decide.strategy = "random";
  o.decide.budget_seconds = 1;
  o.decide.confirm_pairs = 16;
  o.persist.store = "none";
  const TuneReport r = Tuner(dev, o).tune(*op, Key{{"n", 1}});
  EXPECT_EQ(r.stop_reason, "time budget");
  ASSERT_TRUE(r.tie_pairing) << r.reason;
  EXPECT_GE(r.tie_pairing->pairs, o.decide.paired.min_pairs) << r.tie_pairing->why;
  EXPECT_FALSE(r.tie_pairing->kept_candidate) << r.tie_pairing->why;
  EXPECT_EQ(r.winner_name, r.tie_pairing->rival);
  EXPECT_TRUE(r.confirmed) << r.reason;
  EXPECT_LE(dev.now(), o.decide.budget_seconds + 0.02);
}

TEST(TiePairing, TheBudgetReservesItsPairs) {
  budget_reserves_the_pairs(false);
}

TEST(TiePairing, TheBudgetReservesItsPairsWithTheirWarmupLaunches) {
  budget_reserves_the_pairs(true);
}

}  // namespace
}  // namespace tunekit
