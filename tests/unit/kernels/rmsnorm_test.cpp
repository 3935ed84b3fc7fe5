// Tests for kernels/rmsnorm/rmsnorm.cpp: hostile shapes are refused; zero rows and rows of
// huge or tiny values stay finite and right in every variant.
#include "rmsnorm/rmsnorm.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "tunekit/errors.hpp"

namespace tunekit::kernels {
namespace {

TEST(Rmsnorm, RefusesHostileShapes) {
  cpu::ThreadPool pool(2);
  const auto op = make_rmsnorm_op_typed(pool);
  EXPECT_THROW(op->parse_shape("rows=1000000000000,cols=1"), UsageError);
  EXPECT_THROW(op->parse_shape("rows=0,cols=4"), UsageError);
  EXPECT_THROW(op->make_workload(op->parse_shape("rows=16777216,cols=16777216")), UsageError);
  EXPECT_THROW(op->make_workload(op->parse_shape("rows=2,cols=2,dtype=f16")), UsageError);
}

TEST(Rmsnorm, KeyOfArgsMatchesTheParsedShape) {
  cpu::ThreadPool pool(2);
  const auto op = make_rmsnorm_op_typed(pool);
  EXPECT_EQ(op->key_of(make_rmsnorm_args(3, 5)), op->parse_shape("rows=3,cols=5"));
  EXPECT_EQ(op->candidate(op->default_index(op->parse_shape("rows=1,cols=1"))).name, "v1_r16_t1");
}

TEST(Rmsnorm, ZeroHugeAndTinyRows) {
  cpu::ThreadPool pool(2);
  RmsnormArgs args;
  args.rows = 3;
  args.cols = 21;
  args.x.assign(args.rows * args.cols, 0.0f);  // row 0: zeros, eps keeps y = 0
  args.w.assign(args.cols, 2.0f);
  for (std::size_t j = 0; j < args.cols; ++j) {
    args.x[args.cols + j] = 1e15f;       // row 1: squares near 1e30, sum still finite
    args.x[2 * args.cols + j] = 1e-20f;  // row 2: squares underflow; eps dominates
  }
  for (int vec : {1, 4, 8, 16}) {
    args.y.assign(args.x.size(), std::numeric_limits<float>::quiet_NaN());
    rmsnorm_run({vec, 1, 2}, pool, args);
    for (std::size_t j = 0; j < args.cols; ++j) {
      EXPECT_EQ(args.y[j], 0.0f) << "vec " << vec;
      EXPECT_NEAR(args.y[args.cols + j], 2.0f, 1e-5) << "vec " << vec;
      EXPECT_NEAR(args.y[2 * args.cols + j], 2e-20 / std::sqrt(1e-6), 1e-20) << "vec " << vec;
    }
  }
}

TEST(Rmsnorm, UnsupportedPlansAreRefused) {
  cpu::ThreadPool pool(1);
  RmsnormArgs args = make_rmsnorm_args(2, 2);
  EXPECT_THROW(rmsnorm_run({2, 1, 1}, pool, args), std::invalid_argument);
  EXPECT_THROW(rmsnorm_run({4, 0, 1}, pool, args), std::invalid_argument);
}

}  // namespace
}  // namespace tunekit::kernels
