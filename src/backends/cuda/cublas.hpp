// cuBLAS as cuda::Blas uses it: the library loaded at run time and the functions it calls as a
// table, and the classification of cublasStatus_t values. Private to src/backends/cuda.
#pragma once

#include <cublas_api.h>

#include <memory>
#include <string>
#include <vector>

#include "backends/cuda/shared_library.hpp"
#include "tunekit/outcome.hpp"

namespace tunekit::detail {

struct CublasApi {
  bool loaded = false;  // every function below was found
  std::string library;  // the name that opened ("libcublas.so.13")
  std::string error;    // why not loaded: each dlopen attempt's dlerror, or the missing symbol
  std::shared_ptr<const SharedLibrary> owner;  // keeps the library loaded while the table lives

  decltype(&::cublasCreate_v2) create = nullptr;
  decltype(&::cublasDestroy_v2) destroy = nullptr;
  decltype(&::cublasGetProperty) get_property = nullptr;
  decltype(&::cublasSetStream_v2) set_stream = nullptr;
  decltype(&::cublasSetWorkspace_v2) set_workspace = nullptr;
  decltype(&::cublasSgemm_v2) sgemm = nullptr;
  // Spelled out: the header overloads cublasGemmEx in C++ (a 64-bit-index inline wrapper).
  cublasStatus_t (*gemm_ex)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int,
                            const void*, const void*, cudaDataType, int, const void*, cudaDataType,
                            int, const void*, void*, cudaDataType, int, cublasComputeType_t,
                            cublasGemmAlgo_t) = nullptr;
  decltype(&::cublasGetStatusName) status_name = nullptr;
};

// The names tried, in order: "libcublas.so.<TUNEKIT_CUDA_MAJOR>", then "libcublas.so".
std::vector<std::string> cublas_library_names();
// The process-wide table of the first of cublas_library_names() that opens (loaded once).
const CublasApi& cublas_api();
// The table of the first of `names` that opens (tests name libraries that do not exist).
CublasApi load_cublas(const std::vector<std::string>& names);

// "CUBLAS_STATUS_NOT_SUPPORTED (15)": the library's own name when `api` can give it.
std::string cublas_status_name(const CublasApi* api, cublasStatus_t status);

// The status of a failing call: out_of_memory for ALLOC_FAILED; rejected for NOT_SUPPORTED,
// INVALID_VALUE and ARCH_MISMATCH (the call checked its arguments and declined: nothing ran,
// and the arguments tunekit passes are checked first, so it is the algorithm declining the
// shape); launch_failed for EXECUTION_FAILED and everything else.
Status cublas_failure_status(cublasStatus_t status);

}  // namespace tunekit::detail
