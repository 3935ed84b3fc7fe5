// kernels/opencl: the OpenCL ops' two input sets and their restore step (the host inputs
// uploaded again): after a restore the default still validates, and set 1 has other values.
// Skipped when no OpenCL platform exists.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "backends/opencl/opencl_support.hpp"
#include "opencl/cl_ops.hpp"
#include "tunekit/cpu.hpp"
#include "tunekit/validate.hpp"

namespace tunekit::kernels::cl {
namespace {

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

TEST(OpenclInputSets, EveryOpHasTwoSetsAndRestores) {
  TUNEKIT_OPENCL_CONTEXT_OR_SKIP(context);
  cpu::ThreadPool pool(1);
  check_sets_and_restore(*make_softmax_op(context, pool), "rows=3,cols=77");
  check_sets_and_restore(*make_rmsnorm_op(context, pool), "rows=3,cols=77");
  check_sets_and_restore(*make_sgemm_op(context, pool), "m=67,n=45,k=33");
  check_sets_and_restore(*make_conv2d_op(context, pool), "h=9,w=9,fh=2,fw=7");
}

}  // namespace
}  // namespace tunekit::kernels::cl
