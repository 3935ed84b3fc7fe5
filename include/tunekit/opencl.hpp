// The OpenCL backend (DESIGN §11): device selection and identity, buffers, a compiler with a
// program cache, kernels with classified launch failures, and profiling events as the clock.
// OpenCL 1.2 is the contract (PoCL on CPUs in CI, any GPU vendor in the field). The OpenCL
// headers stay out of this header: handles are opaque.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tunekit/device.hpp"
#include "tunekit/key.hpp"

namespace tunekit::opencl {

// One device of one platform, as `tunekit devices` lists it.
struct DeviceInfo {
  std::size_t index = 0;  // position over all platforms' devices, in enumeration order
  std::string platform;
  std::string opencl_version;  // CL_DEVICE_VERSION
  std::uint64_t global_memory = 0;
  std::uint64_t local_memory = 0;
  std::uint64_t max_allocation = 0;
  std::size_t max_work_group = 0;
  std::vector<std::size_t> max_work_item_sizes;
  DeviceIdentity identity;  // backend "opencl"; driver is "<driver version> (<OpenCL version>)"
};

// Every device of every platform; empty when no OpenCL platform exists (the ICD loader found
// none). Never throws for a missing runtime: that is the one case callers may skip.
std::vector<DeviceInfo> list_devices();

// Picks a device: "" is the first; digits are an index into `devices`; anything else is a
// case-insensitive substring of the product name (the first match). UsageError naming the
// devices when nothing matches, or saying how to install a runtime when the list is empty.
std::size_t select_device(std::span<const DeviceInfo> devices, std::string_view selector);

struct BuildStats {
  std::size_t builds = 0;  // programs actually built (compiler invocations)
  std::size_t hits = 0;    // requests answered from the program cache
  double seconds = 0;      // time spent building, summed over builds (concurrent ones overlap)
};

class Context;

// A kernel of a built program. Not thread-safe: one trial uses it at a time (each
// Program::kernel call makes a kernel object of its own, so threads never share one).
class Kernel {
 public:
  Kernel() = default;
  Kernel(std::shared_ptr<Context> context, std::shared_ptr<void> handle, std::string name)
      : context_(std::move(context)), handle_(std::move(handle)), name_(std::move(name)) {}
  const std::string& name() const { return name_; }
  void set_arg(unsigned index, const class Buffer& buffer);
  void set_arg(unsigned index, int value);
  void set_arg(unsigned index, float value);
  // Local memory of `bytes` (a __local pointer argument).
  void set_local(unsigned index, std::size_t bytes);
  // Enqueues one dispatch (no synchronisation). A work-group over the device's or the
  // kernel's limit, or a global size that is not a multiple of it, throws
  // TrialError(launch_failed) before anything is enqueued; a failing enqueue throws
  // TrialError(launch_failed, or out_of_memory for allocation failures).
  void launch(std::span<const std::size_t> global, std::span<const std::size_t> local);
  // Dispatches one work-group of `local` (global = local; the arguments must be set) on a
  // private queue of its own and waits for it, neither timed nor recorded: a driver that
  // generates code lazily, per work-group size, at a kernel's first launch (PoCL) does it here,
  // so a build step can absorb it. The same checks as launch() first (TrialError
  // launch_failed). Safe on several threads at once for different kernel objects.
  void warm_up(std::span<const std::size_t> local);
  // The kernel's own limits on this device (CL_KERNEL_WORK_GROUP_SIZE, local memory).
  std::size_t max_work_group() const;

 private:
  void check_launch(std::span<const std::size_t> global, std::span<const std::size_t> local) const;

  std::shared_ptr<Context> context_;
  std::shared_ptr<void> handle_;  // cl_kernel
  std::string name_;
};

// A built program: kernels by name.
class Program {
 public:
  Program() = default;
  // `context` outlives the program: programs live in the context's compiler cache.
  Program(Context* context, std::shared_ptr<void> handle, std::string log)
      : context_(context), handle_(std::move(handle)), log_(std::move(log)) {}
  // TrialError(compile_failed) when the program has no kernel of that name.
  Kernel kernel(const std::string& name) const;
  const std::string& build_log() const { return log_; }

