#include "backends/opencl/cl_compiler.hpp"

#include <chrono>
#include <vector>

#include "backends/opencl/cl_api.hpp"
#include "tunekit/outcome.hpp"

namespace tunekit::detail {
namespace {

std::string build_log(cl_program program, cl_device_id device) {
  std::size_t size = 0;
  if (clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, 0, nullptr, &size) !=
          CL_SUCCESS ||
      size == 0)
    return "";
  std::vector<char> text(size);
  if (clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, size, text.data(), nullptr) !=
      CL_SUCCESS)
    return "";
  std::string log(text.data());
  // Build logs can run to megabytes of repeated warnings; the head says what went wrong.
  constexpr std::size_t kMaxLog = 16 * 1024;
  if (log.size() > kMaxLog) log = log.substr(0, kMaxLog) + "\n[... build log truncated]";
  return log;
}

}  // namespace

opencl::Program ClCompiler::build(std::string_view source, const std::string& options) {
  const auto start = std::chrono::steady_clock::now();
  auto device = static_cast<cl_device_id>(context_.device_handle());
  const char* text = source.data();
  const std::size_t length = source.size();
  cl_int err = CL_SUCCESS;
  cl_program program = clCreateProgramWithSource(static_cast<cl_context>(context_.context_handle()),
                                                 1, &text, &length, &err);
  if (err != CL_SUCCESS)
    throw TrialError(Status::compile_failed, "clCreateProgramWithSource: " + cl_error_name(err));
  std::shared_ptr<void> handle(program,
                               [](void* p) { clReleaseProgram(static_cast<cl_program>(p)); });
  err = clBuildProgram(program, 1, &device, options.c_str(), nullptr, nullptr);
  {
    std::lock_guard lock(mutex_);
    ++stats_.builds;
    stats_.seconds +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
  std::string log = build_log(program, device);
  if (err != CL_SUCCESS) {
    throw TrialError(Status::compile_failed, "OpenCL build failed (" + cl_error_name(err) +
                                                 ") with options '" + options + "':\n" + log);
  }
  return opencl::Program(&context_, std::move(handle), std::move(log));
}

}  // namespace tunekit::detail
