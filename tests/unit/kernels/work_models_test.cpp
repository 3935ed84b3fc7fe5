// Tests for kernels/work_models.cpp: every built-in CPU candidate is scored at a normal shape,
// and sgemm's re-read bytes follow its cache blocking (MC, NC, KC) as the loops say.
#include "work_models.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <string>

#include "fakes/test_envelope.hpp"
#include "rmsnorm/rmsnorm.hpp"
#include "sgemm/sgemm.hpp"
#include "softmax/softmax.hpp"
#include "sum/sum.hpp"

namespace tunekit::kernels {
namespace {

// 100 GFLOP/s per thread, 10 GB/s DRAM, 50 GB/s cache per thread, a 1 MiB cache.
Envelope envelope() {
  return testing::test_envelope({.launch = 5e-6});
}

void expect_every_candidate_scored(const OpBase& op, const std::string& shape) {
  const Key key = op.parse_shape(shape);
  ASSERT_TRUE(op.has_work_model()) << op.name();
  ASSERT_GT(op.candidates().size(), 1u);
  for (std::size_t i = 0; i < op.candidates().size(); ++i) {
    const std::string& name = op.candidates()[i].name;
    const auto w = op.work(key, i);
    ASSERT_TRUE(w) << op.name() << " " << name << " is not scored at " << shape;
    for (double v : {w->flops, w->compulsory_bytes, w->reread_bytes, w->working_set_bytes,
                     w->serial_flops, w->scalar_flops}) {
      EXPECT_TRUE(std::isfinite(v) && v >= 0) << name << ": " << v;
    }
    EXPECT_GT(w->flops + w->serial_flops + w->scalar_flops, 0) << name;
    EXPECT_GT(w->compulsory_bytes, 0) << name;
    EXPECT_GE(w->threads, 1) << name;
    const ModelTime t = model_time(*w, envelope());
    EXPECT_TRUE(std::isfinite(t.seconds) && t.seconds > 0) << name;
    EXPECT_LE(floor_seconds(*w, envelope()), t.seconds) << name;
  }
}

TEST(WorkModels, EveryBuiltInCpuCandidateIsScored) {
  cpu::ThreadPool pool(2);
  expect_every_candidate_scored(*make_sgemm_op(pool), "m=256,n=256,k=256");
  expect_every_candidate_scored(*make_softmax_op(pool), "rows=256,cols=1024");
  expect_every_candidate_scored(*make_rmsnorm_op(pool), "rows=256,cols=1024");
  expect_every_candidate_scored(*make_sum_op(pool), "n=1000000");
}

Candidate packed(int mc, int kc, int nc, const char* order) {
  Candidate c;
  c.name = "packed";
  c.config.set("algo", "packed")
      .set("mr", 6)
      .set("nr", 16)
      .set("mc", mc)
      .set("kc", kc)
      .set("nc", nc)
      .set("order", std::string(order))
      .set("threads", 1);
  return c;
}

TEST(WorkModels, SgemmRereadsFollowTheBlocking) {
  const Key key{{"m", 1024}, {"n", 1024}, {"k", 1024}, {"dtype", "f32"}};
  const double mk = 1024.0 * 1024, kn = 1024.0 * 1024;
  // NC: GotoBLAS (jpi) re-packs A once per jc block: NC 256 -> 4 blocks, 512 -> 2, so 2 more
  // passes of A (read and packed: 8 bytes per element).
  const auto nc256 = sgemm_work(key, packed(48, 128, 256, "jpi"));
  const auto nc512 = sgemm_work(key, packed(48, 128, 512, "jpi"));
  ASSERT_TRUE(nc256 && nc512);
  EXPECT_NEAR(nc256->reread_bytes - nc512->reread_bytes, 8 * mk * 2, 1);  // bytes
  // MC: the ijp order packs B once per ic block: MC 48 -> 22 blocks, 96 -> 11.
  const auto mc48 = sgemm_work(key, packed(48, 128, 512, "ijp"));
  const auto mc96 = sgemm_work(key, packed(96, 128, 512, "ijp"));
  ASSERT_TRUE(mc48 && mc96);
  EXPECT_NEAR(mc48->reread_bytes - mc96->reread_bytes, 8 * kn * 11, 1);
  // KC: fewer k blocks, fewer passes over C (read and written once per block after the
  // first); but KC 1024 makes the block (the KC x NC panel of B and an MC x KC block of A:
  // 2.3 MB) exceed the 1 MiB cache, so its re-reads move at DRAM bandwidth.
  const auto kc128 = sgemm_work(key, packed(48, 128, 512, "jpi"));
  const auto kc1024 = sgemm_work(key, packed(48, 1024, 512, "jpi"));
  ASSERT_TRUE(kc128 && kc1024);
  EXPECT_LT(kc1024->reread_bytes, kc128->reread_bytes);
  EXPECT_DOUBLE_EQ(kc128->working_set_bytes, 4.0 * (128 * 512 + 48 * 128));
  EXPECT_DOUBLE_EQ(kc1024->working_set_bytes, 4.0 * (1024 * 512 + 48 * 1024));
  const ModelTime small = model_time(*kc128, envelope());
  const ModelTime big = model_time(*kc1024, envelope());
  EXPECT_TRUE(small.reread_in_cache);
  EXPECT_FALSE(big.reread_in_cache);
  EXPECT_GT(big.dram_seconds, small.dram_seconds);
  EXPECT_GT(big.seconds, small.seconds);
}

}  // namespace
}  // namespace tunekit::kernels