 private:
  Context* context_ = nullptr;
  std::shared_ptr<void> handle_;  // cl_program
  std::string log_;
};

// Source + build options ("-DMWG=64 ...") -> program. A build failure throws
// TrialError(compile_failed) whose message carries the build log. build() and stats() may be
// called from several threads at once (the tuner's compile pass builds in parallel).
class Compiler {
 public:
  virtual ~Compiler() = default;
  virtual Program build(std::string_view source, const std::string& options) = 0;
  virtual BuildStats stats() const = 0;
};

// Remembers every program by (source digest, options, device) so nothing is built twice in a
// process; failures are remembered too, with their log (a broken candidate is not rebuilt
// either). Thread-safe: different programs build concurrently (the compile runs outside the
// cache's lock); a thread asking for a program another thread is building waits for that
// build and shares its result (a hit), so no program is ever built twice.
class CachingCompiler final : public Compiler {
 public:
  CachingCompiler(std::unique_ptr<Compiler> inner, std::string device_key);
  ~CachingCompiler() override;
  Program build(std::string_view source, const std::string& options) override;
  BuildStats stats() const override;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Device memory. Allocation failure (or a size over the device's largest allocation) throws
// TrialError(out_of_memory).
class Buffer {
 public:
  Buffer() = default;
  Buffer(Context& context, std::size_t bytes);
  std::size_t bytes() const { return bytes_; }
  // Blocking copies; TrialError(launch_failed) when the runtime refuses.
  void write(const void* data, std::size_t bytes);
  void read(void* data, std::size_t bytes) const;
  void* handle() const { return handle_.get(); }  // cl_mem

 private:
  Context* context_ = nullptr;
  std::shared_ptr<void> handle_;
  std::size_t bytes_ = 0;
};

// One device with its context, an in-order profiling queue, the caching compiler and the log
// of kernel events the clock reads. Shared by the ops and the Device that time on it. One
// search at a time per Context: the event window is the queue's, so two threads timing on one
// Context would read each other's kernels (open a Context per thread instead).
class Context : public std::enable_shared_from_this<Context> {
 public:
  // Opens the device select_device(list_devices(), selector) picks.
  static std::shared_ptr<Context> open(std::string_view selector = "");
  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  const DeviceInfo& info() const { return info_; }
  Compiler& compiler() { return *compiler_; }
  // Builds through the cache and returns the named kernel (a kernel object of its own).
  // Thread-safe, as the cache is.
  Kernel kernel(std::string_view source, const std::string& options, const std::string& name);
  void finish();  // waits for everything enqueued

  // The event window the clock reads: begin clears it, launches add their events while it is
  // open, end closes it and returns first start to last end (0 when nothing ran).
  void begin_window();
  double end_window();

  // Replaces the compiler (tests count builds through a wrapper); the cache is the caller's.
  // Not thread-safe: call it before any build.
  void set_compiler(std::unique_ptr<Compiler> compiler) { compiler_ = std::move(compiler); }
  // The runtime's raw compiler (no cache), for wrapping.
  std::unique_ptr<Compiler> raw_compiler();

  void* queue_handle() const;  // cl_command_queue
  void* context_handle() const;
  void* device_handle() const;
  void record(void* event);  // takes ownership of a cl_event (releases it when not recording)

 private:
  Context() = default;
  struct Impl;
  std::unique_ptr<Impl> impl_;
  DeviceInfo info_;
  std::unique_ptr<Compiler> compiler_;
};

// The clock: profiling events, first start to last end of the kernels launched in a window.
class EventClock final : public Clock {
 public:
  explicit EventClock(std::shared_ptr<Context> context) : context_(std::move(context)) {}
  std::string_view name() const override { return "opencl_events"; }
  void begin() override { context_->begin_window(); }
  double end() override { return context_->end_window(); }

 private:
  std::shared_ptr<Context> context_;
};

// The Device seam for OpenCL: build is the op's build step (Workload::build_candidate: the
// program built through the context's cache, and warmed up), launch is the candidate's
// enqueue, sync waits for the queue.
class OpenclDevice final : public Device {
 public:
  explicit OpenclDevice(std::shared_ptr<Context> context);
  const DeviceIdentity& identity() const override { return context_->info().identity; }
  Clock& clock() override { return clock_; }
  std::unique_ptr<Trial> make_trial(Workload& workload, std::size_t index) override;
  // A driver's state does not survive fork(): isolated trials run in a spawned worker that
  // opens this device again by its index (opt-in: IsolationOptions mode worker).
  Workers workers() const override { return Workers::spawned; }
  std::optional<DeviceReopen> reopen() const override {
    return DeviceReopen{"opencl", std::to_string(context_->info().index), ""};
  }
  const std::shared_ptr<Context>& context() const { return context_; }

 private:
  std::shared_ptr<Context> context_;
  EventClock clock_;
};

}  // namespace tunekit::opencl
