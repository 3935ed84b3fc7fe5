// A/B refinement: flips in profit order, one shared call budget (include/tunekit/refinement.hpp).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "tunekit/errors.hpp"
#include "tunekit/refinement.hpp"

namespace tunekit {
namespace {

// A scripted paired score: a plan's cost is the product of its flipped bits' factors, times
// an interaction factor when both `pair_a` and `pair_b` are flipped. Every comparison is
// recorded as the index of the bit that differs.
class ScriptedComparator : public PlanComparator {
 public:
  explicit ScriptedComparator(std::vector<double> factors, std::size_t calls = 4)
      : factors_(std::move(factors)), calls_(calls) {}

  std::size_t calls_per_comparison() const override { return calls_; }
  stats::PairedScore compare(const PlanBits& incumbent, const PlanBits& contender) override {
    for (std::size_t i = 0; i < incumbent.size(); ++i)
      if (incumbent[i] != contender[i]) compared.push_back(i);
    if (throw_on_compare) throw std::runtime_error("the plan crashed");
    if (fatal_on_compare) throw FatalError("device lost");
    if (usage_on_compare) throw UsageError("two candidates are named 'plan'");
    stats::PairedScore s;
    s.pairs = 16;
    s.ratio = cost(contender) / cost(incumbent);
    s.ratio_high = s.ratio * 1.005;
    s.relative_mad = 0.01;
    s.scored = !noisy;
    if (noisy) s.why = "pairs too noisy";
    return s;
  }

  double cost(const PlanBits& plan) const {
    double c = 1;
    for (std::size_t i = 0; i < plan.size(); ++i)
      if (plan[i]) c *= factors_[i];
    if (interaction && plan[pair_a] && plan[pair_b]) c *= interaction;
    return c;
  }

  std::vector<std::size_t> compared;
  bool noisy = false;
  bool throw_on_compare = false;
  bool fatal_on_compare = false;
  bool usage_on_compare = false;
  double interaction = 0;
  std::size_t pair_a = 0, pair_b = 0;

