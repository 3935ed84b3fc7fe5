// Tests for src/measure/stats.cpp.
#include "tunekit/stats.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace tunekit::stats {
namespace {

TEST(Stats, OrderStatistics) {
  std::vector<double> xs{5, 1, 4, 2, 3};
  EXPECT_DOUBLE_EQ(min(xs), 1);
  EXPECT_DOUBLE_EQ(median(xs), 3);
  EXPECT_DOUBLE_EQ(mean(xs), 3);
  EXPECT_DOUBLE_EQ(mad(xs), 1);  // deviations 2,2,1,1,0 -> 1
  EXPECT_DOUBLE_EQ(quantile(xs, 0.0), 1);
  EXPECT_DOUBLE_EQ(quantile(xs, 1.0), 5);
  EXPECT_DOUBLE_EQ(quantile(xs, 0.1), 1.4);
  std::vector<double> even{1, 2, 3, 4};
  EXPECT_DOUBLE_EQ(median(even), 2.5);
}

TEST(Stats, EmptyIsNaN) {
  std::vector<double> none;
  EXPECT_TRUE(std::isnan(median(none)));
  EXPECT_TRUE(std::isnan(min(none)));
  EXPECT_EQ(stalled_fraction(none, 2), 0);
}

TEST(Stats, StalledFraction) {
  std::vector<double> xs{1, 1, 1, 2, 2.5, 3};
  EXPECT_DOUBLE_EQ(stalled_fraction(xs, 2.0), 2.0 / 6);  // 2.0 is not over 2x
}

}  // namespace
}  // namespace tunekit::stats
