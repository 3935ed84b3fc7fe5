// kernels/opencl: the OpenCL ops are spaces with a build step. softmax, rmsnorm and conv2d are
// checked at every point, sgemm's CLBlast-like space (>= 10,000 points) at a seeded random
// sample and its corner cases; all at odd shapes against the CPU reference (padding and vector
// tails exercised), each point built through the op's build step first. Device tests are
// skipped when no OpenCL platform exists.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "backends/opencl/opencl_support.hpp"
#include "opencl/cl_common.hpp"
#include "opencl/cl_ops.hpp"
#include "tunekit/cpu.hpp"
#include "tunekit/errors.hpp"
#include "tunekit/opencl_catalog.hpp"
#include "tunekit/validate.hpp"

namespace tunekit::kernels::cl {
namespace {

// Builds (the op's build step) and validates the candidates `indices` of `op` on `shape`.
void check_candidates(const OpBase& op, const std::string& shape,
                      const std::vector<std::size_t>& indices) {
  const Key key = op.parse_shape(shape);
  std::unique_ptr<Workload> workload = op.make_workload(key);
  const Reference reference = Reference::capture(*workload, op.has_reference(), 0);
  for (const std::size_t i : indices) {
    const std::string name = op.candidate(i).name;
    const Outcome built = workload->build_candidate(i);
    ASSERT_TRUE(built.ok()) << op.name() << " " << name << ": " << built.message;
    const Outcome o = reference.check(*workload, i, op.tolerance(key));
    EXPECT_TRUE(o.ok()) << op.name() << " " << shape << " " << name << ": " << to_string(o.status)
                        << " " << o.message;
  }
}

// Every candidate of `op` on `shape`; returns how many there were.
std::size_t check_every_candidate(const OpBase& op, const std::string& shape) {
  std::vector<std::size_t> all(op.size());
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = i;
  check_candidates(op, shape, all);
  return all.size();
}

// A config of the sgemm space: the default with `changes` ("MWG=64,SA=1") applied.
Config sgemm_point(std::string_view changes) {
  Config c = sgemm_default_config();
  const Config parsed = Config::parse(changes);
  for (const Field& f : parsed.fields()) c.set(f.name, f.value);
  return c;
}

// The valid points among `configs` (each must be one), then a seeded sample of the rest.
std::vector<std::size_t> sgemm_sample(const OpBase& op, const std::vector<Config>& corners,
                                      std::size_t random_count) {
  std::vector<std::size_t> out;
  for (const Config& c : corners) {
    const auto i = op.enumeration().index_of(c);
    EXPECT_TRUE(i.has_value()) << c.text() << " is not a valid point";
    if (i) out.push_back(*i);
  }
  Rng rng(20240611);
  for (const std::size_t i : op.enumeration().sample(random_count, rng))
    if (std::find(out.begin(), out.end(), i) == out.end()) out.push_back(i);
  return out;
}

// Largest tiles, widest vectors, one operand staged, unrolled, strided, and the extremes of
// the thread grid and the re-shaped loads.
std::vector<Config> sgemm_corners() {
  return {
      sgemm_default_config(),
      // 128 x 128 tile, 8 x 8 accumulators per thread, both operands staged through 8 x 32
      // loading grids (two vectors per loader and tile row: strided loads), VW 8, KWI 8.
      sgemm_point("MWG=128,NWG=128,KWG=32,MDIMC=16,NDIMC=16,VWM=8,VWN=8,SA=1,SB=1,MDIMA=8,"
                  "NDIMB=8,KWI=8,STRM=1,STRN=1"),
      // The same, contiguous per thread.
      sgemm_point("MWG=128,NWG=128,KWG=32,MDIMC=16,NDIMC=16,VWM=8,VWN=8,SA=1,SB=1,MDIMA=16,"
                  "NDIMB=16,KWI=2,STRM=0,STRN=0"),
      // A staged (a loading grid of 8 x 8), B from global memory; VWM 8.
      sgemm_point("MWG=64,NWG=64,KWG=16,VWM=8,SA=1,SB=0,MDIMA=8,KWI=4,STRM=0"),
      // B staged only (a loading grid of 16 x 8), VWN 8.
      sgemm_point("MWG=32,NWG=128,KWG=32,NDIMC=16,VWN=8,SB=1,NDIMB=16,KWI=2,STRN=0"),
      // 1024 work-items (32 x 32), one accumulator each, both staged with 32 x 32 grids.
      sgemm_point(
          "MWG=32,NWG=32,KWG=32,MDIMC=32,NDIMC=32,SA=1,SB=1,MDIMA=32,NDIMB=32,KWI=8,STRN=0"),
      // Non-square: a tall tile, vectors along M and N, strided M and contiguous N.
      sgemm_point("MWG=128,NWG=16,KWG=16,MDIMC=16,NDIMC=8,VWM=4,VWN=2,STRM=1,STRN=0"),
      // Two work-items of 8 x 32 accumulators in 16-wide vectors: the fastest on PoCL.
      sgemm_point("MWG=16,NWG=32,KWG=32,MDIMC=2,NDIMC=1,VWM=8,VWN=16,KWI=4,STRM=0,STRN=0"),
      // One work-item of 16 x 16 accumulators, 16-wide vectors both ways, unrolled 8.
      sgemm_point("MWG=16,NWG=16,KWG=16,MDIMC=1,NDIMC=1,VWM=16,VWN=16,KWI=8,STRM=0,STRN=0"),
  };
}

TEST(OpenclKernels, SpaceSizes) {
  // No device needed: the spaces are pure.
  EXPECT_EQ(sgemm_space().enumerate().size(), 876532u);  // CLBlast's xgemm space and more, see docs
  EXPECT_GE(sgemm_space().enumerate().size(), 10000u);
  EXPECT_EQ(softmax_space().enumerate().size(), 30u);
  EXPECT_EQ(rmsnorm_space().enumerate().size(), 15u);
  EXPECT_EQ(conv2d_space().enumerate().size(), 60u);
  EXPECT_EQ(opencl::builtin_ops().size(), 4u);
}

TEST(OpenclKernels, TheOpsAreSpacesWithValidDefaults) {
  // No device needed: ops are built without a context; nothing is compiled.
  cpu::ThreadPool pool(1);
  for (const auto& entry : opencl::builtin_ops()) {
    auto op = entry.make(nullptr, pool);
    ASSERT_NE(op->space(), nullptr) << entry.name;
    EXPECT_EQ(op->size(), entry.space().enumerate().size()) << entry.name;
    const Key key = op->parse_shape(entry.example_shape);
    const std::size_t d = op->default_index(key);
    const Candidate c = op->candidate(d);
    EXPECT_EQ(c.name, c.config.text()) << entry.name;
    EXPECT_EQ(op->find(c.name), d) << entry.name;
  }
  auto sgemm = make_sgemm_op(nullptr, pool);
  const Candidate fallback =
      sgemm->candidate(sgemm->default_index(sgemm->parse_shape("m=8,n=8,k=8")));
  EXPECT_EQ(fallback.config, sgemm_default_config());
  EXPECT_EQ(fallback.numerics, Numerics::bitwise);
  auto softmax = make_softmax_op(nullptr, pool);
  const auto native = softmax->find("WG=64,VW=1,EXP=native_exp");
  ASSERT_TRUE(native.has_value());
  EXPECT_EQ(softmax->candidate(*native).numerics, Numerics::approximate);
  EXPECT_EQ(softmax->candidate(*softmax->find("WG=64,VW=1,EXP=exp")).numerics,
            Numerics::reassociates);
}

TEST(OpenclKernels, SgemmConstraintsFollowClblast) {
  const Space space = sgemm_space();
  EXPECT_TRUE(space.valid(sgemm_default_config()));
  for (const Config& c : sgemm_corners()) EXPECT_TRUE(space.valid(c)) << c.text();
  // A thread grid that does not divide the tile with its vectors.
  EXPECT_FALSE(space.valid(sgemm_point("MWG=16,MDIMC=16,MDIMA=16,VWM=2")));
  // MDIMA only varies where A is staged.
  EXPECT_FALSE(space.valid(sgemm_point("MDIMA=16")));
  EXPECT_TRUE(space.valid(sgemm_point("SA=1,MDIMA=16")));
  // Staged A: MDIMA loaders with VWM-wide vectors must divide MWG (32 % (32 * 2) != 0).
  EXPECT_FALSE(space.valid(sgemm_point("SA=1,MDIMA=32,VWM=2")));
  // More than 256 accumulators per thread (16 x 32).
  EXPECT_FALSE(space.valid(sgemm_point("MWG=128,NWG=128,NDIMC=4")));
  EXPECT_TRUE(space.valid(sgemm_point("MWG=128,NWG=128")));
  // A staged tile's loading grid has no more work-items than the group (8 > 1 x 2): no
  // division by zero in the constraint after it.
  EXPECT_FALSE(space.valid(sgemm_point("MWG=16,NWG=16,MDIMC=1,NDIMC=2,SA=1,MDIMA=8")));
  // One vector along M per thread, unstaged: strided is the same kernel as contiguous.
  EXPECT_FALSE(space.valid(sgemm_point("MWG=16,MDIMC=2,VWM=8,STRM=1")));
  EXPECT_TRUE(space.valid(sgemm_point("MWG=16,MDIMC=2,VWM=4,STRM=1")));
  // The padding covers every tile: M and N to the largest MWG / NWG, K to the largest KWG.
  for (const Parameter& p : space.parameters()) {
    for (const Value& v : p.values) {
      const auto size = static_cast<std::size_t>(v.as_int());
      if (p.name == "MWG" || p.name == "NWG") {
        EXPECT_EQ(kSgemmPadMN % size, 0u) << p.name << "=" << size;
      }
      if (p.name == "KWG") {
        EXPECT_EQ(kSgemmPadK % size, 0u) << p.name << "=" << size;
      }
    }
  }
}

TEST(OpenclKernels, HostileShapesAreRefusedBeforeAnythingIsAllocated) {
  // No device needed: keys are checked against the schema before inputs exist.
  cpu::ThreadPool pool(1);
  auto conv = make_conv2d_op(nullptr, pool);
  EXPECT_THROW(conv->parse_shape("h=0,w=8"), UsageError);
  EXPECT_THROW(conv->parse_shape("h=8,w=8,fh=18"), UsageError);
  EXPECT_THROW(conv->parse_shape("h=16384,w=16384"), UsageError);  // element budget
  EXPECT_THROW(conv->parse_shape("h=8,w=8,dtype=f16"), UsageError);
  EXPECT_NO_THROW(conv->parse_shape("h=7,w=9"));  // filter defaults to 5 x 5
  auto sgemm = make_sgemm_op(nullptr, pool);
  EXPECT_THROW(sgemm->parse_shape("m=8193,n=8,k=8"), UsageError);
  auto softmax = make_softmax_op(nullptr, pool);
  EXPECT_THROW(softmax->parse_shape("rows=16777216,cols=16777216"), UsageError);
}

TEST(OpenclKernels, SgemmSampleAndCornersMatchTheReferenceAtAnOddShape) {
  TUNEKIT_OPENCL_CONTEXT_OR_SKIP(context);
  cpu::ThreadPool pool(1);
  auto op = make_sgemm_op(context, pool);
  // 67 x 45 x 33: padded to 128 x 128 x 64, so every tile size meets zeros and two or more
  // K steps run. 40 seeded random points plus the corner cases: about 47 builds.
  const std::vector<std::size_t> points = sgemm_sample(*op, sgemm_corners(), 40);
  EXPECT_GE(points.size(), 45u);
  check_candidates(*op, "m=67,n=45,k=33", points);
}

TEST(OpenclKernels, SgemmPaddingKeepsTinyAndUnevenShapesCorrect) {
  TUNEKIT_OPENCL_CONTEXT_OR_SKIP(context);
  cpu::ThreadPool pool(1);
  auto op = make_sgemm_op(context, pool);
  // The default and the largest tiles (built by the test above: cache hits).
  const std::vector<std::size_t> points = sgemm_sample(*op, sgemm_corners(), 0);
  for (const char* shape : {"m=1,n=1,k=1", "m=129,n=3,k=65"}) check_candidates(*op, shape, points);
}

TEST(OpenclKernels, TheBuildStepBuildsSoTheFirstLaunchCompilesNothing) {
  TUNEKIT_OPENCL_CONTEXT_OR_SKIP(context);
  cpu::ThreadPool pool(1);
  auto op = make_rmsnorm_op(context, pool);
  const Key key = op->parse_shape("rows=3,cols=77");
  std::unique_ptr<Workload> w = op->make_workload(key);
  const std::size_t i = *op->find("WG=32,VW=2");
  const opencl::BuildStats before = context->compiler().stats();
  ASSERT_TRUE(w->build_candidate(i).ok());
  const opencl::BuildStats built = context->compiler().stats();
  EXPECT_LE(built.builds, before.builds + 1);  // 0 when an earlier test built it
  EXPECT_TRUE(w->build_candidate(i).ok());     // memoised: nothing more
  EXPECT_EQ(context->compiler().stats().builds, built.builds);
  w->run_candidate(i);
  context->finish();
  const opencl::BuildStats launched = context->compiler().stats();
  EXPECT_EQ(launched.builds, built.builds);  // the launch found the program in the cache
  EXPECT_GT(launched.hits, built.hits);
}

TEST(OpenclKernels, ABrokenBuildIsCompileFailedWithTheLogAndRemembered) {
  TUNEKIT_OPENCL_CONTEXT_OR_SKIP(context);
  BuildStep step(context, "__kernel void k(__global float* x) { x[0] = 1.0f + ; }", "k");
  const std::size_t local[1] = {1};
  auto bind = [](opencl::Kernel& k, opencl::Buffer& scratch) { k.set_arg(0, scratch); };
  const Outcome first = step("-DBROKEN_TEST=1", local, sizeof(float), bind);
  EXPECT_EQ(first.status, Status::compile_failed);
  EXPECT_NE(first.message.find("error"), std::string::npos) << first.message;  // the build log
  const opencl::BuildStats stats = context->compiler().stats();
  const Outcome second = step("-DBROKEN_TEST=1", local, sizeof(float), bind);
  EXPECT_EQ(second.status, Status::compile_failed);
  EXPECT_EQ(second.message, first.message);
  EXPECT_EQ(context->compiler().stats().builds, stats.builds);
}

TEST(OpenclKernels, Conv2dBuildsForTheFilterOfItsLiveWorkload) {
  TUNEKIT_OPENCL_CONTEXT_OR_SKIP(context);
  cpu::ThreadPool pool(1);
  auto op = make_conv2d_op(context, pool);
  const std::size_t i = op->default_index(op->parse_shape("h=9,w=9"));
  {
    // A workload's build step builds for its own filter size (once: one build or hit).
    const opencl::BuildStats before = context->compiler().stats();
    EXPECT_TRUE(op->make_workload(op->parse_shape("h=9,w=9,fh=2,fw=7"))->build_candidate(i).ok());
    const opencl::BuildStats after = context->compiler().stats();
    EXPECT_EQ(after.builds + after.hits, before.builds + before.hits + 1);
  }
  // That workload is gone: the next one's build step builds for its filter only.
  const Key key = op->parse_shape("h=9,w=9,fh=3,fw=2");
  std::unique_ptr<Workload> w = op->make_workload(key);
  ASSERT_TRUE(w->build_candidate(i).ok());
  const opencl::BuildStats built = context->compiler().stats();
  const Reference reference = Reference::capture(*w, true, 0);
  EXPECT_TRUE(reference.check(*w, i, op->tolerance(key)).ok());
  EXPECT_EQ(context->compiler().stats().builds, built.builds);
}

TEST(OpenclKernels, EverySoftmaxCandidateMatchesTheReferenceAtAnOddShape) {
  TUNEKIT_OPENCL_CONTEXT_OR_SKIP(context);
  cpu::ThreadPool pool(1);
  auto op = make_softmax_op(context, pool);
  // 301 columns: not a multiple of any WG·VW, so every vector tail runs.
  EXPECT_EQ(check_every_candidate(*op, "rows=7,cols=301"), 30u);
}

TEST(OpenclKernels, EveryRmsnormCandidateMatchesTheReferenceAtAnOddShape) {
  TUNEKIT_OPENCL_CONTEXT_OR_SKIP(context);
  cpu::ThreadPool pool(1);
  auto op = make_rmsnorm_op(context, pool);
  EXPECT_EQ(check_every_candidate(*op, "rows=5,cols=1001"), 15u);
}

TEST(OpenclKernels, EveryConv2dCandidateMatchesTheReferenceAtAnOddShape) {
  TUNEKIT_OPENCL_CONTEXT_OR_SKIP(context);
  cpu::ThreadPool pool(1);
  auto op = make_conv2d_op(context, pool);
  // Output 37 x 29 padded to 64 x 128; a non-square 5 x 3 filter.
  EXPECT_EQ(check_every_candidate(*op, "h=37,w=29,fh=5,fw=3"), 60u);
}

TEST(OpenclKernels, PoisonOfTheHostMirrorReachesThePaddedDeviceOutput) {
  TUNEKIT_OPENCL_CONTEXT_OR_SKIP(context);
  std::vector<float> host{1, 2, 3, 4, 5, 6};  // 2 x 3, padded to 4 x 8 on the device
  MirroredOutput out(*context, host, 2, 3, 4, 8);
  host.assign(6, 0.0f);
  out.read();  // the device still holds 1..6
  EXPECT_EQ(host, (std::vector<float>{1, 2, 3, 4, 5, 6}));
  std::vector<OutputView> views{OutputView::of(std::span(host))};
  poison(views);
  out.before_launch();  // a launch after validation's poison first writes it to the device
  host.assign(6, 0.0f);
  out.read();
  for (float v : host) EXPECT_TRUE(std::isnan(v));
  out.before_launch();  // nothing exposed since the write: no second upload needed
}

}  // namespace
}  // namespace tunekit::kernels::cl
