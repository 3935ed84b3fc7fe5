// The runtime's compiler: clCreateProgramWithSource + clBuildProgram, no cache. Private to
// src/backends/opencl (CachingCompiler wraps it).
#pragma once

#include <mutex>
#include <string>
#include <string_view>

#include "tunekit/opencl.hpp"

namespace tunekit::detail {

class ClCompiler final : public opencl::Compiler {
 public:
  explicit ClCompiler(opencl::Context& context) : context_(context) {}
  // TrialError(compile_failed) with the build log when the build fails. Thread-safe (OpenCL
  // 1.2 makes program creation and clBuildProgram so; the counters are guarded).
  opencl::Program build(std::string_view source, const std::string& options) override;
  opencl::BuildStats stats() const override {
    std::lock_guard lock(mutex_);
    return stats_;
  }

 private:
  opencl::Context& context_;
  mutable std::mutex mutex_;
  opencl::BuildStats stats_;
};

}  // namespace tunekit::detail
