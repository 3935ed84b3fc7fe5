// Tests for src/tuner/search_budget.cpp: the reserve at the end of a budget (the winner's
// rebuild and the decision's paired confirmations), on a scripted clock.
#include "tuner/search_budget.hpp"

#include <gtest/gtest.h>

#include <limits>

namespace tunekit::detail {
namespace {

TEST(SearchBudget, HoldsTheDecisionsPairsBackUpToTheirShare) {
  double now = 0;
  SearchBudget budget(10, [&] { return now; });
  double cost = 1;
  budget.hold_for_decision([&](double) { return cost; }, 0.25);
  budget.saw_build(0.5);
  EXPECT_DOUBLE_EQ(budget.reserve(), 1.5);  // the rebuild and the pairs
  now = 8.0;
  EXPECT_TRUE(budget.admits_build());  // its own build and the reserve fit: 8 + 0.5 + 1.5
  now = 8.4;
  EXPECT_TRUE(budget.admits_timing());
  EXPECT_FALSE(budget.admits_build());
  now = 8.6;
  EXPECT_FALSE(budget.admits_timing());
  EXPECT_FALSE(budget.admits_build());
  cost = 100;  // a slow default: at most a quarter of the budget
  EXPECT_DOUBLE_EQ(budget.decision_reserve(), 2.5);
  cost = std::numeric_limits<double>::quiet_NaN();
  EXPECT_DOUBLE_EQ(budget.decision_reserve(), 0);
  cost = -1;
  EXPECT_DOUBLE_EQ(budget.decision_reserve(), 0);
  budget.hold_for_decision([](double) { return 100.0; },
                           0);  // 0 ("no cap" on pairs): half the budget
  EXPECT_DOUBLE_EQ(budget.decision_reserve(), 5);
  budget.hold_for_decision([](double) { return 100.0; }, 100);  // never more than half
  EXPECT_DOUBLE_EQ(budget.decision_reserve(), 5);
  budget.hold_for_decision([](double) { return 100.0; }, -3);
  EXPECT_DOUBLE_EQ(budget.decision_reserve(), 5);
}

// The cost the budget is handed is asked for within the cap (the context leaves out what
// cannot fit in it), and a point whose admission comes before its window starts only when the
// admission too ends before the line.
TEST(SearchBudget, TheCostIsAskedWithinItsCapAndAnAdmissionLeadsTheLine) {
  double now = 0;
  SearchBudget budget(10, [&] { return now; });
  double asked = 0;
  budget.hold_for_decision(
      [&](double cap) {
        asked = cap;
        return 1.0;
      },
      0.25);
  EXPECT_DOUBLE_EQ(budget.decision_reserve(), 1);
  EXPECT_DOUBLE_EQ(asked, 2.5);
  now = 8.8;
  EXPECT_TRUE(budget.admits_timing());
  EXPECT_TRUE(budget.admits_timing(0.1));
  EXPECT_FALSE(budget.admits_timing(0.3));  // its admission would end past 9 (10 less 1)
  EXPECT_TRUE(budget.admits_timing(-5));    // a negative lead is none
  SearchBudget none(0, [&] { return now; });
  EXPECT_TRUE(none.admits_timing(100));
}

TEST(SearchBudget, WithoutABudgetNothingIsHeld) {
  SearchBudget budget(0, [] { return 0.0; });
  budget.hold_for_decision([](double) { return 5.0; }, 0.25);
  EXPECT_DOUBLE_EQ(budget.decision_reserve(), 0);
  EXPECT_TRUE(budget.admits_timing());
}

}  // namespace
}  // namespace tunekit::detail
