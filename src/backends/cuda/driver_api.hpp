// The CUDA driver API as the backend uses it: a table of function pointers (the seam tests
// replace with a fake), the real table loaded from libcuda.so.1 at run time, and the naming and
// classification of CUresult values. Private to src/backends/cuda.
#pragma once

#include <cuda.h>

#include <memory>
#include <string>
#include <string_view>

#include "tunekit/outcome.hpp"

namespace tunekit::detail {

// Every driver call the backend makes. The real table holds the symbols the header maps the
// names to (cuMemAlloc is "cuMemAlloc_v2"); a test's table holds functions of its own.
struct DriverApi {
  CUresult (*init)(unsigned int flags) = nullptr;
  CUresult (*driver_get_version)(int* version) = nullptr;
  CUresult (*device_get_count)(int* count) = nullptr;
  CUresult (*device_get)(CUdevice* device, int ordinal) = nullptr;
  CUresult (*device_get_name)(char* name, int length, CUdevice device) = nullptr;
  CUresult (*device_get_attribute)(int* value, CUdevice_attribute attribute,
                                   CUdevice device) = nullptr;
  CUresult (*device_total_mem)(std::size_t* bytes, CUdevice device) = nullptr;
  CUresult (*primary_ctx_retain)(CUcontext* context, CUdevice device) = nullptr;
  CUresult (*primary_ctx_release)(CUdevice device) = nullptr;
  CUresult (*ctx_set_current)(CUcontext context) = nullptr;
  CUresult (*stream_create)(CUstream* stream, unsigned int flags) = nullptr;
  CUresult (*stream_destroy)(CUstream stream) = nullptr;
  CUresult (*stream_synchronize)(CUstream stream) = nullptr;
  CUresult (*mem_alloc)(CUdeviceptr* pointer, std::size_t bytes) = nullptr;
  CUresult (*mem_free)(CUdeviceptr pointer) = nullptr;
  CUresult (*memcpy_htod_async)(CUdeviceptr to, const void* from, std::size_t bytes,
                                CUstream stream) = nullptr;
  CUresult (*memcpy_dtoh_async)(void* to, CUdeviceptr from, std::size_t bytes,
                                CUstream stream) = nullptr;
  CUresult (*memset_d32_async)(CUdeviceptr to, unsigned int value, std::size_t count,
                               CUstream stream) = nullptr;
  CUresult (*module_load_data)(CUmodule* module, const void* image) = nullptr;
  CUresult (*module_unload)(CUmodule module) = nullptr;
  CUresult (*module_get_function)(CUfunction* function, CUmodule module,
                                  const char* name) = nullptr;
  CUresult (*func_get_attribute)(int* value, CUfunction_attribute attribute,
                                 CUfunction function) = nullptr;
  CUresult (*func_set_attribute)(CUfunction function, CUfunction_attribute attribute,
                                 int value) = nullptr;
  CUresult (*launch_kernel)(CUfunction function, unsigned int grid_x, unsigned int grid_y,
                            unsigned int grid_z, unsigned int block_x, unsigned int block_y,
                            unsigned int block_z, unsigned int shared_bytes, CUstream stream,
                            void** params, void** extra) = nullptr;
  CUresult (*event_create)(CUevent* event, unsigned int flags) = nullptr;
  CUresult (*event_record)(CUevent event, CUstream stream) = nullptr;
  CUresult (*event_synchronize)(CUevent event) = nullptr;
  CUresult (*event_elapsed_time)(float* milliseconds, CUevent start, CUevent end) = nullptr;
  CUresult (*event_destroy)(CUevent event) = nullptr;
  CUresult (*stream_begin_capture)(CUstream stream, CUstreamCaptureMode mode) = nullptr;
  CUresult (*stream_end_capture)(CUstream stream, CUgraph* graph) = nullptr;
  CUresult (*graph_instantiate)(CUgraphExec* exec, CUgraph graph,
                                unsigned long long flags) = nullptr;
  CUresult (*graph_upload)(CUgraphExec exec, CUstream stream) = nullptr;
  CUresult (*graph_launch)(CUgraphExec exec, CUstream stream) = nullptr;
  CUresult (*graph_exec_destroy)(CUgraphExec exec) = nullptr;
  CUresult (*graph_destroy)(CUgraph graph) = nullptr;
  CUresult (*get_error_name)(CUresult error, const char** name) = nullptr;
  CUresult (*get_error_string)(CUresult error, const char** text) = nullptr;
};

// A driver table, or null with why (the dlopen error, or the symbol that is missing). The
// table keeps its library loaded.
struct LoadedDriver {
  std::shared_ptr<const DriverApi> api;
  std::string error;
};
// The driver of this machine ("libcuda.so.1"), loaded once per process.
const LoadedDriver& load_driver();
// The table of the library `path` names (tests load the toolkit's stub library through it).
LoadedDriver load_driver_library(const std::string& path);

// "CUDA_ERROR_ILLEGAL_ADDRESS (700): an illegal memory access was encountered": the driver's
// own name and text when `api` can give them, else a name from the backend's own list.
std::string cu_error_name(const DriverApi* api, CUresult code);

// A sticky error leaves the context unusable (the process must be restarted to use the device
// again): the context is marked lost at the first one.
bool cu_is_sticky(CUresult code);

// The status of a failing call: out_of_memory for allocation failures, timed_out for a kernel
// stopped by the watchdog, device_lost for the other sticky errors, launch_failed otherwise.
Status cu_failure_status(CUresult code);

}  // namespace tunekit::detail
