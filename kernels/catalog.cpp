// The catalog of built-in ops: one line per op, found by name (the CLI lists and tunes these).
#include "tunekit/catalog.hpp"

#include "catalog_lookup.hpp"
#include "rmsnorm/rmsnorm.hpp"
#include "sgemm/sgemm.hpp"
#include "softmax/softmax.hpp"
#include "sum/sum.hpp"

namespace tunekit {

const std::vector<CatalogEntry>& builtin_ops() {
  static const std::vector<CatalogEntry> entries{
      {"sgemm",
       "f32 matrix multiply C = A·B (row-major): naive, ikj, packed multithreaded micro-kernels, "
       "OpenBLAS",
       "m=256,n=256,k=256", kernels::make_sgemm_op},
      {"softmax",
       "row-wise f32 softmax: two-pass or online, std::exp or a vectorised polynomial exp, "
       "1-16 lanes, threads",
       "rows=4096,cols=1024", kernels::make_softmax_op},
      {"rmsnorm", "row-wise f32 RMS normalisation with a weight vector, 1-16 lanes, threads",
       "rows=4096,cols=1024", kernels::make_rmsnorm_op},
      {"sum", "sum of n f32 values: serial, pairwise, 4-16 accumulators, threads", "n=16777216",
       kernels::make_sum_op},
  };
  return entries;
}

const CatalogEntry& find_builtin_op(std::string_view name) {
  return kernels::find_catalog_entry(builtin_ops(), name, "op", "built-in ops");
}

}  // namespace tunekit
