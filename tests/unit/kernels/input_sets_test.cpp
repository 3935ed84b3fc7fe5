// Tests for the input generators of kernels/{sum,softmax,rmsnorm,sgemm} (kernels/common.cpp
// input_rng): set 0 is what the ops always generated, set 1 other values of the same shape
// that the default candidate still validates on.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <utility>
#include <vector>

#include "common.hpp"
#include "rmsnorm/rmsnorm.hpp"
#include "sgemm/sgemm.hpp"
#include "softmax/softmax.hpp"
#include "sum/sum.hpp"
#include "tunekit/catalog.hpp"
#include "tunekit/validate.hpp"

namespace tunekit::kernels {
namespace {

// The values the generators made before there were input sets: seed, then fill_uniform.
std::vector<float> historical(std::uint32_t seed, std::size_t n, float lo = -1.0f,
                              float width = 2.0f) {
  std::vector<float> v(n);
  std::mt19937 rng(seed);
  fill_uniform(v, rng, lo, width);
  return v;
}

TEST(InputSets, SetZeroIsTheHistoricalStream) {
  EXPECT_EQ(make_sum_args(100).x, historical(0x5eed0004u, 100));
  EXPECT_EQ(make_sum_args(100, 0).x, historical(0x5eed0004u, 100));
  EXPECT_EQ(make_softmax_args(3, 7, 0).x, historical(0x5eed0002u, 21));
  const SgemmArgs g = make_sgemm_args(3, 5, 7, 0);
  std::vector<float> ab = historical(0x5eed0001u, 3 * 7 + 7 * 5);
  EXPECT_EQ(g.a, std::vector<float>(ab.begin(), ab.begin() + 21));
  EXPECT_EQ(g.b, std::vector<float>(ab.begin() + 21, ab.end()));
  const RmsnormArgs r = make_rmsnorm_args(2, 3, 0);
  EXPECT_EQ(r.x, historical(0x5eed0003u, 6));
}

TEST(InputSets, SetOneHasOtherValuesInTheSameRange) {
  const std::vector<float> x0 = make_sum_args(1000, 0).x;
  const std::vector<float> x1 = make_sum_args(1000, 1).x;
  ASSERT_EQ(x0.size(), x1.size());
  EXPECT_NE(x0, x1);
  for (float v : x1) {
    EXPECT_GE(v, -1.0f);
    EXPECT_LT(v, 1.0f);
  }
  EXPECT_NE(make_softmax_args(4, 4, 0).x, make_softmax_args(4, 4, 1).x);
  EXPECT_NE(make_sgemm_args(4, 4, 4, 0).a, make_sgemm_args(4, 4, 4, 1).a);
  const RmsnormArgs r1 = make_rmsnorm_args(4, 4, 1);
  EXPECT_NE(make_rmsnorm_args(4, 4, 0).w, r1.w);
  for (float w : r1.w) {
    EXPECT_GE(w, 0.5f);
    EXPECT_LT(w, 1.5f);
  }
}

// Every built-in CPU op offers two sets, and the default candidate validates on each against
// that set's reference, while the reference of one set does not fit the other.
TEST(InputSets, TheDefaultValidatesOnBothSetsOfEveryOp) {
  cpu::ThreadPool pool(2);
  const std::pair<const char*, const char*> cases[] = {{"sum", "n=1000"},
                                                       {"softmax", "rows=7,cols=33"},
                                                       {"rmsnorm", "rows=7,cols=33"},
                                                       {"sgemm", "m=33,n=17,k=65"}};
  for (const auto& [name, shape] : cases) {
    SCOPED_TRACE(name);
    const auto op = find_builtin_op(name).make(pool);
    ASSERT_EQ(op->input_sets(), 2);
    const Key key = op->parse_shape(shape);
    const std::size_t def = op->default_index(key);
    auto w0 = op->make_workload(key, 0);
    auto w1 = op->make_workload(key, 1);
    const Reference r0 = Reference::capture(*w0, op->has_reference(), def);
    const Reference r1 = Reference::capture(*w1, op->has_reference(), def);
    EXPECT_TRUE(r0.check(*w0, def, op->tolerance(key)).ok());
    EXPECT_TRUE(r1.check(*w1, def, op->tolerance(key)).ok());
    EXPECT_FALSE(r0.compare(w1->outputs(), op->tolerance(key)).ok());
  }
}

}  // namespace
}  // namespace tunekit::kernels
