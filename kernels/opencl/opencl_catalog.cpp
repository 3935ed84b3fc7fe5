// The catalog of built-in OpenCL ops: one line per op, found by name.
#include "tunekit/opencl_catalog.hpp"
#include "catalog_lookup.hpp"
#include "opencl/cl_ops.hpp"

namespace tunekit::opencl {

const std::vector<CatalogEntry>& builtin_ops() {
  static const std::vector<CatalogEntry> entries{
      {"sgemm",
       "f32 matrix multiply C = A·B (row-major): CLBlast's xgemm space (tiles, threads, "
       "re-shaped loads, vectors, local memory, unrolling, strides)",
       "m=256,n=256,k=256", kernels::cl::sgemm_space, kernels::cl::make_sgemm_op},
      {"softmax", "row-wise f32 softmax, one work-group per row: WG, VW, exp or native_exp",
       "rows=4096,cols=1024", kernels::cl::softmax_space, kernels::cl::make_softmax_op},
      {"rmsnorm", "row-wise f32 RMS normalisation, one work-group per row: WG, VW",
       "rows=4096,cols=1024", kernels::cl::rmsnorm_space, kernels::cl::make_rmsnorm_op},
      {"conv2d",
       "2D f32 convolution (valid correlation) with an fh×fw filter: work-group BX×BY, outputs "
       "per work-item TX×TY, local-memory staging",
       "h=1024,w=1024,fh=5,fw=5", kernels::cl::conv2d_space, kernels::cl::make_conv2d_op},
  };
  return entries;
}

const CatalogEntry& find_builtin_op(std::string_view name) {
  return kernels::find_catalog_entry(builtin_ops(), name, "OpenCL op", "OpenCL ops");
}

}  // namespace tunekit::opencl
