// The final race (src/tuner/final_race.cpp, SearchContext::final_race): once the strategy ends,
// the best readings within the finalist band are timed again in racing's interleaved rounds,
// and the decision reads those fresh readings only — a window taken during a slow spell of the
// machine no longer loses its point the decision, a window of a fast spell no longer wins it.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "fakes/fake_device.hpp"
#include "fakes/report_lookup.hpp"
#include "fakes/simulated_space.hpp"
#include "tunekit/errors.hpp"
#include "tunekit/report.hpp"
#include "tunekit/tuner.hpp"

namespace tunekit {
namespace {

using fakes::FakeDevice;
using fakes::make_fake_op;
using testing::candidate_named;

TuneReport tune(FakeDevice& dev, const std::vector<std::string>& names, TunerOptions o = {}) {
  auto op = make_fake_op(dev, names, "def");
  o.persist.store = "none";
  TuneReport r;
  Tuner(dev, o).select(*op, Key{{"n", 4}}, &r);
  return r;
}

// "a" is the faster kernel (1.00 ms against b's 1.05 ms), but the machine was in a slow spell
// while the search timed it (1.2 ms until b first ran).
void slow_spell_over_a(FakeDevice& dev) {
  dev.behaviour["def"] = {.seconds = 5e-3};
  dev.behaviour["a"] = {.seconds = 1.2e-3};
  dev.behaviour["b"] = {.seconds = 1.05e-3};
  dev.behaviour["a"].hook = [&dev] {
    dev.behaviour["a"].seconds = dev.launches["b"] > 0 ? 1.0e-3 : 1.2e-3;
  };
}

TEST(FinalRace, AWindowTakenInASlowSpellNoLongerLosesItsPointTheDecision) {
  FakeDevice dev;
  slow_spell_over_a(dev);
  const TuneReport r = tune(dev, {"def", "a", "b"});
  EXPECT_EQ(r.winner_name, "a");
  EXPECT_EQ(r.final_race.finalists, 2u);  // the default, 5x behind, is outside the band
  EXPECT_EQ(r.final_race.search_pick, "b");
  EXPECT_TRUE(r.final_race.note.empty()) << r.final_race.note;
  const CandidateReport& a = candidate_named(r, "a");
  EXPECT_TRUE(a.finalist);
  EXPECT_NEAR(a.search_score, 1.2e-3, 1e-12);  // what the search read
  EXPECT_NEAR(a.score, 1.0e-3, 1e-12);         // what the race read
  EXPECT_FALSE(candidate_named(r, "def").finalist);
  ASSERT_TRUE(r.confidence);
  EXPECT_EQ(r.confidence->runner_up, "b");

  // Without the race the search's readings decide: the slow spell cost a its win.
  FakeDevice off;
  slow_spell_over_a(off);
  TunerOptions o;
  o.decide.finalists = 0;
  const TuneReport without = tune(off, {"def", "a", "b"}, o);
  EXPECT_EQ(without.winner_name, "b");
  EXPECT_EQ(without.final_race.finalists, 0u);
  EXPECT_EQ(without.final_race.note, "off (finalists 0)");
  EXPECT_FALSE(candidate_named(without, "a").finalist);
}

// After the race only its finalists take part: a point outside the band keeps a reading of
// other minutes, and the machine slowed down since — it must not win on that stale reading.
TEST(FinalRace, OnlyTheFinalistsDecideOnceTheRaceRan) {
  FakeDevice dev;
  dev.behaviour["def"] = {.seconds = 5e-3};
  dev.behaviour["c"] = {.seconds = 1.4e-3};  // timed last: the machine slows after it
  for (const char* name : {"a", "b"}) {
    const double base = name[0] == 'a' ? 1.0e-3 : 1.1e-3;
    dev.behaviour[name] = {.seconds = base};
    dev.behaviour[name].hook = [&dev, name, base] {
      dev.behaviour[name].seconds = dev.launches["c"] > 0 ? 1.5 * base : base;
    };
  }
  const TuneReport r = tune(dev, {"def", "a", "b", "c"});
  EXPECT_EQ(r.winner_name, "a");
  EXPECT_EQ(r.final_race.finalists, 2u);
  EXPECT_FALSE(candidate_named(r, "c").finalist);  // 1.4 ms: outside 25 % of a's 1.0
  EXPECT_NEAR(candidate_named(r, "a").score, 1.5e-3, 1e-12);
  EXPECT_LT(candidate_named(r, "c").score, candidate_named(r, "a").score);  // stale, and faster
  ASSERT_TRUE(r.confidence);
  EXPECT_EQ(r.confidence->runner_up, "b");
}

TEST(FinalRace, TheFinalistsAreTheBestReadingsWithinTheBandAtMostTheirCount) {
  auto run = [](int finalists, double band) {
    FakeDevice dev;
    dev.behaviour["def"] = {.seconds = 5e-3};
    const std::vector<std::string> names{"def", "p1", "p2", "p3", "p4", "p5"};
    const double seconds[] = {1.0e-3, 1.05e-3, 1.1e-3, 1.2e-3, 1.3e-3};
    for (int i = 0; i < 5; ++i) dev.behaviour[names[i + 1]] = {.seconds = seconds[i]};
    TunerOptions o;
    o.decide.finalists = finalists;
    o.decide.finalist_band = band;
    const TuneReport r = tune(dev, names, o);
    std::string raced;
    for (const CandidateReport& c : r.candidates)
      if (c.finalist) raced += c.name + " ";
    EXPECT_EQ(r.winner_name, "p1");
    return raced;
  };
  EXPECT_EQ(run(8, 0.25), "p1 p2 p3 p4 ");  // p5 (1.3x) is outside the band
  EXPECT_EQ(run(3, 0.25), "p1 p2 p3 ");     // the three best
  EXPECT_EQ(run(8, 0.5), "p1 p2 p3 p4 p5 ");
  EXPECT_EQ(run(8, 0.01), "");  // nobody within 1 % of p1: no race
}

// Racing's batches are timed side by side already: finalists that all come from one race are
// not raced again.
TEST(FinalRace, FinalistsRacedTogetherAlreadyAreNotRacedAgain) {
  FakeDevice dev;
  dev.behaviour["def"] = {.seconds = 5e-3};
  dev.behaviour["a"] = {.seconds = 1.0e-3};
  dev.behaviour["b"] = {.seconds = 1.05e-3};
  TunerOptions o;
  o.decide.schedule = "racing";
  const TuneReport r = tune(dev, {"def", "a", "b"}, o);
  EXPECT_EQ(r.winner_name, "a");
  EXPECT_EQ(r.final_race.finalists, 0u);
  EXPECT_EQ(r.final_race.note, "the finalists were raced together already");

  // The default races alone (first, as the floor): within the band it is raced with them.
  FakeDevice close;
  close.behaviour["def"] = {.seconds = 1.1e-3};
  close.behaviour["a"] = {.seconds = 1.0e-3};
  close.behaviour["b"] = {.seconds = 1.05e-3};
  const TuneReport again = tune(close, {"def", "a", "b"}, o);
  EXPECT_EQ(again.final_race.finalists, 3u);
}

// Under a budget the race's first rounds are held in the reserve after the pairings' floors,
// and it runs within the budget.
TEST(FinalRace, TheBudgetHoldsItsFirstRoundsAndItEndsWithinTheBudget) {
  auto run = [](int finalists) {
    fakes::SimulatedDevice dev;
    dev.build_seconds = 0.01;
    dev.seconds = [](const Config& c) {
      return 1e-3 * (1 + 0.05 * static_cast<double>(c["x"].as_int() + c["y"].as_int()));
    };
    auto op = fakes::make_space_op(dev, fakes::grid_space(4), Config{{"x", 3}, {"y", 3}});
    TunerOptions o;
    o.measure.now = dev.clock_fn();
    o.decide.finalists = finalists;
    o.decide.budget_seconds = 0.5;
    o.measure.build_threads = 1;
    const TuneReport r = Tuner(dev, o).tune(*op, Key{{"n", 1}});
    EXPECT_LE(dev.now(), o.decide.budget_seconds) << finalists;
    return r;
  };
  const TuneReport raced = run(8);
  const TuneReport plain = run(0);
  EXPECT_TRUE(raced.budget.cut);  // the budget, not the space, ended the search
  EXPECT_GT(raced.budget.reserve_seconds, plain.budget.reserve_seconds);
  EXPECT_GE(raced.final_race.finalists, 2u);
  EXPECT_EQ(raced.winner_name, "x=0,y=0");
}

TEST(FinalRace, OptionsOutOfRangeAreRefusedWithWhatToDo) {
  FakeDevice dev;
  TunerOptions o;
  o.decide.finalists = 1;
  try {
    Tuner t(dev, o);
    FAIL() << "finalists 1 accepted";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("at least 2"), std::string::npos) << e.what();
  }
  for (int n : {-1, 1001}) {
    o.decide.finalists = n;
    EXPECT_THROW(Tuner(dev, o), UsageError) << n;
  }
  o.decide.finalists = 8;
  for (double band : {-0.1, 11.0, std::nan("")}) {
    o.decide.finalist_band = band;
    EXPECT_THROW(Tuner(dev, o), UsageError) << band;
  }
}

}  // namespace
}  // namespace tunekit
