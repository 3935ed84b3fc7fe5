// Tests for src/tuner/decision.cpp.
#include "tuner/decision.hpp"

#include <gtest/gtest.h>

#include <limits>
#include <vector>

namespace tunekit::detail {
namespace {

CandidateReport make(std::size_t index, std::string name, double score, int preference = 0,
                     Status status = Status::ok) {
  CandidateReport c;
  c.index = index;
  c.name = std::move(name);
  c.score = score;
  c.preference = preference;
  c.outcome.status = status;
  return c;
}

TEST(Decide, NonFiniteScoresNeverTakePart) {
  // NaN compares false with the band limit: it must not pass as "within the band".
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<CandidateReport> cs{make(0, "def", 1.0), make(1, "a", nan, -1), make(2, "b", inf)};
  EXPECT_EQ(decide(cs, 0, 0.02), 0u);
  // Not even when the default is unmeasured: the finite one wins, or nothing does.
  cs[0].outcome.status = Status::skipped;
  EXPECT_EQ(decide(cs, 0, 0.02), std::nullopt);
  cs.push_back(make(3, "c", 2.0, 5));
  EXPECT_EQ(decide(cs, 0, 0.02), 3u);
}

TEST(Decide, FastestWinsOutsideTheTieBand) {
  std::vector<CandidateReport> cs{make(0, "def", 1.0), make(1, "fast", 0.9), make(2, "slow", 2)};
  EXPECT_EQ(decide(cs, 0, 0.02), 1u);
}

TEST(Decide, DefaultWinsTies) {
  std::vector<CandidateReport> cs{make(0, "def", 1.01), make(1, "fast", 1.0)};
  EXPECT_EQ(decide(cs, 0, 0.02), 0u);
  EXPECT_EQ(decide(cs, 0, 0.0), 1u);
}

TEST(Decide, ThenPreferenceThenName) {
  std::vector<CandidateReport> cs{make(0, "def", 5.0), make(1, "b", 1.0, 1), make(2, "c", 1.01, 0),
                                  make(3, "a", 1.015, 1)};
  EXPECT_EQ(decide(cs, 0, 0.02), 2u);  // c has the lower preference rank
  cs[2].preference = 1;
  EXPECT_EQ(decide(cs, 0, 0.02), 3u);  // all rank 1: "a" by name
}

TEST(Decide, OnlyOkCandidatesAreRanked) {
  std::vector<CandidateReport> cs{make(0, "def", 1.0), make(1, "refused", 0.1, 0, Status::refused),
                                  make(2, "wrong", 0.1, 0, Status::validation_failed)};
  EXPECT_EQ(decide(cs, 0, 0.02), 0u);
  cs[0].outcome.status = Status::launch_failed;
  EXPECT_FALSE(decide(cs, 0, 0.02).has_value());
}

}  // namespace
}  // namespace tunekit::detail
