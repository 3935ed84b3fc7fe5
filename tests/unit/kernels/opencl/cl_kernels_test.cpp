// kernels/opencl: every candidate of the OpenCL sgemm, softmax, rmsnorm and conv2d agrees with the
// CPU reference at odd shapes (padding and vector tails exercised); the spaces stay the size
// the default tune is budgeted for. Skipped when no OpenCL platform exists.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
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

// Validates every candidate of `op` on `shape`; returns how many there were.
std::size_t check_every_candidate(const OpBase& op, const std::string& shape) {
  const Key key = op.parse_shape(shape);
  std::unique_ptr<Workload> workload = op.make_workload(key);
  const Reference reference = Reference::capture(*workload, op.has_reference(), 0);
  for (std::size_t i = 0; i < op.candidates().size(); ++i) {
    const Outcome o = reference.check(*workload, i, op.tolerance(key));
    EXPECT_TRUE(o.ok()) << op.name() << " " << shape << " " << op.candidates()[i].name << ": "
                        << to_string(o.status) << " " << o.message;
  }
  return op.candidates().size();
}

TEST(OpenclKernels, SpacesStayWithinTheirBudget) {
  // No device needed: the spaces are pure.
  EXPECT_EQ(sgemm_space().enumerate().size(), 48u);
  EXPECT_EQ(softmax_space().enumerate().size(), 30u);
  EXPECT_EQ(rmsnorm_space().enumerate().size(), 15u);
  EXPECT_EQ(conv2d_space().enumerate().size(), 60u);
  EXPECT_EQ(opencl::builtin_ops().size(), 4u);
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

TEST(OpenclKernels, EverySgemmCandidateMatchesTheReferenceAtAnOddShape) {
  TUNEKIT_OPENCL_CONTEXT_OR_SKIP(context);
  cpu::ThreadPool pool(1);
  auto op = make_sgemm_op(context, pool);
  EXPECT_EQ(check_every_candidate(*op, "m=37,n=29,k=45"), 48u);
}

TEST(OpenclKernels, SgemmPaddingKeepsTinyAndUnevenShapesCorrect) {
  TUNEKIT_OPENCL_CONTEXT_OR_SKIP(context);
  cpu::ThreadPool pool(1);
  auto op = make_sgemm_op(context, pool);
  // Only the default: the odd-shape test above covers every candidate.
  for (const char* shape : {"m=1,n=1,k=1", "m=65,n=3,k=33"}) {
    const Key key = op->parse_shape(shape);
    std::unique_ptr<Workload> w = op->make_workload(key);
    const Reference ref = Reference::capture(*w, true, 0);
    const Outcome o = ref.check(*w, op->default_index(key), op->tolerance(key));
    EXPECT_TRUE(o.ok()) << shape << ": " << o.message;
  }
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
