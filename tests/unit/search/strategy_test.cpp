// Tests for src/search/: every built-in strategy through the search driver, the registry and
// its option strings.
#include "tunekit/strategy.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "tunekit/errors.hpp"

namespace tunekit {
namespace {

const std::vector<std::string> kStrategies = {"exhaustive", "random", "anneal", "genetic",
                                              "ils",        "bayes",  "bandit"};

Enumeration test_space() {
  Space s;
  std::vector<Value> v20, v10;
  for (int i = 0; i < 20; ++i) v20.push_back(i);
  for (int i = 0; i < 10; ++i) v10.push_back(i);
  s.param("a", v20).param("b", v20).param("c", v10).constraint("a + b >= 4");
  return s.enumerate();
}

// A smooth bowl with its minimum at (13, 7, 3); `fail_one_in` > 1 makes most points fail.
Objective bowl(const Enumeration& e, std::size_t fail_one_in, std::vector<std::size_t>* log) {
  return [&e, fail_one_in, log](std::size_t i) {
    if (log) log->push_back(i);
    const std::span<const std::uint32_t> p = e.point(i);
    ObjectiveResult r;
    r.cost_seconds = 1.0 + static_cast<double>(i % 3);
    if (fail_one_in > 1 && (i * 2654435761u) % fail_one_in != 0) {
      r.status = Status::compile_failed;
      return r;
    }
    const double a = p[0] - 13.0, b = p[1] - 7.0, c = p[2] - 3.0;
    r.value = 1.0 + a * a + 2 * b * b + 0.5 * c * c;
    return r;
  };
}

TEST(Strategies, DeterministicForASeed) {
  const Enumeration e = test_space();
  for (const std::string& name : kStrategies) {
    std::vector<std::size_t> first, second, other;
    auto s1 = StrategyRegistry::builtin().make(name);
    auto s2 = StrategyRegistry::builtin().make(name);
    auto s3 = StrategyRegistry::builtin().make(name);
    const SearchResult r1 = search(e, *s1, bowl(e, 1, &first), Budget{60, {}}, 5);
    search(e, *s2, bowl(e, 1, &second), Budget{60, {}}, 5);
    search(e, *s3, bowl(e, 1, &other), Budget{60, {}}, 6);
    EXPECT_EQ(first, second) << name;
    if (name != "exhaustive") {
      EXPECT_NE(first, other) << name;
    }
    EXPECT_EQ(r1.seed, 5u);
    EXPECT_EQ(r1.strategy, name == "ils" ? "ils" : name);
  }
}

TEST(Strategies, NeverExceedTheBudgetNorReevaluate) {
  const Enumeration e = test_space();
  for (const std::string& name : kStrategies) {
    for (std::size_t budget : {1u, 7u, 150u}) {
      std::vector<std::size_t> log;
      auto s = StrategyRegistry::builtin().make(name);
      const SearchResult r = search(e, *s, bowl(e, 1, &log), Budget{budget, {}}, 3);
      EXPECT_EQ(log.size(), budget) << name;
      EXPECT_EQ(r.history.size(), budget) << name;
      EXPECT_EQ(std::set<std::size_t>(log.begin(), log.end()).size(), log.size()) << name;
      EXPECT_EQ(r.stop_reason, "evaluation budget") << name;
    }
    // A time budget: the evaluation that would cross it does not count.
    auto s = StrategyRegistry::builtin().make(name);
    const SearchResult r = search(e, *s, bowl(e, 1, nullptr), Budget{{}, 100.0}, 3);
    EXPECT_LE(r.clock_seconds, 100.0) << name;
    EXPECT_GT(r.clock_seconds, 97.0) << name;  // each costs at most 3 s
    EXPECT_EQ(r.stop_reason, "time budget") << name;
  }
}

TEST(Strategies, SurviveASpaceWhereNinetyPercentFail) {
  const Enumeration e = test_space();
  for (const std::string& name : kStrategies) {
    std::vector<std::size_t> log;
    auto s = StrategyRegistry::builtin().make(name);
    const SearchResult r = search(e, *s, bowl(e, 10, &log), Budget{300, {}}, 9);
    EXPECT_EQ(r.history.size(), 300u) << name;
    EXPECT_EQ(std::set<std::size_t>(log.begin(), log.end()).size(), log.size()) << name;
    std::size_t ok = 0;
    for (const Evaluation& ev : r.history.evaluations()) ok += ev.ok();
    EXPECT_GT(ok, 0u) << name;
    EXPECT_NE(r.history.best(), nullptr) << name;
  }
}

TEST(Strategies, ExhaustCoversASmallSpaceThenStops) {
  Space s;
  s.param("a", {1, 2, 3}).param("b", {1, 2, 3});
  const Enumeration e = s.enumerate();
  for (const std::string& name : kStrategies) {
    std::vector<std::size_t> log;
    auto st = StrategyRegistry::builtin().make(name);
    const SearchResult r = search(e, *st, bowl(e, 1, &log), Budget{100, {}}, 1);
    EXPECT_EQ(r.history.size(), 9u) << name;
    EXPECT_EQ(std::set<std::size_t>(log.begin(), log.end()).size(), 9u) << name;
  }
}

TEST(Strategies, LocalSearchesBeatTheirBudgetOnASmoothBowl) {
  const Enumeration e = test_space();
  for (const char* name : {"anneal", "ils", "genetic", "bayes", "bandit"}) {
    auto s = StrategyRegistry::builtin().make(name);
    const SearchResult r = search(e, *s, bowl(e, 1, nullptr), Budget{300, {}}, 2);
    EXPECT_LE(r.history.best()->value, 3.0) << name;  // within two steps of the minimum (1.0)
  }
}

TEST(StrategyRegistry, OptionStrings) {
  const StrategyRegistry r = StrategyRegistry::builtin();
  EXPECT_NO_THROW(r.make("anneal:t0=2,alpha=0.9"));
  EXPECT_NO_THROW(r.make("greedy_ils:perturb=5,neighbour=adjacent"));
  EXPECT_NO_THROW(r.make("bandit:arms=ils+random"));
  auto message = [&](const std::string& spec) {
    try {
      r.make(spec);
    } catch (const UsageError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message("anneal:t1=2").find("accepts t0"), std::string::npos) << message("anneal:t1=2");
  EXPECT_NE(message("anneal:t0").find("key=value"), std::string::npos);
  EXPECT_NE(message("anneal:t0=hot").find("must be a number"), std::string::npos);
  EXPECT_NE(message("anneal:t0=1,t0=2").find("twice"), std::string::npos);
  EXPECT_NE(message("simplex").find("use one of exhaustive"), std::string::npos);
  EXPECT_NE(message("random:x=1").find("no options"), std::string::npos);
  EXPECT_NE(message("bandit:arms=ils+nope").find("unknown strategy 'nope'"), std::string::npos);
}

TEST(History, RejectsRepeats) {
  History h(4);
  h.add({1, Status::ok, 2.0, 0});
  EXPECT_THROW(h.add({1, Status::ok, 1.0, 0}), UsageError);
  h.add({2, Status::launch_failed, 0.5, 0});
  EXPECT_EQ(h.best()->index, 1u);
  EXPECT_TRUE(std::isinf(*h.value(2)));
  EXPECT_FALSE(h.value(0));
}

}  // namespace
}  // namespace tunekit
