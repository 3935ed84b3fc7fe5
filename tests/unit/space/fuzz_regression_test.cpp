// Regression tests for what tests/fuzz/constraint_expression_fuzz and t1_space_fuzz found in
// src/space/ (one test per finding, named after the input).
#include <gtest/gtest.h>

#include "space/constraint_expression.hpp"
#include "tunekit/errors.hpp"

namespace tunekit::detail {
namespace {

// "994950e776627883145224": std::stod threw std::out_of_range through parse().
TEST(SpaceFuzzFindings, OutOfRangeRealLiteralIsAParseError) {
  try {
    ConstraintExpression::parse("   994950e776627883145224 > a");
    FAIL() << "accepted";
  } catch (const ParseError& e) {
    EXPECT_NE(std::string(e.what()).find("out of range"), std::string::npos) << e.what();
  }
  EXPECT_THROW(ConstraintExpression::parse("a < 1e-99999"), ParseError);
  EXPECT_NO_THROW(ConstraintExpression::parse("a < 1e300"));
}

// Found by feeding tunekit space hand-made hostile T1 files after the fuzzer (whose inputs
// stay short) missed it: 200000 nested '(' / "not" / '-' / "**" overflowed the stack (SIGSEGV).
TEST(SpaceFuzzFindings, HostileNestingIsAParseErrorNotAStackOverflow) {
  const auto repeat = [](const std::string& part, std::size_t n) {
    std::string out;
    for (std::size_t i = 0; i < n; ++i) out += part;
    return out;
  };
  for (const std::string& text :
       {repeat("(", 200000) + "a" + repeat(")", 200000), repeat("not ", 200000) + "a",
        repeat("-", 200000) + "a", "a" + repeat(" ** a", 200000), "a" + repeat(" + a", 200000)}) {
    try {
      ConstraintExpression::parse(text);
      FAIL() << "accepted " << text.substr(0, 20);
    } catch (const ParseError& e) {
      EXPECT_NE(std::string(e.what()).find("nested deeper"), std::string::npos) << e.what();
    }
  }
  // Real expressions are nowhere near the limit.
  const ConstraintExpression ok =
      ConstraintExpression::parse(repeat("(", 100) + "a + 1" + repeat(")", 100) + " > 1");
  const Value a(2);
  const Value* values[] = {&a};
  EXPECT_TRUE(ok.test(values));
}

// "1 ** 9223372036854775807": the integer power looped y times (a hang, not an answer).
TEST(SpaceFuzzFindings, IntegerPowerOfAHugeExponentAnswersAtOnce) {
  const auto value = [](const std::string& text) {
    return ConstraintExpression::parse(text).evaluate({});
  };
  EXPECT_EQ(value("1 ** 9223372036854775807"), Value(1));
  EXPECT_EQ(value("(-1) ** 9223372036854775807"), Value(-1));
  EXPECT_EQ(value("0 ** 9223372036854775807"), Value(0));
  EXPECT_EQ(value("2 ** 62"), Value(std::int64_t{1} << 62));
  EXPECT_EQ(value("(-2) ** 63"), Value(INT64_MIN));
  EXPECT_EQ(value("3 ** 0"), Value(1));
  EXPECT_EQ(value("7 ** 5"), Value(16807));
  EXPECT_THROW(value("2 ** 63"), UsageError);
  EXPECT_THROW(value("2 ** 9223372036854775807"), UsageError);
}

}  // namespace
}  // namespace tunekit::detail
