// Tests for src/space/space.cpp, enumeration.cpp and t1_space_file.cpp.
#include "tunekit/space.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <set>

#include "fakes/datasets.hpp"
#include "tunekit/errors.hpp"

namespace tunekit {
namespace {

using testing::datasets;

Space small_space() {
  Space s;
  s.param("a", {1, 2, 4, 8, 16})
      .param("b", {1, 2, 4, 8, 16})
      .param("c", {"x", "y"})
      .constraint("a * b <= 32")
      .constraint("c == 'x' or a >= b");
  return s;
}

TEST(Space, EnumeratesExactlyTheValidConfigs) {
  const Space s = small_space();
  const Enumeration e = s.enumerate();
  std::size_t brute = 0;
  for (int a : {1, 2, 4, 8, 16})
    for (int b : {1, 2, 4, 8, 16})
      for (const char* c : {"x", "y"})
        if (a * b <= 32 && (std::string(c) == "x" || a >= b)) ++brute;
  EXPECT_EQ(e.size(), brute);
  for (std::size_t i = 0; i < e.size(); ++i) {
    const Config c = e.config(i);
    EXPECT_TRUE(s.valid(c)) << c.text();
    EXPECT_EQ(e.index_of(c), i);
  }
  EXPECT_FALSE(e.index_of(Config{{"a", 16}, {"b", 16}, {"c", "x"}}));
  EXPECT_FALSE(s.valid(Config{{"a", 16}, {"b", 16}, {"c", "x"}}));
  EXPECT_EQ(e.config(0).text(), "a=1,b=1,c=x");
}

TEST(Space, ConstraintsPruneInvalidPrefixes) {
  // The constraint on a alone must cut a=2 before b and c are ever bound.
  int calls = 0;
  Space s;
  s.param("a", {1, 2}).param("b", {1, 2, 3}).param("c", {1, 2, 3});
  s.constraint("a == 1");
  s.constraint(Constraint::predicate({"a", "b", "c"}, [&](std::span<const Value* const> v) {
    ++calls;
    return v[0]->as_int() == 1;
  }));
  EXPECT_EQ(s.enumerate().size(), 9u);
  EXPECT_EQ(calls, 9);  // only the a=1 prefix reached the full-depth predicate
}

TEST(Space, MisuseIsAUsageError) {
  Space s;
  EXPECT_THROW(s.enumerate(), UsageError);
  EXPECT_THROW(s.param("a", {}), UsageError);
  s.param("a", {1, 2});
  EXPECT_THROW(s.param("a", {3}), UsageError);
  EXPECT_THROW(s.param("b", {1, 1}), UsageError);
  EXPECT_THROW(s.constraint("a + "), ParseError);
  s.constraint("a < zz");
  EXPECT_THROW(s.enumerate(), UsageError);
}

TEST(Enumeration, SamplingWithoutReplacementNeverRepeatsAndCovers) {
  const Enumeration e = small_space().enumerate();
  Rng rng(7);
  const std::vector<std::size_t> all = e.sample(e.size(), rng);
  EXPECT_EQ(std::set<std::size_t>(all.begin(), all.end()).size(), e.size());
  const std::vector<std::size_t> some = e.sample(5, rng);
  EXPECT_EQ(std::set<std::size_t>(some.begin(), some.end()).size(), 5u);
  EXPECT_THROW(e.sample(e.size() + 1, rng), UsageError);
  Rng a(3), b(3);
  EXPECT_EQ(e.sample(6, a), e.sample(6, b));
  // Uniform: over many draws of one index, every point shows up.
  std::vector<int> seen(e.size(), 0);
  Rng r(11);
  for (int k = 0; k < 2000; ++k) ++seen[e.sample(1, r)[0]];
  for (int count : seen) EXPECT_GT(count, 0);
}

TEST(Enumeration, Neighbourhoods) {
  Space s;
  s.param("a", {1, 2, 3, 4}).param("b", {1, 2, 3}).constraint("a != 2 or b != 2");
  const Enumeration e = s.enumerate();
  const std::size_t centre = *e.index_of(Config{{"a", 3}, {"b", 2}});
  std::set<std::string> hamming, adjacent;
  for (std::size_t j : e.neighbours(centre, Neighbourhood::hamming))
    hamming.insert(e.config(j).text());
  for (std::size_t j : e.neighbours(centre, Neighbourhood::adjacent))
    adjacent.insert(e.config(j).text());
  EXPECT_EQ(hamming, (std::set<std::string>{"a=1,b=2", "a=4,b=2", "a=3,b=1", "a=3,b=3"}));
  EXPECT_EQ(adjacent, (std::set<std::string>{"a=4,b=2", "a=3,b=1", "a=3,b=3"}));
}

TEST(Enumeration, FromPointsSortsAndDropsDuplicates) {
  std::vector<Parameter> params{{"a", {1, 2}}, {"b", {1, 2}}};
  const Enumeration e = Enumeration::from_points(params, {1, 0, 0, 1, 1, 0});
  EXPECT_EQ(e.size(), 2u);
  EXPECT_EQ(e.config(0).text(), "a=1,b=2");
  EXPECT_THROW(Enumeration::from_points(params, {0, 2}), UsageError);
}

TEST(T1SpaceFile, CountsTheSharedSpaces) {
  REQUIRE_DATASETS();
  const Enumeration conv = read_t1_space(datasets() / "spaces/convolution_milo.json").enumerate();
  EXPECT_EQ(conv.size(), 4362u);
  const Enumeration dd = read_t1_space(datasets() / "spaces/dedispersion_milo.json").enumerate();
  EXPECT_EQ(dd.size(), 11130u);
  EXPECT_EQ(dd.parameters().size(), 8u);
}

TEST(T1SpaceFile, BadFilesAreUsageErrors) {
  EXPECT_THROW(read_t1_space("/nonexistent/space.json"), UsageError);
}

}  // namespace
}  // namespace tunekit

