// The CUDA backend (DESIGN §11): the driver API loaded at run time (dlopen("libcuda.so.1"), so
// one binary runs with or without a driver), NVRTC compilation with a module cache in memory
// and on disk, launches whose limits are checked before they are enqueued, CUDA events as the
// clock, CUDA graphs for queued batches, an L2 evictor and the device's identity. No CUDA
// header is included here: handles are opaque.
//
// What runs without a GPU: NVRTC (every compile, the module cache), device listing (empty) and
// every check made before a launch. Launches, the clock and the evictor need a device.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tunekit/device.hpp"

namespace tunekit::detail {
struct ContextAccess;  // builds a Context on a given driver table (src/backends/cuda)
}  // namespace tunekit::detail

namespace tunekit::cuda {

// Whether the driver library could be loaded and initialised, and if not, why ("libcuda.so.1:
// cannot open shared object file" on a machine without a driver; the stub library's "CUDA
// driver is a stub library"). Never throws.
struct DriverStatus {
  bool loaded = false;
  int version = 0;      // cuDriverGetVersion, e.g. 12040
  std::string message;  // why not, when !loaded
};
DriverStatus driver_status();

// The NVRTC library's version ("13.0"), or "" when NVRTC cannot be loaded.
std::string nvrtc_version();

// One device, as `tunekit devices` lists it.
struct DeviceInfo {
  std::size_t index = 0;  // CUdevice ordinal
  int cc_major = 0, cc_minor = 0;
  int sm_count = 0;
  std::uint64_t global_memory = 0;
  std::uint64_t l2_bytes = 0;
  int max_threads_per_block = 0;
  std::array<int, 3> max_block{};  // per dimension
  std::array<int, 3> max_grid{};
  int shared_per_block = 0;        // bytes a block may use without opting in
  int shared_per_block_optin = 0;  // bytes a block may use after opting in
  int registers_per_block = 0;
  int clock_khz = 0;
  DeviceIdentity
      identity;  // backend "cuda"; architecture "sm_90"; driver "<driver> (runtime <r>, NVRTC <n>)"
  std::string arch() const { return "sm_" + std::to_string(cc_major * 10 + cc_minor); }
};

// Every CUDA device; empty when there is no driver or no device (never throws for those: the
// one case callers may skip; driver_status() says why).
std::vector<DeviceInfo> list_devices();

// Picks a device: "" is the first; digits are an index; anything else a case-insensitive
// substring of the product name. UsageError naming the devices when nothing matches, or saying
// why there is none (no driver: driver_status().message) when the list is empty.
std::size_t select_device(std::span<const DeviceInfo> devices, std::string_view selector);

// A compiled module image: a cubin for one architecture.
struct ModuleImage {
  std::string arch;          // "sm_90"
  std::vector<char> binary;  // cubin
  std::string log;           // NVRTC's log (warnings), possibly empty
};

struct BuildStats {
  std::size_t builds = 0;       // NVRTC invocations
  std::size_t memory_hits = 0;  // answered from memory
  std::size_t disk_hits = 0;    // answered from a cache file
  double seconds = 0;           // time spent compiling, summed over builds
};

// Source + options ("-DBM=64", ...) + arch ("sm_90") -> cubin. A compile error throws
// TrialError(compile_failed) whose message carries the NVRTC log. Thread-safe.
class Compiler {
 public:
  virtual ~Compiler() = default;
  virtual ModuleImage compile(std::string_view source, const std::vector<std::string>& options,
                              const std::string& arch) = 0;
  virtual BuildStats stats() const = 0;
};

// NVRTC itself (loaded at run time). Never throws itself: its compile() throws
// TrialError(compile_failed) naming the library when NVRTC cannot be loaded.
std::unique_ptr<Compiler> nvrtc_compiler();

struct ModuleCacheOptions {
  // Where cubin files are kept (created 0700, files 0600; see module_cache_directory). Empty:
  // memory only.
  std::filesystem::path directory;
  // Told when a cache file is unreadable, corrupt or foreign (it is then rebuilt and
  // replaced) or cannot be written (the module stays in memory).
  std::function<void(std::string_view)> on_warning;
};

// The module cache DESIGN §11 asks for: every image by (source digest, options, arch, NVRTC
// version), in memory and as one file per image under the options' directory, each with a
// header holding its key and an XXH3 digest of the image, checked on load. Failures are
// remembered in memory with their log (a broken candidate is not recompiled). Thread-safe; a
// second asker of an image being compiled waits for it and counts as a hit. An image read from
// disk has an empty log (NVRTC's warnings are not kept in the file).
class CachingCompiler final : public Compiler {
 public:
  CachingCompiler(std::unique_ptr<Compiler> inner, ModuleCacheOptions options);
  ~CachingCompiler() override;
  ModuleImage compile(std::string_view source, const std::vector<std::string>& options,
                      const std::string& arch) override;
  BuildStats stats() const override;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The directory of cubin files beside a store: "<store directory>/cuda-modules" for an SQLite
// store spec, "" (memory only) for none / memory / a server store.
std::filesystem::path module_cache_directory(std::string_view store_spec);

class Context;

// Grid or block dimensions.
struct Dim3 {
  unsigned x = 1, y = 1, z = 1;
};

// A kernel function of a loaded module. Launch arguments are pointers to the values, as the
// driver takes them. launch() checks the block against the device's and the function's limits
// (threads per block, per-dimension sizes, registers), the grid against the device's, and the
// dynamic shared memory against the function's opt-in maximum, and throws
// TrialError(launch_failed) naming the limit before anything is enqueued; a failing enqueue
// throws TrialError classified by the driver's error (out_of_memory, launch_failed, or
// device_lost for a sticky error, which also marks the context lost).
class Function {
 public:
  Function() = default;
  Function(std::shared_ptr<Context> context, void* handle, std::string name, int max_threads,
           int static_shared, int registers)
      : context_(std::move(context)),
        handle_(handle),
        name_(std::move(name)),
        max_threads_(max_threads),
        static_shared_(static_shared),
        registers_(registers) {}
  const std::string& name() const { return name_; }
  int max_threads_per_block() const { return max_threads_; }
  int static_shared_bytes() const { return static_shared_; }
  int registers_per_thread() const { return registers_; }
  void launch(Dim3 grid, Dim3 block, unsigned dynamic_shared, std::span<void*> args);

