// Tests for src/search/initial_design.cpp (the initial design the strategies share) and for the
// surrogate strategy's use of the prior (the default, the cost model, the budget).
#include "search/initial_design.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <set>

#include "tunekit/errors.hpp"

namespace tunekit {
namespace {

Enumeration grid() {
  Space s;
  std::vector<Value> v8, v4;
  for (int i = 0; i < 8; ++i) v8.push_back(1 << i);
  for (int i = 0; i < 4; ++i) v4.push_back(i);
  s.param("x", v8).param("y", v8).param("z", v4).constraint("x * y <= 2048");
  return s.enumerate();
}

// Smooth and additive in log2(x), log2(y) and z, with its minimum at x = 32, y = 8, z = 2.
double bowl_value(const Enumeration& e, std::size_t i) {
  const std::span<const std::uint32_t> p = e.point(i);
  const double a = p[0] - 5.0, b = p[1] - 3.0, c = p[2] - 2.0;
  return 1.0 + a * a + 0.5 * b * b + 2 * c * c;
}

Objective bowl(const Enumeration& e, std::vector<std::size_t>* log) {
  return [&e, log](std::size_t i) {
    if (log) log->push_back(i);
    return ObjectiveResult{Status::ok, bowl_value(e, i), 1.0, ""};
  };
}

std::size_t argmin(const Enumeration& e) {
  std::size_t best = 0;
  for (std::size_t i = 1; i < e.size(); ++i)
    if (bowl_value(e, i) < bowl_value(e, best)) best = i;
  return best;
}

TEST(InitialDesign, SizeScalesWithTheBudget) {
  using detail::design_size;
  EXPECT_EQ(design_size(std::nullopt, 20), 20u);
  EXPECT_EQ(design_size(1, 20), 2u);
  EXPECT_EQ(design_size(11, 20), 3u);
  EXPECT_EQ(design_size(54, 20), 5u);
  EXPECT_EQ(design_size(336, 20), 11u);
  EXPECT_EQ(design_size(1455, 20), 20u);
  EXPECT_EQ(design_size(1455, 10), 10u);
  for (std::size_t b = 1; b < 5000; b += 7)
    EXPECT_LE(design_size(b, 20), std::max<std::size_t>(2, b));
}

TEST(InitialDesign, DefaultThenModelThenCoverage) {
  const Enumeration e = grid();
  History h(e.size());
  SearchPrior prior;
  prior.default_index = 7;
  prior.model_seconds.assign(e.size(), std::numeric_limits<double>::quiet_NaN());
  prior.model_seconds[40] = 2.0;
  prior.model_seconds[30] = 1.0;
  prior.model_seconds[20] = 3.0;
  Rng rng(1);
  const std::vector<std::size_t> d = detail::initial_design(e, h, prior, 6, rng);
  ASSERT_EQ(d.size(), 6u);
  EXPECT_EQ(d[0], 7u);   // the default
  EXPECT_EQ(d[1], 30u);  // the model's best-ranked, up to count / 2 = 3 of them
  EXPECT_EQ(d[2], 40u);
  EXPECT_EQ(d[3], 20u);
  EXPECT_EQ(std::set<std::size_t>(d.begin(), d.end()).size(), d.size());
  // The rest covers values: 8 + 8 + 4 (parameter, value) pairs, 6 points of 3 pairs each.
  std::set<std::pair<std::size_t, std::uint32_t>> pairs;
  for (std::size_t i : d)
    for (std::size_t g = 0; g < e.width(); ++g) pairs.insert({g, e.point(i)[g]});
  EXPECT_GE(pairs.size(), 13u);
}

TEST(InitialDesign, SkipsEvaluatedPointsAndEndsWithTheSpace) {
  Space s;
  s.param("a", {1, 2, 3}).param("b", {1, 2});
  const Enumeration e = s.enumerate();
  History h(e.size());
  h.add({0, Status::ok, 1.0, 0});
  h.add({3, Status::launch_failed, 0, 0});
  SearchPrior prior;
  prior.default_index = 0;  // evaluated already: not proposed again
  Rng rng(3);
  const std::vector<std::size_t> d = detail::initial_design(e, h, prior, 10, rng);
  EXPECT_EQ(d.size(), 4u);
  for (std::size_t i : d) EXPECT_FALSE(h.evaluated(i));
  EXPECT_EQ(std::set<std::size_t>(d.begin(), d.end()).size(), 4u);
  EXPECT_TRUE(detail::initial_design(e, h, prior, 0, rng).empty());
}

TEST(InitialDesign, ModelRankedIgnoresUnscoredPoints) {
  SearchPrior prior;
  EXPECT_TRUE(detail::model_ranked(prior, 3).empty());
  prior.model_seconds = {3.0, std::numeric_limits<double>::quiet_NaN(), 1.0, 1.0, INFINITY};
  EXPECT_EQ(detail::model_ranked(prior, 3), (std::vector<std::size_t>{2, 3, 0}));
  EXPECT_EQ(detail::model_ranked(prior, 1), (std::vector<std::size_t>{2}));
}

TEST(InitialDesign, BestKnownCountsHopelessReadings) {
  History h(4);
  EXPECT_FALSE(detail::best_known(h));
  h.add({0, Status::launch_failed, 0, 0});
  EXPECT_FALSE(detail::best_known(h));
  h.add({1, Status::hopeless, 5.0, 0});
  EXPECT_EQ(detail::best_known(h), 1u);
  h.add({2, Status::ok, 7.0, 0});
  EXPECT_EQ(detail::best_known(h), 1u);  // the slower ok point does not beat the reading
  EXPECT_EQ(h.best()->index, 2u);        // while History::best() takes ok points only
}

std::unique_ptr<Strategy> surrogate(const std::string& options = "") {
  auto o = SpecOptions::parse("strategy", "surrogate", options);
  std::unique_ptr<Strategy> s = detail::make_surrogate(o);
  o.check();
  return s;
}

// Runs the surrogate through the driver with a prior (the default evaluated first).
SearchResult run_with_prior(const Enumeration& e, Strategy& s, const SearchPrior& prior,
                            std::size_t budget, std::uint64_t seed, std::vector<std::size_t>* log) {
  class Eval final : public Evaluator {
   public:
    Eval(const Enumeration& e, std::vector<std::size_t>* log) : e_(e), log_(log) {}
    std::vector<PointResult> evaluate(std::span<const std::size_t> batch) override {
      std::vector<PointResult> out;
      for (std::size_t i : batch) {
        if (log_) log_->push_back(i);
        out.push_back({i, Status::ok, bowl_value(e_, i)});
        clock_ += 1;
      }
      return out;
    }
    double elapsed_seconds() const override { return clock_; }

   private:
    const Enumeration& e_;
    std::vector<std::size_t>* log_;
    double clock_ = 0;
  } evaluator(e, log);
  SearchSettings settings;
  settings.budget.evaluations = budget;
  settings.seed = seed;
  settings.prior = prior;
  if (prior.default_index) settings.first = {*prior.default_index};
  return search(e, s, evaluator, settings);
}

TEST(Surrogate, FindsTheMinimumOfAnAdditiveBowlFast) {
  const Enumeration e = grid();
  const std::size_t best = argmin(e);
  for (std::uint64_t seed = 1; seed <= 10; ++seed) {
    std::vector<std::size_t> log;
    auto s = surrogate();
    const SearchResult r = search(e, *s, bowl(e, &log), Budget{40, {}}, seed);
    EXPECT_EQ(r.history.best()->index, best) << "seed " << seed;
    EXPECT_EQ(std::set<std::size_t>(log.begin(), log.end()).size(), log.size());
  }
}

TEST(Surrogate, StartsFromTheDefaultAndTheModelsPick) {
  const Enumeration e = grid();
  const std::size_t best = argmin(e);
  SearchPrior prior;
  prior.default_index = 0;
  // A perfect cost model: the optimum is its pick, so it is evaluated right after the default.
  for (std::size_t i = 0; i < e.size(); ++i) prior.model_seconds.push_back(bowl_value(e, i));
  std::vector<std::size_t> log;
  auto s = surrogate();
  const SearchResult r = run_with_prior(e, *s, prior, 30, 5, &log);
  ASSERT_GE(log.size(), 2u);
  EXPECT_EQ(log[0], 0u);
  EXPECT_EQ(log[1], best);
  EXPECT_EQ(r.first_evaluations, 1u);
  EXPECT_EQ(r.history.size(), 31u);
}

TEST(Surrogate, AnUnscoringModelDoesNotBreakIt) {
  const Enumeration e = grid();
  SearchPrior prior;
  prior.model_seconds.assign(e.size(), std::numeric_limits<double>::quiet_NaN());
  prior.model_seconds[3] = 1.0;  // one scored point; the rest unscored
  prior.model_seconds[4] = 2.0;
  auto s = surrogate();
  const SearchResult r = run_with_prior(e, *s, prior, 40, 2, nullptr);
  EXPECT_EQ(r.history.size(), 40u);
  EXPECT_EQ(r.history.best()->index, argmin(e));
}

TEST(Surrogate, BatchesAreDistinctAndDeterministic) {
  const Enumeration e = grid();
  std::vector<std::size_t> first, second;
  auto s1 = surrogate("batch=4");
  auto s2 = surrogate("batch=4");
  class Batcher final : public Strategy {  // asks for 4 at a time through a wrapper
   public:
    explicit Batcher(Strategy& inner) : inner_(inner) {}
    std::string_view name() const override { return "batcher"; }
    void start(const Enumeration& e, const SearchPrior& p) override { inner_.start(e, p); }
    std::vector<std::size_t> propose(const Enumeration& e, const History& h, std::size_t max,
                                     Rng& rng) override {
      std::vector<std::size_t> out = inner_.propose(e, h, std::min<std::size_t>(max, 4), rng);
      EXPECT_LE(out.size(), 4u);
      EXPECT_EQ(std::set<std::size_t>(out.begin(), out.end()).size(), out.size());
      for (std::size_t i : out) EXPECT_FALSE(h.evaluated(i));
      return out;
    }
    void observe(const Enumeration& e, const History& h,
                 std::span<const Evaluation> results) override {
      inner_.observe(e, h, results);
    }

   private:
    Strategy& inner_;
  };
  Batcher b1(*s1), b2(*s2);
  search(e, b1, bowl(e, &first), Budget{40, {}}, 8);
  search(e, b2, bowl(e, &second), Budget{40, {}}, 8);
  EXPECT_EQ(first, second);
  EXPECT_EQ(first.size(), 40u);
}

TEST(Surrogate, RejectsBadOptions) {
  EXPECT_THROW(surrogate("local=2"), UsageError);
  EXPECT_THROW(surrogate("clip=0"), UsageError);
  EXPECT_THROW(surrogate("nope=1"), UsageError);
  EXPECT_NO_THROW(surrogate("init=3,local=0,delay=0,horizon=10,rho=0,clip=1,top=1,shape=0"));
}

}  // namespace
}  // namespace tunekit
