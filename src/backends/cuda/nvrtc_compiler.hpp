// NVRTC as a cuda::Compiler: source + options + arch -> cubin, no cache (CachingCompiler wraps
// it). Private to src/backends/cuda; nvrtc_compiler() is the public way to get one.
#pragma once

#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "backends/cuda/nvrtc_api.hpp"
#include "tunekit/cuda.hpp"

namespace tunekit::detail {

// How much of NVRTC's log a message or a ModuleImage carries: the head says what went wrong,
// and a template error can repeat for megabytes.
inline constexpr std::size_t kNvrtcLogLimit = 8 * 1024;

class NvrtcCompiler final : public cuda::Compiler {
 public:
  // `api` must outlive the compiler (nvrtc_api() lives for the process).
  explicit NvrtcCompiler(const NvrtcApi& api) : api_(api) {}
  // Compiles with --gpu-architecture=<arch> (a real sm_XX, so NVRTC emits a cubin),
  // -default-device and --std=c++17 before the caller's options. TrialError(compile_failed)
  // with the log when the compile fails, when `arch` is not an architecture this NVRTC knows,
  // and when NVRTC could not be loaded (naming the library and why). Thread-safe.
  cuda::ModuleImage compile(std::string_view source, const std::vector<std::string>& options,
                            const std::string& arch) override;
  cuda::BuildStats stats() const override {
    std::lock_guard lock(mutex_);
    return stats_;
  }

 private:
  void check_arch(const std::string& arch) const;

  const NvrtcApi& api_;
  mutable std::mutex mutex_;
  cuda::BuildStats stats_;
};

// `log` cut to its first kNvrtcLogLimit bytes, saying so when it was.
std::string bounded_nvrtc_log(std::string log);

}  // namespace tunekit::detail
