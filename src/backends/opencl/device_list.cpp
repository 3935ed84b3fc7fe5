// Enumerating platforms and devices, reading their identity, and picking one by index or name.
#include <algorithm>
#include <cctype>
#include <charconv>

#include "backends/opencl/cl_api.hpp"
#include "backends/opencl/device_list.hpp"
#include "core/device_selection.hpp"
#include "tunekit/errors.hpp"
#include "tunekit/opencl.hpp"

namespace tunekit::detail {
namespace {

template <class T>
T device_scalar(cl_device_id device, cl_device_info what) {
  T value{};
  if (clGetDeviceInfo(device, what, sizeof value, &value, nullptr) != CL_SUCCESS) return T{};
  return value;
}

std::string device_kind(cl_device_type type) {
  if (type & CL_DEVICE_TYPE_GPU) return "gpu";
  if (type & CL_DEVICE_TYPE_ACCELERATOR) return "accelerator";
  if (type & CL_DEVICE_TYPE_CPU) return "cpu";
  return "other";
}

}  // namespace
}  // namespace tunekit::detail

namespace tunekit::opencl {

std::vector<DeviceInfo> list_devices() {
  return detail::enumerate_devices(nullptr);
}

std::size_t select_device(std::span<const DeviceInfo> devices, std::string_view selector) {
  if (devices.empty()) {
    throw UsageError(
        "no OpenCL platform found: install an OpenCL runtime (on Debian: apt-get install "
        "pocl-opencl-icd) or check OCL_ICD_VENDORS; 'tunekit devices' lists what is found");
  }
  std::vector<detail::SelectableDevice> selectable;
  for (const DeviceInfo& d : devices)
    selectable.push_back({d.identity.product, std::to_string(d.index) + ": " + d.identity.product +
                                                  " (" + d.platform + ")"});
  return detail::select_by_selector(selectable, selector, "OpenCL");
}

}  // namespace tunekit::opencl

namespace tunekit::detail {

std::vector<opencl::DeviceInfo> enumerate_devices(std::vector<cl_device_id>* ids) {
  std::vector<opencl::DeviceInfo> out;
  cl_uint platform_count = 0;
  // A missing runtime answers CL_PLATFORM_NOT_FOUND_KHR (or 0 platforms): no devices, no error.
  if (clGetPlatformIDs(0, nullptr, &platform_count) != CL_SUCCESS || platform_count == 0)
    return out;
  std::vector<cl_platform_id> platforms(platform_count);
  if (clGetPlatformIDs(platform_count, platforms.data(), nullptr) != CL_SUCCESS) return out;
  for (cl_platform_id platform : platforms) {
    cl_uint count = 0;
    if (clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 0, nullptr, &count) != CL_SUCCESS) continue;
    std::vector<cl_device_id> devices(count);
    if (clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, count, devices.data(), nullptr) != CL_SUCCESS)
      continue;
    const std::string platform_name = platform_string(platform, CL_PLATFORM_NAME);
    for (cl_device_id device : devices) {
      opencl::DeviceInfo info;
      info.index = out.size();
      info.platform = platform_name;
      info.opencl_version = device_string(device, CL_DEVICE_VERSION);
      info.global_memory = device_scalar<cl_ulong>(device, CL_DEVICE_GLOBAL_MEM_SIZE);
      info.local_memory = device_scalar<cl_ulong>(device, CL_DEVICE_LOCAL_MEM_SIZE);
      info.max_allocation = device_scalar<cl_ulong>(device, CL_DEVICE_MAX_MEM_ALLOC_SIZE);
      info.max_work_group = device_scalar<std::size_t>(device, CL_DEVICE_MAX_WORK_GROUP_SIZE);
      const auto dims = device_scalar<cl_uint>(device, CL_DEVICE_MAX_WORK_ITEM_DIMENSIONS);
      info.max_work_item_sizes.assign(dims, 0);
      if (dims > 0)
        clGetDeviceInfo(device, CL_DEVICE_MAX_WORK_ITEM_SIZES, dims * sizeof(std::size_t),
                        info.max_work_item_sizes.data(), nullptr);
      DeviceIdentity& id = info.identity;
      id.backend = "opencl";
      id.vendor = device_string(device, CL_DEVICE_VENDOR);
      id.product = device_string(device, CL_DEVICE_NAME);
      id.architecture = device_kind(device_scalar<cl_device_type>(device, CL_DEVICE_TYPE));
      id.compute_units =
          static_cast<int>(device_scalar<cl_uint>(device, CL_DEVICE_MAX_COMPUTE_UNITS));
      id.memory_bytes = info.global_memory;
      id.l1d_bytes = info.local_memory;  // the closest OpenCL analogue: local memory per group
      id.l3_bytes = device_scalar<cl_ulong>(device, CL_DEVICE_GLOBAL_MEM_CACHE_SIZE);
      id.driver = device_string(device, CL_DRIVER_VERSION) + " (" + info.opencl_version + ")";
      id.features = {"platform=" + platform_name,
                     "max_work_group=" + std::to_string(info.max_work_group),
                     "local_memory=" + std::to_string(info.local_memory)};
      id.known = !id.product.empty();
      out.push_back(std::move(info));
      if (ids) ids->push_back(device);
    }
  }
  return out;
}

}  // namespace tunekit::detail