namespace tunekit {
namespace {

std::vector<Value> ints(int n) {
  std::vector<Value> v;
  for (int i = 0; i < n; ++i) v.emplace_back(i);
  return v;
}

TEST(Space, AHugeSpaceIsAClearErrorNotBadAllocOrAHang) {
  // 10^16 points, no constraints: refused before anything is allocated.
  Space huge;
  for (char p = 'a'; p < 'i'; ++p) huge.param(std::string(1, p), ints(100));
  try {
    huge.enumerate();
    FAIL() << "a 10^12-point space was enumerated";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("too large to enumerate"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("1e+16"), std::string::npos) << e.what();
  }
  // Constraints that keep too many points, and ones that reject late after many prefixes.
  Space kept;
  kept.param("a", ints(1000)).param("b", ints(1000)).constraint("a >= 0");
  EXPECT_THROW(kept.enumerate(EnumerationLimits{.max_points = 1000}), UsageError);
  EXPECT_EQ(kept.enumerate(EnumerationLimits{.max_points = 1000000}).size(), 1000000u);
  Space late;
  late.param("a", ints(1000)).param("b", ints(1000)).constraint("a + b < 0");
  EXPECT_THROW(late.enumerate(EnumerationLimits{.max_visits = 10000}), UsageError);
  EXPECT_EQ(late.enumerate().size(), 0u);
  // A million values are checked for duplicates at once, not pairwise.
  Space wide;
  wide.param("a", ints(1000000));
  std::vector<Value> twice = ints(1000000);
  twice.emplace_back(999999);
  EXPECT_THROW(Space().param("a", twice), UsageError);
  std::vector<Value> nans{Value(std::nan("")), Value(-std::nan(""))};
  EXPECT_THROW(Space().param("x", nans), UsageError);
  EXPECT_NO_THROW(Space().param("y", std::vector<Value>{Value(1), Value(1.0), Value("1")}));
}

}  // namespace
}  // namespace tunekit
