// The catalog of built-in CUDA ops: one line per op, found by name.
#include "tunekit/cuda_catalog.hpp"

#include "catalog_lookup.hpp"
#include "cuda/cu_ops.hpp"

namespace tunekit::cuda {

const std::vector<CatalogEntry>& builtin_ops() {
  static const std::vector<CatalogEntry> entries{
      {"sgemm",
       "f32 matrix multiply C = A·B (row-major): a CUTLASS-style tile space (block, warp and "
       "thread tiles, vector width, double buffering, split-k) and cuBLAS as library points",
       "m=1024,n=1024,k=1024", kernels::cu::sgemm_space, kernels::cu::make_sgemm_op},
      {"softmax",
       "row-wise f32 softmax: threads per row (a warp to a block), rows per block, vector "
       "width, expf or __expf",
       "rows=4096,cols=1024", kernels::cu::softmax_space, kernels::cu::make_softmax_op},
      {"rmsnorm",
       "row-wise f32 RMS normalisation: threads per row (a warp to a block), rows per block, "
       "vector width",
       "rows=4096,cols=1024", kernels::cu::rmsnorm_space, kernels::cu::make_rmsnorm_op},
      {"conv2d",
       "2D f32 convolution (valid correlation) with an fh×fw filter: block BX×BY, outputs per "
       "thread TX×TY, shared-memory staging",
       "h=1024,w=1024,fh=5,fw=5", kernels::cu::conv2d_space, kernels::cu::make_conv2d_op},
  };
  return entries;
}

const CatalogEntry& find_builtin_op(std::string_view name) {
  return kernels::find_catalog_entry(builtin_ops(), name, "CUDA op", "CUDA ops");
}

}  // namespace tunekit::cuda
