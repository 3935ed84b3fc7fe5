// Tests for the built-in CPU ops' typed keys (kernels/*/): the canonical Key each builds is the
// one its former Key function built (so stored choices and artifacts still match), and the
// hot digest Tuner::run computes from the raw values is the one published from that Key.
#include <gtest/gtest.h>

#include <cstdint>

#include "rmsnorm/rmsnorm.hpp"
#include "sgemm/sgemm.hpp"
#include "softmax/softmax.hpp"
#include "sum/sum.hpp"

namespace tunekit::kernels {
namespace {

template <class Args>
void expect_typed(const Op<Args>& op, const Args& args, const Key& former) {
  ASSERT_TRUE(op.typed_key()) << op.name();
  const Key key = op.key_of(args);
  EXPECT_EQ(key, former) << op.name() << ": " << key.text();
  EXPECT_EQ(key.digest(), former.digest()) << op.name();
  const std::optional<Digest> published = op.hot_digest(former);
  ASSERT_TRUE(published.has_value()) << op.name();
  EXPECT_EQ(*published, op.hot_digest(op.key_values(args))) << op.name();
  // And a key parsed from a shape (the CLI's, tune --pending's) is the same key.
  EXPECT_EQ(op.parse_shape(former.text()), former) << op.name();
}

TEST(TypedKeys, TheBuiltInOpsBuildTheirFormerCanonicalKeys) {
  cpu::ThreadPool pool(1);
  expect_typed(*make_sum_op_typed(pool), make_sum_args(1000),
               Key{{"n", std::int64_t{1000}}, {"dtype", "f32"}});
  expect_typed(*make_softmax_op_typed(pool), make_softmax_args(3, 40),
               Key{{"rows", std::int64_t{3}}, {"cols", std::int64_t{40}}, {"dtype", "f32"}});
  expect_typed(*make_rmsnorm_op_typed(pool), make_rmsnorm_args(5, 24),
               Key{{"rows", std::int64_t{5}}, {"cols", std::int64_t{24}}, {"dtype", "f32"}});
  expect_typed(*make_sgemm_op_typed(pool), make_sgemm_args(8, 16, 4),
               Key{{"m", std::int64_t{8}},
                   {"n", std::int64_t{16}},
                   {"k", std::int64_t{4}},
                   {"dtype", "f32"}});
}

}  // namespace
}  // namespace tunekit::kernels
