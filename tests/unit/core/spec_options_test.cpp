// Tests for src/core/spec_options.cpp: the one options-string parser of strategies and
// schedules, and its bounded getters.
#include <gtest/gtest.h>

#include <cstddef>
#include <limits>
#include <string>

#include "tunekit/errors.hpp"
#include "tunekit/registry.hpp"

namespace tunekit {
namespace {

SpecOptions parse(const std::string& text) {
  return SpecOptions::parse("strategy", "genetic", text);
}

// The UsageError's message, or "no error".
template <class F>
std::string message_of(F&& f) {
  try {
    f();
  } catch (const UsageError& e) {
    return e.what();
  }
  return "no error";
}

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(SpecOptions, CountsOutsideTheirRangeSayWhatIsAllowedAndWhatWasGiven) {
  const std::string m = message_of([] { parse("pop=0").count("pop", 20, 2, 10000); });
  EXPECT_EQ(m, "strategy 'genetic': pop must be an integer in [2, 10000], got 0");
  for (const char* bad : {"pop=-3", "pop=10001", "pop=4294967296000000000000", "pop=1.5", "pop=nan",
                          "pop=inf", "pop=+4", "pop= 4", "pop=4x", "pop=0x10"}) {
    const std::string text = bad;
    const std::string got = message_of([&] { parse(text).count("pop", 20, 2, 10000); });
    EXPECT_TRUE(has(got, "pop must be an integer in [2, 10000], got " + text.substr(4)))
        << bad << ": " << got;
  }
  EXPECT_EQ(parse("pop=2").count("pop", 20, 2, 10000), 2u);
  EXPECT_EQ(parse("pop=10000").count("pop", 20, 2, 10000), 10000u);
  EXPECT_EQ(parse("").count("pop", 20, 2, 10000), 20u);  // absent: the fallback
}

TEST(SpecOptions, NumbersRefuseNanInfinitiesAndOutOfRange) {
  for (const char* bad : {"x=nan", "x=NaN", "x=-nan", "x=inf", "x=-inf", "x=infinity", "x=1e400",
                          "x=-0.5", "x=1.01", "x=0.5s", "x=", "x=.", "x=1,,"}) {
    const std::string text = bad;
    const std::string got = message_of([&] { parse(text).number("x", 0.1, 0.0, 1.0); });
    EXPECT_TRUE(has(got, "strategy 'genetic'")) << bad << ": " << got;
    EXPECT_NE(got, "no error") << bad;
  }
  EXPECT_EQ(message_of([] { parse("x=nan").number("x", 0.1, 0.0, 1.0); }),
            "strategy 'genetic': x must be a number in [0, 1], got nan");
  EXPECT_DOUBLE_EQ(parse("x=0.25").number("x", 0.1, 0.0, 1.0), 0.25);
  EXPECT_DOUBLE_EQ(parse("x=1e-1").number("x", 0.5, 0.0, 1.0), 0.1);
  // An infinite range admits infinity on purpose; NaN never.
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(parse("x=inf").number("x", 0, 0, inf), inf);
  EXPECT_NE(message_of([&] { parse("x=nan").number("x", 0, -inf, inf); }), "no error");
}

TEST(SpecOptions, WordsListWhatIsAllowed) {
  EXPECT_EQ(message_of([] {
              parse("n=diagonal").word("n", "hamming", {"hamming", "adjacent"});
            }),
            "strategy 'genetic': n must be one of hamming|adjacent, got diagonal");
  EXPECT_EQ(parse("n=adjacent").word("n", "hamming", {"hamming", "adjacent"}), "adjacent");
}

TEST(SpecOptions, UnknownKeysAreRefusedListingTheAcceptedOnes) {
  SpecOptions o = parse("pop=4,popsize=3");
  o.count("pop", 20, 2, 10000);
  o.number("mutation", 0.1, 0.0, 1.0);
  const std::string m = message_of([&] { o.check(); });
  EXPECT_TRUE(has(m, "has no option 'popsize'")) << m;
  EXPECT_TRUE(has(m, "pop (integer in [2, 10000])")) << m;
  EXPECT_TRUE(has(m, "mutation (number in [0, 1])")) << m;
  SpecOptions none = parse("x=nan");
  EXPECT_TRUE(has(message_of([&] { none.check(); }), "accepts no options"));
}

TEST(SpecOptions, MalformedTextIsRefused) {
  for (const char* bad : {"pop", "=3", "pop=", "pop=3,", ",pop=3", "pop=3,pop=4"})
    EXPECT_NE(message_of([&] { parse(bad); }), "no error") << bad;
  EXPECT_TRUE(has(message_of([] { parse("pop=3,pop=4"); }), "given twice"));
  EXPECT_EQ(parse("pop=3,mutation=0.5").text(), "pop=3,mutation=0.5");
}

}  // namespace
}  // namespace tunekit
