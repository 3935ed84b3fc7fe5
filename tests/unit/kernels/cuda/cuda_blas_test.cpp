// cublas.cpp (no GPU needed): cuBLAS loads at run time and says which file and version; a
// missing library is a message naming every name tried; a Blas needs a context; failing
// cublasStatus_t values are classified (ALLOC_FAILED out_of_memory, NOT_SUPPORTED /
// INVALID_VALUE / ARCH_MISMATCH rejected, EXECUTION_FAILED and the rest launch_failed). The
// calls themselves run on a device (cuda_ops_gpu_test.cpp). CUBLAS_VER_MAJOR (the header the
// build compiled against) is the toolkit's major version.
#include <gtest/gtest.h>

#include <string>

#include "backends/cuda/cublas.hpp"
#include "tunekit/cuda_blas.hpp"
#include "tunekit/errors.hpp"

namespace tunekit::cuda {
namespace {

TEST(CudaBlas, TheToolkitsCublasLoadsAndSaysItsVersion) {
  const BlasLibrary library = blas_library();
  ASSERT_TRUE(library.loaded) << library.message;
  EXPECT_EQ(library.name, "libcublas.so." + std::to_string(CUBLAS_VER_MAJOR));
  EXPECT_GE(library.version, CUBLAS_VER_MAJOR * 10000);
  EXPECT_LT(library.version, (CUBLAS_VER_MAJOR + 1) * 10000);
}

TEST(CudaBlas, AMissingLibraryNamesEveryNameTried) {
  const detail::CublasApi api =
      detail::load_cublas({"libcublas_tunekit_missing.so.99", "libcublas_tunekit_missing.so"});
  EXPECT_FALSE(api.loaded);
  EXPECT_EQ(api.sgemm, nullptr);
  EXPECT_NE(api.error.find("cuBLAS could not be loaded"), std::string::npos) << api.error;
  EXPECT_NE(api.error.find("libcublas_tunekit_missing.so.99"), std::string::npos) << api.error;
  EXPECT_NE(api.error.find("libcublas_tunekit_missing.so:"), std::string::npos) << api.error;
}

TEST(CudaBlas, TheLibraryNamesFollowTheToolkitsMajorVersion) {
  EXPECT_EQ(detail::cublas_library_names(),
            (std::vector<std::string>{"libcublas.so." + std::to_string(CUBLAS_VER_MAJOR),
                                      "libcublas.so"}));
  const detail::CublasApi& api = detail::cublas_api();
  ASSERT_TRUE(api.loaded) << api.error;
  EXPECT_NE(api.create, nullptr);
  EXPECT_NE(api.gemm_ex, nullptr);
}

TEST(CudaBlas, FailingStatusesAreClassified) {
  using detail::cublas_failure_status;
  EXPECT_EQ(cublas_failure_status(CUBLAS_STATUS_ALLOC_FAILED), Status::out_of_memory);
  EXPECT_EQ(cublas_failure_status(CUBLAS_STATUS_NOT_SUPPORTED), Status::rejected);
  EXPECT_EQ(cublas_failure_status(CUBLAS_STATUS_INVALID_VALUE), Status::rejected);
  EXPECT_EQ(cublas_failure_status(CUBLAS_STATUS_ARCH_MISMATCH), Status::rejected);
  EXPECT_EQ(cublas_failure_status(CUBLAS_STATUS_EXECUTION_FAILED), Status::launch_failed);
  EXPECT_EQ(cublas_failure_status(CUBLAS_STATUS_INTERNAL_ERROR), Status::launch_failed);
  EXPECT_EQ(cublas_failure_status(CUBLAS_STATUS_NOT_INITIALIZED), Status::launch_failed);
}

TEST(CudaBlas, StatusNamesComeFromTheLibraryOrFallBack) {
  EXPECT_EQ(detail::cublas_status_name(&detail::cublas_api(), CUBLAS_STATUS_NOT_SUPPORTED),
            "CUBLAS_STATUS_NOT_SUPPORTED (15)");
  EXPECT_EQ(detail::cublas_status_name(nullptr, CUBLAS_STATUS_ALLOC_FAILED), "cuBLAS status (3)");
}

TEST(CudaBlas, ABlasNeedsAContext) {
  EXPECT_THROW(Blas(nullptr), UsageError);
}

}  // namespace
}  // namespace tunekit::cuda
