// A fake CUDA driver table that misbehaves on purpose: results scripted per call, every call
// counted and logged in order, devices with scripted attributes, stream capture that breaks
// when the host synchronises inside it. No GPU needed. Plus a fake Compiler (a dummy image) and
// a helper that opens a Context on the fake.
#pragma once

#include <cstdint>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "backends/cuda/context_impl.hpp"
#include "tunekit/cuda.hpp"

namespace tunekit::testing {

struct FakeCudaDevice {
  std::string name = "NVIDIA H200";
  std::size_t memory = std::size_t{141} << 30;
  std::map<CUdevice_attribute, int> attributes = {
      {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, 9},
      {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, 0},
      {CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, 132},
      {CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, 50 << 20},
      {CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, 1024},
      {CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X, 1024},
      {CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y, 1024},
      {CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z, 64},
      {CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X, 2147483647},
      {CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y, 65535},
      {CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z, 65535},
      {CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK, 48 * 1024},
      {CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, 227 * 1024},
      {CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK, 65536},
      {CU_DEVICE_ATTRIBUTE_CLOCK_RATE, 1980000},
  };
};

class FakeDriver {
 public:
  struct Launch {
    std::string function;  // the name it was got by
    unsigned grid[3], block[3], shared;
    long long first_arg;  // the first 8 bytes of the first argument (0: none)
    bool captured;        // into a graph, not run
  };

  // The functions of the table reach the one live FakeDriver (a test makes one at a time).
  FakeDriver() { current() = this; }
  ~FakeDriver() { current() = nullptr; }
  FakeDriver(const FakeDriver&) = delete;
  FakeDriver& operator=(const FakeDriver&) = delete;

  // The next `times` calls of `call` ("cuMemAlloc", ...) answer `result` instead of success.
  void fail_next(const std::string& call, CUresult result, int times = 1) {
    for (int i = 0; i < times; ++i) scripted_[call].push_back(result);
  }
  int calls(const std::string& call) const {
    auto it = counts_.find(call);
    return it == counts_.end() ? 0 : it->second;
  }
  int total_calls() const { return static_cast<int>(log.size()); }
  // Position of the first log entry equal to `entry` at or after `from`; -1 when none.
  int find(const std::string& entry, int from = 0) const {
    for (int i = from; i < static_cast<int>(log.size()); ++i)
      if (log[static_cast<std::size_t>(i)] == entry) return i;
    return -1;
  }

  std::shared_ptr<const detail::DriverApi> table() const;

  std::vector<FakeCudaDevice> devices = {FakeCudaDevice{}};
  CUresult init_result = CUDA_SUCCESS;
  int driver_version = 13000;
  int function_max_threads = 1024, function_static_shared = 0, function_registers = 32;
  float elapsed_ms = 2.5f;

  std::vector<std::string> log;  // every call, in order ("cuEventRecord start", ...)
  std::vector<Launch> launches;
  std::vector<std::pair<CUfunction_attribute, int>> attributes_set;
  std::vector<std::size_t> memsets;  // element counts of cuMemsetD32Async
  int opened_device = -1;            // the ordinal cuDevicePrimaryCtxRetain was given

 private:
  static FakeDriver*& current() {
    static FakeDriver* driver = nullptr;
    return driver;
  }
  static FakeDriver& self() { return *current(); }
  CUresult answer(const std::string& call, std::string entry = "") {
    ++counts_[call];
    log.push_back(entry.empty() ? call : call + " " + entry);
    auto& queue = scripted_[call];
    if (queue.empty()) return CUDA_SUCCESS;
    const CUresult r = queue.front();
    queue.pop_front();
    return r;
  }
  template <class T>
  T handle() {
    return reinterpret_cast<T>(static_cast<std::uintptr_t>(++next_handle_ * 64));
  }
  std::string event_name(CUevent e) const { return e == first_event_ ? "start" : "stop"; }