 private:
  std::shared_ptr<Context> context_;
  void* handle_ = nullptr;  // CUfunction (owned by the context's module table)
  std::string name_;
  int max_threads_ = 0, static_shared_ = 0, registers_ = 0;
};

// Device memory. Allocation failure throws TrialError(out_of_memory).
class Buffer {
 public:
  Buffer() = default;
  Buffer(Context& context, std::size_t bytes);
  std::size_t bytes() const { return bytes_; }
  // Copies on the context's stream, then waits for it; TrialError classified as launches are.
  void write(const void* data, std::size_t bytes);
  void read(void* data, std::size_t bytes) const;
  std::uint64_t device_pointer() const { return pointer_ ? *pointer_ : 0; }  // CUdeviceptr

 private:
  Context* context_ = nullptr;
  std::shared_ptr<std::uint64_t> pointer_;  // freed with the last copy
  std::size_t bytes_ = 0;
};

struct ContextOptions {
  ModuleCacheOptions module_cache;
  // The architecture NVRTC compiles for; "" is the device's own ("sm_90").
  std::string arch;
  // A spin kernel of this many seconds is enqueued before each window's start event, so the
  // device is busy while the host enqueues the window's launches (seed 002's backlog: the
  // start is not stamped on an idle device). 0: none.
  double backlog_seconds = 50e-6;
};

// One device's primary context, a non-blocking stream, the caching compiler, loaded modules
// and the timing window the clock reads. Shared by the ops and the Device that time on it. One
// search at a time (Device::try_begin_search): the window is the stream's.
class Context : public std::enable_shared_from_this<Context> {
 public:
  // Opens the device select_device(list_devices(), selector) picks (UsageError when there is
  // none, naming why).
  static std::shared_ptr<Context> open(std::string_view selector = "", ContextOptions options = {});
  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  const DeviceInfo& info() const { return info_; }
  const std::string& arch() const { return arch_; }
  Compiler& compiler() { return *compiler_; }
  // Compiles through the cache, loads the module (once per image) and returns the function.
  // Thread-safe. compile_failed with the log; a module the driver refuses is compile_failed.
  Function function(std::string_view source, const std::vector<std::string>& options,
                    const std::string& name);
  void synchronize();  // waits for the stream; TrialError classified (device_lost marks lost)

