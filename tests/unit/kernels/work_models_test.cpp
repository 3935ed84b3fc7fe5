// Tests for kernels/work_models.cpp: every built-in CPU candidate is scored at a normal shape,
// sgemm's re-read bytes follow its cache blocking (MC, NC, KC) as the loops say, and each
// sgemm point's work follows its parameters (register tile, vector width, padding, threads;
// OpenBLAS as a well-blocked GotoBLAS kernel).
#include "work_models.hpp"

#include <gtest/gtest.h>

#include <algorithm>
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
  ASSERT_GT(op.size(), 1u);
  for (std::size_t i = 0; i < op.size(); ++i) {
    const std::string name = op.candidate(i).name;
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
  expect_every_candidate_scored(*make_sgemm_op(pool), "m=1,n=2048,k=2048");
  expect_every_candidate_scored(*make_sgemm_op(pool), "m=1024,n=1024,k=16");
  expect_every_candidate_scored(*make_softmax_op(pool), "rows=256,cols=1024");
  expect_every_candidate_scored(*make_rmsnorm_op(pool), "rows=256,cols=1024");
  expect_every_candidate_scored(*make_sum_op(pool), "n=1000000");
}

// Every sgemm point's work as its parameters say: the packed kernels' register tile sets the
// accumulator chains and the vector width (NR 32: 16 lanes, else 8), edge tiles are computed
// in full, threads get at most one task each; OpenBLAS is scored as the packed 12×32 jpi
// kernel with mc 192, kc 384, nc 1024, without padded edge tiles.
TEST(WorkModels, SgemmPointsFollowTheirParameters) {
  cpu::ThreadPool pool(2);
  const auto op = make_sgemm_op(pool);
  for (const char* shape : {"m=1,n=2048,k=2048", "m=333,n=517,k=129", "m=2048,n=2048,k=2048"}) {
    const Key key = op->parse_shape(shape);
    const double m = static_cast<double>(key.integer("m")),
                 n = static_cast<double>(key.integer("n")),
                 k = static_cast<double>(key.integer("k"));
    for (std::size_t i = 0; i < op->size(); ++i) {
      const Candidate c = op->candidate(i);
      const auto w = op->work(key, i);
      ASSERT_TRUE(w) << c.name;
      EXPECT_DOUBLE_EQ(w->compulsory_bytes, 4 * (m * k + k * n + m * n)) << c.name;
      const std::string& algo = c.config["algo"].as_string();
      const int threads = static_cast<int>(c.config["threads"].as_int());
      EXPECT_LE(w->threads, threads) << c.name;
      if (algo == "naive") {
        EXPECT_DOUBLE_EQ(w->serial_flops, 2 * m * n * k);
      } else if (algo == "ikj") {
        EXPECT_DOUBLE_EQ(w->flops, 2 * m * n * k);
        EXPECT_EQ(w->threads, 1);
      } else if (algo == "packed") {
        const double mr = static_cast<double>(c.config["mr"].as_int()),
                     nr = static_cast<double>(c.config["nr"].as_int());
        const int lanes = c.config["nr"].as_int() == 32 ? 16 : 8;
        EXPECT_EQ(w->vector_lanes, lanes) << c.name;
        EXPECT_EQ(w->chains, static_cast<int>(mr * nr) / lanes) << c.name;
        // Padded tiles: at least the problem's flops, at most one tile more each way.
        EXPECT_GE(w->flops, 2 * m * n * k) << c.name;
        EXPECT_LE(w->flops, 2 * (m + mr * std::ceil(m / 48)) * (n + nr * std::ceil(n / 512)) * k)
            << c.name;
        const double mc = static_cast<double>(c.config["mc"].as_int());
        if (c.config["order"].as_string() == "jpi") {
          EXPECT_EQ(w->threads, std::min<int>(threads, static_cast<int>(std::ceil(m / mc))))
              << c.name;
        }
      } else {
        ASSERT_EQ(algo, "openblas");
        EXPECT_DOUBLE_EQ(w->flops, 2 * m * n * k);  // no padded tiles
        Candidate twin;
        twin.config.set("algo", "packed")
            .set("mr", 12)
            .set("nr", 32)
            .set("mc", 192)
            .set("kc", 384)
            .set("nc", 1024)
            .set("order", "jpi")
            .set("threads", threads);
        const auto tw = sgemm_work(key, twin);
        ASSERT_TRUE(tw);
        EXPECT_DOUBLE_EQ(w->reread_bytes, tw->reread_bytes);
        EXPECT_DOUBLE_EQ(w->working_set_bytes, tw->working_set_bytes);
        EXPECT_EQ(w->threads, tw->threads);
        EXPECT_EQ(w->chains, tw->chains);
        EXPECT_EQ(w->dispatches, tw->dispatches);
        EXPECT_LE(model_time(*w, envelope()).seconds, model_time(*tw, envelope()).seconds);
      }
    }
  }
}

// A skinny problem on a tall register tile does the tile's work: m = 1 on 12×32 computes 12
// rows, on 4×8 four.
TEST(WorkModels, SgemmPaddedTilesCostFlops) {
  const Key key{{"m", 1}, {"n", 2048}, {"k", 2048}, {"dtype", "f32"}};
  auto tile = [&](int mr, int nr) {
    Candidate c;
    c.config.set("algo", "packed")
        .set("mr", mr)
        .set("nr", nr)
        .set("mc", 96)
        .set("kc", 256)
        .set("nc", 1024)
        .set("order", "jpi")
        .set("threads", 1);
    return sgemm_work(key, c);
  };
  const auto tall = tile(12, 32), short_tile = tile(4, 8);
  ASSERT_TRUE(tall && short_tile);
  EXPECT_DOUBLE_EQ(tall->flops, 2.0 * 12 * 2048 * 2048);
  EXPECT_DOUBLE_EQ(short_tile->flops, 2.0 * 4 * 2048 * 2048);
  EXPECT_GT(model_time(*tall, envelope()).compute_seconds,
            model_time(*short_tile, envelope()).compute_seconds);
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