  std::map<std::string, int> counts_;
  std::map<std::string, std::deque<CUresult>> scripted_;
  std::map<CUfunction, std::string> function_names_;
  std::uintptr_t next_handle_ = 0;
  CUevent first_event_ = nullptr;
  bool capturing_ = false, invalidated_ = false;
};

inline std::shared_ptr<const detail::DriverApi> FakeDriver::table() const {
  auto api = std::make_shared<detail::DriverApi>();
  detail::DriverApi& a = *api;
  a.init = [](unsigned) {
    self().answer("cuInit");
    return self().init_result;
  };
  a.driver_get_version = [](int* v) {
    *v = self().driver_version;
    return self().answer("cuDriverGetVersion");
  };
  a.device_get_count = [](int* n) {
    *n = static_cast<int>(self().devices.size());
    return self().answer("cuDeviceGetCount");
  };
  a.device_get = [](CUdevice* d, int ordinal) {
    *d = ordinal;
    return self().answer("cuDeviceGet");
  };
  a.device_get_name = [](char* name, int length, CUdevice d) {
    std::strncpy(name, self().devices.at(static_cast<std::size_t>(d)).name.c_str(),
                 static_cast<std::size_t>(length));
    return self().answer("cuDeviceGetName");
  };
  a.device_get_attribute = [](int* v, CUdevice_attribute what, CUdevice d) {
    const auto& attributes = self().devices.at(static_cast<std::size_t>(d)).attributes;
    auto it = attributes.find(what);
    *v = it == attributes.end() ? 0 : it->second;
    return self().answer("cuDeviceGetAttribute");
  };
  a.device_total_mem = [](std::size_t* bytes, CUdevice d) {
    *bytes = self().devices.at(static_cast<std::size_t>(d)).memory;
    return self().answer("cuDeviceTotalMem");
  };
  a.primary_ctx_retain = [](CUcontext* c, CUdevice d) {
    *c = self().handle<CUcontext>();
    self().opened_device = d;
    return self().answer("cuDevicePrimaryCtxRetain");
  };
  a.primary_ctx_release = [](CUdevice) { return self().answer("cuDevicePrimaryCtxRelease"); };
  a.ctx_set_current = [](CUcontext) { return self().answer("cuCtxSetCurrent"); };
  a.stream_create = [](CUstream* s, unsigned) {
    *s = self().handle<CUstream>();
    return self().answer("cuStreamCreate");
  };
  a.stream_destroy = [](CUstream) { return self().answer("cuStreamDestroy"); };
  a.stream_synchronize = [](CUstream) {
    const CUresult r = self().answer("cuStreamSynchronize");
    if (!self().capturing_) return r;
    self().invalidated_ = true;  // as the driver does: host work breaks a capture
    return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
  };
  a.mem_alloc = [](CUdeviceptr* p, std::size_t) {
    *p = reinterpret_cast<CUdeviceptr>(self().handle<void*>());
    return self().answer("cuMemAlloc");
  };
  a.mem_free = [](CUdeviceptr) { return self().answer("cuMemFree"); };
  a.memcpy_htod_async = [](CUdeviceptr, const void*, std::size_t, CUstream) {
    return self().answer("cuMemcpyHtoDAsync");
  };
  a.memcpy_dtoh_async = [](void*, CUdeviceptr, std::size_t, CUstream) {
    return self().answer("cuMemcpyDtoHAsync");
  };
  a.memset_d32_async = [](CUdeviceptr, unsigned, std::size_t count, CUstream) {
    self().memsets.push_back(count);
    return self().answer("cuMemsetD32Async");
  };
  a.module_load_data = [](CUmodule* m, const void*) {
    *m = self().handle<CUmodule>();
    return self().answer("cuModuleLoadData");
  };
  a.module_unload = [](CUmodule) { return self().answer("cuModuleUnload"); };
  a.module_get_function = [](CUfunction* f, CUmodule, const char* name) {
    *f = self().handle<CUfunction>();
    self().function_names_[*f] = name;
    return self().answer("cuModuleGetFunction", name);
  };
  a.func_get_attribute = [](int* v, CUfunction_attribute what, CUfunction) {
    FakeDriver& d = self();
    *v = what == CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK ? d.function_max_threads
         : what == CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES   ? d.function_static_shared
         : what == CU_FUNC_ATTRIBUTE_NUM_REGS            ? d.function_registers
                                                         : 0;
    return d.answer("cuFuncGetAttribute");
  };
  a.func_set_attribute = [](CUfunction, CUfunction_attribute what, int value) {
    self().attributes_set.emplace_back(what, value);
    return self().answer("cuFuncSetAttribute");
  };
  a.launch_kernel = [](CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                       unsigned by, unsigned bz, unsigned shared, CUstream, void** params, void**) {
    FakeDriver& d = self();
    Launch l{d.function_names_[f], {gx, gy, gz}, {bx, by, bz}, shared, 0, d.capturing_};
    if (params && params[0]) std::memcpy(&l.first_arg, params[0], sizeof l.first_arg);
    d.launches.push_back(l);
    return d.answer("cuLaunchKernel", l.function);
  };
  a.event_create = [](CUevent* e, unsigned) {
    *e = self().handle<CUevent>();
    if (!self().first_event_) self().first_event_ = *e;
    return self().answer("cuEventCreate");
  };
  a.event_record = [](CUevent e, CUstream) {
    return self().answer("cuEventRecord", self().event_name(e));
  };
  a.event_synchronize = [](CUevent e) {
    return self().answer("cuEventSynchronize", self().event_name(e));
  };
  a.event_elapsed_time = [](float* ms, CUevent, CUevent) {
    *ms = self().elapsed_ms;
    return self().answer("cuEventElapsedTime");
  };
  a.event_destroy = [](CUevent) { return self().answer("cuEventDestroy"); };
  a.stream_begin_capture = [](CUstream, CUstreamCaptureMode) {
    const CUresult r = self().answer("cuStreamBeginCapture");
    if (r == CUDA_SUCCESS) self().capturing_ = true;
    self().invalidated_ = false;
    return r;
  };
  a.stream_end_capture = [](CUstream, CUgraph* g) {
    FakeDriver& d = self();
    const CUresult r = d.answer("cuStreamEndCapture");
    const bool broken = d.invalidated_ || !d.capturing_;
    d.capturing_ = false;
    *g = broken || r != CUDA_SUCCESS ? nullptr : d.handle<CUgraph>();
    return broken ? CUDA_ERROR_STREAM_CAPTURE_INVALIDATED : r;
  };
  a.graph_instantiate = [](CUgraphExec* e, CUgraph, unsigned long long) {
    *e = self().handle<CUgraphExec>();
    return self().answer("cuGraphInstantiate");
  };
  a.graph_upload = [](CUgraphExec, CUstream) { return self().answer("cuGraphUpload"); };
  a.graph_launch = [](CUgraphExec, CUstream) { return self().answer("cuGraphLaunch"); };
  a.graph_exec_destroy = [](CUgraphExec) { return self().answer("cuGraphExecDestroy"); };
  a.graph_destroy = [](CUgraph) { return self().answer("cuGraphDestroy"); };
  // Names come from the backend's own list (a driver may not name a code).
  a.get_error_name = [](CUresult, const char**) { return CUDA_ERROR_INVALID_VALUE; };
  a.get_error_string = [](CUresult, const char**) { return CUDA_ERROR_INVALID_VALUE; };
  return api;
}

// A compiler that compiles nothing: a dummy image per call, counted.
class FakeCompiler final : public cuda::Compiler {
 public:
  explicit FakeCompiler(int* compiles = nullptr) : compiles_(compiles) {}
  // The image is the source and the options: another define, another image.
  cuda::ModuleImage compile(std::string_view source, const std::vector<std::string>& options,
                            const std::string& arch) override {
    if (compiles_) ++*compiles_;
    ++stats_.builds;
    std::string text(source);
    for (const std::string& o : options) text += "\n" + o;
    return {arch, std::vector<char>(text.c_str(), text.c_str() + text.size() + 1), ""};
  }
  cuda::BuildStats stats() const override { return stats_; }

 private:
  int* compiles_;
  cuda::BuildStats stats_;
};

// A Context on `driver`'s table with the fake compiler.
inline std::shared_ptr<cuda::Context> open_fake_context(const FakeDriver& driver,
                                                        std::string_view selector = "",
                                                        cuda::ContextOptions options = {},
                                                        int* compiles = nullptr) {
  return detail::ContextAccess::open(driver.table(), selector, std::move(options),
                                     std::make_unique<FakeCompiler>(compiles));
}

}  // namespace tunekit::testing
