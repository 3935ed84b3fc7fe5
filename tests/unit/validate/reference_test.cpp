// Tests for src/validate/reference.cpp.
#include "tunekit/validate.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace tunekit {
namespace {

TEST(Reference, ToleranceAbsPlusRel) {
  std::vector<float> want{1.0f, 100.0f};
  Reference ref = Reference::of(std::vector<OutputView>{OutputView::of(std::span<float>(want))});
  std::vector<float> got{1.0f + 1e-6f, 100.01f};
  Tolerance tol{1e-5, 1e-3};
  EXPECT_TRUE(
      ref.compare(std::vector<OutputView>{OutputView::of(std::span<float>(got))}, tol).ok());
  got[1] = 100.5f;
  Outcome bad = ref.compare(std::vector<OutputView>{OutputView::of(std::span<float>(got))}, tol);
  EXPECT_EQ(bad.status, Status::validation_failed);
  EXPECT_NE(bad.message.find("output 0[1]"), std::string::npos) << bad.message;
}

TEST(Reference, NaNNeverPasses) {
  std::vector<double> want{std::numeric_limits<double>::quiet_NaN(), 1.0};
  Reference ref = Reference::of(std::vector<OutputView>{OutputView::of(std::span<double>(want))});
  std::vector<double> got = want;
  Tolerance huge{1e300, 1e300};
  EXPECT_FALSE(
      ref.compare(std::vector<OutputView>{OutputView::of(std::span<double>(got))}, huge).ok());
  std::vector<double> want2{1.0};
  Reference ref2 = Reference::of(std::vector<OutputView>{OutputView::of(std::span<double>(want2))});
  std::vector<double> inf{std::numeric_limits<double>::infinity()};
  EXPECT_FALSE(
      ref2.compare(std::vector<OutputView>{OutputView::of(std::span<double>(inf))}, huge).ok());
}

// A long output is first compared by a counting loop; any failure is counted again and the
// first described: the count and the first element are exact whatever the mix of failures.
TEST(Reference, ALongOutputCountsEveryFailureAndDescribesTheFirst) {
  std::vector<float> want(10'000);
  for (std::size_t i = 0; i < want.size(); ++i) want[i] = static_cast<float>(i % 97) - 48.0f;
  Reference ref = Reference::of(std::vector<OutputView>{OutputView::of(std::span<float>(want))});
  const Tolerance tol{1e-6, 1e-6};
  std::vector<float> got = want;
  EXPECT_TRUE(
      ref.compare(std::vector<OutputView>{OutputView::of(std::span<float>(got))}, tol).ok());
  got[4321] = std::numeric_limits<float>::quiet_NaN();
  got[7000] = std::numeric_limits<float>::infinity();
  got[9999] += 1.0f;
  Outcome bad = ref.compare(std::vector<OutputView>{OutputView::of(std::span<float>(got))}, tol);
  EXPECT_EQ(bad.status, Status::validation_failed);
  EXPECT_EQ(bad.message.rfind("3 element(s) outside tolerance", 0), 0u) << bad.message;
  EXPECT_NE(bad.message.find("first: output 0[4321] = nan"), std::string::npos) << bad.message;
}

// Float outputs are compared in float first (reference.cpp all_within_in_float): the verdict
// must be the double test's for every element — at the bound, across magnitudes (subnormal to
// huge), for NaN and infinities, and for tolerances outside the float path's range.
TEST(Reference, FloatOutputsComparedInFloatGiveTheDoubleVerdict) {
  const std::vector<Tolerance> tolerances{{1e-6, 1e-5},  {1e-3, 0},    {0x1p-100, 1},
                                          {1e-30, 1e-5}, {1.0, 2.0},   {0, 1e-5},
                                          {1e30, 1e-7},  {0x1p100, 1}, {1e-5, 1e-2}};
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> unit(-1, 1);
  std::uniform_int_distribution<int> exponent(-140, 120);
  for (const Tolerance& tol : tolerances) {
    std::vector<float> want, got;
    for (int i = 0; i < 20000; ++i) {
      const float e = i % 97 == 0   ? 0.0f
                      : i % 89 == 0 ? inf
                                    : static_cast<float>(std::ldexp(unit(rng), exponent(rng)));
      // At the bound, give or take a few parts in 10^7 (float's rounding flips these).
      const double bound = tol.abs + tol.rel * std::abs(static_cast<double>(e));
      const double nudge = 1 + 4e-7 * unit(rng);
      float g =
          static_cast<float>(static_cast<double>(e) + (unit(rng) < 0 ? -1 : 1) * bound * nudge);
      if (i % 101 == 0) g = nan;
      if (i % 103 == 0) g = -inf;
      want.push_back(e);
      got.push_back(g);
    }
    std::size_t expected_bad = 0;
    for (std::size_t i = 0; i < want.size(); ++i) {
      const double g = got[i], e = want[i];
      const bool pass = std::abs(g - e) <= tol.abs + tol.rel * std::abs(e);
      expected_bad += !pass;
      // One element alone: the fast path on a block of one.
      std::vector<float> w1{want[i]}, g1{got[i]};
      const Reference one =
          Reference::of(std::vector<OutputView>{OutputView::of(std::span<float>(w1))});
      EXPECT_EQ(
          one.compare(std::vector<OutputView>{OutputView::of(std::span<float>(g1))}, tol).ok(),
          pass)
          << "got " << got[i] << " want " << want[i] << " tol " << tol.abs << "/" << tol.rel;
    }
    ASSERT_GT(expected_bad, 0u);
    ASSERT_LT(expected_bad, want.size());
    const Reference all =
        Reference::of(std::vector<OutputView>{OutputView::of(std::span<float>(want))});
    const Outcome o =
        all.compare(std::vector<OutputView>{OutputView::of(std::span<float>(got))}, tol);
    EXPECT_EQ(o.message.rfind(std::to_string(expected_bad) + " element(s)", 0), 0u) << o.message;
    // Whole blocks of the float loop: every element within (at 0.9 of the bound), then one
    // element just over it at the end of a block.
    std::vector<float> clean_want = want, near_bound;
    for (float& x : clean_want)
      if (std::isinf(x)) x = 1;
    for (const float e : clean_want) {
      const double bound = tol.abs + tol.rel * std::abs(static_cast<double>(e));
      near_bound.push_back(static_cast<float>(static_cast<double>(e) + 0.9 * bound));
    }
    std::size_t within_bad = 0;
    for (std::size_t i = 0; i < clean_want.size(); ++i) {
      const double g = near_bound[i], e = clean_want[i];
      within_bad += !(std::abs(g - e) <= tol.abs + tol.rel * std::abs(e));
    }
    const Reference clean =
        Reference::of(std::vector<OutputView>{OutputView::of(std::span<float>(clean_want))});
    const Outcome within =
        clean.compare(std::vector<OutputView>{OutputView::of(std::span<float>(near_bound))}, tol);
    EXPECT_EQ(within.ok(), within_bad == 0) << within.message;
    if (within_bad == 0) {
      const double e = clean_want[2047];
      near_bound[2047] = static_cast<float>(e + 1.01 * (tol.abs + tol.rel * std::abs(e)) + 1e-30);
      const Outcome over =
          clean.compare(std::vector<OutputView>{OutputView::of(std::span<float>(near_bound))}, tol);
      EXPECT_EQ(over.message.rfind("1 element(s)", 0), 0u) << over.message;
    }
  }
}

TEST(Reference, PoisonFillsNaN) {
  std::vector<float> f(3, 1.0f);
  std::vector<double> d(2, 1.0);
  poison(std::vector<OutputView>{OutputView::of(std::span<float>(f)),
                                 OutputView::of(std::span<double>(d))});
  for (float x : f) EXPECT_TRUE(std::isnan(x));
  for (double x : d) EXPECT_TRUE(std::isnan(x));
}

TEST(Reference, ShapeMismatchFails) {
  std::vector<float> want(3);
  std::vector<float> got(4);
  Reference ref = Reference::of(std::vector<OutputView>{OutputView::of(std::span<float>(want))});
  EXPECT_FALSE(
      ref.compare(std::vector<OutputView>{OutputView::of(std::span<float>(got))}, {}).ok());
  EXPECT_FALSE(ref.compare(std::vector<OutputView>{}, {}).ok());
}

TEST(Reference, IntegersCompareExactlyWhateverTheTolerance) {
  std::vector<std::int64_t> want{(std::int64_t{1} << 60) + 1, 5, -7};
  Reference ref = Reference::of(std::vector<OutputView>{OutputView::of(std::span(want))});
  std::vector<std::int64_t> got = want;
  const Tolerance huge{1e300, 1e300};
  EXPECT_TRUE(ref.compare(std::vector<OutputView>{OutputView::of(std::span(got))}, huge).ok());
  got[0] = std::int64_t{1} << 60;  // the same double, a different integer
  got[2] = -8;
  Outcome bad = ref.compare(std::vector<OutputView>{OutputView::of(std::span(got))}, huge);
  EXPECT_EQ(bad.status, Status::validation_failed);
  EXPECT_NE(bad.message.find("2 element(s)"), std::string::npos) << bad.message;
  EXPECT_NE(bad.message.find("output 0[0] = 1152921504606846976, expected 1152921504606846977"),
            std::string::npos)
      << bad.message;
}

TEST(Reference, SmallIntegerTypesCompareExactly) {
  std::vector<std::int32_t> want32{1, -2};
  std::vector<std::uint8_t> want8{0, 255};
  Reference ref = Reference::of(
      std::vector<OutputView>{OutputView::of(std::span(want32)), OutputView::of(std::span(want8))});
  std::vector<std::int32_t> got32 = want32;
  std::vector<std::uint8_t> got8{0, 254};
  Outcome bad = ref.compare(
      std::vector<OutputView>{OutputView::of(std::span(got32)), OutputView::of(std::span(got8))},
      Tolerance{10, 10});
  EXPECT_EQ(bad.status, Status::validation_failed);
  EXPECT_NE(bad.message.find("output 1[1] = 254, expected 255"), std::string::npos) << bad.message;
}

TEST(Reference, HalfFloatsCompareWithTheTolerance) {
  std::vector<std::uint16_t> want{0x3c00, 0x4000};  // 1, 2
  Reference ref = Reference::of(std::vector<OutputView>{OutputView::f16(want)});
  std::vector<std::uint16_t> got{0x3c01, 0x4000};  // 1 + 2^-10: one ulp off
  EXPECT_TRUE(ref.compare(std::vector<OutputView>{OutputView::f16(got)}, {1e-3, 0}).ok());
  Outcome bad = ref.compare(std::vector<OutputView>{OutputView::f16(got)}, {1e-4, 0});
  EXPECT_EQ(bad.status, Status::validation_failed);
  EXPECT_NE(bad.message.find("output 0[0] = 1.00097656, expected 1"), std::string::npos)
      << bad.message;
  std::vector<std::uint16_t> inf{0x7c00, 0x4000};
  EXPECT_FALSE(ref.compare(std::vector<OutputView>{OutputView::f16(inf)}, {1e300, 1e300}).ok());

  std::vector<std::uint16_t> bwant{0x3f80};  // bf16 1
  Reference bref = Reference::of(std::vector<OutputView>{OutputView::bf16(bwant)});
  std::vector<std::uint16_t> bnan{0x7fc0};
  EXPECT_FALSE(bref.compare(std::vector<OutputView>{OutputView::bf16(bnan)}, {1e300, 1e300}).ok());
  EXPECT_TRUE(bref.compare(std::vector<OutputView>{OutputView::bf16(bwant)}, {}).ok());
}

TEST(Reference, ATypeMismatchFails) {
  std::vector<std::uint16_t> bits{0x3c00};
  Reference ref = Reference::of(std::vector<OutputView>{OutputView::f16(bits)});
  Outcome bad = ref.compare(std::vector<OutputView>{OutputView::bf16(bits)}, {});
  EXPECT_EQ(bad.status, Status::validation_failed);
  EXPECT_NE(bad.message.find("output 0 is bf16, the reference's f16"), std::string::npos)
      << bad.message;
}

TEST(Reference, PoisonFillsEveryType) {
  std::vector<std::uint16_t> half(2, 0x3c00);
  std::vector<std::int32_t> ints(2, 0);
  poison(std::vector<OutputView>{OutputView::f16(half), OutputView::of(std::span(ints))});
  EXPECT_EQ(half[1], 0x7e00);
  EXPECT_EQ(static_cast<std::uint32_t>(ints[0]), 0xa5a5a5a5u);
}

}  // namespace
}  // namespace tunekit
