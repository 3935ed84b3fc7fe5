// NVRTC as the backend uses it: the library loaded at run time (never linked, so a binary built
// with the toolkit runs where only the driver, or nothing, is installed) and its functions as
// a table. The table is a seam: tests hand the compiler one that is missing or misbehaves.
// Private to src/backends/cuda.
#pragma once

#include <nvrtc.h>

#include <string>
#include <vector>

namespace tunekit::detail {

struct NvrtcApi {
  bool loaded = false;  // every required function was found
  std::string library;  // the name that opened ("libnvrtc.so.13")
  std::string error;    // why not loaded: each dlopen attempt's dlerror, or the missing symbol

  decltype(&::nvrtcVersion) version = nullptr;
  decltype(&::nvrtcCreateProgram) create_program = nullptr;
  decltype(&::nvrtcCompileProgram) compile_program = nullptr;
  decltype(&::nvrtcGetProgramLogSize) get_program_log_size = nullptr;
  decltype(&::nvrtcGetProgramLog) get_program_log = nullptr;
  decltype(&::nvrtcGetCUBINSize) get_cubin_size = nullptr;
  decltype(&::nvrtcGetCUBIN) get_cubin = nullptr;
  decltype(&::nvrtcDestroyProgram) destroy_program = nullptr;
  decltype(&::nvrtcGetErrorString) get_error_string = nullptr;
  // Optional (absent from old NVRTCs): the architectures this NVRTC can compile for, used to
  // say which ones exist when asked for one it does not know.
  decltype(&::nvrtcGetNumSupportedArchs) get_num_supported_archs = nullptr;
  decltype(&::nvrtcGetSupportedArchs) get_supported_archs = nullptr;
};

// The process-wide NVRTC: "libnvrtc.so.<TUNEKIT_CUDA_MAJOR>", then "libnvrtc.so"; loaded on
// first use and kept for the life of the process. Never throws.
const NvrtcApi& nvrtc_api();

// "NVRTC_ERROR_COMPILATION (6)".
std::string nvrtc_error_name(const NvrtcApi& api, nvrtcResult result);

// "13.0", or "" when the table is not loaded or the call fails.
std::string nvrtc_version_of(const NvrtcApi& api);

// The compute capabilities (e.g. 75, 80, 90) the table's NVRTC supports; empty when it cannot
// say.
std::vector<int> nvrtc_supported_archs(const NvrtcApi& api);

}  // namespace tunekit::detail
