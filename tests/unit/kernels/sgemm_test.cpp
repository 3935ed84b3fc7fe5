// Tests for kernels/sgemm/sgemm.cpp: the key schema refuses hostile sizes, the packed kernels
// handle every edge (partial register tiles, cache blocks that do not divide the sizes), the
// reference is right.
#include "sgemm/sgemm.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <stdexcept>

#include "tunekit/errors.hpp"

namespace tunekit::kernels {
namespace {

TEST(Sgemm, RefusesHostileSizesBeforeAllocating) {
  cpu::ThreadPool pool(2);
  const auto op = make_sgemm_op_typed(pool);
  EXPECT_THROW(op->parse_shape("m=1000000000000,n=256,k=256"), UsageError);
  EXPECT_THROW(op->parse_shape("m=256,n=8193,k=256"), UsageError);
  EXPECT_THROW(op->parse_shape("m=256,n=256,k=0"), UsageError);
  EXPECT_THROW(op->parse_shape("m=256,n=256"), UsageError);  // k missing
  EXPECT_THROW(
      op->check_key(Key{{"m", std::int64_t{1} << 40}, {"n", 1}, {"k", 1}, {"dtype", "f32"}}),
      UsageError);
  // make_workload checks too, for a key that never went through check_key.
  EXPECT_THROW(op->make_workload(Key{{"m", std::int64_t{1} << 40}, {"n", 1}, {"k", 1}}),
               UsageError);
  EXPECT_THROW(op->make_workload(op->parse_shape("m=2,n=2,k=2,dtype=f64")), UsageError);
}

TEST(Sgemm, KeyOfArgsMatchesTheParsedShape) {
  cpu::ThreadPool pool(2);
  const auto op = make_sgemm_op_typed(pool);
  EXPECT_EQ(op->key_of(make_sgemm_args(3, 5, 7)), op->parse_shape("k=7,n=5,m=3"));
  EXPECT_EQ(op->candidates()[op->default_index(op->parse_shape("m=1,n=1,k=1"))].name, "ikj");
}

TEST(Sgemm, ReferenceIsExactOnSmallIntegers) {
  cpu::ThreadPool pool(2);
  SgemmArgs args;
  args.m = 2;
  args.n = 2;
  args.k = 3;
  args.a = {1, 2, 3, 4, 5, 6};
  args.b = {7, 8, 9, 10, 11, 12};
  args.c.assign(4, std::numeric_limits<float>::quiet_NaN());
  sgemm_reference(pool, args);
  EXPECT_EQ(args.c, (std::vector<float>{58, 64, 139, 154}));
}

// Every register block and loop order, with cache blocks smaller than, not multiples of and
// larger than the register tile, on sizes that leave partial tiles everywhere.
TEST(Sgemm, PackedEdgesMatchTheReference) {
  cpu::ThreadPool pool(2);
  const int micros[][2] = {{4, 8}, {4, 16}, {6, 16}, {8, 8}};
  const std::size_t blocks[][3] = {{1, 1, 8}, {5, 3, 9}, {13, 17, 40}, {96, 256, 2048}};
  const std::size_t shapes[][3] = {{1, 1, 1}, {9, 17, 5}, {23, 41, 37}};
  for (const auto& s : shapes) {
    SgemmArgs args = make_sgemm_args(s[0], s[1], s[2]);
    sgemm_reference(pool, args);
    const std::vector<float> want = args.c;
    for (const auto& micro : micros) {
      for (const auto& block : blocks) {
        for (SgemmOrder order : {SgemmOrder::jpi, SgemmOrder::ijp}) {
          for (int threads : {1, 2}) {
            const SgemmPacked plan{micro[0], micro[1], block[0], block[1],
                                   block[2], order,    threads};
            args.c.assign(args.c.size(), std::numeric_limits<float>::quiet_NaN());
            sgemm_packed(plan, pool, args);
            for (std::size_t i = 0; i < want.size(); ++i) {
              ASSERT_NEAR(args.c[i], want[i], 1e-5)
                  << micro[0] << "x" << micro[1] << " mc=" << block[0] << " kc=" << block[1]
                  << " nc=" << block[2] << " " << to_string(order) << " t" << threads << " at "
                  << s[0] << "x" << s[1] << "x" << s[2] << " element " << i;
            }
          }
        }
      }
    }
  }
}

TEST(Sgemm, NaiveDeclinesHugeProblems) {
  cpu::ThreadPool pool(1);
  const auto op = make_sgemm_op_typed(pool);
  const Candidate& naive = op->candidates()[*op->find("naive")];
  ASSERT_TRUE(naive.eligible);
  EXPECT_FALSE(naive.eligible(op->parse_shape("m=1024,n=1024,k=1024")));
  EXPECT_TRUE(naive.eligible(op->parse_shape("m=8192,n=8192,k=8192")));
}

TEST(Sgemm, UnsupportedPlansAreRefused) {
  cpu::ThreadPool pool(1);
  SgemmArgs args = make_sgemm_args(4, 4, 4);
  EXPECT_THROW(sgemm_packed({5, 8, 48, 128, 512, SgemmOrder::jpi, 1}, pool, args),
               std::invalid_argument);
  EXPECT_THROW(sgemm_packed({4, 8, 0, 128, 512, SgemmOrder::jpi, 1}, pool, args),
               std::invalid_argument);
}

TEST(Sgemm, ToleranceStaysBelowATypicalTerm) {
  // Even at the largest k, an element off by one product of typical size (|a·b| ~ 1/4) fails.
  cpu::ThreadPool pool(1);
  const auto op = make_sgemm_op_typed(pool);
  // Through OpBase: Op<Args>'s tolerance(...) setters hide the getter.
  const OpBase& base = *op;
  const Tolerance t = base.tolerance(op->parse_shape("m=8192,n=8192,k=8192"));
  EXPECT_LT(t.abs, 0.01);
}

}  // namespace
}  // namespace tunekit::kernels
