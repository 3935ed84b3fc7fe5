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

// The decision's parts in the order they are held: whole where they fit, the rest of the room
// where their fewest pairs fit, nothing where even those do not (the later ones still tried).
TEST(SearchBudget, DecisionPartsAreHeldOnlyWhereTheirLeastRunFits) {
  EXPECT_DOUBLE_EQ(fitting({{1, 1}, {2, 1.6}}, 10), 3);     // both whole
  EXPECT_DOUBLE_EQ(fitting({{1, 1}, {2, 1.6}}, 2.8), 2.8);  // the second's least fits: the rest
  EXPECT_DOUBLE_EQ(fitting({{1, 1}, {2, 1.6}, {0.5, 0.4}}, 2.4), 1.5);  // too big, the third held
  EXPECT_DOUBLE_EQ(fitting({{5, 4}, {1, 0.8}}, 3), 1);          // a slow default's pairs: none held
  EXPECT_DOUBLE_EQ(fitting({{0, 0}, {-1, -1}, {1, 1}}, 3), 1);  // nothing projected, nothing held
  const double nan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_DOUBLE_EQ(fitting({{nan, nan}, {1, 1}}, 3), 1);
  EXPECT_DOUBLE_EQ(fitting({{1, 1}}, 0), 0);
}

TEST(SearchBudget, WithoutABudgetNothingIsHeld) {
  SearchBudget budget(0, [] { return 0.0; });
  budget.hold_for_decision([](double) { return 5.0; }, 0.25);
  EXPECT_DOUBLE_EQ(budget.decision_reserve(), 0);
  EXPECT_TRUE(budget.admits_timing());
}

}  // namespace
}  // namespace tunekit::detail
