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

// The verdict of a final pairing is the pairs' median ratio, even when they are too noisy to
// bound it; against a library anchor (bar 1 / 1.02) the anchor stands within the tie band.
TEST(PairedVerdict, ThePairsMedianDecidesEvenWhenTheyAreTooNoisyToBound) {
  const double bar = 1 / 1.02;
  stats::PairedScore s;
  s.pairs = 10;
  s.ratio = 0.95;
  s.ratio_high = 1.02;  // not surely under 1 / 1.02: the default would stand, the anchor not
  s.scored = true;
  EXPECT_TRUE(paired_verdict(s, bar).winner_stands);
  s.scored = false;
  s.why = "pairs too noisy";
  const PairedVerdict noisy = paired_verdict(s, bar);
  EXPECT_TRUE(noisy.winner_stands);
  EXPECT_NE(noisy.why.find("pairs too noisy"), std::string::npos) << noisy.why;
  s.ratio = 0.99;  // within the band: the library
  EXPECT_FALSE(paired_verdict(s, bar).winner_stands);
  s.ratio = 1.3;
  EXPECT_FALSE(paired_verdict(s, bar).winner_stands);
  s.ratio = 0;  // too few pairs gave a ratio: nothing learned, the measured winner stands
  s.pairs = 2;
  EXPECT_TRUE(paired_verdict(s, bar).winner_stands);
  s.ratio = std::numeric_limits<double>::quiet_NaN();
  EXPECT_TRUE(paired_verdict(s, bar).winner_stands);
}

// Against a tied rival (bar 1 + 0.02 / 2) the tie order's pick stands unless the rival is
// faster by more than half the band in the pairs' median.
TEST(PairedVerdict, ATiedRivalTakesThePickOnlyWhenFasterByHalfTheBand) {
  const double bar = 1 + 0.02 / 2;
  stats::PairedScore s;
  s.pairs = 10;
  s.scored = true;
  s.ratio = 1.005;  // the pick 0.5 % slower: a tie the order keeps
  EXPECT_TRUE(paired_verdict(s, bar).winner_stands);
  s.ratio = 0.99;
  EXPECT_TRUE(paired_verdict(s, bar).winner_stands);
  s.ratio = 1.025;  // the pick 2.5 % slower: the rival
  const PairedVerdict v = paired_verdict(s, bar);
  EXPECT_FALSE(v.winner_stands);
  EXPECT_NE(v.why.find("is not under 1.01"), std::string::npos) << v.why;
}

}  // namespace
}  // namespace tunekit::detail
