// The OpenCL C API as the backend uses it: the 1.2 contract, error names, and checks that turn
// a failing call into the right exception. Private to src/backends/opencl.
#pragma once

#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 120
#endif
#include <CL/cl.h>

#include <string>
#include <string_view>

#include "tunekit/outcome.hpp"

namespace tunekit::detail {

// "CL_INVALID_WORK_GROUP_SIZE (-54)"
std::string cl_error_name(cl_int code);

// The status a failing enqueue or allocation maps to: out_of_memory for allocation failures,
// launch_failed otherwise.
Status cl_failure_status(cl_int code);

// Throws TrialError(status-of-code) naming `what` when code is not CL_SUCCESS.
void cl_check_trial(cl_int code, std::string_view what);

// Throws FatalError naming `what` (setup calls whose failure is not a candidate's fault).
void cl_check_fatal(cl_int code, std::string_view what);

// String and scalar queries of a device.
std::string device_string(cl_device_id device, cl_device_info what);
std::string platform_string(cl_platform_id platform, cl_platform_info what);

}  // namespace tunekit::detail
