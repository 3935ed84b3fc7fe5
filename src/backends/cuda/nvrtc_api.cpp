#include "backends/cuda/nvrtc_api.hpp"

#include "backends/cuda/shared_library.hpp"
#include "tunekit/cuda.hpp"

namespace tunekit::detail {
namespace {

// Finds `name`; when it is missing, marks the table unloaded and says which symbol it was.
template <class F>
void bind(const SharedLibrary& library, const char* name, F& slot, NvrtcApi& api) {
  slot = library.symbol<F>(name);
  if (slot || !api.loaded) return;
  api.loaded = false;
  api.error = library.name() + ": missing symbol " + name + " (an NVRTC older than tunekit needs)";
}

NvrtcApi load(const SharedLibrary& library) {
  NvrtcApi api;
  if (!library.loaded()) {
    api.error = library.error();
    return api;
  }
  api.library = library.name();
  api.loaded = true;
  bind(library, "nvrtcVersion", api.version, api);
  bind(library, "nvrtcCreateProgram", api.create_program, api);
  bind(library, "nvrtcCompileProgram", api.compile_program, api);
  bind(library, "nvrtcGetProgramLogSize", api.get_program_log_size, api);
  bind(library, "nvrtcGetProgramLog", api.get_program_log, api);
  bind(library, "nvrtcGetCUBINSize", api.get_cubin_size, api);
  bind(library, "nvrtcGetCUBIN", api.get_cubin, api);
  bind(library, "nvrtcDestroyProgram", api.destroy_program, api);
  bind(library, "nvrtcGetErrorString", api.get_error_string, api);
  api.get_num_supported_archs =
      library.symbol<decltype(api.get_num_supported_archs)>("nvrtcGetNumSupportedArchs");
  api.get_supported_archs =
      library.symbol<decltype(api.get_supported_archs)>("nvrtcGetSupportedArchs");
  return api;
}

}  // namespace

const NvrtcApi& nvrtc_api() {
  // The library outlives every table entry: both are function-local statics, destroyed in
  // reverse order of construction.
  static const SharedLibrary library(
      {"libnvrtc.so." + std::to_string(TUNEKIT_CUDA_MAJOR), "libnvrtc.so"});
  static const NvrtcApi api = load(library);
  return api;
}

std::string nvrtc_error_name(const NvrtcApi& api, nvrtcResult result) {
  const char* name = api.get_error_string ? api.get_error_string(result) : nullptr;
  return std::string(name ? name : "NVRTC error") + " (" +
         std::to_string(static_cast<int>(result)) + ")";
}

std::string nvrtc_version_of(const NvrtcApi& api) {
  int major = 0, minor = 0;
  if (!api.loaded || api.version(&major, &minor) != NVRTC_SUCCESS) return "";
  return std::to_string(major) + "." + std::to_string(minor);
}

std::vector<int> nvrtc_supported_archs(const NvrtcApi& api) {
  int count = 0;
  if (!api.loaded || !api.get_num_supported_archs || !api.get_supported_archs ||
      api.get_num_supported_archs(&count) != NVRTC_SUCCESS || count <= 0 || count > 1024)
    return {};
  std::vector<int> archs(static_cast<std::size_t>(count));
  if (api.get_supported_archs(archs.data()) != NVRTC_SUCCESS) return {};
  return archs;
}

}  // namespace tunekit::detail

namespace tunekit::cuda {

std::string nvrtc_version() {
  return detail::nvrtc_version_of(detail::nvrtc_api());
}

}  // namespace tunekit::cuda
