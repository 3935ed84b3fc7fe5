// Whether a driver is there, the devices it has with their limits and identity, and picking one
// by index or name.
#include <algorithm>
#include <cctype>
#include <charconv>

#include "backends/cuda/context_impl.hpp"
#include "core/device_selection.hpp"
#include "tunekit/errors.hpp"

#ifndef TUNEKIT_CUDA_VERSION
#define TUNEKIT_CUDA_VERSION "unknown"
#endif

namespace tunekit::detail {
namespace {

// 12040 -> "12.4"
std::string version_text(int version) {
  return std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10);
}

int attribute(const DriverApi& api, CUdevice device, CUdevice_attribute what) {
  int value = 0;
  if (api.device_get_attribute(&value, what, device) != CUDA_SUCCESS) return 0;
  return value;
}

DeviceIdentity identity_of(const cuda::DeviceInfo& info, std::string product, int driver) {
  DeviceIdentity id;
  id.backend = "cuda";
  id.vendor = "NVIDIA";
  id.product = std::move(product);
  id.architecture = info.arch();
  id.features = {"cc" + std::to_string(info.cc_major) + "." + std::to_string(info.cc_minor)};
  id.compute_units = info.sm_count;
  id.memory_bytes = info.global_memory;
  id.l2_bytes = info.l2_bytes;
  id.l3_bytes = info.l2_bytes;  // the last level
  id.driver = version_text(driver) + " (runtime " TUNEKIT_CUDA_VERSION ", NVRTC " +
              cuda::nvrtc_version() + ")";
  id.known = !id.product.empty();
  return id;
}

cuda::DeviceInfo read_device(const DriverApi& api, int ordinal, CUdevice device, int driver) {
  cuda::DeviceInfo info;
  info.index = static_cast<std::size_t>(ordinal);
  auto get = [&](CUdevice_attribute what) { return attribute(api, device, what); };
  info.cc_major = get(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
  info.cc_minor = get(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
  info.sm_count = get(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
  info.l2_bytes = static_cast<std::uint64_t>(get(CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE));
  info.max_threads_per_block = get(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
  info.max_block = {get(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X),
                    get(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y),
                    get(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z)};
  info.max_grid = {get(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X), get(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y),
                   get(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z)};
  info.shared_per_block = get(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK);
  info.shared_per_block_optin = get(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
  info.registers_per_block = get(CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK);
  info.clock_khz = get(CU_DEVICE_ATTRIBUTE_CLOCK_RATE);
  std::size_t memory = 0;
  if (api.device_total_mem(&memory, device) == CUDA_SUCCESS) info.global_memory = memory;
  char name[256] = {};
  if (api.device_get_name(name, static_cast<int>(sizeof name) - 1, device) != CUDA_SUCCESS)
    name[0] = '\0';
  info.identity = identity_of(info, name, driver);
  return info;
}

}  // namespace

cuda::DriverStatus driver_status(const DriverApi* api, std::string_view load_error) {
  cuda::DriverStatus status;
  if (!api) {
    status.message = "the CUDA driver could not be loaded (" + std::string(load_error) +
                     "): install the NVIDIA driver to use a CUDA device";
    return status;
  }
  const CUresult init = api->init(0);
  if (init == CUDA_ERROR_STUB_LIBRARY) {
    status.message = "the CUDA driver is a stub library (" + cu_error_name(api, init) +
                     "): no NVIDIA driver is installed, so there is no CUDA device";
    return status;
  }
  if (init == CUDA_ERROR_NO_DEVICE) {
    status.message = "the CUDA driver found no device (" + cu_error_name(api, init) +
                     "; CUDA_VISIBLE_DEVICES may hide them)";
    return status;
  }
  if (init != CUDA_SUCCESS) {
    status.message = "cuInit failed: " + cu_error_name(api, init);
    return status;
  }
  if (api->driver_get_version(&status.version) != CUDA_SUCCESS) status.version = 0;
  status.loaded = true;
  return status;
}

std::vector<cuda::DeviceInfo> list_devices(const DriverApi* api) {
  std::vector<cuda::DeviceInfo> out;
  const cuda::DriverStatus status = driver_status(api, "");
  if (!status.loaded) return out;
  int count = 0;
  if (api->device_get_count(&count) != CUDA_SUCCESS) return out;
  for (int ordinal = 0; ordinal < count; ++ordinal) {
    CUdevice device = 0;
    if (api->device_get(&device, ordinal) != CUDA_SUCCESS) continue;
    out.push_back(read_device(*api, ordinal, device, status.version));
  }
  return out;
}

}  // namespace tunekit::detail

namespace tunekit::cuda {

DriverStatus driver_status() {
  const detail::LoadedDriver& driver = detail::load_driver();
  return detail::driver_status(driver.api.get(), driver.error);
}

std::vector<DeviceInfo> list_devices() {
  return detail::list_devices(detail::load_driver().api.get());
}

std::size_t select_device(std::span<const DeviceInfo> devices, std::string_view selector) {
  if (devices.empty()) {
    const DriverStatus status = driver_status();
    throw UsageError("no CUDA device: " +
                     (status.loaded ? std::string("the CUDA driver lists none") : status.message) +
                     "; 'tunekit devices' lists what is found");
  }
  std::vector<detail::SelectableDevice> selectable;
  for (const DeviceInfo& d : devices)
    selectable.push_back({d.identity.product, std::to_string(d.index) + ": " + d.identity.product +
                                                  " (" + d.arch() + ")"});
  return detail::select_by_selector(selectable, selector, "CUDA");
}

}  // namespace tunekit::cuda
