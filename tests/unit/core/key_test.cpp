// Tests for src/core/key.cpp and src/core/field_text.cpp.
#include "tunekit/key.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "tunekit/errors.hpp"

namespace tunekit {
namespace {

TEST(Key, TextRoundTripKeepsTypes) {
  Key k{{"m", 256},      {"alpha", 1.5},  {"whole", 2.0},    {"dtype", "f32"},
        {"trans", true}, {"label", "12"}, {"path", "a,b=c"}, {"quote", "say \"hi\"\\"},
        {"neg", -7},     {"empty", ""}};
  std::string text = k.text();
  Key back = Key::parse(text);
  EXPECT_EQ(back, k) << text;
  EXPECT_EQ(back.digest(), k.digest());
  EXPECT_TRUE(back["whole"].is_real());
  EXPECT_TRUE(back["label"].is_string());
  EXPECT_TRUE(back["m"].is_integer());
  EXPECT_TRUE(back["trans"].is_boolean());
}

TEST(Key, ReadableText) {
  Key k{{"m", 1024}, {"n", 512}, {"dtype", "f32"}};
  EXPECT_EQ(k.text(), "m=1024,n=512,dtype=f32");
}

TEST(Key, LengthDelimitedEncodingCannotCollide) {
  Key ab_c{{"x", "ab"}, {"y", "c"}};
  Key a_bc{{"x", "a"}, {"y", "bc"}};
  EXPECT_NE(ab_c.encode(), a_bc.encode());
  EXPECT_NE(ab_c.digest(), a_bc.digest());
  // Names too: ("ab" = 1) vs ("a" = "b1")-like splits.
  Key names1{{"ab", 1}};
  Key names2{{"a", "b1"}};
  EXPECT_NE(names1.encode(), names2.encode());
}

TEST(Key, TypesAreDistinct) {
  EXPECT_NE(Key({{"n", 1}}).digest(), Key({{"n", "1"}}).digest());
  EXPECT_NE(Key({{"n", 1}}).digest(), Key({{"n", 1.0}}).digest());
  EXPECT_NE(Key({{"b", true}}).digest(), Key({{"b", "true"}}).digest());
}

TEST(Key, FieldOrderMatters) {
  Key mn{{"m", 1}, {"n", 2}};
  Key nm{{"n", 2}, {"m", 1}};
  EXPECT_NE(mn.digest(), nm.digest());
  EXPECT_FALSE(mn == nm);
}

TEST(Key, GoldenDigestIsStable) {
  // If this changes, every stored choice in the field is invalidated: bump deliberately.
  Key k{{"m", 256}, {"n", 256}, {"k", 256}, {"dtype", "f32"}};
  EXPECT_EQ(k.encode(), "1:mi3:2561:ni3:2561:ki3:2565:dtypes3:f32");
  EXPECT_EQ(k.digest().hex(), "bb73d315360761682b6514b83932f069");
}

TEST(Key, ParseErrorsNamePosition) {
  auto position_of = [](std::string_view text) -> long {
    try {
      Key::parse(text);
    } catch (const ParseError& e) {
      return static_cast<long>(e.position());
    }
    return -1;
  };
  EXPECT_EQ(position_of("m=1,=2"), 4);                  // missing name
  EXPECT_EQ(position_of("m"), 1);                       // missing '='
  EXPECT_EQ(position_of("m=1,m=2"), 4);                 // duplicate
  EXPECT_EQ(position_of("m=1,"), 3);                    // trailing comma
  EXPECT_EQ(position_of("m=\"abc"), 2);                 // unterminated
  EXPECT_EQ(position_of("m=a b"), 3);                   // space in bare value
  EXPECT_EQ(position_of("m="), 2);                      // empty value
  EXPECT_EQ(position_of("m=99999999999999999999"), 2);  // overflow
  EXPECT_EQ(position_of(""), -1);                       // the empty key is fine
}

TEST(Key, ParsesNumbersAndSpecials) {
  Key k = Key::parse("a=-3,b=2e3,c=0.5,d=inf,e=nan,f=1x,g=false");
  EXPECT_EQ(k["a"].as_int(), -3);
  EXPECT_DOUBLE_EQ(k["b"].as_real(), 2000.0);
  EXPECT_DOUBLE_EQ(k["c"].as_real(), 0.5);
  EXPECT_TRUE(std::isinf(k["d"].as_real()));
  EXPECT_TRUE(std::isnan(k["e"].as_real()));
  EXPECT_EQ(k["f"].as_string(), "1x");
  EXPECT_FALSE(k["g"].as_bool());
}

TEST(Key, DuplicateNamesAndMissingFieldsAreUsageErrors) {
  EXPECT_THROW((Key{{"m", 1}, {"m", 2}}), UsageError);
  Key k{{"m", 1}};
  EXPECT_THROW(k["n"], UsageError);
  EXPECT_THROW(k["m"].as_string(), UsageError);
}

}  // namespace
}  // namespace tunekit
