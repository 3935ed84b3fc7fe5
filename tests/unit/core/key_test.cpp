// Tests for src/core/key.cpp and src/core/field_text.cpp.
#include "tunekit/key.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "core/field_text.hpp"
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

TEST(Key, DuplicateNamesBeyondTheInlineFieldsAreUsageErrors) {
  std::vector<Field> fields;
  for (int i = 0; i < 10; ++i) fields.push_back(Field{"f" + std::to_string(i), Value(i)});
  fields.push_back(Field{"f3", Value(0)});
  EXPECT_THROW(Key(std::move(fields)), UsageError);
}

// Keys of every shape the storage and the digest treat differently: empty, inline (<= 8
// fields), on the heap (> 8), encodings hashed in one shot (<= 256 bytes) and streamed.
std::vector<std::pair<std::string, Key>> pinned_keys() {
  std::vector<std::pair<std::string, Key>> keys;
  keys.emplace_back("empty", Key{});
  keys.emplace_back("gemm", Key{{"m", 256}, {"n", 256}, {"k", 256}, {"dtype", "f32"}});
  keys.emplace_back("mixed", Key{{"m", 256},
                                 {"alpha", 1.5},
                                 {"whole", 2.0},
                                 {"neg", -7},
                                 {"z", -0.0},
                                 {"big", 1e300},
                                 {"tiny", 5e-324},
                                 {"trans", true},
                                 {"f", false}});
  keys.emplace_back("specials", Key{{"nan", std::numeric_limits<double>::quiet_NaN()},
                                    {"inf", std::numeric_limits<double>::infinity()},
                                    {"ninf", -std::numeric_limits<double>::infinity()},
                                    {"lo", std::numeric_limits<std::int64_t>::min()},
                                    {"hi", std::numeric_limits<std::int64_t>::max()}});
  keys.emplace_back(
      "strings",
      Key{{"path", "a,b=c"}, {"quote", "say \"hi\"\\"}, {"empty", ""}, {"mu", "\xc2\xb5s"}});
  std::vector<Field> twelve;
  for (int i = 0; i < 12; ++i) twelve.push_back(Field{"f" + std::to_string(i), Value(i * 1000)});
  keys.emplace_back("twelve", Key(std::move(twelve)));
  for (int n : {100, 200, 300, 1000, 5000}) {
    std::string s;
    for (int i = 0; i < n; ++i) s += static_cast<char>('a' + i % 26);
    keys.emplace_back("str" + std::to_string(n), Key{{"m", 4096}, {"name", s}, {"n", 7}});
  }
  std::vector<Field> wide;
  for (int i = 0; i < 40; ++i)
    wide.push_back(Field{"a_rather_long_field_name_" + std::to_string(i), Value(i * 0.25)});
  keys.emplace_back("wide40", Key(std::move(wide)));
  return keys;
}

TEST(Key, DigestsMatchThePreviousImplementation) {
  // Computed by the previous Key (fields in a std::vector, encode() hashed in one shot) before
  // the key became allocation-free: every digest in stores and artifacts must stay the same.
  const std::map<std::string, std::pair<std::size_t, std::string>> pinned = {
      {"empty", {0, "99aa06d3014798d86001c324468d497f"}},
      {"gemm", {40, "bb73d315360761682b6514b83932f069"}},
      {"mixed", {109, "be8bdddc053e9afb26a5ece2226b8780"}},
      {"specials", {90, "26872e6ccbafa834784399c914a3ba0d"}},
      {"strings", {53, "1018f32188fd5e3e7ba4eca649172cd6"}},
      {"twelve", {133, "c66c087800833caa93f54b761acbfbba"}},
      {"str100", {128, "6ebb0d245b4da8310c83e5a235354d30"}},
      {"str200", {228, "ff03a954ab1e390c41afa07827b38def"}},
      {"str300", {328, "bb2117184c304591185df4cf0b2bb2b8"}},
      {"str1000", {1029, "36466300dd19f1d9db5aef424324097f"}},
      {"str5000", {5029, "00fb4219d0e6dc1c7d54975cdea1357c"}},
      {"wide40", {1450, "8b4b314bff58b4e90f264b2d40a3c8f8"}},
  };
  const auto keys = pinned_keys();
  ASSERT_EQ(keys.size(), pinned.size());
  for (const auto& [name, key] : keys) {
    const auto& [size, hex] = pinned.at(name);
    EXPECT_EQ(key.encode().size(), size) << name;
    EXPECT_EQ(key.digest().hex(), hex) << name;
    EXPECT_EQ(key.digest(), Digest::of(key.encode())) << name;
    EXPECT_EQ(Key::parse(key.text()), key) << name;
  }
}

