// What a cuda::Context holds (its driver table, handles, loaded modules, window and lost state)
// and the entry points that take a driver table, so tests can open a Context on a fake one.
// Private to src/backends/cuda.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "backends/cuda/driver_api.hpp"
#include "tunekit/cuda.hpp"

namespace tunekit::detail {

// driver_status(), list_devices() and Context::open() on a given driver table (null: none could
// be loaded, `load_error` says why).
cuda::DriverStatus driver_status(const DriverApi* api, std::string_view load_error);
std::vector<cuda::DeviceInfo> list_devices(const DriverApi* api);

// The friend of Context that builds one and reaches its Impl (cuda_device.cpp's evictor and
// trial use the driver table and stream through it).
struct ContextAccess {
  // Opens the device `selector` picks among `api`'s devices; `compiler` null: NVRTC through a
  // CachingCompiler with the options' module cache.
  static std::shared_ptr<cuda::Context> open(std::shared_ptr<const DriverApi> api,
                                             std::string_view selector,
                                             cuda::ContextOptions options,
                                             std::unique_ptr<cuda::Compiler> compiler);
  static cuda::Context::Impl& impl(cuda::Context& context) { return *context.impl_; }
};

}  // namespace tunekit::detail

namespace tunekit::cuda {

struct Context::Impl {
  struct Loaded {  // one function of a loaded module, with the attributes launch() checks
    CUfunction handle = nullptr;
    int max_threads = 0, static_shared = 0, registers = 0;
  };

  std::shared_ptr<const detail::DriverApi> api;
  CUdevice device = 0;
  CUcontext context = nullptr;
  CUstream stream = nullptr;
  CUevent start = nullptr, stop = nullptr;

  std::mutex modules_mutex;
  std::unordered_map<std::string, CUmodule> modules;  // by image digest
  std::unordered_map<std::string, Loaded> functions;  // by source digest, options, arch, name

  CUfunction spin = nullptr;  // the backlog kernel; null: no backlog
  long long backlog_cycles = 0;
  bool window_open = false, started = false;
  bool stop_recorded = false;  // synchronize() put the window's stop event in already
  std::atomic<bool> capturing{false};

  std::atomic<bool> lost{false};
  mutable std::mutex lost_mutex;
  std::string lost_reason;  // the first sticky error

  ~Impl();
  // Makes the context current on the calling thread (the driver's state is per thread).
  void make_current();
  // TrialError(device_lost) naming the first sticky error, when one was seen.
  void throw_if_lost() const;
  // Nothing on success; otherwise TrialError classified by the code, naming `what`; a sticky
  // code marks the context lost first.
  void check(CUresult code, std::string_view what);
  std::string error_name(CUresult code) const { return detail::cu_error_name(api.get(), code); }
};

}  // namespace tunekit::cuda
