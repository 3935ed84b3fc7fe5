// Tests for src/validate/output_elements.cpp: exact f16/bf16 values, element reads, poison.
#include "validate/output_elements.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

namespace tunekit::detail {
namespace {

TEST(OutputElements, F16ValuesAreExact) {
  EXPECT_EQ(f16_to_double(0x3c00), 1.0);
  EXPECT_EQ(f16_to_double(0xc000), -2.0);
  EXPECT_EQ(f16_to_double(0x3555), 0x1.554p-2);  // 0.333251953125
  EXPECT_EQ(f16_to_double(0x7bff), 65504.0);     // the largest finite
  EXPECT_EQ(f16_to_double(0x0001), 0x1p-24);     // the smallest subnormal
  EXPECT_EQ(f16_to_double(0x03ff), 0x3ffp-24);   // the largest subnormal
  EXPECT_EQ(f16_to_double(0x0400), 0x1p-14);     // the smallest normal
  EXPECT_EQ(f16_to_double(0x0000), 0.0);
  EXPECT_TRUE(std::signbit(f16_to_double(0x8000)));
  EXPECT_EQ(f16_to_double(0x7c00), std::numeric_limits<double>::infinity());
  EXPECT_EQ(f16_to_double(0xfc00), -std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::isnan(f16_to_double(0x7e00)));
  EXPECT_TRUE(std::isnan(f16_to_double(0x7c01)));
}

TEST(OutputElements, Bf16IsTheHighHalfOfAnF32) {
  EXPECT_EQ(bf16_to_double(0x3f80), 1.0);
  EXPECT_EQ(bf16_to_double(0xc0a0), -5.0);
  EXPECT_EQ(bf16_to_double(0x3eab), 0x1.56p-2);
  EXPECT_EQ(bf16_to_double(0x0001), 0x1p-133);  // subnormal
  EXPECT_EQ(bf16_to_double(0x7f80), std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::isnan(bf16_to_double(0x7fc0)));
}

TEST(OutputElements, PoisonIsNaNForFloatsAndTheSentinelForIntegers) {
  std::vector<std::uint16_t> half(3, 0x3c00);
  std::vector<std::uint16_t> brain(2, 0x3f80);
  std::vector<std::int32_t> i32(3, 7);
  std::vector<std::int64_t> i64(2, 7);
  std::vector<std::uint8_t> u8(5, 7);
  const OutputView views[] = {OutputView::f16(half), OutputView::bf16(brain),
                              OutputView::of(std::span(i32)), OutputView::of(std::span(i64)),
                              OutputView::of(std::span(u8))};
  for (const OutputView& v : views) poison_view(v);
  for (std::size_t i = 0; i < half.size(); ++i) EXPECT_TRUE(std::isnan(float_element(views[0], i)));
  for (std::size_t i = 0; i < brain.size(); ++i)
    EXPECT_TRUE(std::isnan(float_element(views[1], i)));
  for (std::int32_t x : i32) EXPECT_EQ(static_cast<std::uint32_t>(x), 0xa5a5a5a5u);
  for (std::int64_t x : i64) EXPECT_EQ(static_cast<std::uint64_t>(x), 0xa5a5a5a5a5a5a5a5u);
  for (std::uint8_t x : u8) EXPECT_EQ(x, 0xa5);
}

TEST(OutputElements, IntegersReadExactly) {
  std::vector<std::int64_t> big{(std::int64_t{1} << 62) + 1, -3};
  std::vector<std::uint8_t> bytes{255, 0};
  EXPECT_EQ(integer_element(OutputView::of(std::span(big)), 0), (std::int64_t{1} << 62) + 1);
  EXPECT_EQ(integer_element(OutputView::of(std::span(big)), 1), -3);
  EXPECT_EQ(integer_element(OutputView::of(std::span(bytes)), 0), 255);
  EXPECT_EQ(element_size(OutputView::Type::bf16), 2u);
  EXPECT_EQ(type_name(OutputView::Type::i64), "i64");
}

}  // namespace
}  // namespace tunekit::detail
