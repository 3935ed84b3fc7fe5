// Tests for kernels/sum/sum.cpp: hostile sizes are refused; the tolerance lets the serial
// default through but not a wrong answer at small n; threaded partials are deterministic.
#include "sum/sum.hpp"

#include <gtest/gtest.h>

#include <limits>

#include "tunekit/errors.hpp"
#include "tunekit/validate.hpp"

namespace tunekit::kernels {
namespace {

TEST(Sum, RefusesHostileSizes) {
  cpu::ThreadPool pool(2);
  const auto op = make_sum_op_typed(pool);
  EXPECT_THROW(op->parse_shape("n=1000000000000"), UsageError);
  EXPECT_THROW(op->parse_shape("n=268435457"), UsageError);  // 2^28 + 1
  EXPECT_THROW(op->parse_shape("n=0"), UsageError);
  EXPECT_THROW(op->parse_shape("n=abc"), UsageError);
  EXPECT_THROW(op->make_workload(Key{{"n", std::int64_t{1} << 40}}), UsageError);
  EXPECT_NO_THROW(op->parse_shape("n=268435456"));
}

TEST(Sum, KeyOfArgsMatchesTheParsedShape) {
  cpu::ThreadPool pool(2);
  const auto op = make_sum_op_typed(pool);
  EXPECT_EQ(op->key_of(make_sum_args(9)), op->parse_shape("n=9"));
  EXPECT_EQ(op->candidate(op->default_index(op->parse_shape("n=1"))).name, "serial");
}

// The tolerance is not vacuous where it can be tight: dropping one element fails at small n.
TEST(Sum, ToleranceCatchesASkippedElementAtSmallN) {
  cpu::ThreadPool pool(1);
  const std::unique_ptr<OpBase> op = make_sum_op(pool);
  for (std::size_t n : {7u, 33u, 257u}) {
    const Key key = op->parse_shape("n=" + std::to_string(n));
    SumArgs args = make_sum_args(n);
    sum_reference(args);
    const Reference ref =
        Reference::of(std::vector<OutputView>{OutputView::of(std::span<float>(&args.result, 1))});
    SumArgs skipped = args;
    skipped.x.erase(skipped.x.begin() + static_cast<std::ptrdiff_t>(n / 2));
    skipped.n = n - 1;
    sum_run({SumAlgo::serial, 1, 1}, pool, skipped);
    const Outcome outcome =
        ref.compare(std::vector<OutputView>{OutputView::of(std::span<float>(&skipped.result, 1))},
                    op->tolerance(key));
    EXPECT_EQ(outcome.status, Status::validation_failed) << "n=" << n;
  }
}

TEST(Sum, ThreadedPartialsAreCombinedInAFixedOrder) {
  cpu::ThreadPool pool(4);
  SumArgs args = make_sum_args(1000003);
  for (int acc : {4, 8, 16}) {
    sum_run({SumAlgo::blocked, acc, 4}, pool, args);
    const float first = args.result;
    for (int repeat = 0; repeat < 20; ++repeat) {
      args.result = std::numeric_limits<float>::quiet_NaN();
      sum_run({SumAlgo::blocked, acc, 4}, pool, args);
      ASSERT_EQ(args.result, first) << "acc " << acc;
    }
  }
}

TEST(Sum, UnsupportedPlansAreRefused) {
  cpu::ThreadPool pool(1);
  SumArgs args = make_sum_args(4);
  EXPECT_THROW(sum_run({SumAlgo::blocked, 3, 1}, pool, args), std::invalid_argument);
}

}  // namespace
}  // namespace tunekit::kernels
