// Tests for src/space/constraint_expression.cpp (the constraint dialect, Python semantics).
#include "space/constraint_expression.hpp"

#include <gtest/gtest.h>

#include "tunekit/errors.hpp"

namespace tunekit::detail {
namespace {

Value eval(std::string_view text, std::vector<Value> values = {}) {
  const ConstraintExpression e = ConstraintExpression::parse(text);
  std::vector<const Value*> ptrs;
  for (const Value& v : values) ptrs.push_back(&v);
  return e.evaluate(ptrs);
}

std::size_t error_position(std::string_view text) {
  try {
    ConstraintExpression::parse(text);
  } catch (const ParseError& e) {
    return e.position();
  }
  ADD_FAILURE() << "no ParseError for '" << text << "'";
  return 0;
}

TEST(ConstraintExpression, ArithmeticFollowsPython) {
  EXPECT_EQ(eval("7 / 2"), Value(3.5));
  EXPECT_EQ(eval("7 // 2"), Value(3));
  EXPECT_EQ(eval("-7 // 2"), Value(-4));
  EXPECT_EQ(eval("-7 % 3"), Value(2));
  EXPECT_EQ(eval("7 % -3"), Value(-2));
  EXPECT_EQ(eval("2 ** 10"), Value(1024));
  EXPECT_EQ(eval("-2 ** 2"), Value(-4));  // ** binds tighter than unary minus
  EXPECT_EQ(eval("1 + 2 * 3 - 4"), Value(3));
  EXPECT_EQ(eval("(1 + 2) * 3"), Value(9));
  EXPECT_EQ(eval("16 % 2.0"), Value(0.0));
  EXPECT_EQ(eval("True + 1"), Value(2));
  EXPECT_EQ(eval("1.5e1"), Value(15.0));
}

TEST(ConstraintExpression, ComparisonsChainAndLogicShortCircuits) {
  EXPECT_EQ(eval("32 <= a * b <= 1024", {8, 8}), Value(true));
  EXPECT_EQ(eval("32 <= a * b <= 1024", {2, 8}), Value(false));
  EXPECT_EQ(eval("32 <= a * b <= 1024", {64, 32}), Value(false));
  EXPECT_EQ(eval("1 < 2 > 1"), Value(true));
  EXPECT_EQ(eval("not 1 == 2"), Value(true));
  EXPECT_EQ(eval("a == 0 or 10 % a == 0", {0}), Value(true));  // no division by zero
  EXPECT_EQ(eval("a != 0 and 10 % a == 0", {0}), Value(false));
  EXPECT_EQ(eval("x == 'abc'", {"abc"}), Value(true));
  EXPECT_EQ(eval("x == 1", {"abc"}), Value(false));
  EXPECT_EQ(eval("1 == 1.0"), Value(true));
}

TEST(ConstraintExpression, NamesInOrderOfFirstUse) {
  const ConstraintExpression e = ConstraintExpression::parse("b * a + b < c");
  EXPECT_EQ(e.names(), (std::vector<std::string>{"b", "a", "c"}));
}

TEST(ConstraintExpression, BadExpressionsNameThePosition) {
  EXPECT_EQ(error_position("a + * b"), 4u);
  EXPECT_EQ(error_position("(a + b"), 6u);
  EXPECT_EQ(error_position("a $ b"), 2u);
  EXPECT_EQ(error_position("a b"), 2u);
  EXPECT_EQ(error_position(""), 0u);
  EXPECT_EQ(error_position("a == 'x"), 5u);
  EXPECT_EQ(error_position("3abc > 1"), 0u);
  EXPECT_EQ(error_position("a and"), 5u);
  try {
    ConstraintExpression::parse("a <= (b + )");
    FAIL();
  } catch (const ParseError& e) {
    EXPECT_NE(std::string(e.what()).find("position 10"), std::string::npos) << e.what();
  }
}

TEST(ConstraintExpression, EvaluationErrorsAreUsageErrors) {
  EXPECT_THROW(eval("1 / 0"), UsageError);
  EXPECT_THROW(eval("a % 0", {4}), UsageError);
  EXPECT_THROW(eval("x + 1", {"s"}), UsageError);
  EXPECT_THROW(eval("x < 1", {"s"}), UsageError);
}

}  // namespace
}  // namespace tunekit::detail
