// refine_flips measured by the stack controller (include/tunekit/plan_comparator.hpp): real
// trials through the runner, validation against the incumbent, the paired score, the budget
// charged what the trials cost.
#include <gtest/gtest.h>

#include <string>

#include "stack_test_support.hpp"
#include "tunekit/plan_comparator.hpp"
#include "tunekit/refinement.hpp"

namespace tunekit::stack {
namespace {

std::string plan_name(const PlanBits& bits) {
  std::string name = "plan_";
  for (bool b : bits) name += b ? '1' : '0';
  return name;
}

// A plan's time: the product of its flipped bits' factors (bit 2 makes the output wrong).
double plan_seconds(const std::string& name) {
  const double factors[] = {0.8, 0.6, 0.5};
  double s = 1;
  for (std::size_t i = 0; i < 3; ++i)
    if (name.at(5 + i) == '1') s *= factors[i];
  return s;
}

TEST(PairedPlanComparator, RefinesRealTrialsAndChargesWhatTheyCost) {
  auto runner = test::make_runner();
  runner->seconds = [](const std::string& name, int) { return plan_seconds(name); };
  StackController controller(test::options_with(runner));
  PairedPlanComparator comparator(controller, test::make_problem(), [](const PlanBits& bits) {
    // Bit 2 is fast but wrong: validation against the incumbent must refuse it.
    return fakes::doubling(plan_name(bits), [wrong = bits.at(2)](fakes::FloatWorkspace& w) {
      if (wrong) w.out[0] += 1;
    });
  });
  const std::vector<Flip> flips = {{"fuse", 0.2}, {"stream", 0.4}, {"split", 0.9}};
  CallBudget budget(1000);
  CallShare share = budget.share("plan", 1000);
  const RefineReport r = refine_flips(flips, {}, comparator, share);

  EXPECT_EQ(r.plan, (PlanBits{true, true, false}));
  ASSERT_EQ(r.steps.size(), 3u);
  EXPECT_EQ(r.steps[0].flip, "split");  // the highest prior first, refused: wrong answers
  EXPECT_FALSE(r.steps[0].accepted);
  EXPECT_NE(r.steps[0].why.find("validation_failed"), std::string::npos) << r.steps[0].why;
  EXPECT_TRUE(r.steps[1].accepted);  // stream: 0.6
  EXPECT_TRUE(r.steps[2].accepted);  // fuse on top of stream: 0.8
  EXPECT_NEAR(r.steps[2].score.ratio, 0.8, 1e-9);
  EXPECT_EQ(comparator.entries().size(), 3u);
  // The budget was charged exactly the trials that ran (the failed validation's pairs never
  // ran, but a comparison is paid in full before it starts).
  EXPECT_EQ(r.calls_spent, 3 * comparator.calls_per_comparison());
  EXPECT_LE(static_cast<std::size_t>(runner->total()), r.calls_spent);
  EXPECT_EQ(controller.stats().tunes, 0u);  // measurements, not decisions
}

TEST(PairedPlanComparator, ABudgetForOneComparisonStopsAfterIt) {
  auto runner = test::make_runner();
  runner->seconds = [](const std::string& name, int) { return plan_seconds(name); };
  StackController controller(test::options_with(runner));
  PairedPlanComparator comparator(controller, test::make_problem(), [](const PlanBits& bits) {
    return fakes::doubling(plan_name(bits));
  });
  const std::vector<Flip> flips = {{"fuse", 0}, {"stream", 0}, {"split", 0}};
  CallBudget budget(comparator.calls_per_comparison());
  CallShare share = budget.share("plan", comparator.calls_per_comparison());
  const RefineReport r = refine_flips(flips, {}, comparator, share);
  EXPECT_EQ(r.steps.size(), 1u);
  EXPECT_TRUE(r.budget_spent);
  EXPECT_EQ(r.unexplored.size(), 2u);
  EXPECT_EQ(runner->total(), static_cast<int>(comparator.calls_per_comparison()));
}

}  // namespace
}  // namespace tunekit::stack
