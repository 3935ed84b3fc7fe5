// The real driver table (libcuda.so.1, loaded once) and CUresult names and classes.
#include "backends/cuda/driver_api.hpp"

#include <initializer_list>

#include "backends/cuda/shared_library.hpp"

namespace tunekit::detail {
namespace {

// Binds `field` to the first of `names` the library exports; records the first missing one.
template <class F>
void bind(const SharedLibrary& library, F& field, std::initializer_list<const char*> names,
          std::string& missing) {
  for (const char* name : names) {
    if ((field = library.symbol<F>(name))) return;
  }
  if (missing.empty()) missing = *names.begin();
}

LoadedDriver load_from(std::shared_ptr<const SharedLibrary> owned) {
  const SharedLibrary& library = *owned;
  if (!library.loaded()) return {nullptr, library.error()};
  // The table owns the library: its pointers stay valid as long as someone holds it.
  struct Owning : DriverApi {
    std::shared_ptr<const SharedLibrary> library;
  };
  auto api = std::make_shared<Owning>();
  api->library = std::move(owned);
  std::string missing;
  DriverApi& a = *api;
  bind(library, a.init, {"cuInit"}, missing);
  bind(library, a.driver_get_version, {"cuDriverGetVersion"}, missing);
  bind(library, a.device_get_count, {"cuDeviceGetCount"}, missing);
  bind(library, a.device_get, {"cuDeviceGet"}, missing);
  bind(library, a.device_get_name, {"cuDeviceGetName"}, missing);
  bind(library, a.device_get_attribute, {"cuDeviceGetAttribute"}, missing);
  bind(library, a.device_total_mem, {"cuDeviceTotalMem_v2"}, missing);
  bind(library, a.primary_ctx_retain, {"cuDevicePrimaryCtxRetain"}, missing);
  bind(library, a.primary_ctx_release, {"cuDevicePrimaryCtxRelease_v2"}, missing);
  bind(library, a.ctx_set_current, {"cuCtxSetCurrent"}, missing);
  bind(library, a.stream_create, {"cuStreamCreate"}, missing);
  bind(library, a.stream_destroy, {"cuStreamDestroy_v2"}, missing);
  bind(library, a.stream_synchronize, {"cuStreamSynchronize"}, missing);
  bind(library, a.mem_alloc, {"cuMemAlloc_v2"}, missing);
  bind(library, a.mem_free, {"cuMemFree_v2"}, missing);
  bind(library, a.memcpy_htod_async, {"cuMemcpyHtoDAsync_v2"}, missing);
  bind(library, a.memcpy_dtoh_async, {"cuMemcpyDtoHAsync_v2"}, missing);
  bind(library, a.memset_d32_async, {"cuMemsetD32Async"}, missing);
  bind(library, a.module_load_data, {"cuModuleLoadData"}, missing);
  bind(library, a.module_unload, {"cuModuleUnload"}, missing);
  bind(library, a.module_get_function, {"cuModuleGetFunction"}, missing);
  bind(library, a.func_get_attribute, {"cuFuncGetAttribute"}, missing);
  bind(library, a.func_set_attribute, {"cuFuncSetAttribute"}, missing);
  bind(library, a.launch_kernel, {"cuLaunchKernel"}, missing);
  bind(library, a.event_create, {"cuEventCreate"}, missing);
  bind(library, a.event_record, {"cuEventRecord"}, missing);
  bind(library, a.event_synchronize, {"cuEventSynchronize"}, missing);
  // _v2 since 12.8; an older driver exports the same signature under the plain name.
  bind(library, a.event_elapsed_time, {"cuEventElapsedTime_v2", "cuEventElapsedTime"}, missing);
  bind(library, a.event_destroy, {"cuEventDestroy_v2"}, missing);
  bind(library, a.stream_begin_capture, {"cuStreamBeginCapture_v2"}, missing);
  bind(library, a.stream_end_capture, {"cuStreamEndCapture"}, missing);
  bind(library, a.graph_instantiate, {"cuGraphInstantiateWithFlags"}, missing);
  bind(library, a.graph_upload, {"cuGraphUpload"}, missing);
  bind(library, a.graph_launch, {"cuGraphLaunch"}, missing);
  bind(library, a.graph_exec_destroy, {"cuGraphExecDestroy"}, missing);
  bind(library, a.graph_destroy, {"cuGraphDestroy"}, missing);
  bind(library, a.get_error_name, {"cuGetErrorName"}, missing);
  bind(library, a.get_error_string, {"cuGetErrorString"}, missing);
  if (!missing.empty()) {
    return {nullptr, library.name() + " has no " + missing +
                         ": the CUDA driver is too old for this build (update the driver)"};
  }
  return {std::move(api), ""};
}

// Names of the codes the backend classifies, for when the driver cannot name them itself.
const char* known_name(CUresult code) {
  switch (code) {
#define TUNEKIT_CU_ERROR(e) \
  case e:                   \
    return #e;
    TUNEKIT_CU_ERROR(CUDA_ERROR_INVALID_VALUE)
    TUNEKIT_CU_ERROR(CUDA_ERROR_OUT_OF_MEMORY)
    TUNEKIT_CU_ERROR(CUDA_ERROR_NOT_INITIALIZED)
    TUNEKIT_CU_ERROR(CUDA_ERROR_DEINITIALIZED)
    TUNEKIT_CU_ERROR(CUDA_ERROR_STUB_LIBRARY)
    TUNEKIT_CU_ERROR(CUDA_ERROR_NO_DEVICE)
    TUNEKIT_CU_ERROR(CUDA_ERROR_INVALID_DEVICE)
    TUNEKIT_CU_ERROR(CUDA_ERROR_INVALID_IMAGE)
    TUNEKIT_CU_ERROR(CUDA_ERROR_INVALID_CONTEXT)
    TUNEKIT_CU_ERROR(CUDA_ERROR_NO_BINARY_FOR_GPU)
    TUNEKIT_CU_ERROR(CUDA_ERROR_ECC_UNCORRECTABLE)
    TUNEKIT_CU_ERROR(CUDA_ERROR_NVLINK_UNCORRECTABLE)
    TUNEKIT_CU_ERROR(CUDA_ERROR_INVALID_HANDLE)
    TUNEKIT_CU_ERROR(CUDA_ERROR_NOT_FOUND)
    TUNEKIT_CU_ERROR(CUDA_ERROR_ILLEGAL_ADDRESS)
    TUNEKIT_CU_ERROR(CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES)
    TUNEKIT_CU_ERROR(CUDA_ERROR_LAUNCH_TIMEOUT)
    TUNEKIT_CU_ERROR(CUDA_ERROR_CONTEXT_IS_DESTROYED)
    TUNEKIT_CU_ERROR(CUDA_ERROR_ASSERT)
    TUNEKIT_CU_ERROR(CUDA_ERROR_HARDWARE_STACK_ERROR)
    TUNEKIT_CU_ERROR(CUDA_ERROR_ILLEGAL_INSTRUCTION)
    TUNEKIT_CU_ERROR(CUDA_ERROR_MISALIGNED_ADDRESS)
    TUNEKIT_CU_ERROR(CUDA_ERROR_INVALID_ADDRESS_SPACE)
    TUNEKIT_CU_ERROR(CUDA_ERROR_INVALID_PC)
    TUNEKIT_CU_ERROR(CUDA_ERROR_LAUNCH_FAILED)
    TUNEKIT_CU_ERROR(CUDA_ERROR_TENSOR_MEMORY_LEAK)
    TUNEKIT_CU_ERROR(CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED)
    TUNEKIT_CU_ERROR(CUDA_ERROR_STREAM_CAPTURE_INVALIDATED)
    TUNEKIT_CU_ERROR(CUDA_ERROR_STREAM_CAPTURE_IMPLICIT)
    TUNEKIT_CU_ERROR(CUDA_ERROR_EXTERNAL_DEVICE)
    TUNEKIT_CU_ERROR(CUDA_ERROR_UNKNOWN)
#undef TUNEKIT_CU_ERROR
    default:
      return nullptr;
  }
}

}  // namespace

const LoadedDriver& load_driver() {
  static const LoadedDriver driver = load_driver_library("libcuda.so.1");
  return driver;
}

LoadedDriver load_driver_library(const std::string& path) {
  return load_from(std::make_shared<const SharedLibrary>(std::vector<std::string>{path}));
}

std::string cu_error_name(const DriverApi* api, CUresult code) {
  const char* name = nullptr;
  const char* text = nullptr;
  if (api && api->get_error_name && api->get_error_name(code, &name) != CUDA_SUCCESS)
    name = nullptr;
  if (api && api->get_error_string && api->get_error_string(code, &text) != CUDA_SUCCESS)
    text = nullptr;
  if (!name) name = known_name(code);
  std::string out = name ? name : "CUDA error";
  out += " (" + std::to_string(static_cast<int>(code)) + ")";
  if (text) out += std::string(": ") + text;
  return out;
}

bool cu_is_sticky(CUresult code) {
  switch (code) {
    case CUDA_ERROR_ECC_UNCORRECTABLE:
    case CUDA_ERROR_NVLINK_UNCORRECTABLE:
    case CUDA_ERROR_ILLEGAL_ADDRESS:
    case CUDA_ERROR_LAUNCH_TIMEOUT:
    case CUDA_ERROR_CONTEXT_IS_DESTROYED:
    case CUDA_ERROR_ASSERT:
    case CUDA_ERROR_HARDWARE_STACK_ERROR:
    case CUDA_ERROR_ILLEGAL_INSTRUCTION:
    case CUDA_ERROR_MISALIGNED_ADDRESS:
    case CUDA_ERROR_INVALID_ADDRESS_SPACE:
    case CUDA_ERROR_INVALID_PC:
    case CUDA_ERROR_LAUNCH_FAILED:
    case CUDA_ERROR_TENSOR_MEMORY_LEAK:
    case CUDA_ERROR_EXTERNAL_DEVICE:
      return true;
    default:
      return false;
  }
}

Status cu_failure_status(CUresult code) {
  if (code == CUDA_ERROR_OUT_OF_MEMORY) return Status::out_of_memory;
  if (code == CUDA_ERROR_LAUNCH_TIMEOUT) return Status::timed_out;
  if (cu_is_sticky(code)) return Status::device_lost;
  return Status::launch_failed;
}

}  // namespace tunekit::detail
