// kernels/cuda on a real device: every sampled candidate of every CUDA op is built through the
// op's build step and validated against the CPU reference at odd shapes (padding, partial
// tiles, vector tails and split-k exercised), cuBLAS included; the ops' input sets and restore;
// the poison reaches the device; searches through the Tuner on CudaDevice end with validated
// winners and the cuBLAS anchors measured. Every test reports SKIPPED, with the reason, when
// there is no CUDA device.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "cuda/cu_common.hpp"
#include "cuda/cu_ops.hpp"
#include "tunekit/cpu.hpp"
#include "tunekit/cuda.hpp"
#include "tunekit/cuda_blas.hpp"
#include "tunekit/errors.hpp"
#include "tunekit/report.hpp"
#include "tunekit/tuner.hpp"
#include "tunekit/validate.hpp"

namespace tunekit::kernels::cu {
namespace {

std::string no_device_reason() {
  const cuda::DriverStatus status = cuda::driver_status();
  return "no CUDA device (" + (status.loaded ? "the driver lists none" : status.message) + ")";
}

// One context per test process (a primary context, a stream, a module cache in memory).
std::shared_ptr<cuda::Context> shared_context() {
  static const std::shared_ptr<cuda::Context> context =
      cuda::list_devices().empty() ? nullptr : cuda::Context::open("");
  return context;
}

#define TUNEKIT_CUDA_CONTEXT_OR_SKIP(name)                      \
  const std::shared_ptr<cuda::Context> name = shared_context(); \
  if (!name) GTEST_SKIP() << no_device_reason()

Config with(Config c, std::string_view changes) {
  const Config parsed = Config::parse(changes);  // kept: fields() refers into it
  for (const Field& f : parsed.fields()) c.set(f.name, f.value);
  return c;
}

// Builds (the op's build step) and validates the candidates `indices` of `op` on `shape`;
// candidates that decline the key are skipped. Returns how many were validated.
std::size_t check_candidates(const OpBase& op, const std::string& shape,
                             const std::vector<std::size_t>& indices) {
  const Key key = op.parse_shape(shape);
  std::unique_ptr<Workload> workload = op.make_workload(key);
  const Reference reference = Reference::capture(*workload, op.has_reference(), 0);
  std::size_t checked = 0;
  for (const std::size_t i : indices) {
    const Candidate c = op.candidate(i);
    if (c.eligible && c.eligible(key)) continue;
    const Outcome built = workload->build_candidate(i);
    EXPECT_TRUE(built.ok()) << op.name() << " " << c.name << ": " << built.message;
    if (!built.ok()) continue;
    const Outcome o = reference.check(*workload, i, op.tolerance(key));
    EXPECT_TRUE(o.ok()) << op.name() << " " << shape << " " << c.name << ": " << to_string(o.status)
                        << " " << o.message;
    ++checked;
  }
  return checked;
}

std::vector<std::size_t> every(const OpBase& op) {
  std::vector<std::size_t> all(op.size());
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = i;
  return all;
}

// The sgemm points to check: the default, the cuBLAS anchors, corner tiles, `random` more.
std::vector<std::size_t> sgemm_points(const OpBase& op, std::size_t random) {
  std::vector<std::size_t> out{op.default_index(op.parse_shape("m=8,n=8,k=8"))};
  for (const std::size_t a : op.anchor_indices()) out.push_back(a);
  const Config d = sgemm_default_config();
  for (const char* corner :
       {"BM=128,BN=256,WM=64,WN=64,TM=8,TN=8,WTN=8,BK=8,VW=4,STAGES=2",
        "BM=128,BN=128,WM=64,WN=32,TM=8,TN=4,WTN=4,BK=16,VW=4,STAGES=2,SPLITK=4",
        "BM=16,BN=64,WM=16,WN=64,TM=4,TN=4,WTN=8,BK=8,VW=4,STAGES=2",
        "BM=16,BN=32,WM=16,WN=32,TM=4,TN=4,WTN=8,BK=16,VW=2,STAGES=1,SPLITK=2"}) {
    const auto i = op.enumeration().index_of(with(d, corner));
    EXPECT_TRUE(i.has_value()) << corner;
    if (i) out.push_back(*i);
  }
  Rng rng(20251202);
  for (const std::size_t i : op.enumeration().sample(random, rng))
    if (std::find(out.begin(), out.end(), i) == out.end()) out.push_back(i);
  return out;
}

TEST(CudaOpsGpu, SgemmSampleCublasAndCornersMatchTheReferenceAtOddShapes) {
  TUNEKIT_CUDA_CONTEXT_OR_SKIP(context);
  cpu::ThreadPool pool(2);
  auto op = make_sgemm_op(context, pool);
  // 67 x 45 x 300: partial tiles in M and N (padded to 256), 10 K tiles of 32 (split-k 4 runs).
  const std::vector<std::size_t> points = sgemm_points(*op, 60);
  EXPECT_GE(check_candidates(*op, "m=67,n=45,k=300", points), 60u);
  // Tiny and uneven shapes for the corners and cuBLAS (split-k declines k = 1).
  const std::vector<std::size_t> few(points.begin(), points.begin() + 11);
  for (const char* shape : {"m=1,n=1,k=1", "m=257,n=3,k=65"}) check_candidates(*op, shape, few);
}

TEST(CudaOpsGpu, EverySoftmaxCandidateMatchesTheReferenceAtAnOddShape) {
  TUNEKIT_CUDA_CONTEXT_OR_SKIP(context);
  cpu::ThreadPool pool(1);
  auto op = make_softmax_op(context, pool);
  // 301 columns: no multiple of any TPR·VW, so every vector tail runs; 7 rows: partial blocks.
  EXPECT_EQ(check_candidates(*op, "rows=7,cols=301", every(*op)), 120u);
}

TEST(CudaOpsGpu, EveryRmsnormCandidateMatchesTheReferenceAtAnOddShape) {
  TUNEKIT_CUDA_CONTEXT_OR_SKIP(context);
  cpu::ThreadPool pool(1);
  auto op = make_rmsnorm_op(context, pool);
  EXPECT_EQ(check_candidates(*op, "rows=5,cols=1001", every(*op)), 60u);
}

TEST(CudaOpsGpu, EveryConv2dCandidateMatchesTheReferenceAtAnOddShape) {
  TUNEKIT_CUDA_CONTEXT_OR_SKIP(context);
  cpu::ThreadPool pool(1);
  auto op = make_conv2d_op(context, pool);
  // Output 37 x 29 padded to 64 x 128; a non-square 5 x 3 filter.
  EXPECT_EQ(check_candidates(*op, "h=37,w=29,fh=5,fw=3", every(*op)), 60u);
}

void check_sets_and_restore(const OpBase& op, const std::string& shape) {
  SCOPED_TRACE(op.name());
  ASSERT_EQ(op.input_sets(), 2);
  const Key key = op.parse_shape(shape);
  const std::size_t def = op.default_index(key);
  std::unique_ptr<Workload> w0 = op.make_workload(key, 0);
  std::unique_ptr<Workload> w1 = op.make_workload(key, 1);
  ASSERT_TRUE(w0->build_candidate(def).ok());
  const Reference r0 = Reference::capture(*w0, op.has_reference(), def);
  const Reference r1 = Reference::capture(*w1, op.has_reference(), def);
  EXPECT_TRUE(r1.check(*w1, def, op.tolerance(key)).ok());
  EXPECT_FALSE(r0.compare(w1->outputs(), op.tolerance(key)).ok());  // other values
  ASSERT_TRUE(w0->restore_inputs());                                // re-uploaded, padding included
  const Outcome again = r0.check(*w0, def, op.tolerance(key));
  EXPECT_TRUE(again.ok()) << again.message;
}

TEST(CudaOpsGpu, EveryOpHasTwoInputSetsAndRestores) {
  TUNEKIT_CUDA_CONTEXT_OR_SKIP(context);
  cpu::ThreadPool pool(1);
  check_sets_and_restore(*make_softmax_op(context, pool), "rows=3,cols=77");
  check_sets_and_restore(*make_rmsnorm_op(context, pool), "rows=3,cols=77");
  check_sets_and_restore(*make_sgemm_op(context, pool), "m=67,n=45,k=33");
  check_sets_and_restore(*make_conv2d_op(context, pool), "h=9,w=9,fh=2,fw=7");
}

TEST(CudaOpsGpu, ThePoisonOfTheHostMirrorReachesThePaddedDeviceOutput) {
  TUNEKIT_CUDA_CONTEXT_OR_SKIP(context);
  std::vector<float> host{1, 2, 3, 4, 5, 6};  // 2 x 3, padded to 4 x 8 on the device
  DeviceOutput out(*context, host, 2, 3, 4, 8);
  host.assign(6, 0.0f);
  out.read();  // the device still holds 1..6
  EXPECT_EQ(host, (std::vector<float>{1, 2, 3, 4, 5, 6}));
  std::vector<OutputView> views{OutputView::of(std::span(host))};
  poison(views);
  out.write();  // what the ops' poison hook does
  host.assign(6, 0.0f);
  out.read();
  for (float v : host) EXPECT_TRUE(std::isnan(v));
}

TEST(CudaOpsGpu, BlasComputesRowMajorProductsOnPaddedBuffers) {
  TUNEKIT_CUDA_CONTEXT_OR_SKIP(context);
  cuda::Blas blas(context);
  EXPECT_GT(blas.version(), 0);
  // A 5 x 3 times 3 x 4 in buffers with row strides 8, 8, 8.
  const int m = 5, n = 4, k = 3, ld = 8;
  std::vector<float> a(m * ld, 0.0f), b(k * ld, 0.0f), c(m * ld, -1.0f);
  for (int i = 0; i < m; ++i)
    for (int p = 0; p < k; ++p) a[i * ld + p] = static_cast<float>(i + 2 * p);
  for (int p = 0; p < k; ++p)
    for (int j = 0; j < n; ++j) b[p * ld + j] = static_cast<float>(p - j);
  cuda::Buffer da(*context, a.size() * 4), db(*context, b.size() * 4), dc(*context, c.size() * 4);
  da.write(a.data(), a.size() * 4);
  db.write(b.data(), b.size() * 4);
  for (const cuda::BlasAlgorithm algo :
       {cuda::BlasAlgorithm::classic(), cuda::BlasAlgorithm::ex(-1)}) {
    dc.write(c.data(), c.size() * 4);
    blas.sgemm({m, n, k, ld, ld, ld}, da, db, dc, algo);
    std::vector<float> got(c.size());
    dc.read(got.data(), got.size() * 4);
    for (int i = 0; i < m; ++i)
      for (int j = 0; j < n; ++j) {
        float want = 0;
        for (int p = 0; p < k; ++p) want += a[i * ld + p] * b[p * ld + j];
        EXPECT_EQ(got[i * ld + j], want) << i << "," << j << " gemm_ex " << algo.gemm_ex;
      }
    EXPECT_EQ(got[n], -1.0f);  // past n in a row: untouched
  }
  EXPECT_THROW(blas.sgemm({m, n, k, 2, ld, ld}, da, db, dc), UsageError);    // lda < k
  EXPECT_THROW(blas.sgemm({64, n, k, ld, ld, ld}, da, db, dc), UsageError);  // past A
  EXPECT_THROW(blas.sgemm({m, n, k, ld, ld, ld}, da, db, dc, cuda::BlasAlgorithm::ex(24)),
               UsageError);
  EXPECT_THROW(blas.sgemm({m, n, k, ld, ld, ld}, da, db, dc, {false, -1, true}), UsageError);
}

TunerOptions quick_options(Numerics policy) {
  TunerOptions options;
  options.decide.confirm_pairs = 0;
  options.decide.numerics_policy = policy;
  options.measure.timing.repeats_floor = 4;
  options.measure.timing.max_runs = 8;
  options.measure.timing.contended_fraction = 1.0;  // contention is tested with scripted clocks
  options.persist.store = "none";
  return options;
}

// No candidate of a search failed but by declining the key (rejected), by its numerics
// (skipped) or by being cut (hopeless); returns how many were validated and measured (ok or
// cut while measured).
std::size_t expect_clean(const TuneReport& report) {
  std::size_t measured = 0;
  for (const CandidateReport& c : report.candidates) {
    const Status s = c.outcome.status;
    EXPECT_TRUE(s == Status::ok || s == Status::hopeless || s == Status::rejected ||
                s == Status::skipped)
        << c.name << ": " << to_string(s) << " " << c.outcome.message;
    if (s == Status::ok || s == Status::hopeless) ++measured;
  }
  return measured;
}

TEST(CudaOpsGpu, TuningSgemmMeasuresCublasAndPicksAValidatedWinner) {
  TUNEKIT_CUDA_CONTEXT_OR_SKIP(context);
  cpu::ThreadPool pool(2);
  auto op = make_sgemm_op(context, pool);
  cuda::CudaDevice device(context);
  TunerOptions options = quick_options(Numerics::reassociates);
  options.decide.strategy = "random";
  options.decide.budget_evaluations = 30;
  Tuner tuner(device, options);
  TuneReport report;
  tuner.select(*op, op->parse_shape("m=67,n=45,k=300"), &report);
  EXPECT_EQ(report.source, Source::searched);
  EXPECT_GE(expect_clean(report), 30u);
  // Every anchor is in the report; the classic call and GemmEx's default are measured (an
  // explicit algorithm the library does not offer for this shape may decline: rejected).
  std::size_t blas = 0;
  for (const CandidateReport& c : report.candidates) {
    if (c.config.find("impl=cublas") == std::string::npos) continue;
    ++blas;
    const bool must_run = c.config.find("algo=sgemm") != std::string::npos ||
                          c.config.find("algo=gemmex_default") != std::string::npos;
    if (!must_run && c.outcome.status == Status::rejected) continue;
    ASSERT_TRUE(c.timing.has_value()) << c.name << ": " << c.outcome.message;
    EXPECT_EQ(c.timing->clock, "cuda_events");
  }
  EXPECT_EQ(blas, sgemm_cublas_configs().size());
  EXPECT_FALSE(report.winner_name.empty());
}

TEST(CudaOpsGpu, TuningSoftmaxUsesItsTimingProtocolAndEveryPointValidates) {
  TUNEKIT_CUDA_CONTEXT_OR_SKIP(context);
  cpu::ThreadPool pool(1);
  auto op = make_softmax_op(context, pool);
  cuda::CudaDevice device(context);
  TunerOptions options = quick_options(Numerics::approximate);
  options.decide.strategy = "exhaustive";
  Tuner tuner(device, options);
  TuneReport report;
  tuner.select(*op, op->parse_shape("rows=7,cols=301"), &report);
  EXPECT_EQ(expect_clean(report), 120u);
  for (const CandidateReport& c : report.candidates) {
    if (!c.timing || c.outcome.status != Status::ok) continue;
    EXPECT_EQ(c.timing->depth, 20) << c.name;  // 100 launches in 5 windows
  }
}

}  // namespace
}  // namespace tunekit::kernels::cu
