// Tests for src/stack/stack_readback.cpp: validation reads back at most the tolerance's bound
// of output elements (a strided sample), and NaN never passes.
#include "stack/stack_readback.hpp"

#include <gtest/gtest.h>

#include <limits>

#include "unit/stack/stack_test_support.hpp"

namespace tunekit::detail {
namespace {

using stack::test::make_problem;
using stack::test::make_runner;
using stack::test::options_with;

TEST(StackReadback, PositionsAreAllOrAnEvenStridedSample) {
  EXPECT_EQ(readback_positions(5, 8), (std::vector<std::uint64_t>{0, 1, 2, 3, 4}));
  const std::vector<std::uint64_t> s = readback_positions(1000003, 64);
  ASSERT_EQ(s.size(), 64u);
  EXPECT_EQ(s.front(), 0u);
  EXPECT_EQ(s.back(), 1000002u);
  for (std::size_t i = 1; i < s.size(); ++i) EXPECT_LT(s[i - 1], s[i]);
  EXPECT_EQ(readback_positions(100, 1), (std::vector<std::uint64_t>{0}));
  EXPECT_TRUE(readback_positions(0, 8).empty());
}

TEST(StackReadback, ComparesOnlyTheSampleAndNanNeverPasses) {
  fakes::FloatWorkspace ref(1000);
  for (float& x : ref.out) x = 1.0f;
  stack::Tolerance t{.abs = 1e9, .rel = 1e9, .max_readback_elements = 10};
  StackReadback expected(ref, t);
  EXPECT_EQ(expected.sampled(), 10u);
  EXPECT_EQ(ref.largest_read, 10u);
  fakes::FloatWorkspace cand(1000);
  cand.out = ref.out;
  cand.out[1] = 5.0f;  // not sampled (positions step by 111): within the bound, unseen
  EXPECT_EQ(expected.mismatch(cand), std::nullopt);
  EXPECT_LE(cand.largest_read, 10u);
  cand.out[0] = std::numeric_limits<float>::quiet_NaN();  // sampled: fails whatever the tolerance
  std::optional<std::string> bad = expected.mismatch(cand);
  ASSERT_TRUE(bad);
  EXPECT_NE(bad->find("element 0"), std::string::npos) << *bad;
  fakes::FloatWorkspace shorter(999);
  EXPECT_TRUE(expected.mismatch(shorter));
}

// Every read the controller makes, on every trial's workspace, is recorded.
struct SharedCountWorkspace final : fakes::FloatWorkspace {
  SharedCountWorkspace(std::size_t n, std::shared_ptr<std::vector<std::size_t>> log)
      : FloatWorkspace(n), reads_log(std::move(log)) {}
  std::vector<double> read(std::span<const std::uint64_t> positions) override {
    reads_log->push_back(positions.size());
    return FloatWorkspace::read(positions);
  }
  std::shared_ptr<std::vector<std::size_t>> reads_log;
};

TEST(StackReadback, TheControllerNeverReadsMoreThanTheBound) {
  auto runner = make_runner();
  stack::StackController c(options_with(runner));
  stack::Problem p = make_problem("big", 512, 100000);
  p.tolerance.max_readback_elements = 64;
  auto log = std::make_shared<std::vector<std::size_t>>();
  p.make_workspace = [log] { return std::make_unique<SharedCountWorkspace>(100000, log); };
  const stack::CandidateSet set = stack::test::make_set({"fast"});
  EXPECT_EQ(c.select(p, set).candidate, "fast");
  ASSERT_EQ(log->size(), 2u);  // the reference's outputs once, the candidate's once
  for (std::size_t n : *log) EXPECT_EQ(n, 64u);
  std::optional<stack::StackReport> r = c.report(p, set);
  ASSERT_TRUE(r);
  EXPECT_NE(r->entries[1].why.find("64 of 100000"), std::string::npos) << r->entries[1].why;
}

}  // namespace
}  // namespace tunekit::detail
