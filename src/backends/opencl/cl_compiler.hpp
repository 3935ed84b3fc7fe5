// The runtime's compiler: clCreateProgramWithSource + clBuildProgram, no cache. Private to
// src/backends/opencl (CachingCompiler wraps it).
#pragma once

#include <string>
#include <string_view>

#include "tunekit/opencl.hpp"

namespace tunekit::detail {

class ClCompiler final : public opencl::Compiler {
 public:
  explicit ClCompiler(opencl::Context& context) : context_(context) {}
  // TrialError(compile_failed) with the build log when the build fails.
  opencl::Program build(std::string_view source, const std::string& options) override;
  opencl::BuildStats stats() const override { return stats_; }

 private:
  opencl::Context& context_;
  opencl::BuildStats stats_;
};

}  // namespace tunekit::detail
