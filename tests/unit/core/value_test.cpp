// Tests for src/core/value.cpp (Value, Config).
#include "tunekit/value.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "tunekit/errors.hpp"
#include "tunekit/key.hpp"

namespace tunekit {
namespace {

TEST(Value, TypedAccess) {
  EXPECT_EQ(Value(3).as_int(), 3);
  EXPECT_DOUBLE_EQ(Value(3).as_real(), 3.0);  // integers convert to real
  EXPECT_THROW(Value(1.5).as_int(), UsageError);
  EXPECT_THROW(Value("x").as_bool(), UsageError);
  EXPECT_EQ(Value(2.0).text(), "2.0");
  EXPECT_EQ(Value("1").text(), "\"1\"");
  EXPECT_NE(Value(1), Value(1.0));
}

TEST(Config, KeepsInsertionOrderAndReplaces) {
  Config c{{"mc", 64}, {"order", "ikj"}};
  c.set("nc", 256).set("mc", 128);
  EXPECT_EQ(c.text(), "mc=128,order=ikj,nc=256");
  EXPECT_EQ(c["nc"].as_int(), 256);
  EXPECT_THROW(c["kc"], UsageError);
  EXPECT_EQ(Config::parse(c.text()), c);
  EXPECT_THROW((Config{{"a", 1}, {"a", 2}}), UsageError);
}

}  // namespace
}  // namespace tunekit

namespace tunekit {
namespace {
TEST(Value, EqualityFollowsTheEncoding) {
  EXPECT_EQ(Value(std::nan("")), Value(std::nan("")));  // found by the key_text fuzzer
  EXPECT_NE(Value(0.0), Value(-0.0));
  EXPECT_EQ(Key::parse("s=nan"), Key::parse("s=nan"));
}
}  // namespace
}  // namespace tunekit

namespace tunekit {
namespace {
TEST(Value, SizesConvertOrRefuse) {
  std::size_t rows = 4096;
  Key k{{"rows", rows}};
  EXPECT_EQ(k["rows"].as_int(), 4096);
  EXPECT_THROW(Value(static_cast<unsigned long long>(-1)), UsageError);
}
}  // namespace
}  // namespace tunekit
