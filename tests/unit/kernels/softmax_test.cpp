// Tests for kernels/softmax/softmax.cpp: hostile shapes are refused, and every variant stays
// finite and exact where exp underflows or the inputs are huge.
#include "softmax/softmax.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <numeric>

#include "tunekit/errors.hpp"

namespace tunekit::kernels {
namespace {

TEST(Softmax, RefusesHostileShapes) {
  cpu::ThreadPool pool(2);
  const auto op = make_softmax_op_typed(pool);
  EXPECT_THROW(op->parse_shape("rows=1000000000000,cols=1"), UsageError);
  EXPECT_THROW(op->parse_shape("rows=4,cols=0"), UsageError);
  EXPECT_THROW(op->parse_shape("rows=4,cols=16777217"), UsageError);
  // Each field in range, the product (2^48 elements) not: refused by the key check, before
  // anything is allocated, and by the input generator should a key bypass the check.
  EXPECT_THROW(op->parse_shape("rows=16777216,cols=16777216"), UsageError);
  EXPECT_THROW(op->parse_shape("rows=2,cols=2,dtype=bf16"), UsageError);
  EXPECT_THROW(op->make_workload(Key{{"rows", 16777216}, {"cols", 16777216}, {"dtype", "f32"}}),
               UsageError);
}

TEST(Softmax, KeyOfArgsMatchesTheParsedShape) {
  cpu::ThreadPool pool(2);
  const auto op = make_softmax_op_typed(pool);
  EXPECT_EQ(op->key_of(make_softmax_args(3, 5)), op->parse_shape("cols=5,rows=3"));
  EXPECT_EQ(op->candidate(op->default_index(op->parse_shape("rows=1,cols=1"))).name,
            "two_pass_v1_r16_t1");
}

// Rows whose exps underflow to zero (spread of 1000), rows of huge values (exp would overflow
// without the max), a constant row, and a single element.
TEST(Softmax, ExtremeRowsStayExactInEveryVariant) {
  cpu::ThreadPool pool(2);
  SoftmaxArgs args;
  args.rows = 4;
  args.cols = 37;
  args.x.assign(args.rows * args.cols, 0.0f);
  for (std::size_t j = 0; j < args.cols; ++j) {
    args.x[j] = j == 20 ? 0.0f : -1000.0f;                      // one survivor
    args.x[args.cols + j] = 80.0f + static_cast<float>(j % 2);  // huge, two values
    args.x[2 * args.cols + j] = 3.5f;                           // constant
    args.x[3 * args.cols + j] = j < 36 ? -std::numeric_limits<float>::max() : 1e30f;
  }
  args.y.assign(args.x.size(), 0.0f);
  const double e = std::exp(-1.0), sum = 18.0 + 19.0 * e;  // row 1: 18 × 81, 19 × 80
  for (SoftmaxAlgo algo :
       {SoftmaxAlgo::two_pass, SoftmaxAlgo::two_pass_poly, SoftmaxAlgo::online}) {
    for (int vec : {1, 4, 8, 16}) {
      args.y.assign(args.x.size(), std::numeric_limits<float>::quiet_NaN());
      softmax_run({algo, vec, 1, 2}, pool, args);
      SCOPED_TRACE(std::string(to_string(algo)) + " vec " + std::to_string(vec));
      const float* y = args.y.data();
      for (std::size_t j = 0; j < args.cols; ++j) {
        EXPECT_EQ(y[j], j == 20 ? 1.0f : 0.0f) << j;
        EXPECT_NEAR(y[args.cols + j], j % 2 ? 1.0 / sum : e / sum, 1e-6) << j;
        EXPECT_NEAR(y[2 * args.cols + j], 1.0f / 37.0f, 1e-7) << j;
        EXPECT_EQ(y[3 * args.cols + j], j == 36 ? 1.0f : 0.0f) << j;
      }
    }
  }
}

TEST(Softmax, RowsSumToOne) {
  cpu::ThreadPool pool(2);
  SoftmaxArgs args = make_softmax_args(5, 3001);
  for (SoftmaxAlgo algo :
       {SoftmaxAlgo::two_pass, SoftmaxAlgo::two_pass_poly, SoftmaxAlgo::online}) {
    softmax_run({algo, 16, 4, 2}, pool, args);
    for (std::size_t r = 0; r < args.rows; ++r) {
      const float* y = args.y.data() + r * args.cols;
      EXPECT_NEAR(std::accumulate(y, y + args.cols, 0.0), 1.0, 1e-5) << to_string(algo);
    }
  }
}

TEST(Softmax, UnsupportedPlansAreRefused) {
  cpu::ThreadPool pool(1);
  SoftmaxArgs args = make_softmax_args(2, 2);
  EXPECT_THROW(softmax_run({SoftmaxAlgo::two_pass, 3, 1, 1}, pool, args), std::invalid_argument);
  EXPECT_THROW(softmax_run({SoftmaxAlgo::two_pass, 4, 0, 1}, pool, args), std::invalid_argument);
}

}  // namespace
}  // namespace tunekit::kernels

namespace tunekit {
namespace {
TEST(SoftmaxKeyCheck, ElementBudgetIsRefusedByParseShape) {
  cpu::ThreadPool pool(1);
  auto op = kernels::make_softmax_op(pool);
  EXPECT_THROW(op->parse_shape("rows=100000,cols=100000"), UsageError);
  EXPECT_THROW(op->parse_shape("rows=4,cols=4,dtype=f16"), UsageError);
  EXPECT_NO_THROW(op->parse_shape("rows=4,cols=4"));
}
}  // namespace
}  // namespace tunekit
