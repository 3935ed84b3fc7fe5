// The CUDA catalog of a build without the CUDA toolkit (-DTUNEKIT_CUDA=OFF): no ops, and a
// name asked for says how to get them (src/backends/cuda/cuda_unavailable.cpp is the backend's
// stand-in).
#include "tunekit/cuda_catalog.hpp"
#include "tunekit/errors.hpp"

namespace tunekit::cuda {

const std::vector<CatalogEntry>& builtin_ops() {
  static const std::vector<CatalogEntry> none;
  return none;
}

const CatalogEntry& find_builtin_op(std::string_view name) {
  throw UsageError("no CUDA op '" + std::string(name) +
                   "': tunekit was built without the CUDA toolkit; install it and rebuild with "
                   "-DTUNEKIT_CUDA=ON");
}

}  // namespace tunekit::cuda
