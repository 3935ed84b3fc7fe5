#include "backends/opencl/cl_api.hpp"

#include <vector>

#include "tunekit/errors.hpp"

namespace tunekit::detail {

std::string cl_error_name(cl_int code) {
  const char* name = "unknown OpenCL error";
  switch (code) {
#define TUNEKIT_CL_ERROR(e) \
  case e:                   \
    name = #e;              \
    break;
    TUNEKIT_CL_ERROR(CL_DEVICE_NOT_FOUND)
    TUNEKIT_CL_ERROR(CL_DEVICE_NOT_AVAILABLE)
    TUNEKIT_CL_ERROR(CL_COMPILER_NOT_AVAILABLE)
    TUNEKIT_CL_ERROR(CL_MEM_OBJECT_ALLOCATION_FAILURE)
    TUNEKIT_CL_ERROR(CL_OUT_OF_RESOURCES)
    TUNEKIT_CL_ERROR(CL_OUT_OF_HOST_MEMORY)
    TUNEKIT_CL_ERROR(CL_PROFILING_INFO_NOT_AVAILABLE)
    TUNEKIT_CL_ERROR(CL_BUILD_PROGRAM_FAILURE)
    TUNEKIT_CL_ERROR(CL_INVALID_VALUE)
    TUNEKIT_CL_ERROR(CL_INVALID_DEVICE)
    TUNEKIT_CL_ERROR(CL_INVALID_CONTEXT)
    TUNEKIT_CL_ERROR(CL_INVALID_COMMAND_QUEUE)
    TUNEKIT_CL_ERROR(CL_INVALID_MEM_OBJECT)
    TUNEKIT_CL_ERROR(CL_INVALID_BUILD_OPTIONS)
    TUNEKIT_CL_ERROR(CL_INVALID_PROGRAM)
    TUNEKIT_CL_ERROR(CL_INVALID_PROGRAM_EXECUTABLE)
    TUNEKIT_CL_ERROR(CL_INVALID_KERNEL_NAME)
    TUNEKIT_CL_ERROR(CL_INVALID_KERNEL)
    TUNEKIT_CL_ERROR(CL_INVALID_ARG_INDEX)
    TUNEKIT_CL_ERROR(CL_INVALID_ARG_VALUE)
    TUNEKIT_CL_ERROR(CL_INVALID_ARG_SIZE)
    TUNEKIT_CL_ERROR(CL_INVALID_KERNEL_ARGS)
    TUNEKIT_CL_ERROR(CL_INVALID_WORK_DIMENSION)
    TUNEKIT_CL_ERROR(CL_INVALID_WORK_GROUP_SIZE)
    TUNEKIT_CL_ERROR(CL_INVALID_WORK_ITEM_SIZE)
    TUNEKIT_CL_ERROR(CL_INVALID_GLOBAL_OFFSET)
    TUNEKIT_CL_ERROR(CL_INVALID_EVENT)
    TUNEKIT_CL_ERROR(CL_INVALID_BUFFER_SIZE)
    TUNEKIT_CL_ERROR(CL_INVALID_GLOBAL_WORK_SIZE)
    case -1001:  // CL_PLATFORM_NOT_FOUND_KHR (cl_ext.h): the ICD loader found no platform
      name = "CL_PLATFORM_NOT_FOUND_KHR";
      break;
#undef TUNEKIT_CL_ERROR
    default:
      break;
  }
  return std::string(name) + " (" + std::to_string(code) + ")";
}

Status cl_failure_status(cl_int code) {
  switch (code) {
    case CL_MEM_OBJECT_ALLOCATION_FAILURE:
    case CL_OUT_OF_HOST_MEMORY:
    case CL_INVALID_BUFFER_SIZE:
      return Status::out_of_memory;
    default:
      return Status::launch_failed;
  }
}

void cl_check_trial(cl_int code, std::string_view what) {
  if (code == CL_SUCCESS) return;
  throw TrialError(cl_failure_status(code), std::string(what) + " failed: " + cl_error_name(code));
}

void cl_check_fatal(cl_int code, std::string_view what) {
  if (code == CL_SUCCESS) return;
  throw FatalError("OpenCL: " + std::string(what) + " failed: " + cl_error_name(code));
}

std::string device_string(cl_device_id device, cl_device_info what) {
  std::size_t size = 0;
  if (clGetDeviceInfo(device, what, 0, nullptr, &size) != CL_SUCCESS || size == 0) return "";
  std::vector<char> text(size);
  if (clGetDeviceInfo(device, what, size, text.data(), nullptr) != CL_SUCCESS) return "";
  return std::string(text.data());
}

std::string platform_string(cl_platform_id platform, cl_platform_info what) {
  std::size_t size = 0;
  if (clGetPlatformInfo(platform, what, 0, nullptr, &size) != CL_SUCCESS || size == 0) return "";
  std::vector<char> text(size);
  if (clGetPlatformInfo(platform, what, size, text.data(), nullptr) != CL_SUCCESS) return "";
  return std::string(text.data());
}

}  // namespace tunekit::detail
