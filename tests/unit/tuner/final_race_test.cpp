// The final race (src/tuner/final_race.cpp, SearchContext::final_race): once the strategy ends,
// the best readings within the finalist band are timed again in racing's interleaved rounds,
// and the decision reads those fresh readings only — a window taken during a slow spell of the
// machine no longer loses its point the decision, a window of a fast spell no longer wins it.
#include <gtest/gtest.h>

#include <cmath>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "fakes/fake_device.hpp"
#include "fakes/fake_tune.hpp"
#include "fakes/report_lookup.hpp"
#include "fakes/simulated_space.hpp"
#include "fakes/temp_dir.hpp"
#include "tunekit/errors.hpp"
#include "tunekit/model_report.hpp"
#include "tunekit/report.hpp"
#include "tunekit/tuner.hpp"

namespace tunekit {
namespace {

using fakes::FakeDevice;
using testing::candidate_named;

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
  const TuneReport r = fakes::select_fake(dev, {"def", "a", "b"});
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
  const TuneReport without = fakes::select_fake(off, {"def", "a", "b"}, o);
  EXPECT_EQ(without.winner_name, "b");
  EXPECT_EQ(without.final_race.finalists, 0u);
  EXPECT_EQ(without.final_race.note, "off (finalists 0)");
  EXPECT_FALSE(candidate_named(without, "a").finalist);
}

// The library anchor races beside the finalists whatever its search reading: read first of
// all, during a slow spell (2 ms), it was outside the band; side by side it is the fastest.
TEST(FinalRace, TheLibraryAnchorRacesWhateverItsSearchReading) {
  auto run = [](int finalists) {
    FakeDevice dev;
    dev.behaviour["def"] = {.seconds = 5e-3};
    dev.behaviour["a"] = {.seconds = 1.0e-3};
    dev.behaviour["b"] = {.seconds = 1.05e-3};
    dev.behaviour["lib"] = {.seconds = 2e-3};
    dev.behaviour["lib"].hook = [&dev] {
      dev.behaviour["lib"].seconds = dev.launches["b"] > 0 ? 0.9e-3 : 2e-3;
    };
    TunerOptions o;
    o.decide.finalists = finalists;
    return fakes::select_fake(dev, {"def", "a", "b", "lib"}, o, {"lib"});
  };
  const TuneReport r = run(8);
  EXPECT_EQ(r.final_race.finalists, 3u);  // a and b within the band, the anchor past it
  const CandidateReport& lib = candidate_named(r, "lib");
  EXPECT_TRUE(lib.finalist);
  EXPECT_NEAR(lib.search_score, 2e-3, 1e-12);
  EXPECT_EQ(r.winner_name, "lib");
  EXPECT_NEAR(r.winner_score, 0.9e-3, 1e-12);  // what it reads, not the slow spell's reading
  EXPECT_FALSE(r.anchor_pairing);              // the pick is the library: nothing to pair

  // Without the race the anchor pairing still finds it (the library wins its ties), but the
  // report keeps the slow spell's reading as the winner's.
  const TuneReport without = run(0);
  EXPECT_EQ(without.winner_name, "lib");
  EXPECT_TRUE(without.anchor_pairing);
  EXPECT_NEAR(without.winner_score, 2e-3, 1e-12);
}

// A grid of 16 points of 1 ms (x=0,y=0) to 1.3 ms (the default, x=3,y=3), 0.05 ms a step,
// with the library anchor at x=3,y=2 reading `library` seconds, tuned under a 0.5 s budget
// whose decision share (30 ms) holds two finalists' first rounds of 1 ms kernels, not three.
struct BudgetedRaceWithALibrary {
  fakes::SimulatedDevice dev;
  TuneReport r;
  explicit BudgetedRaceWithALibrary(double library) {
    dev.build_seconds = 0.01;
    dev.seconds = [library](const Config& c) {
      if (c["x"].as_int() == 3 && c["y"].as_int() == 2) return library;
      return 1e-3 * (1 + 0.05 * static_cast<double>(c["x"].as_int() + c["y"].as_int()));
    };
    auto op = fakes::make_space_op(dev, fakes::grid_space(4), Config{{"x", 3}, {"y", 3}});
    op->anchors({Config{{"x", 3}, {"y", 2}}});
    TunerOptions o;
    o.measure.now = dev.clock_fn();
    o.decide.confirm_pairs = 0;
    o.decide.confirm_share = 0.06;
    o.decide.budget_seconds = 0.5;
    o.measure.build_threads = 1;
    r = Tuner(dev, o).tune(*op, Key{{"n", 1}});
  }
};

// A budget that fits few finalists races the best and the library: the anchor is second.
TEST(FinalRace, ABudgetThatFitsTwoFinalistsRacesTheBestAndTheLibrary) {
  const BudgetedRaceWithALibrary race(1.25e-3);  // at the band's edge: past the count
  const TuneReport& r = race.r;
  EXPECT_EQ(r.final_race.finalists, 2u) << r.final_race.note;
  EXPECT_TRUE(candidate_named(r, "x=0,y=0").finalist);
  EXPECT_TRUE(candidate_named(r, "x=3,y=2").finalist);
  EXPECT_EQ(r.winner_name, "x=0,y=0");
}

// A library slower than the best does not cost the race its finalists: where its first rounds
// do not fit (1.45 ms: the best and it do not, the best and the next at 1.05 ms do) it is
// passed over, and the best and the next race.
TEST(FinalRace, ASlowLibraryThatDoesNotFitIsPassedOver) {
  const BudgetedRaceWithALibrary race(1.45e-3);
  const TuneReport& r = race.r;
  EXPECT_EQ(r.final_race.finalists, 2u) << r.final_race.note;
  EXPECT_TRUE(candidate_named(r, "x=0,y=0").finalist);
  EXPECT_TRUE(candidate_named(r, "x=0,y=1").finalist);
  const CandidateReport& library = candidate_named(r, "x=3,y=2");
  EXPECT_TRUE(library.outcome.ok());  // measured, not cut: a reading the pairing judges
  EXPECT_FALSE(library.finalist);
  EXPECT_LE(race.dev.now(), 0.5);
}

// The race is kept with the stored decision, and `explain` says what it did.
TEST(FinalRace, TheStoreKeepsItAndExplainShowsIt) {
  testing::TempDir dir;
  FakeDevice dev;
  slow_spell_over_a(dev);
  auto op = fakes::make_fake_op(dev, {"def", "a", "b"}, "def");
  TunerOptions o;
  o.persist.store = "sqlite:" + (dir / "choices.db").string();
  Tuner tuner(dev, o);
  TuneReport r;
  ASSERT_EQ(tuner.select(*op, Key{{"n", 4}}, &r).source, Source::searched);
  ASSERT_EQ(r.winner_name, "a");
  const ModelReport m = tuner.explain(*op, Key{{"n", 4}});
  ASSERT_TRUE(m.measured_final_race);
  EXPECT_EQ(m.measured_final_race->finalists, 2u);
  EXPECT_EQ(m.measured_final_race->search_pick, "b");
  EXPECT_NE(to_json(m).find("\"measured_final_race\""), std::string::npos);
  std::ostringstream console;
  write_console(m, console);
  EXPECT_NE(console.str().find("final race: 2 finalists timed again side by side"),
            std::string::npos)
      << console.str();
  EXPECT_NE(console.str().find("the search's own readings picked b"), std::string::npos);
}

// After the race only its finalists take part: a point outside the band keeps a reading of
// other minutes, and the machine slowed down since — it must not win on that stale reading.
TEST(FinalRace, OnlyTheFinalistsDecideOnceTheRaceRan) {
  FakeDevice dev;
  dev.behaviour["def"] = {.seconds = 5e-3};
  // c is timed last; the machine slows by 1.5x once a runs again (the race): every kernel,
  // c included, is 1.5x slower from then on.
  bool slowed = false;
  dev.behaviour["c"] = {.seconds = 1.4e-3};
  dev.behaviour["c"].hook = [&dev, &slowed] {
    dev.behaviour["c"].seconds = slowed ? 2.1e-3 : 1.4e-3;
  };
  for (const char* name : {"a", "b"}) {
    const double base = name[0] == 'a' ? 1.0e-3 : 1.1e-3;
    dev.behaviour[name] = {.seconds = base};
    dev.behaviour[name].hook = [&dev, &slowed, name, base] {
      slowed |= dev.launches["c"] > 0;
      dev.behaviour[name].seconds = slowed ? 1.5 * base : base;
    };
  }
  const TuneReport r = fakes::select_fake(dev, {"def", "a", "b", "c"});
  EXPECT_EQ(r.winner_name, "a");
  EXPECT_EQ(r.final_race.finalists, 2u);
  EXPECT_FALSE(candidate_named(r, "c").finalist);  // 1.4 ms: outside 25 % of a's 1.0
  EXPECT_NEAR(candidate_named(r, "a").score, 1.5e-3, 1e-12);
  EXPECT_LT(candidate_named(r, "c").score, candidate_named(r, "a").score);  // stale, and faster
  ASSERT_TRUE(r.confidence);
  EXPECT_EQ(r.confidence->runner_up, "b");
}

// A finalist whose kernel fails in the race (a launch that throws now) is out, with that
// outcome; the others decide. One that only could not be timed cleanly keeps its search reading.
TEST(FinalRace, AFinalistThatFailsInTheRaceIsOutAndTheOthersDecide) {
  FakeDevice dev;
  dev.behaviour["def"] = {.seconds = 5e-3};
  dev.behaviour["a"] = {.seconds = 1.0e-3};
  dev.behaviour["b"] = {.seconds = 1.05e-3};
  dev.behaviour["a"].hook = [&dev] {  // b is timed after a: a's next launch is the race's
    if (dev.launches["b"] > 0) throw std::runtime_error("fails from its second window on");
  };
  const TuneReport r = fakes::select_fake(dev, {"def", "a", "b"});
  EXPECT_EQ(r.winner_name, "b");
  EXPECT_EQ(candidate_named(r, "a").outcome.status, Status::launch_failed);
  EXPECT_EQ(r.final_race.finalists, 1u);
  EXPECT_TRUE(candidate_named(r, "b").finalist);
}

// The default wins its ties: within the band it races even when the count is full.
TEST(FinalRace, TheDefaultWithinTheBandRacesPastTheCount) {
  FakeDevice dev;
  dev.behaviour["def"] = {.seconds = 1.1e-3};
  dev.behaviour["a"] = {.seconds = 1.0e-3};
  dev.behaviour["b"] = {.seconds = 1.05e-3};
  dev.behaviour["c"] = {.seconds = 1.06e-3};
  TunerOptions o;
  o.decide.finalists = 2;
  const TuneReport r = fakes::select_fake(dev, {"def", "a", "b", "c"}, o);
  EXPECT_EQ(r.final_race.finalists, 3u);
  EXPECT_TRUE(candidate_named(r, "def").finalist);
  EXPECT_FALSE(candidate_named(r, "c").finalist);
}

// A race the budget cannot hold (its first rounds do not fit what is left) is not started, or
// stopped before two finalists had a window: the search's readings decide, the report says why.
TEST(FinalRace, ARaceTheBudgetStopsLeavesTheSearchReadingsToDecide) {
  auto run = [](int finalists, double& ended) {
    fakes::SimulatedDevice dev;
    dev.build_seconds = 0.01;
    dev.seconds = [](const Config& c) {
      return 0.05 * (1 + 0.01 * static_cast<double>(c["x"].as_int() + c["y"].as_int()));
    };
    auto op = fakes::make_space_op(dev, fakes::grid_space(4), Config{{"x", 3}, {"y", 3}});
    TunerOptions o;
    o.measure.now = dev.clock_fn();
    o.decide.confirm_pairs = 0;
    o.decide.finalists = finalists;
    o.decide.budget_seconds = 5;
    // The decision's share of the budget (0.25 s) holds less than two finalists' first rounds
    // (2 x 8 x 50 ms): nothing is held for the race.
    o.decide.confirm_share = 0.05;
    o.measure.build_threads = 1;
    const TuneReport r = Tuner(dev, o).tune(*op, Key{{"n", 1}});
    ended = dev.now();
    return r;
  };
  double raced_end = 0, plain_end = 0;
  const TuneReport r = run(8, raced_end);
  const TuneReport plain = run(0, plain_end);
  EXPECT_EQ(r.final_race.finalists, 0u);
  EXPECT_NE(r.final_race.note.find("budget"), std::string::npos) << r.final_race.note;
  for (const CandidateReport& c : r.candidates) EXPECT_FALSE(c.finalist) << c.name;
  EXPECT_EQ(r.winner_name, r.final_race.search_pick);
  // It cost nothing: the search and its end are those of a search without a race.
  EXPECT_EQ(r.winner_name, plain.winner_name);
  EXPECT_EQ(r.candidates.size(), plain.candidates.size());
  EXPECT_DOUBLE_EQ(raced_end, plain_end);
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
    const TuneReport r = fakes::select_fake(dev, names, o);
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
  const TuneReport r = fakes::select_fake(dev, {"def", "a", "b"}, o);
  EXPECT_EQ(r.winner_name, "a");
  EXPECT_EQ(r.final_race.finalists, 0u);
  EXPECT_EQ(r.final_race.note, "the finalists were raced together already");

  // A library anchor (raced alone, right after the default) does not start a race of its own:
  // the anchor pairing judges it.
  FakeDevice library;
  library.behaviour["def"] = {.seconds = 5e-3};
  library.behaviour["a"] = {.seconds = 1.0e-3};
  library.behaviour["b"] = {.seconds = 1.05e-3};
  library.behaviour["lib"] = {.seconds = 1.5e-3};
  const TuneReport anchored = fakes::select_fake(library, {"def", "a", "b", "lib"}, o, {"lib"});
  EXPECT_EQ(anchored.winner_name, "a");
  EXPECT_EQ(anchored.final_race.finalists, 0u);
  EXPECT_EQ(anchored.final_race.note, "the finalists were raced together already");
  EXPECT_TRUE(anchored.anchor_pairing);

  // The default races alone (first, as the floor): within the band it is raced with them.
  FakeDevice close;
  close.behaviour["def"] = {.seconds = 1.1e-3};
  close.behaviour["a"] = {.seconds = 1.0e-3};
  close.behaviour["b"] = {.seconds = 1.05e-3};
  const TuneReport again = fakes::select_fake(close, {"def", "a", "b"}, o);
  EXPECT_EQ(again.final_race.finalists, 3u);

  // Under a budget nothing is held for a race that will not run (paired confirmation off:
  // the reserve is the race's alone, over a build of nothing), and a full schedule holds it.
  FakeDevice held;
  held.behaviour["def"] = {.seconds = 5e-3};
  held.behaviour["a"] = {.seconds = 1.0e-3};
  held.behaviour["b"] = {.seconds = 1.05e-3};
  o.decide.budget_seconds = 100;
  o.decide.confirm_pairs = 0;
  EXPECT_LT(fakes::select_fake(held, {"def", "a", "b"}, o).budget.reserve_seconds, 1e-3);
  o.decide.schedule = "full";
  EXPECT_GT(fakes::select_fake(held, {"def", "a", "b"}, o).budget.reserve_seconds,
            16e-3);  // 2 x 8 x 1 ms
}

// A batch of host code (no build step, a device whose trials build nothing) is raced as one:
// the best two, proposed nine points apart (they would sit in two rounds of eight), race side by
// side in the search, and nothing is raced again. An op that compiles keeps its rounds (a budget
// is not spent on builds it cannot time) even where every build so far was free (a cache hit),
// and the finalists of two rounds race once more.
TEST(FinalRace, ABatchOfHostCodeIsRacedAsOneSoItsFinalistsAreNotRacedAgain) {
  auto tune = [](bool compiles) {
    fakes::SimulatedDevice dev;
    dev.builds_beyond_op = false;
    dev.seconds = [](const Config& c) {
      const std::int64_t x = c["x"].as_int(), y = c["y"].as_int();
      if (x == 0 && y == 1) return 1.0e-3;   // the second point
      if (x == 2 && y == 2) return 1.05e-3;  // nine points after it
      return x == 3 && y == 3 ? 5e-3 : 2e-3;
    };
    const Config def{{"x", 3}, {"y", 3}};
    auto op = compiles ? fakes::make_space_op(dev, fakes::grid_space(4), def)
                       : fakes::make_host_space_op(dev, fakes::grid_space(4), def);
    TunerOptions o;
    o.measure.now = dev.clock_fn();
    o.decide.schedule = "racing";
    o.decide.strategy = "exhaustive";
    o.decide.confirm_pairs = 0;
    o.measure.build_threads = 1;
    return Tuner(dev, o).tune(*op, Key{{"n", 1}});
  };
  const TuneReport host = tune(false);
  EXPECT_EQ(host.winner_name, "x=0,y=1");
  EXPECT_EQ(host.final_race.finalists, 0u);
  EXPECT_EQ(host.final_race.note, "the finalists were raced together already");

  const TuneReport compiled = tune(true);
  EXPECT_EQ(compiled.winner_name, "x=0,y=1");
  EXPECT_EQ(compiled.final_race.finalists, 2u) << compiled.final_race.note;
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
