// Tests for src/stack/problem.cpp: the exact signature, the workload digest and the cache key.
#include "tunekit/stack.hpp"

#include <gtest/gtest.h>

#include <limits>

#include "unit/stack/stack_test_support.hpp"

namespace tunekit::stack {
namespace {

using test::make_problem;
using test::make_runner;
using test::make_set;
using test::options_with;

TEST(StackProblem, AnyFieldOfTheSignatureIsADifferentWorkload) {
  const Problem base = make_problem();
  std::vector<Problem> others(7, base);
  others[0].signature = Key{{"tokens", 513}, {"d", 512}, {"dtype", "f32"}};            // a value
  others[1].signature = Key{{"tokens", 512.0}, {"d", 512}, {"dtype", "f32"}};          // a type
  others[2].signature = Key{{"tokenz", 512}, {"d", 512}, {"dtype", "f32"}};            // a name
  others[3].signature = Key{{"tokens", 512}, {"d", 512}, {"dtype", "f32"}, {"h", 8}};  // extra
  others[4].signature = Key{{"d", 512}, {"tokens", 512}, {"dtype", "f32"}};            // order
  others[5].scope = Scope::application;
  others[6].name = "block2";
  for (const Problem& o : others) {
    EXPECT_NE(o.workload_digest(), base.workload_digest()) << o.signature.text();
    EXPECT_NE(cache_key(o, make_set()), cache_key(base, make_set())) << o.signature.text();
  }
  // No bucketing: 512 and 513 are two decisions, each tuned.
  auto runner = make_runner();
  StackController c(options_with(runner));
  EXPECT_EQ(c.select(base, make_set()).source, DecisionSource::tuned);
  EXPECT_EQ(c.select(others[0], make_set()).source, DecisionSource::tuned);
  EXPECT_EQ(c.select(base, make_set()).source, DecisionSource::hit);
  EXPECT_EQ(c.stats().tunes, 2u);
}

TEST(StackProblem, TheEncodingIsLengthDelimited) {
  Problem a = make_problem("ab");
  a.signature = Key{{"c", "d"}};
  Problem b = make_problem("a");
  b.signature = Key{{"bc", "d"}};
  EXPECT_NE(a.encode(), b.encode());
  EXPECT_NE(a.workload_digest(), b.workload_digest());
  EXPECT_EQ(a.workload_digest(), Digest::of(a.encode()));
}

TEST(StackProblem, TheCacheKeyCoversManifestOrderReferenceAndTolerance) {
  const Problem p = make_problem();
  const CandidateSet base = make_set({"x", "y"});
  const Digest key = cache_key(p, base);
  EXPECT_EQ(cache_key(p, make_set({"x", "y"})), key);  // deterministic
  std::vector<CandidateSet> sets(4, base);
  std::swap(sets[0].candidates[1], sets[0].candidates[2]);  // order
  sets[1].candidates[1].version = 2;                        // a version
  sets[2].reference = 1;                                    // the reference
  sets[3].candidates.pop_back();                            // the manifest
  for (const CandidateSet& s : sets) {
    EXPECT_NE(s.checksum(), base.checksum());
    EXPECT_NE(cache_key(p, s), key);
  }
  Problem strict = p;
  strict.tolerance.rel = 1e-7;
  EXPECT_NE(cache_key(strict, base), key);
  Problem sampled = p;
  sampled.tolerance.max_readback_elements = 8;
  EXPECT_NE(cache_key(sampled, base), key);
  // What a candidate does is not its identity: a bumped version is.
  CandidateSet renamed_run = base;
  renamed_run.candidates[1].scratch_bytes = 99;
  EXPECT_EQ(cache_key(p, renamed_run), key);
}

// An infinite tolerance is refused before anything runs: rel = inf makes the limit on a zero
// element inf * 0 = NaN (an exact match would fail validation), abs = inf passes inf outputs.
TEST(StackProblem, AnInfiniteToleranceIsAUsageError) {
  auto runner = make_runner();
  StackController c(options_with(runner));
  for (int which = 0; which < 2; ++which) {
    Problem p = make_problem();
    (which == 0 ? p.tolerance.rel : p.tolerance.abs) = std::numeric_limits<double>::infinity();
    try {
      (void)c.select(p, make_set());
      ADD_FAILURE() << "an infinite tolerance was accepted";
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find("finite"), std::string::npos) << e.what();
    }
  }
  EXPECT_EQ(runner->total(), 0);
}

}  // namespace
}  // namespace tunekit::stack
