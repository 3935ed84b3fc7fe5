// cuda::Blas: cuBLAS loaded at run time, one handle per context with its own workspace, row-major
// sgemm through the column-major trick, failures classified.
#include "backends/cuda/cublas.hpp"

#include <cstdint>
#include <memory>

#include "backends/cuda/context_impl.hpp"
#include "backends/cuda/shared_library.hpp"
#include "tunekit/cuda_blas.hpp"
#include "tunekit/errors.hpp"

namespace tunekit::detail {
namespace {

// Finds `name`; when it is missing, marks the table unloaded and says which symbol it was.
template <class F>
void bind(const SharedLibrary& library, const char* name, F& slot, CublasApi& api) {
  slot = library.symbol<F>(name);
  if (slot || !api.loaded) return;
  api.loaded = false;
  api.error = library.name() + ": missing symbol " + name + " (a cuBLAS older than tunekit needs)";
}

std::string joined_names(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

}  // namespace

std::vector<std::string> cublas_library_names() {
  return {"libcublas.so." + std::to_string(TUNEKIT_CUDA_MAJOR), "libcublas.so"};
}

CublasApi load_cublas(const std::vector<std::string>& names) {
  auto library = std::make_shared<const SharedLibrary>(names);
  CublasApi api;
  if (!library->loaded()) {
    api.error =
        "cuBLAS could not be loaded (tried " + joined_names(names) + "): " + library->error();
    return api;
  }
  api.owner = library;
  api.library = library->name();
  api.loaded = true;
  bind(*library, "cublasCreate_v2", api.create, api);
  bind(*library, "cublasDestroy_v2", api.destroy, api);
  bind(*library, "cublasGetProperty", api.get_property, api);
  bind(*library, "cublasSetStream_v2", api.set_stream, api);
  bind(*library, "cublasSetWorkspace_v2", api.set_workspace, api);
  bind(*library, "cublasSgemm_v2", api.sgemm, api);
  bind(*library, "cublasGemmEx", api.gemm_ex, api);
  bind(*library, "cublasGetStatusName", api.status_name, api);
  return api;
}

const CublasApi& cublas_api() {
  static const CublasApi api = load_cublas(cublas_library_names());
  return api;
}

std::string cublas_status_name(const CublasApi* api, cublasStatus_t status) {
  const char* name = api && api->status_name ? api->status_name(status) : nullptr;
  return std::string(name ? name : "cuBLAS status") + " (" +
         std::to_string(static_cast<int>(status)) + ")";
}

Status cublas_failure_status(cublasStatus_t status) {
  switch (status) {
    case CUBLAS_STATUS_ALLOC_FAILED:
      return Status::out_of_memory;
    case CUBLAS_STATUS_NOT_SUPPORTED:
    case CUBLAS_STATUS_INVALID_VALUE:
    case CUBLAS_STATUS_ARCH_MISMATCH:
      return Status::rejected;
    default:
      return Status::launch_failed;
  }
}

}  // namespace tunekit::detail

namespace tunekit::cuda {
namespace {

using detail::cublas_api;
using detail::CublasApi;

// NVIDIA's recommended workspace on Hopper (32 MiB; 4 MiB suffices elsewhere): given to the
// handle so no call allocates, which a call inside a graph capture must not.
constexpr std::size_t kWorkspaceBytes = std::size_t{32} << 20;

void check(const CublasApi& api, cublasStatus_t status, const std::string& what) {
  if (status == CUBLAS_STATUS_SUCCESS) return;
  throw TrialError(detail::cublas_failure_status(status),
                   what + " failed: " + detail::cublas_status_name(&api, status));
}

const CublasApi& loaded_api() {
  const CublasApi& api = cublas_api();
  if (!api.loaded) throw TrialError(Status::compile_failed, api.error);
  return api;
}

// The elements a row-major rows x cols matrix of row stride ld spans.
std::uint64_t span(int rows, int cols, int ld) {
  if (rows == 0 || cols == 0) return 0;
  return static_cast<std::uint64_t>(rows - 1) * static_cast<std::uint64_t>(ld) +
         static_cast<std::uint64_t>(cols);
}

void check_arguments(const GemmShape& s, const Buffer& a, const Buffer& b, const Buffer& c,
                     const BlasAlgorithm& algorithm) {
  // Spelled out only for a message: a launch checks, it does not format.
  const auto shape = [&] {
    return "m=" + std::to_string(s.m) + " n=" + std::to_string(s.n) + " k=" + std::to_string(s.k) +
           " lda=" + std::to_string(s.lda) + " ldb=" + std::to_string(s.ldb) +
           " ldc=" + std::to_string(s.ldc);
  };
  if (s.m < 0 || s.n < 0 || s.k < 0 || s.lda < std::max(1, s.k) || s.ldb < std::max(1, s.n) ||
      s.ldc < std::max(1, s.n))
    throw UsageError("cuda::Blas::sgemm: " + shape() +
                     ": give m, n, k >= 0 and row strides lda >= k, ldb >= n, ldc >= n (>= 1)");
  if (span(s.m, s.k, s.lda) * sizeof(float) > a.bytes() ||
      span(s.k, s.n, s.ldb) * sizeof(float) > b.bytes() ||
      span(s.m, s.n, s.ldc) * sizeof(float) > c.bytes())
    throw UsageError("cuda::Blas::sgemm: " + shape() + " does not fit the buffers of A (" +
                     std::to_string(a.bytes()) + " bytes), B (" + std::to_string(b.bytes()) +
                     ") and C (" + std::to_string(c.bytes()) + ")");
  if (algorithm.gemm_ex && (algorithm.algo < -1 || algorithm.algo > 23))
    throw UsageError("cuda::Blas::sgemm: algo " + std::to_string(algorithm.algo) +
                     " is not a cublasGemmAlgo_t tunekit passes: give -1 (CUBLAS_GEMM_DEFAULT) "
                     "or 0..23 (CUBLAS_GEMM_ALGO0..23)");
  if (algorithm.tf32 && !algorithm.gemm_ex)
    throw UsageError("cuda::Blas::sgemm: tf32 is a compute type of cublasGemmEx: set gemm_ex");
}

}  // namespace

BlasLibrary blas_library() {
  const CublasApi& api = cublas_api();
  BlasLibrary out;
  out.loaded = api.loaded;
  out.name = api.library;
  out.message = api.error;
  int major = 0, minor = 0, patch = 0;
  if (api.loaded && api.get_property(MAJOR_VERSION, &major) == CUBLAS_STATUS_SUCCESS &&
      api.get_property(MINOR_VERSION, &minor) == CUBLAS_STATUS_SUCCESS &&
      api.get_property(PATCH_LEVEL, &patch) == CUBLAS_STATUS_SUCCESS)
    out.version = major * 10000 + minor * 100 + patch;
  return out;
}

Blas::Blas(std::shared_ptr<Context> context) : context_(std::move(context)) {
  if (!context_) throw UsageError("cuda::Blas needs a context: open one with cuda::Context::open");
  const CublasApi& api = loaded_api();
  auto& impl = detail::ContextAccess::impl(*context_);
  impl.throw_if_lost();
  impl.make_current();  // the handle belongs to the device current on this thread
  cublasHandle_t handle = nullptr;
  const cublasStatus_t created = api.create(&handle);
  if (created != CUBLAS_STATUS_SUCCESS) {
    const Status status =
        created == CUBLAS_STATUS_ALLOC_FAILED ? Status::out_of_memory : Status::compile_failed;
    throw TrialError(status, api.library + ": cublasCreate failed on " +
                                 context_->info().identity.product + ": " +
                                 detail::cublas_status_name(&api, created));
  }
  handle_ = handle;
  try {
    // The stream first: cublasSetStream resets the handle to the default workspace pool, so
    // set per call it would undo the workspace below (the context's stream never changes).
    check(api, api.set_stream(handle, static_cast<cudaStream_t>(context_->stream_handle())),
          "cublasSetStream");
    workspace_ = Buffer(*context_, kWorkspaceBytes);
    check(api,
          api.set_workspace(handle, reinterpret_cast<void*>(workspace_.device_pointer()),
                            kWorkspaceBytes),
          "cublasSetWorkspace");
  } catch (...) {
    api.destroy(handle);
    throw;
  }
  version_ = blas_library().version;
}

Blas::~Blas() {
  if (!handle_) return;
  try {
    detail::ContextAccess::impl(*context_).make_current();
  } catch (...) {  // a lost context: the handle goes with the process
    return;
  }
  cublas_api().destroy(static_cast<cublasHandle_t>(handle_));
}

void Blas::sgemm(const GemmShape& s, const Buffer& a, const Buffer& b, Buffer& c,
                 const BlasAlgorithm& algorithm) {
  check_arguments(s, a, b, c, algorithm);
  const CublasApi& api = loaded_api();
  std::lock_guard lock(mutex_);
  auto& impl = detail::ContextAccess::impl(*context_);
  impl.throw_if_lost();
  impl.make_current();
  auto handle = static_cast<cublasHandle_t>(handle_);
  // The timing window's start event (and backlog) go before the library's kernels.
  context_->before_enqueue();
  const float alpha = 1.0f, beta = 0.0f;
  const auto* pa = reinterpret_cast<const float*>(a.device_pointer());
  const auto* pb = reinterpret_cast<const float*>(b.device_pointer());
  auto* pc = reinterpret_cast<float*>(c.device_pointer());
  // Row-major C = A·B is column-major C^T = B^T·A^T: B and A swap places, nothing transposes.
  if (!algorithm.gemm_ex) {
    check(api,
          api.sgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, s.n, s.m, s.k, &alpha, pb, s.ldb, pa, s.lda,
                    &beta, pc, s.ldc),
          "cublasSgemm");
    return;
  }
  const cublasComputeType_t compute =
      algorithm.tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
  check(api,
        api.gemm_ex(handle, CUBLAS_OP_N, CUBLAS_OP_N, s.n, s.m, s.k, &alpha, pb, CUDA_R_32F, s.ldb,
                    pa, CUDA_R_32F, s.lda, &beta, pc, CUDA_R_32F, s.ldc, compute,
                    static_cast<cublasGemmAlgo_t>(algorithm.algo)),
        "cublasGemmEx (algo " + std::to_string(algorithm.algo) + ")");
}

}  // namespace tunekit::cuda
