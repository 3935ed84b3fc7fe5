// Tests for src/core/bucketing.cpp and include/tunekit/bucketing.hpp: pow2, multiple_of and
// explicit ranges, their bounds, overflow safety, declaration errors and the canonical text.
#include "tunekit/bucketing.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>

#include "tunekit/errors.hpp"

namespace tunekit {
namespace {

constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
constexpr std::int64_t kMin = std::numeric_limits<std::int64_t>::min();

std::string message_of(void (*fn)()) {
  try {
    fn();
  } catch (const UsageError& e) {
    return e.what();
  }
  return "(no UsageError)";
}

TEST(Bucketing, Pow2SharesABucketUpToTheNextPowerOfTwo) {
  const Bucketing b = Bucketing::pow2();
  EXPECT_EQ(b.representative(100), 128);
  EXPECT_EQ(b.representative(120), 128);
  EXPECT_EQ(b.representative(128), 128);
  EXPECT_EQ(b.representative(129), 256);
  EXPECT_EQ(b.bucket(100), (Bucket{65, 128}));
  EXPECT_EQ(b.bucket(129), (Bucket{129, 256}));
  EXPECT_EQ(b.bucket(1), (Bucket{1, 1}));
  EXPECT_EQ(b.bucket(2), (Bucket{2, 2}));
  EXPECT_EQ(b.bucket(3), (Bucket{3, 4}));
}

TEST(Bucketing, Pow2KeepsNonPositiveAndHugeValuesExact) {
  const Bucketing b = Bucketing::pow2();
  EXPECT_EQ(b.bucket(0), (Bucket{0, 0}));
  EXPECT_EQ(b.bucket(-5), (Bucket{-5, -5}));
  const std::int64_t top = std::int64_t{1} << 62;
  EXPECT_EQ(b.representative(top - 1), top);
  EXPECT_EQ(b.representative(top), top);
  EXPECT_EQ(b.bucket(top + 1), (Bucket{top + 1, top + 1}));  // 2^63 does not fit
  EXPECT_EQ(b.bucket(kMax), (Bucket{kMax, kMax}));
  EXPECT_EQ(b.bucket(kMin), (Bucket{kMin, kMin}));
}

TEST(Bucketing, MultipleOfRoundsUpToTheStep) {
  const Bucketing b = Bucketing::multiple_of(64);
  EXPECT_EQ(b.bucket(1), (Bucket{1, 64}));
  EXPECT_EQ(b.bucket(64), (Bucket{1, 64}));
  EXPECT_EQ(b.bucket(65), (Bucket{65, 128}));
  EXPECT_EQ(b.bucket(0), (Bucket{-63, 0}));
  EXPECT_EQ(b.bucket(-5), (Bucket{-63, 0}));
  EXPECT_EQ(b.bucket(-64), (Bucket{-127, -64}));
  EXPECT_EQ(Bucketing::multiple_of(1).bucket(7), (Bucket{7, 7}));
}

TEST(Bucketing, MultipleOfNeverOverflows) {
  const Bucketing b = Bucketing::multiple_of(64);
  EXPECT_EQ(b.bucket(kMax), (Bucket{kMax, kMax}));  // the next multiple does not fit
  const std::int64_t last = kMax / 64 * 64;
  EXPECT_EQ(b.bucket(last), (Bucket{last - 63, last}));
  const Bucketing wide = Bucketing::multiple_of(std::int64_t{1} << 62);
  EXPECT_EQ(wide.bucket(kMin), (Bucket{kMin, kMin}));  // the lower bound saturates
  EXPECT_EQ(Bucketing::multiple_of(kMax).bucket(kMin + 1), (Bucket{kMin, -kMax}));
}

TEST(Bucketing, MultipleOfNeedsAPositiveStep) {
  EXPECT_THROW(Bucketing::multiple_of(0), UsageError);
  EXPECT_NE(message_of([] { Bucketing::multiple_of(-8); }).find("positive"), std::string::npos);
}

TEST(Bucketing, RangesMapToTheSmallestUpperBoundAtOrAboveTheValue) {
  const Bucketing b = Bucketing::ranges({64, 256, 1024});
  EXPECT_EQ(b.bucket(1), (Bucket{kMin, 64}));
  EXPECT_EQ(b.bucket(64), (Bucket{kMin, 64}));
  EXPECT_EQ(b.bucket(65), (Bucket{65, 256}));
  EXPECT_EQ(b.bucket(1024), (Bucket{257, 1024}));
  EXPECT_EQ(b.bucket(1025), (Bucket{1025, 1025}));  // past the last bound: kept exact
  EXPECT_EQ(b.bucket(kMax), (Bucket{kMax, kMax}));
  EXPECT_EQ(Bucketing::ranges({kMax}).bucket(kMin), (Bucket{kMin, kMax}));
}

TEST(Bucketing, RangesMustBeGivenAndStrictlyAscending) {
  EXPECT_THROW(Bucketing::ranges({}), UsageError);
  EXPECT_THROW(Bucketing::ranges({64, 64}), UsageError);
  EXPECT_NE(message_of([] {
              Bucketing::ranges({256, 64});
            }).find("64 follows 256"),
            std::string::npos);
}

TEST(Bucketing, TextIsCanonicalAndEqualityFollowsIt) {
  EXPECT_EQ(Bucketing::pow2().text(), "pow2");
  EXPECT_EQ(Bucketing::multiple_of(64).text(), "multiple_of:64");
  EXPECT_EQ(Bucketing::ranges({64, 256, 1024}).text(), "ranges:64,256,1024");
  EXPECT_EQ(Bucketing::multiple_of(8), Bucketing::multiple_of(8));
  EXPECT_FALSE(Bucketing::multiple_of(8) == Bucketing::multiple_of(16));
  EXPECT_FALSE(Bucketing::pow2() == Bucketing::multiple_of(1));
  EXPECT_EQ(Bucketing::ranges({1, 2}).kind(), Bucketing::Kind::ranges);
}

}  // namespace
}  // namespace tunekit