  // A sticky error was seen: every later operation throws TrialError(device_lost) with this.
  bool lost() const;
  std::string lost_reason() const;

  // The timing window (EventClock): begin_window opens it; the first enqueue after it (a
  // launch, a graph launch) first enqueues the backlog and records the start event; end_window
  // records the stop event, waits for it and returns the seconds between the two (0 when
  // nothing was enqueued).
  void begin_window();
  double end_window();
  // Called by every enqueue of work to be timed (Function::launch, graph launches).
  void before_enqueue();

  // Graph capture of the stream (CudaDevice's queued batches): while capturing, enqueues are
  // recorded into the graph and before_enqueue does nothing.
  void begin_capture();
  void* end_capture();  // returns an instantiated CUgraphExec (owned by the caller: destroy_graph)
  void launch_graph(void* graph_exec);
  void destroy_graph(void* graph_exec);

  void* stream_handle() const;  // CUstream

 private:
  Context() = default;
  friend class Buffer;
  friend class Function;
  friend struct detail::ContextAccess;
  struct Impl;
  std::unique_ptr<Impl> impl_;
  DeviceInfo info_;
  std::string arch_;
  std::unique_ptr<Compiler> compiler_;
};

// CUDA events around each window (see Context::begin_window).
class EventClock final : public Clock {
 public:
  explicit EventClock(std::shared_ptr<Context> context) : context_(std::move(context)) {}
  std::string_view name() const override { return "cuda_events"; }
  void begin() override { context_->begin_window(); }
  double end() override { return context_->end_window(); }

 private:
  std::shared_ptr<Context> context_;
};

// Flushes the L2 before a sample: writes a device buffer twice the L2 size on the stream.
class L2Evictor final : public Evictor {
 public:
  explicit L2Evictor(std::shared_ptr<Context> context);
  void evict() override;

 private:
  std::shared_ptr<Context> context_;
  Buffer buffer_;
};

// The Device seam for CUDA. launch is the candidate's function (which must only enqueue work
// on the context's stream: no host copies, no synchronisation); a queued batch of `depth`
// launches is captured once into a CUDA graph (outside the timed window) and replayed, so
// launch overhead is not in the reading. Queued depth cap 2048.
class CudaDevice final : public Device {
 public:
  explicit CudaDevice(std::shared_ptr<Context> context);
  const DeviceIdentity& identity() const override { return context_->info().identity; }
  Clock& clock() override { return clock_; }
  Evictor* evictor() override { return &evictor_; }
  std::unique_ptr<Trial> make_trial(Workload& workload, std::size_t index) override;
  // A driver context does not survive fork(): isolated trials run in a spawned worker that
  // opens this device again by its ordinal, compiling for the same architecture (opt-in:
  // IsolationOptions mode worker).
  Workers workers() const override { return Workers::spawned; }
  std::optional<DeviceReopen> reopen() const override {
    return DeviceReopen{"cuda", std::to_string(context_->info().index), context_->arch()};
  }
  int default_depth_cap() const override { return 2048; }
  const std::shared_ptr<Context>& context() const { return context_; }

 private:
  std::shared_ptr<Context> context_;
  EventClock clock_;
  L2Evictor evictor_;
};

}  // namespace tunekit::cuda
