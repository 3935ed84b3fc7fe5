// cuBLAS as a source of library candidates (issue #15 item 5: the tuner chooses between cuBLAS
// algorithms and generated kernels per shape, as TunableOp does). cuBLAS is loaded at run time
// ("libcublas.so.<CUDA major>", then "libcublas.so"), so a binary without it runs and reports
// its candidates as compile_failed naming the library. No CUDA header is included here.
#pragma once

#include <memory>
#include <mutex>
#include <string>

#include "tunekit/cuda.hpp"

namespace tunekit::cuda {

// Whether cuBLAS can be loaded, which file, and its version (cublasGetProperty: 130100 for
// 13.1.0), or why not. Never throws; needs no device.
struct BlasLibrary {
  bool loaded = false;
  std::string name;     // the file that opened
  int version = 0;      // major * 10000 + minor * 100 + patch
  std::string message;  // why not, when !loaded
};
BlasLibrary blas_library();

// Which cuBLAS call computes a product: the classic cublasSgemm, or cublasGemmEx with an
// explicit cublasGemmAlgo_t (CUBLAS_GEMM_DEFAULT = -1, CUBLAS_GEMM_ALGO0..23 = 0..23) and
// compute type CUBLAS_COMPUTE_32F, or CUBLAS_COMPUTE_32F_FAST_TF32 when tf32 is asked for
// (TF32 tensor cores: results change beyond reordering).
struct BlasAlgorithm {
  bool gemm_ex = false;
  int algo = -1;
  bool tf32 = false;
  static BlasAlgorithm classic() { return {}; }
  static BlasAlgorithm ex(int algo, bool tf32 = false) { return {true, algo, tf32}; }
};

// Row-major C[m×n] = A[m×k]·B[k×n]; lda, ldb, ldc are the row strides in elements (>= k, n, n).
struct GemmShape {
  int m = 0, n = 0, k = 0;
  int lda = 0, ldb = 0, ldc = 0;
};

// One cuBLAS handle on a context's device and stream, with a workspace of its own (so a call
// captured into a CUDA graph allocates nothing). Calls only enqueue work on the context's
// stream (no synchronisation), and are serialised: a handle is not for concurrent use.
class Blas {
 public:
  // TrialError(compile_failed) naming the library when cuBLAS cannot be loaded or will not
  // initialise on the device; out_of_memory when the handle or its workspace cannot be
  // allocated.
  explicit Blas(std::shared_ptr<Context> context);
  ~Blas();
  Blas(const Blas&) = delete;
  Blas& operator=(const Blas&) = delete;

  // C = A·B, row-major, through the column-major trick (C^T = B^T·A^T, nothing transposed),
  // alpha 1 and beta 0 (C is overwritten, never read). UsageError for a shape that does not fit
  // the buffers, an algo outside -1..23, or tf32 without gemm_ex. A failing call is a
  // TrialError: out_of_memory (CUBLAS_STATUS_ALLOC_FAILED), rejected (NOT_SUPPORTED,
  // INVALID_VALUE, ARCH_MISMATCH: this algorithm does not serve the shape, nothing ran),
  // launch_failed (EXECUTION_FAILED and the rest); device_lost once the context is lost.
  void sgemm(const GemmShape& shape, const Buffer& a, const Buffer& b, Buffer& c,
             const BlasAlgorithm& algorithm = BlasAlgorithm::classic());

  int version() const { return version_; }

 private:
  std::shared_ptr<Context> context_;
  void* handle_ = nullptr;  // cublasHandle_t
  Buffer workspace_;
  int version_ = 0;
  std::mutex mutex_;
};

}  // namespace tunekit::cuda
