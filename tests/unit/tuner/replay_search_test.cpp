// replay_search (src/tuner/replay_search.cpp): the live tuner on a ReplayDevice gives, for a
// seed, exactly the trace of the bare search loop over the recorded objective with the default
// evaluated first — so strategy scores measured by bench/strategy_bench (--default first) are
// the live tuner's scores.
#include "tunekit/replay_search.hpp"

#include <gtest/gtest.h>

#include <limits>

#include "fakes/datasets.hpp"
#include "tunekit/strategy.hpp"

namespace tunekit {
namespace {

// The recorded objective, as the strategy benchmark evaluates it.
class Recorded final : public Evaluator {
 public:
  explicit Recorded(const Recording& r) : r_(r) {}
  std::vector<PointResult> evaluate(std::span<const std::size_t> batch) override {
    std::vector<PointResult> out;
    for (std::size_t i : batch) {
      const RecordedResult& x = r_.result(i);
      out.push_back({i, x.status,
                     x.status == Status::ok ? x.time_ms : std::numeric_limits<double>::infinity()});
    }
    return out;
  }
  double elapsed_seconds() const override { return 0; }

 private:
  const Recording& r_;
};

std::vector<std::size_t> order(const History& h) {
  std::vector<std::size_t> out;
  for (const Evaluation& e : h.evaluations()) out.push_back(e.index);
  return out;
}

TEST(ReplaySearch, TheLiveTunerAndTheBareSearchLoopGiveTheSameTrace) {
  REQUIRE_DATASETS();
  const Recording rec = Recording::load(testing::datasets() / "convolution_milo/W6600.json.gz");
  std::optional<std::size_t> first;
  for (std::size_t i = 0; i < rec.size() && !first; ++i)
    if (rec.result(i).status == Status::ok) first = i;
  ASSERT_TRUE(first);
  for (const char* strategy : {"random", "genetic", "surrogate", "anneal"}) {
    for (std::uint64_t seed : {1000u, 1001u}) {
      ReplaySearchOptions o;
      o.strategy = strategy;
      o.seed = seed;
      o.budget_evaluations = 30;
      const ReplayRun live = replay_search(rec, o);

      Recorded objective(rec);
      std::unique_ptr<Strategy> s = StrategyRegistry::builtin().make(strategy);
      SearchSettings settings;
      settings.seed = seed;
      settings.budget.evaluations = 30;
      settings.prior.default_index = first;
      settings.first = {*first};
      const SearchResult bare = search(rec.space(), *s, objective, settings);
      EXPECT_EQ(order(live.history), order(bare.history)) << strategy << " seed " << seed;
      ASSERT_EQ(live.history.size(), 31u) << strategy;
      const Evaluation* a = live.history.best();
      const Evaluation* b = bare.history.best();
      ASSERT_TRUE(a && b);
      EXPECT_EQ(a->index, b->index) << strategy;
    }
  }
}

}  // namespace
}  // namespace tunekit
