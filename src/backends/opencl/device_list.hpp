// Device enumeration shared by list_devices and Context::open. Private to src/backends/opencl.
#pragma once

#include <vector>

#include "backends/opencl/cl_api.hpp"
#include "tunekit/opencl.hpp"

namespace tunekit::detail {

// Every device of every platform with its info; the cl_device_id of each is appended to `ids`
// when given (same order).
std::vector<opencl::DeviceInfo> enumerate_devices(std::vector<cl_device_id>* ids);

}  // namespace tunekit::detail
