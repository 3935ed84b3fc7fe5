// The tuner's search (src/tuner/search.cpp, tuning_evaluator.cpp, compile_pass.cpp,
// search_budget.cpp, the schedules) on a simulated device: strategies over a space op, the
// evaluation and wall-clock budgets, the compile pass and memory discipline.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <set>

#include "fakes/simulated_space.hpp"
#include "fakes/temp_dir.hpp"
#include "tunekit/errors.hpp"
#include "tunekit/strategy.hpp"
#include "tunekit/tuner.hpp"

namespace tunekit {
namespace {

using fakes::grid_space;
using fakes::make_space_op;
using fakes::SimulatedDevice;

const Key kKey{{"n", 1}};

TunerOptions simulated(SimulatedDevice& dev) {
  TunerOptions o;
  o.measure.now = dev.clock_fn();
  o.decide.confirm_pairs = 0;
  return o;
}

const CandidateReport* named(const TuneReport& r, const std::string& name) {
  for (const CandidateReport& c : r.candidates)
    if (c.name == name) return &c;
  return nullptr;
}

std::size_t timed_count(const TuneReport& r) {
  std::size_t n = 0;
  for (const CandidateReport& c : r.candidates) n += c.timing.has_value();
  return n;
}

TEST(Search, RandomUnderAnEvaluationBudgetBuildsAndMeasuresAtMostBudgetPlusTheDefault) {
  SimulatedDevice dev;
  dev.seconds = [](const Config& c) {
    return 1e-4 * (1 + static_cast<double>(c["x"].as_int() + c["y"].as_int()));
  };
  auto op = make_space_op(dev, grid_space(100), Config{{"x", 50}, {"y", 50}});
  ASSERT_EQ(op->size(), 10000u);
  TunerOptions o = simulated(dev);
  o.decide.strategy = "random";
  o.decide.budget_evaluations = 50;
  o.decide.seed = 11;
  const TuneReport r = Tuner(dev, o).tune(*op, kKey);
  EXPECT_LE(dev.builds.size(), 51u);
  for (const auto& [config, count] : dev.builds) EXPECT_EQ(count, 1) << config << " built twice";
  EXPECT_LE(timed_count(r), 51u);
  EXPECT_EQ(r.candidates.size(), 51u);  // the report lists what was touched, not 10,000 points
  EXPECT_EQ(r.candidates.front().name, "x=50,y=50");  // the default first
  EXPECT_EQ(r.space_size, 10000u);
  EXPECT_EQ(r.stop_reason, "evaluation budget");
  EXPECT_TRUE(r.budget.cut);
  EXPECT_EQ(r.strategy, "random");
  EXPECT_EQ(r.seed, 11u);
  EXPECT_EQ(dev.builds_in_window, 0);
}

TEST(Search, AnchorsAreMeasuredRightAfterTheDefaultWhateverTheStrategy) {
  SimulatedDevice dev;
  dev.seconds = [](const Config& c) { return c["x"].as_int() == 99 ? 1e-5 : 1e-3; };
  auto op = make_space_op(dev, grid_space(100), Config{{"x", 0}, {"y", 0}});
  op->anchors({Config{{"x", 99}, {"y", 5}}, Config{{"x", 7}, {"y", 7}}});
  TunerOptions o = simulated(dev);
  o.decide.strategy = "random";
  o.decide.budget_evaluations = 2;  // the anchors do not count, like the default
  const TuneReport r = Tuner(dev, o).tune(*op, kKey);
  ASSERT_EQ(r.candidates.size(), 5u);
  EXPECT_EQ(r.candidates[0].name, "x=0,y=0");
  EXPECT_EQ(r.candidates[1].name, "x=99,y=5");
  EXPECT_EQ(r.candidates[2].name, "x=7,y=7");
  EXPECT_EQ(r.winner_name, "x=99,y=5");  // the library wins where it is fastest

  auto bad = make_space_op(dev, grid_space(3), Config{{"x", 0}, {"y", 0}});
  bad->anchors({Config{{"x", 5}, {"y", 0}}});
  EXPECT_THROW(Tuner(dev, simulated(dev)).tune(*bad, kKey), UsageError);
}

TEST(Search, AnAttemptThatWouldOverrunTheBudgetIsNotStarted) {
  SimulatedDevice dev;
  dev.build_seconds = 1.0;  // each build: 1 s of the budget clock; launches 1 ms
  auto op = make_space_op(dev, grid_space(4), Config{{"x", 0}, {"y", 0}});
  TunerOptions o = simulated(dev);
  o.decide.budget_seconds = 5;
  o.measure.build_threads = 1;
  o.decide.finalists = 0;  // the reserve is the rebuild only (no final race held)
  const TuneReport r = Tuner(dev, o).tune(*op, kKey);
  // The default builds at 0 and is timed (~26 ms); the next batch is built before it is timed:
  // at 1.03 and 2.03 s; a third would leave no reserve for the winner's rebuild (3.03 + 2 > 5).
  EXPECT_EQ(dev.builds.size(), 3u);
  EXPECT_LE(dev.now(), o.decide.budget_seconds);
  EXPECT_TRUE(r.budget.cut);
  EXPECT_EQ(r.stop_reason, "time budget");
  EXPECT_GE(r.budget.not_started, 1u);
  EXPECT_DOUBLE_EQ(r.budget.reserve_seconds, 1.0);
  EXPECT_FALSE(r.budget.stopped.empty());
  std::size_t stopped = 0;
  for (const CandidateReport& c : r.candidates)
    stopped += c.outcome.status == Status::stopped && !c.timing;
  EXPECT_GE(stopped, 1u);
}

// A racing tune of host code (no build step, trials that build nothing) over a 16 x 16 grid, the
// default x=0,y=0, `random` proposing all 255 other points at once, under a time budget.
struct RacingHostCode {
  SimulatedDevice dev;
  TuneReport r;
  RacingHostCode(std::function<double(const Config&)> seconds, double budget) {
    dev.builds_beyond_op = false;
    dev.seconds = std::move(seconds);
    auto op = fakes::make_host_space_op(dev, grid_space(16), Config{{"x", 0}, {"y", 0}});
    TunerOptions o = simulated(dev);
    o.decide.strategy = "random";
    o.decide.schedule = "racing";
    o.decide.budget_seconds = budget;
    o.measure.build_threads = 1;  // rounds of 8 whatever the host's threads
    r = Tuner(dev, o).tune(*op, kKey);
  }
};

// Host code races a whole batch at once where no time budget binds; under one, racing admits
// (prepares, validates) every point of a round before it times any, so the batch goes in rounds
// and each admission starts only while the budget admits it: 255 points are not validated past
// the budget before any is timed.
TEST(Search, RacingAdmitsTheBatchOfHostCodeOnlyWhileTheBudgetAllows) {
  const RacingHostCode even([](const Config&) { return 5e-3; }, 1);
  EXPECT_LE(even.dev.now(), 1);
  EXPECT_GE(timed_count(even.r), 5u);
  EXPECT_TRUE(even.r.budget.cut);
  EXPECT_GE(even.r.budget.not_started, 100u);

  // Within a round too: after a 5 ms default, eight validations of 100 ms kernels would overrun
  // a 0.5 s budget.
  const RacingHostCode slow(
      [](const Config& c) { return c["x"].as_int() == 0 && c["y"].as_int() == 0 ? 5e-3 : 0.1; },
      0.5);
  // An admission is projected at the mean so far (the default's: 5 ms) and not cut once begun:
  // at most one 100 ms validation ends past the line (all eight would end at 0.92 s). And a
  // point is admitted only while the first windows of those admitted before it fit too, so
  // what was validated is timed (validating up to the line would leave none of them a window).
  EXPECT_LE(slow.dev.now(), 0.5 + 0.1);
  EXPECT_TRUE(slow.r.budget.cut);
  EXPECT_GE(timed_count(slow.r), 2u);
}

TEST(Search, ALargeBatchIsBuiltAndTimedInRoundsSoTheBudgetIsNotSpentOnBuildsAlone) {
  SimulatedDevice dev;
  dev.build_seconds = 0.5;
  auto op = make_space_op(dev, grid_space(100), Config{{"x", 0}, {"y", 0}});
  TunerOptions o = simulated(dev);
  o.decide.strategy = "random";  // proposes 256 points at once
  o.decide.budget_seconds = 10;
  o.measure.build_threads = 1;
  const TuneReport r = Tuner(dev, o).tune(*op, kKey);
  // Building all 256 first would spend the budget and time nothing but the default.
  EXPECT_GE(timed_count(r), 8u);
  EXPECT_LT(dev.builds.size(), 30u);
  std::size_t never_timed = 0;
  for (const CandidateReport& c : r.candidates) {
    if (dev.builds.count(c.name) && !c.timing) {
      ++never_timed;
      EXPECT_EQ(c.outcome.status, Status::stopped) << c.name << ": " << c.outcome.message;
    }
  }
  EXPECT_EQ(r.budget.not_started, never_timed + (r.candidates.size() - dev.builds.size()));
  for (const CandidateReport& c : r.candidates) EXPECT_NE(c.outcome.status, Status::skipped);
}

TEST(Search, ABudgetStopsARunningWindowWithinOneBatch) {
  SimulatedDevice dev;
  dev.seconds = [](const Config& c) {
    return c["x"].as_int() == 0 && c["y"].as_int() == 0 ? 1e-3 : 0.9e-3;
  };
  auto op = make_space_op(dev, grid_space(2), Config{{"x", 0}, {"y", 0}});
  TunerOptions o = simulated(dev);
  o.measure.timing.repeats_floor = 1000;  // long windows: ~1 s for the default
  o.measure.timing.max_runs = 1000;
  o.decide.budget_seconds = 1.5;
  const TuneReport r = Tuner(dev, o).tune(*op, kKey);
  const CandidateReport* def = named(r, "x=0,y=0");
  ASSERT_NE(def, nullptr);
  EXPECT_TRUE(def->outcome.ok()) << def->outcome.message;  // the floor: measured in full
  EXPECT_EQ(def->timing->samples.size(), 1000u);
  const CandidateReport* cut = named(r, "x=0,y=1");  // the next in enumeration order
  ASSERT_NE(cut, nullptr);
  EXPECT_EQ(cut->outcome.status, Status::stopped) << cut->outcome.message;
  ASSERT_TRUE(cut->timing.has_value());
  EXPECT_GT(cut->timing->samples.size(), 100u);  // it ran until the budget was spent
  const CandidateReport* later = named(r, "x=1,y=0");
  ASSERT_NE(later, nullptr);
  EXPECT_EQ(later->outcome.status, Status::stopped);  // not started
  EXPECT_FALSE(later->timing.has_value());
  // Stopped before its next batch once the budget was spent: at most one launch past it.
  EXPECT_LE(dev.now(), o.decide.budget_seconds + 0.9e-3 + 1e-12);
  EXPECT_GT(dev.now(), o.decide.budget_seconds - 0.9e-3);
  EXPECT_EQ(r.winner_name, "x=0,y=0");  // a stopped window is never ranked
}

TEST(Search, ThePairedConfirmationFitsInTheBudgetOrStepsAside) {
  SimulatedDevice dev;
  dev.seconds = [](const Config& c) { return c["x"].as_int() == 0 ? 1e-3 : 0.5e-3; };
  Space two;
  two.param("x", {0, 1});
  auto pair = make_space_op(dev, two, Config{{"x", 0}});
  TunerOptions o = simulated(dev);
  o.decide.confirm_pairs = 16;
  o.decide.budget_seconds = 0.06;  // the default (~27 ms) and x=1 (~14 ms) leave room for 2 pairs
  const TuneReport r = Tuner(dev, o).tune(*pair, kKey);
  EXPECT_EQ(r.winner_name, "x=1");  // measured, unconfirmed
  EXPECT_FALSE(r.confirmed);
  EXPECT_NE(r.reason.find("no time for the paired confirmation"), std::string::npos) << r.reason;
  // Past the budget by at most the last window's checked calls (5 launches of x=1).
  EXPECT_LE(dev.now(), o.decide.budget_seconds + o.measure.check_calls * 0.5e-3 + 1e-12);
  // With time enough the confirmation runs (and keeps the 2x faster winner).
  SimulatedDevice roomy;
  roomy.seconds = dev.seconds;
  auto again = make_space_op(roomy, two, Config{{"x", 0}});
  TunerOptions wide = simulated(roomy);
  wide.decide.confirm_pairs = 16;
  wide.decide.budget_seconds = 10;
  const TuneReport c = Tuner(roomy, wide).tune(*again, kKey);
  EXPECT_TRUE(c.confirmed) << c.reason;
  EXPECT_EQ(c.paired_pairs, 10);  // a noiseless 2x gap: the fewest pairs
}

// A search with more points than its budget can time used to leave no time for the paired
// confirmation ("no time for the paired confirmation"): the budget now holds its floor back.
TEST(Search, TheBudgetHoldsTimeBackForTheDecisionsPairs) {
  SimulatedDevice dev;
  dev.seconds = [](const Config& c) {
    const bool def = c["x"].as_int() == 0 && c["y"].as_int() == 0;
    return def ? 1e-3 : 0.5e-3 + 1e-6 * static_cast<double>(c["x"].as_int());
  };
  auto op = make_space_op(dev, grid_space(100), Config{{"x", 0}, {"y", 0}});
  TunerOptions o = simulated(dev);
  o.decide.strategy = "random";
  o.decide.budget_seconds = 1;
  o.decide.confirm_pairs = 16;
  const TuneReport r = Tuner(dev, o).tune(*op, kKey);
  EXPECT_EQ(r.stop_reason, "time budget");
  EXPECT_TRUE(r.confirmed) << r.reason;
  EXPECT_GE(r.paired_pairs, o.decide.paired.min_pairs);
  EXPECT_GT(r.budget.reserve_seconds, 0);
  // Past the budget by at most a window's last batch and its checked calls.
  EXPECT_LE(dev.now(), o.decide.budget_seconds + 0.02);
}

// A default so slow that even the fewest pairs of its confirmation cannot fit in the
// decision's share of the budget: holding time back for pairs that would not run only cut the
// search short.
TEST(Search, AConfirmationThatCannotFitInItsShareIsNotHeldBack) {
  SimulatedDevice dev;
  dev.seconds = [](const Config& c) {
    const bool def = c["x"].as_int() == 0 && c["y"].as_int() == 0;
    return def ? 0.05 : 0.5e-3 + 1e-6 * static_cast<double>(c["x"].as_int());
  };
  auto op = make_space_op(dev, grid_space(100), Config{{"x", 0}, {"y", 0}});
  TunerOptions o = simulated(dev);
  o.decide.strategy = "random";
  o.decide.budget_seconds = 4;
  o.decide.confirm_pairs = 16;
  o.decide.confirm_share = 0.05;  // 0.2 s; the fewest pairs (8) against the default: 0.4 s
  const TuneReport r = Tuner(dev, o).tune(*op, kKey);
  EXPECT_EQ(r.stop_reason, "time budget");
  EXPECT_LT(r.budget.reserve_seconds, 0.1);
  EXPECT_NE(r.winner_name, "x=0,y=0");
  EXPECT_FALSE(r.confirmed);
  EXPECT_NE(r.reason.find("no time for the paired confirmation"), std::string::npos) << r.reason;
}

TEST(Search, TheDefaultIsMeasuredWhateverTheBudgetAndACutSearchIsStoredAsSuch) {
  testing::TempDir dir("search-budget");
  SimulatedDevice dev;
  dev.seconds = [](const Config& c) { return c["y"].as_int() == 1 ? 0.5e-3 : 1e-3; };
  auto op = make_space_op(dev, grid_space(3), Config{{"x", 0}, {"y", 0}});
  TunerOptions o = simulated(dev);
  o.persist.store = "sqlite:" + (dir.path() / "choices.db").string();
  o.decide.budget_seconds = 0.01;  // less than the default's own window (~26 ms)
  {
    Tuner tuner(dev, o);
    TuneReport r;
    EXPECT_EQ(tuner.select(*op, kKey, &r).source, Source::searched);
    ASSERT_FALSE(r.candidates.empty());
    EXPECT_TRUE(r.candidates.front().outcome.ok());  // the default, in full
    EXPECT_EQ(timed_count(r), 1u);
    const auto entries = tuner.store()->list();
    ASSERT_EQ(entries.size(), 1u);
    EXPECT_TRUE(entries[0].budget_cut);
  }
  {
    Tuner budgeted(dev, o);  // a cut search serves a budgeted one
    EXPECT_EQ(budgeted.select(*op, kKey).source, Source::cache_replay);
  }
  TunerOptions full = o;
  full.decide.budget_seconds = 0;
  {
    Tuner unbudgeted(dev, full);  // and is replaced by a search without a budget
    TuneReport r;
    EXPECT_EQ(unbudgeted.select(*op, kKey, &r).source, Source::searched);
    EXPECT_EQ(r.candidates.size(), 9u);
    EXPECT_EQ(r.winner_name.substr(r.winner_name.size() - 3), "y=1");
    const auto entries = unbudgeted.store()->list();
    ASSERT_EQ(entries.size(), 1u);
    EXPECT_FALSE(entries[0].budget_cut);
  }
  Tuner again(dev, full);
  EXPECT_EQ(again.select(*op, kKey).source, Source::cache_replay);
}

TEST(Search, ABudgetSpentBeforeTheDefaultIsMeasuredShipsTheDefaultAndStoresNothing) {
  testing::TempDir dir("search-floor");
  SimulatedDevice dev;
  dev.build_seconds = 2.0;  // the default's own build overruns the whole budget
  auto op = make_space_op(dev, grid_space(3), Config{{"x", 1}, {"y", 1}});
  TunerOptions o = simulated(dev);
  o.persist.store = "sqlite:" + (dir.path() / "choices.db").string();
  o.decide.budget_seconds = 1.0;
  Tuner tuner(dev, o);
  TuneReport r;
  const Choice c = tuner.select(*op, kKey, &r);
  EXPECT_EQ(c.source, Source::budget_floor_unmeasured);
  EXPECT_EQ(c.index, op->default_index(kKey));
  EXPECT_EQ(r.winner_name, "x=1,y=1");
  EXPECT_EQ(timed_count(r), 0u);
  EXPECT_TRUE(tuner.store()->list().empty());
}

TEST(Search, TheCompilePassBuildsBeforeAnyWindowAndNeverTwice) {
  SimulatedDevice dev;
  dev.build_seconds = 0.1;  // 100 ms per build on the clock the windows read
  auto op = make_space_op(dev, grid_space(4), Config{{"x", 0}, {"y", 0}});
  TunerOptions o = simulated(dev);
  o.measure.build_threads =
      1;  // one simulated timeline: overlapping builds would read each other's time
  o.decide.confirm_pairs = 16;  // the winner and the default are prepared again: no rebuild
  dev.seconds = [](const Config& c) { return c["x"].as_int() == 3 ? 0.5e-3 : 1e-3; };
  const TuneReport r = Tuner(dev, o).tune(*op, kKey);
  EXPECT_EQ(dev.builds_in_window, 0);
  EXPECT_EQ(dev.builds.size(), 16u);
  for (const auto& [config, count] : dev.builds) EXPECT_EQ(count, 1) << config;
  for (const CandidateReport& c : r.candidates) {
    EXPECT_NEAR(c.compile_seconds, 0.1, 1e-9) << c.name;
    if (c.timing) {
      EXPECT_LT(c.timing->median, 0.05) << c.name << ": a build inside a window";
    }
  }
  EXPECT_GE(r.seconds_compiling, 1.6 - 1e-9);
}

TEST(Search, BuildsOfABatchOverlapOnTwoThreads) {
  SimulatedDevice dev;
  dev.build_seconds = 0.1;
  dev.sleep_builds = true;  // real time: four builds on two threads
  auto op = make_space_op(dev, grid_space(2), Config{{"x", 0}, {"y", 0}});
  TunerOptions o = simulated(dev);
  o.measure.now = nullptr;  // real time: builds are measured (and projected) as they really take
  o.measure.build_threads = 2;
  Tuner(dev, o).tune(*op, kKey);
  EXPECT_EQ(dev.builds.size(), 4u);
  EXPECT_GE(dev.max_building.load(), 2);
}

TEST(Search, ABuildFailureIsCompileFailedWithItsLogAndNeverTimed) {
  SimulatedDevice dev;
  dev.build_outcome = [](const Config& c) -> Outcome {
    if (c["x"].as_int() == 1)
      return {Status::compile_failed, "<source>:3:7: error: use of undeclared identifier 'VW'"};
    return Outcome::success();
  };
  auto op = make_space_op(dev, grid_space(2), Config{{"x", 0}, {"y", 0}});
  const TuneReport r = Tuner(dev, simulated(dev)).tune(*op, kKey);
  for (const char* name : {"x=1,y=0", "x=1,y=1"}) {
    const CandidateReport* c = named(r, name);
    ASSERT_NE(c, nullptr) << name;
    EXPECT_EQ(c->outcome.status, Status::compile_failed);
    EXPECT_NE(c->outcome.message.find("undeclared identifier 'VW'"), std::string::npos);
    EXPECT_FALSE(c->timing.has_value());
    EXPECT_EQ(std::count(dev.timed.begin(), dev.timed.end(), std::string(name)), 0);
  }
}

TEST(Search, AtMostOneCandidatesBuffersAreAliveWhileTiming) {
  for (const char* schedule : {"full", "racing"}) {
    SimulatedDevice dev;
    dev.seconds = [](const Config& c) {
      return 1e-3 * (1 + 0.1 * static_cast<double>(c["x"].as_int() * 3 + c["y"].as_int()));
    };
    auto op = make_space_op(dev, grid_space(3), Config{{"x", 0}, {"y", 0}});
    TunerOptions o = simulated(dev);
    o.decide.schedule = schedule;
    o.decide.confirm_pairs = 8;
    const TuneReport r = Tuner(dev, o).tune(*op, kKey);
    EXPECT_EQ(dev.max_live, 1) << schedule;
    EXPECT_EQ(dev.live, 0) << schedule;
    EXPECT_EQ(r.schedule, schedule);
  }
}

// The bowl_seconds of tests/unit/search/strategy_test.cpp (minimum 1.0 at (13, 7, 3)), as seconds.
Space bowl_space() {
  Space s;
  std::vector<Value> v20, v10;
  for (int i = 0; i < 20; ++i) v20.push_back(i);
  for (int i = 0; i < 10; ++i) v10.push_back(i);
  s.param("a", v20).param("b", v20).param("c", v10).constraint("a + b >= 4");
  return s;
}

double bowl_seconds(const Config& c) {
  const double a = static_cast<double>(c["a"].as_int()) - 13.0;
  const double b = static_cast<double>(c["b"].as_int()) - 7.0;
  const double d = static_cast<double>(c["c"].as_int()) - 3.0;
  return 1e-4 * (1.0 + a * a + 2 * b * b + 0.5 * d * d);
}

TEST(Search, EveryStrategyFindsTheOptimumThroughTheLiveTunerWithinItsPromisedBudget) {
  // strategy_test.cpp promises: within 300 evaluations, two steps of the minimum (value <= 3).
  for (const char* name : {"anneal", "ils", "genetic", "bayes", "bandit", "random"}) {
    SimulatedDevice dev;
    dev.seconds = bowl_seconds;
    auto op = make_space_op(dev, bowl_space(), Config{{"a", 0}, {"b", 4}, {"c", 0}});
    TunerOptions o = simulated(dev);
    o.decide.strategy = name;
    o.decide.budget_evaluations = 300;
    o.decide.seed = 2;
    const TuneReport r = Tuner(dev, o).tune(*op, kKey);
    const double best = r.winner_score;
    const double limit = std::string(name) == "random" ? 6e-4 : 3e-4;
    EXPECT_LE(best, limit * 1.001) << name << " picked " << r.winner_name;
    EXPECT_LE(r.candidates.size(), 301u) << name;
  }
  // exhaustive measures the whole space and finds the minimum itself.
  SimulatedDevice dev;
  dev.seconds = bowl_seconds;
  auto op = make_space_op(dev, bowl_space(), Config{{"a", 0}, {"b", 4}, {"c", 0}});
  TunerOptions o = simulated(dev);
  o.decide.strategy = "exhaustive";
  const TuneReport r = Tuner(dev, o).tune(*op, kKey);
  EXPECT_EQ(r.winner_name, "a=13,b=7,c=3");
  EXPECT_EQ(r.candidates.size(), op->size());
  EXPECT_FALSE(r.budget.cut);
}

TEST(Search, AutoMeasuresASmallSpaceInFullAndCapsALargeOne) {
  SimulatedDevice dev;
  dev.seconds = bowl_seconds;
  auto big = make_space_op(dev, bowl_space(), Config{{"a", 0}, {"b", 4}, {"c", 0}});
  ASSERT_GT(big->size(), 256u);
  TunerOptions o = simulated(dev);
  ASSERT_EQ(o.decide.strategy, "auto");  // the default
  const TuneReport r = Tuner(dev, o).tune(*big, kKey);
  EXPECT_EQ(r.candidates.size(), 200u);  // the cap, the default included
  EXPECT_TRUE(r.budget.cut);             // partial: replaced by an unrestricted search
  EXPECT_LE(r.winner_score, 3e-4 * 1.001) << r.winner_name;
  o.decide.budget_evaluations = 50;  // an explicit budget replaces the cap
  const TuneReport budgeted = Tuner(dev, o).tune(*big, kKey);
  EXPECT_EQ(budgeted.candidates.size(), 51u);
  // A time budget lifts the cap: the search runs until the budget (or the space) ends it.
  TunerOptions timed = simulated(dev);
  const double capped_start = dev.now();
  (void)Tuner(dev, timed).tune(*big, kKey);
  timed.decide.budget_seconds = 3 * (dev.now() - capped_start);
  const TuneReport long_run = Tuner(dev, timed).tune(*big, kKey);
  EXPECT_GT(long_run.candidates.size(), 300u) << long_run.stop_reason;
  EXPECT_EQ(long_run.stop_reason, "time budget");
  auto small = make_space_op(dev, grid_space(4), Config{{"x", 0}, {"y", 0}});
  const TuneReport all = Tuner(dev, simulated(dev)).tune(*small, kKey);
  EXPECT_EQ(all.candidates.size(), 16u);
  EXPECT_FALSE(all.budget.cut);
  TunerOptions bad = simulated(dev);
  for (const char* spec : {"auto:inner=auto", "auto:inner=nope", "auto:cap=0", "auto:small=-1"}) {
    bad.decide.strategy = spec;
    EXPECT_THROW(Tuner(dev, bad), UsageError) << spec;
  }
}

TEST(Search, BadSearchOptionsAreUsageErrorsThatSayWhatToWrite) {
  SimulatedDevice dev;
  TunerOptions o;
  o.decide.strategy = "genetic:pop=abc";
  EXPECT_THROW(Tuner(dev, o), UsageError);
  o.decide.strategy = "racing";
  try {
    Tuner t(dev, o);
    ADD_FAILURE() << "racing is a schedule";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("unknown strategy 'racing'"), std::string::npos)
        << e.what();
  }
  o = TunerOptions{};
  o.decide.schedule = "racing:z=abc";
  EXPECT_THROW(Tuner(dev, o), UsageError);
  o.decide.schedule = "full:x=1";
  EXPECT_THROW(Tuner(dev, o), UsageError);
  for (double bad : {-1.0, std::nan(""), std::numeric_limits<double>::infinity()}) {
    o = TunerOptions{};
    o.decide.budget_seconds = bad;
    EXPECT_THROW(Tuner(dev, o), UsageError) << bad;
  }
  o = TunerOptions{};
  o.measure.build_threads = -2;
  EXPECT_THROW(Tuner(dev, o), UsageError);
}

}  // namespace
}  // namespace tunekit
