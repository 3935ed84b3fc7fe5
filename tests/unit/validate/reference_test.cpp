// Tests for src/validate/reference.cpp.
#include "tunekit/validate.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

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

}  // namespace
}  // namespace tunekit
