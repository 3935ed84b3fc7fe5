// Op::effective_config through the search (src/core/op.cpp distinct_points, src/tuner/search.cpp):
// points that compute the same thing for a key are measured once, the default and the anchors
// stand for their classes, budgets count distinct points, and a hook that fails is a clear error.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "fakes/simulated_space.hpp"
#include "tunekit/errors.hpp"
#include "tunekit/tuner.hpp"
#include "tuner/search.hpp"

namespace tunekit {
namespace {

using fakes::grid_space;
using fakes::make_space_op;
using fakes::SimulatedDevice;

// y is a block size: every y at least the key's n blocks the whole dimension.
Config clip_y(const Key& key, const Config& c) {
  Config e = c;
  e.set("y", std::min(c["y"].as_int(), key.integer("n")));
  return e;
}

TunerOptions simulated(SimulatedDevice& dev) {
  TunerOptions o;
  o.measure.now = dev.clock_fn();
  o.decide.confirm_pairs = 0;
  return o;
}

// Seconds that depend on the effective y only, fastest at x=6, y>=3 (n=3).
double effective_seconds(const Config& c) {
  const auto y = std::min<std::int64_t>(c["y"].as_int(), 3);
  return 1e-4 * (1 + static_cast<double>(std::abs(c["x"].as_int() - 6) + (3 - y)));
}

TEST(DistinctPoints, EveryIndexWhereTheOpDoesNotSay) {
  SimulatedDevice dev;
  auto op = make_space_op(dev, grid_space(3), Config{{"x", 0}, {"y", 0}});
  const std::vector<std::size_t> all = op->distinct_points(Key{{"n", 1}}, {});
  ASSERT_EQ(all.size(), 9u);
  for (std::size_t i = 0; i < all.size(); ++i) EXPECT_EQ(all[i], i);
  EXPECT_FALSE(op->has_effective_config());
}

TEST(DistinctPoints, OnePerClassTheLowestIndexUnlessAPreferredPointIsInIt) {
  SimulatedDevice dev;
  auto op = make_space_op(dev, grid_space(4), Config{{"x", 0}, {"y", 0}});
  op->effective_config(clip_y);
  const Key key{{"n", 1}};
  // y in {1, 2, 3} is one class per x: x=a,y=1 is kept (the lowest index).
  std::vector<std::size_t> kept = op->distinct_points(key, {});
  std::vector<std::string> names;
  for (std::size_t i : kept) names.push_back(op->candidate(i).name);
  EXPECT_EQ(names, (std::vector<std::string>{"x=0,y=0", "x=0,y=1", "x=1,y=0", "x=1,y=1", "x=2,y=0",
                                             "x=2,y=1", "x=3,y=0", "x=3,y=1"}));
  // A preferred point stands for its class (the first preferred one where two share it).
  const std::size_t x2y3 = *op->enumeration().index_of(Config{{"x", 2}, {"y", 3}});
  const std::size_t x2y2 = *op->enumeration().index_of(Config{{"x", 2}, {"y", 2}});
  kept = op->distinct_points(key, std::vector<std::size_t>{x2y3, x2y2});
  EXPECT_EQ(kept.size(), 8u);
  EXPECT_TRUE(std::binary_search(kept.begin(), kept.end(), x2y3));
  EXPECT_FALSE(std::binary_search(kept.begin(), kept.end(), x2y2));
  // A larger n separates every y.
  EXPECT_EQ(op->distinct_points(Key{{"n", 5}}, {}).size(), 16u);
}

TEST(DistinctPoints, TheSearchMeasuresOnePointPerClassAndCallsTheSpaceExhausted) {
  SimulatedDevice dev;
  dev.seconds = effective_seconds;
  auto op = make_space_op(dev, grid_space(10), Config{{"x", 0}, {"y", 9}});
  op->effective_config(clip_y);
  TunerOptions o = simulated(dev);
  o.decide.strategy = "exhaustive";
  const TuneReport r = Tuner(dev, o).tune(*op, Key{{"n", 3}});
  // 10 x values times y in {0, 1, 2, >=3}.
  EXPECT_EQ(r.space_size, 100u);
  EXPECT_EQ(r.distinct_points, 40u);
  EXPECT_EQ(dev.builds.size(), 40u);
  EXPECT_EQ(r.candidates.size(), 40u);
  for (const auto& [config, count] : dev.builds) {
    const Config c = Config::parse(config);
    // The class y >= 3 is measured as y=3, except where the default stands for it (x=0).
    if (c["x"].as_int() == 0 && c["y"].as_int() >= 3) {
      EXPECT_EQ(c["y"].as_int(), 9) << config;
    } else {
      EXPECT_LE(c["y"].as_int(), 3) << config;
    }
  }
  EXPECT_EQ(r.candidates.front().name, "x=0,y=9");
  EXPECT_EQ(r.winner_name, "x=6,y=3");
  EXPECT_EQ(r.stop_reason, "space exhausted");
  EXPECT_FALSE(r.budget.cut);  // every distinct point was measured: a complete search
}

TEST(DistinctPoints, AnEvaluationBudgetCountsDistinctPointsAndAnchorsStandForTheirClass) {
  SimulatedDevice dev;
  dev.seconds = effective_seconds;
  auto op = make_space_op(dev, grid_space(10), Config{{"x", 0}, {"y", 0}});
  op->effective_config(clip_y);
  op->anchors({Config{{"x", 5}, {"y", 8}}});
  TunerOptions o = simulated(dev);
  o.decide.strategy = "random";
  o.decide.budget_evaluations = 30;
  o.decide.seed = 3;
  const TuneReport r = Tuner(dev, o).tune(*op, Key{{"n", 3}});
  EXPECT_EQ(r.distinct_points, 40u);
  ASSERT_EQ(dev.builds.size(), 32u);  // the default, the anchor and 30 distinct points
  std::set<std::string> classes;
  for (const auto& [config, count] : dev.builds) {
    EXPECT_EQ(count, 1) << config;
    classes.insert(clip_y(Key{{"n", 3}}, Config::parse(config)).text());
  }
  EXPECT_EQ(classes.size(), 32u);  // no two builds compute the same thing
  EXPECT_EQ(dev.builds.count("x=5,y=8"), 1u);
  EXPECT_EQ(dev.builds.count("x=5,y=3"), 0u);  // the anchor stands for it
  EXPECT_TRUE(r.budget.cut);
  EXPECT_NE(r.budget.stopped.find("8 points never proposed"), std::string::npos)
      << r.budget.stopped;
}

// A stored partial search (budget_cut) is replaced by a search that is not restricted; at a
// key where few points compute differently `auto` measures them all, so such a search is not.
TEST(DistinctPoints, AutoIsRestrictedOnlyWhereTheDistinctPointsAreMany) {
  SimulatedDevice dev;
  auto op = make_space_op(dev, grid_space(20), Config{{"x", 0}, {"y", 0}});
  op->effective_config(clip_y);
  const TunerOptions o;  // strategy auto: every point up to 256 points
  EXPECT_FALSE(detail::search_is_restricted(o, *op, Key{{"n", 1}}));  // 20 x 2 points
  EXPECT_TRUE(detail::search_is_restricted(o, *op, Key{{"n", 50}}));  // all 400
  TunerOptions budgeted;
  budgeted.decide.budget_evaluations = 5;
  EXPECT_TRUE(detail::search_is_restricted(budgeted, *op, Key{{"n", 1}}));
}

TEST(DistinctPoints, AHookThatThrowsOrAListOpIsAUsageErrorNamingThePoint) {
  SimulatedDevice dev;
  auto op = make_space_op(dev, grid_space(3), Config{{"x", 0}, {"y", 0}});
  op->effective_config([](const Key&, const Config& c) -> Config {
    if (c["x"].as_int() == 2) throw std::runtime_error("no block for x=2");
    return c;
  });
  try {
    Tuner(dev, simulated(dev)).tune(*op, Key{{"n", 3}});
    FAIL() << "expected a UsageError";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("x=2,y=0"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("no block for x=2"), std::string::npos) << e.what();
  }

  Op<fakes::SimArgs> list("listed", 1);
  list.candidate("a", [](fakes::SimArgs&) {});
  list.effective_config([](const Key&, const Config& c) { return c; });
  EXPECT_THROW(list.distinct_points(Key{{"n", 1}}, {}), UsageError);
}

}  // namespace
}  // namespace tunekit