TEST(Key, CopiesAndMovesKeepFieldsAndDigest) {
  for (const auto& [name, key] : pinned_keys()) {
    Key copy = key;
    EXPECT_EQ(copy, key) << name;
    EXPECT_EQ(copy.digest(), key.digest()) << name;
    Key moved = std::move(copy);
    EXPECT_EQ(moved, key) << name;
    EXPECT_EQ(moved.digest(), key.digest()) << name;
    // A moved-from key is the empty key, digest included.
    EXPECT_EQ(copy, Key{}) << name;                    // NOLINT(bugprone-use-after-move)
    EXPECT_EQ(copy.digest(), Key{}.digest()) << name;  // NOLINT(bugprone-use-after-move)
  }
}

TEST(Key, AssignmentCrossesInlineAndHeapStorage) {
  const auto keys = pinned_keys();
  for (const auto& [from_name, from] : keys) {
    for (const auto& [to_name, to] : keys) {
      Key target = to;
      target = from;
      EXPECT_EQ(target, from) << from_name << " over " << to_name;
      EXPECT_EQ(target.digest(), from.digest()) << from_name << " over " << to_name;
      Key source = to;
      target = std::move(source);
      EXPECT_EQ(target, to) << to_name << " moved over " << from_name;
      EXPECT_EQ(target.digest(), to.digest()) << to_name << " moved over " << from_name;
    }
  }
  Key self = keys[1].second;
  const Key& alias = self;
  self = alias;
  EXPECT_EQ(self, keys[1].second);
}

TEST(Key, FieldsViewKeepsOrderOnTheHeapToo) {
  std::vector<Field> fields;
  for (int i = 0; i < 9; ++i) fields.push_back(Field{"f" + std::to_string(i), Value(i)});
  Key k(fields);
  ASSERT_EQ(k.fields().size(), 9u);
  for (int i = 0; i < 9; ++i) EXPECT_EQ(k.fields()[i], fields[i]);
  EXPECT_EQ(k.integer("f8"), 8);
}

TEST(Key, EncodingWritesValuesAsTheTextFormDoes) {
  // The encoder formats numbers itself (without allocating); it must agree with raw_text.
  std::vector<Value> values = {Value(0),    Value(-1),   Value(9),     Value(10),
                               Value(-10),  Value(99),   Value(100),   Value(12345),
                               Value(1.0),  Value(-0.0), Value(0.1),   Value(1e21),
                               Value(1e-7), Value(true), Value(false), Value("f32")};
  for (std::int64_t p = 1; p <= std::numeric_limits<std::int64_t>::max() / 10; p *= 10)
    for (std::int64_t v : {p - 1, p, p + 1, -p + 1, -p, -p - 1}) values.emplace_back(v);
  values.emplace_back(std::numeric_limits<std::int64_t>::min());
  values.emplace_back(std::numeric_limits<std::int64_t>::max());
  values.emplace_back(std::numeric_limits<double>::max());
  values.emplace_back(std::numeric_limits<double>::denorm_min());
  for (const Value& v : values) {
    static constexpr char kLetter[] = {'i', 'r', 's', 'b'};
    const std::string text = detail::raw_text(v);
    const std::string want = std::string("1:v") + kLetter[static_cast<int>(v.type())] +
                             std::to_string(text.size()) + ":" + text;
    Key k{{"v", v}};
    EXPECT_EQ(k.encode(), want);
    EXPECT_EQ(k.digest(), Digest::of(want)) << want;
  }
}

}  // namespace
}  // namespace tunekit