 private:
  std::vector<double> factors_;
  std::size_t calls_;
};

std::vector<Flip> three_flips() {
  return {{"fuse_norm", 0.1}, {"streaming", 0.3}, {"heads_parallel", 0.2}};
}

TEST(FlipRefinement, TriesFlipsInPriorProfitOrderAndKeepsTheWinners) {
  ScriptedComparator cmp({0.9, 0.7, 1.1});  // heads_parallel is slower
  CallBudget budget(100);
  CallShare share = budget.share("attention", 100);
  const std::vector<Flip> flips = three_flips();
  RefineReport r = refine_flips(flips, {}, cmp, share);
  EXPECT_EQ(cmp.compared, (std::vector<std::size_t>{1, 2, 0}));
  EXPECT_EQ(r.plan, (PlanBits{true, true, false}));
  ASSERT_EQ(r.steps.size(), 3u);
  EXPECT_EQ(r.steps[0].flip, "streaming");
  EXPECT_TRUE(r.steps[0].accepted);
  EXPECT_FALSE(r.steps[1].accepted);
  EXPECT_NE(r.steps[1].why.find("the incumbent stands"), std::string::npos);
  EXPECT_EQ(r.calls_spent, 12u);
  EXPECT_EQ(budget.spent(), 12u);
  EXPECT_FALSE(r.budget_spent);
}

TEST(FlipRefinement, AFlipWithinTheTieBandOrWithoutAScoreIsNotKept) {
  ScriptedComparator cmp({0.99, 0.7, 1.0});
  CallBudget budget(100);
  CallShare share = budget.share("s", 100);
  const std::vector<Flip> flips = three_flips();
  EXPECT_EQ(refine_flips(flips, {}, cmp, share).plan, (PlanBits{false, true, false}));

  ScriptedComparator noisy({0.5, 0.5, 0.5});
  noisy.noisy = true;
  CallShare again = budget.share("t", 100);
  RefineReport r = refine_flips(flips, {}, noisy, again);
  EXPECT_EQ(r.plan, (PlanBits{false, false, false}));
  EXPECT_NE(r.steps[0].why.find("no score"), std::string::npos);
}

TEST(FlipRefinement, StopsWhenTheSharedBudgetIsSpent) {
  ScriptedComparator cmp({0.9, 0.7, 0.8});
  CallBudget budget(10);
  CallShare other = budget.share("another search", 10);
  ASSERT_TRUE(other.try_spend(2));  // what another search already took
  CallShare share = budget.share("attention", 10);
  const std::vector<Flip> flips = three_flips();
  RefineReport r = refine_flips(flips, {}, cmp, share);
  EXPECT_EQ(cmp.compared, (std::vector<std::size_t>{1, 2}));  // 8 of the 8 left
  EXPECT_TRUE(r.budget_spent);
  EXPECT_EQ(r.unexplored, (std::vector<std::string>{"fuse_norm"}));
  EXPECT_EQ(budget.left(), 0u);
  EXPECT_EQ(r.plan, (PlanBits{false, true, true}));
}

TEST(FlipRefinement, AShareCapsOneSearchWhateverTheBudgetHasLeft) {
  ScriptedComparator cmp({0.9, 0.7, 0.8});
  CallBudget budget(1000);
  CallShare share = budget.share("small", 5);
  const std::vector<Flip> flips = three_flips();
  RefineReport r = refine_flips(flips, {}, cmp, share);
  EXPECT_EQ(cmp.compared.size(), 1u);
  EXPECT_EQ(share.spent(), 4u);
  EXPECT_EQ(share.left(), 1u);
  EXPECT_EQ(budget.left(), 996u);
  EXPECT_EQ(r.unexplored.size(), 2u);
}

TEST(FlipRefinement, MeasuredOrderScreensEveryFlipThenWalksTheBestFirst) {
  // Alone, fuse_norm (0.8) and streaming (0.6) both win; together streaming already hides
  // what fuse_norm saves (interaction 1.25 cancels it).
  ScriptedComparator cmp({0.8, 0.6, 1.2});
  cmp.interaction = 1.25;
  cmp.pair_a = 0, cmp.pair_b = 1;
  CallBudget budget(100);
  CallShare share = budget.share("s", 100);
  const std::vector<Flip> flips = three_flips();
  RefineReport r = refine_flips(flips, {}, cmp, share, {.order = FlipOrder::measured_profit});
  // Screens 0, 1, 2 against the start; then streaming (best screen) is taken from its
  // screen without a second run; fuse_norm is compared again, against the new incumbent.
  EXPECT_EQ(cmp.compared, (std::vector<std::size_t>{0, 1, 2, 0}));
  EXPECT_EQ(r.plan, (PlanBits{false, true, false}));
  ASSERT_EQ(r.steps.size(), 4u);
  EXPECT_TRUE(r.steps[0].screening);
  EXPECT_FALSE(r.steps[3].screening);
  EXPECT_FALSE(r.steps[3].accepted);
  EXPECT_EQ(r.calls_spent, 16u);
}

TEST(FlipRefinement, AComparisonThatThrowsKeepsTheIncumbentAndAFatalErrorPropagates) {
  ScriptedComparator cmp({0.5, 0.5, 0.5});
  cmp.throw_on_compare = true;
  CallBudget budget(100);
  CallShare share = budget.share("s", 100);
  const std::vector<Flip> flips = three_flips();
  RefineReport r = refine_flips(flips, {}, cmp, share);
  EXPECT_EQ(r.plan, (PlanBits{false, false, false}));
  EXPECT_NE(r.steps[0].why.find("the plan crashed"), std::string::npos);

  ScriptedComparator fatal({0.5, 0.5, 0.5});
  fatal.fatal_on_compare = true;
  CallShare again = budget.share("t", 100);
  EXPECT_THROW(refine_flips(flips, {}, fatal, again), FatalError);
}

// A comparator's misuse (PairedPlanComparator's make giving two plans one name) is the
// caller's to fix, not a plan that lost: it propagates instead of becoming a step's "why".
TEST(FlipRefinement, AComparisonsUsageErrorPropagates) {
  ScriptedComparator cmp({0.5, 0.5, 0.5});
  cmp.usage_on_compare = true;
  CallBudget budget(100);
  CallShare share = budget.share("s", 100);
  const std::vector<Flip> flips = three_flips();
  EXPECT_THROW(refine_flips(flips, {}, cmp, share), UsageError);
}

TEST(FlipRefinement, MisuseIsAUsageError) {
  ScriptedComparator cmp({0.5, 0.5});
  CallBudget budget(100);
  CallShare share = budget.share("s", 100);
  const std::vector<Flip> two = {{"a", 0}, {"b", 0}};
  EXPECT_THROW(refine_flips(two, PlanBits{true}, cmp, share), UsageError);
  const std::vector<Flip> twice = {{"a", 0}, {"a", 0}};
  EXPECT_THROW(refine_flips(twice, {}, cmp, share), UsageError);
  const std::vector<Flip> nan = {{"a", std::nan("")}, {"b", 0}};
  EXPECT_THROW(refine_flips(nan, {}, cmp, share), UsageError);
  EXPECT_THROW(refine_flips(two, {}, cmp, share, {.tie_band = -1}), UsageError);
  EXPECT_THROW(budget.share_fraction("x", 0), UsageError);
  EXPECT_THROW(budget.share_fraction("x", std::nan("")), UsageError);
  EXPECT_THROW(budget.share_fraction("x", 1.5), UsageError);
  EXPECT_EQ(budget.share_fraction("half", 0.5).cap(), 50u);
}

TEST(CallBudget, ConcurrentSharesNeverSpendMoreThanTheBudget) {
  CallBudget budget(1000);
  CallShare a = budget.share("a", 800), b = budget.share("b", 800);
  std::size_t got_a = 0, got_b = 0;
  std::thread ta([&] {
    while (a.try_spend(3)) got_a += 3;
  });
  std::thread tb([&] {
    while (b.try_spend(7)) got_b += 7;
  });
  ta.join(), tb.join();
  EXPECT_EQ(got_a + got_b, budget.spent());
  EXPECT_LE(budget.spent(), 1000u);
  EXPECT_GT(budget.spent(), 1000u - 7);
  EXPECT_LE(got_a, 800u);
  EXPECT_LE(got_b, 800u);
}

}  // namespace
}  // namespace tunekit
