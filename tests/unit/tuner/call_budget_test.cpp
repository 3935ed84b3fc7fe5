// Tests for src/tuner/call_budget.cpp: shares of a budget taken as fractions.
#include <gtest/gtest.h>

#include <limits>

#include "tunekit/refinement.hpp"

namespace tunekit {
namespace {

// An unlimited budget (SIZE_MAX calls) is a natural way to say "no cap but the shares'":
// its whole is SIZE_MAX, and half of it about 2^63, not a share that can spend nothing.
TEST(CallBudget, AFractionOfAnUnlimitedBudgetIsNotZero) {
  constexpr std::size_t unlimited = std::numeric_limits<std::size_t>::max();
  CallBudget budget(unlimited);
  CallShare whole = budget.share_fraction("whole", 1.0);
  EXPECT_EQ(whole.cap(), unlimited);
  EXPECT_TRUE(whole.try_spend(1000));
  CallShare half = budget.share_fraction("half", 0.5);
  EXPECT_GE(half.cap(), unlimited / 2 - 4096);
  EXPECT_LE(half.cap(), unlimited);
}

TEST(CallBudget, AFractionRoundsDown) {
  CallBudget budget(10);
  EXPECT_EQ(budget.share_fraction("a", 0.25).cap(), 2u);
  EXPECT_EQ(budget.share_fraction("b", 1.0).cap(), 10u);
}

}  // namespace
}  // namespace tunekit
