// Context (primary context, non-blocking stream, loaded modules, the timing window, graph
// capture, the lost state), Buffer and Function::launch with its limit checks.
#define XXH_INLINE_ALL
#include <xxhash.h>

#include <cstdint>
#include <cstdio>

#include "backends/cuda/context_impl.hpp"
#include "tunekit/errors.hpp"

namespace tunekit::cuda {

namespace {

// The backlog: spins for `cycles` SM clock cycles, so the device is busy while the host enqueues
// a window's launches (the start event is then not stamped on an idle device).
constexpr std::string_view kSpinSource = R"(
extern "C" __global__ void tunekit_backlog_spin(long long cycles) {
  const long long start = clock64();
  while (clock64() - start < cycles) {
  }
})";
constexpr const char* kSpinName = "tunekit_backlog_spin";

// The default opt-in threshold: a block may use this much shared memory without asking.
constexpr int kDefaultSharedPerBlock = 48 * 1024;

std::string hex_digest(const void* data, std::size_t bytes) {
  const XXH128_hash_t h = XXH3_128bits(data, bytes);
  char text[33];
  std::snprintf(text, sizeof text, "%016llx%016llx", static_cast<unsigned long long>(h.high64),
                static_cast<unsigned long long>(h.low64));
  return text;
}

std::string function_key(std::string_view source, const std::vector<std::string>& options,
                         const std::string& arch, const std::string& name) {
  std::string key = hex_digest(source.data(), source.size());
  for (const std::string& o : options) key += '\x1f' + o;
  return key + '\x1e' + arch + '\x1e' + name;
}

}  // namespace

// Impl -----------------------------------------------------------------------------------------

Context::Impl::~Impl() {
  if (!api || !context) return;
  // Errors are ignored: a lost context answers every call with its sticky error.
  api->ctx_set_current(context);
  for (auto& [digest, module] : modules) api->module_unload(module);
  if (start) api->event_destroy(start);
  if (stop) api->event_destroy(stop);
  if (stream) api->stream_destroy(stream);
  api->primary_ctx_release(device);
  api->ctx_set_current(nullptr);  // the thread keeps no handle to a released context
}

void Context::Impl::make_current() {
  check(api->ctx_set_current(context), "cuCtxSetCurrent");
}

void Context::Impl::throw_if_lost() const {
  if (!lost.load(std::memory_order_acquire)) return;
  std::lock_guard lock(lost_mutex);
  throw TrialError(Status::device_lost, "the CUDA context was lost earlier (" + lost_reason +
                                            "): nothing more runs on it; restart the process");
}

void Context::Impl::check(CUresult code, std::string_view what) {
  if (code == CUDA_SUCCESS) return;
  const std::string message = std::string(what) + " failed: " + error_name(code);
  if (detail::cu_is_sticky(code)) {
    std::lock_guard lock(lost_mutex);
    if (!lost.load(std::memory_order_relaxed)) lost_reason = message;
    lost.store(true, std::memory_order_release);
  }
  throw TrialError(detail::cu_failure_status(code), message);
}

// Context --------------------------------------------------------------------------------------

std::shared_ptr<Context> Context::open(std::string_view selector, ContextOptions options) {
  const detail::LoadedDriver& driver = detail::load_driver();
  return detail::ContextAccess::open(driver.api, selector, std::move(options), nullptr);
}

Context::~Context() {
  compiler_.reset();  // before the modules and the context go
}

Function Context::function(std::string_view source, const std::vector<std::string>& options,
                           const std::string& name) {
  Impl& impl = *impl_;
  impl.throw_if_lost();
  const std::string key = function_key(source, options, arch_, name);
  {
    std::lock_guard lock(impl.modules_mutex);
    if (auto it = impl.functions.find(key); it != impl.functions.end()) {
      const Impl::Loaded& f = it->second;
      return Function(shared_from_this(), f.handle, name, f.max_threads, f.static_shared,
                      f.registers);
    }
  }
  // Outside the lock: the compile pass builds candidates on several threads at once.
  const ModuleImage image = compiler_->compile(source, options, arch_);
  std::lock_guard lock(impl.modules_mutex);
  impl.make_current();
  const std::string digest = hex_digest(image.binary.data(), image.binary.size());
  CUmodule& module = impl.modules[digest];
  if (!module) {
    const CUresult loaded = impl.api->module_load_data(&module, image.binary.data());
    if (loaded != CUDA_SUCCESS) {
      impl.modules.erase(digest);
      if (detail::cu_failure_status(loaded) != Status::launch_failed)  // lost, out of memory
        impl.check(loaded, "cuModuleLoadData");
      throw TrialError(Status::compile_failed, "the driver refused the module compiled for " +
                                                   arch_ + ": " + impl.error_name(loaded));
    }
  }
  Impl::Loaded f;
  if (const CUresult got = impl.api->module_get_function(&f.handle, module, name.c_str());
      got != CUDA_SUCCESS) {
    if (detail::cu_is_sticky(got)) impl.check(got, "cuModuleGetFunction");
    throw TrialError(Status::compile_failed,
                     "the module has no kernel '" + name +
                         "' (declare it extern \"C\"): " + impl.error_name(got));
  }
  impl.check(impl.api->func_get_attribute(&f.max_threads, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK,
                                          f.handle),
             "cuFuncGetAttribute(MAX_THREADS_PER_BLOCK)");
  impl.check(
      impl.api->func_get_attribute(&f.static_shared, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, f.handle),
      "cuFuncGetAttribute(SHARED_SIZE_BYTES)");
  impl.check(impl.api->func_get_attribute(&f.registers, CU_FUNC_ATTRIBUTE_NUM_REGS, f.handle),
             "cuFuncGetAttribute(NUM_REGS)");
  impl.functions.emplace(key, f);
  return Function(shared_from_this(), f.handle, name, f.max_threads, f.static_shared, f.registers);
}

void Context::synchronize() {
  Impl& impl = *impl_;
  impl.throw_if_lost();
  impl.make_current();
  // In an open window the stop event goes in before the wait, right behind the last launch:
  // recorded after it, the reading would carry the host's wake-up and the record's latency
  // (microseconds: most of a short kernel's isolated reading).
  if (impl.window_open && impl.started && !impl.stop_recorded) {
    impl.check(impl.api->event_record(impl.stop, impl.stream), "cuEventRecord(stop)");
    impl.stop_recorded = true;
  }
  impl.check(impl.api->stream_synchronize(impl.stream), "cuStreamSynchronize");
}

bool Context::lost() const {
  return impl_->lost.load(std::memory_order_acquire);
}

std::string Context::lost_reason() const {
  std::lock_guard lock(impl_->lost_mutex);
  return impl_->lost_reason;
}

void Context::begin_window() {
  impl_->throw_if_lost();
  impl_->window_open = true;
  impl_->started = false;
  impl_->stop_recorded = false;
}

void Context::before_enqueue() {
  Impl& impl = *impl_;
  impl.throw_if_lost();
  // While capturing, enqueues go into a graph: the window starts when the graph is launched.
  if (impl.capturing.load(std::memory_order_relaxed) || !impl.window_open) return;
  if (impl.started) {
    impl.stop_recorded = false;  // work after a synchronize: the stop moves behind it
    return;
  }
  impl.started = true;
  if (impl.spin) {
    void* args[] = {&impl.backlog_cycles};
    impl.check(impl.api->launch_kernel(impl.spin, 1, 1, 1, 1, 1, 1, 0, impl.stream, args, nullptr),
               "cuLaunchKernel(backlog spin)");
  }
  impl.check(impl.api->event_record(impl.start, impl.stream), "cuEventRecord(start)");
}

double Context::end_window() {
  Impl& impl = *impl_;
  impl.throw_if_lost();
  impl.window_open = false;
  if (!impl.started) return 0;  // nothing was enqueued: no reading
  impl.started = false;
  impl.make_current();
  // Normally synchronize() recorded it behind the window's last launch; else it goes in now.
  if (!impl.stop_recorded)
    impl.check(impl.api->event_record(impl.stop, impl.stream), "cuEventRecord(stop)");
  impl.stop_recorded = false;
  impl.check(impl.api->event_synchronize(impl.stop), "cuEventSynchronize(stop)");
  float ms = 0;
  impl.check(impl.api->event_elapsed_time(&ms, impl.start, impl.stop), "cuEventElapsedTime");
  return ms > 0 ? static_cast<double>(ms) * 1e-3 : 0.0;
}

void Context::begin_capture() {
  Impl& impl = *impl_;
  impl.throw_if_lost();
  if (impl.capturing.load()) throw UsageError("cuda::Context::begin_capture: already capturing");
  impl.make_current();
  // Thread-local: only this thread's unsafe calls (a host copy, a synchronisation) break the
  // capture; other threads (another device's search) are left alone.
  impl.check(impl.api->stream_begin_capture(impl.stream, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL),
             "cuStreamBeginCapture");
  impl.capturing.store(true);
}

void* Context::end_capture() {
  Impl& impl = *impl_;
  if (!impl.capturing.exchange(false))
    throw UsageError("cuda::Context::end_capture: no capture was begun (begin_capture)");
  impl.throw_if_lost();
  impl.make_current();
  CUgraph graph = nullptr;
  const CUresult ended = impl.api->stream_end_capture(impl.stream, &graph);
  if (ended != CUDA_SUCCESS) {
    if (graph) impl.api->graph_destroy(graph);
    impl.check(ended, "cuStreamEndCapture");
  }
  CUgraphExec exec = nullptr;
  const CUresult made = impl.api->graph_instantiate(&exec, graph, 0);
  impl.api->graph_destroy(graph);  // the executable graph keeps what it needs
  impl.check(made, "cuGraphInstantiate");
  // Uploaded now, before the window's start: else the first launch uploads it inside the
  // window and that sample carries the upload.
  if (const CUresult uploaded = impl.api->graph_upload(exec, impl.stream);
      uploaded != CUDA_SUCCESS) {
    impl.api->graph_exec_destroy(exec);
    impl.check(uploaded, "cuGraphUpload");
  }
  return exec;
}

void Context::launch_graph(void* graph_exec) {
  Impl& impl = *impl_;
  impl.throw_if_lost();
  impl.make_current();
  before_enqueue();
  impl.check(impl.api->graph_launch(static_cast<CUgraphExec>(graph_exec), impl.stream),
             "cuGraphLaunch");
}

void Context::destroy_graph(void* graph_exec) {
  // Nothing reaches a lost context (its handles die with the process).
  if (!graph_exec || lost()) return;
  impl_->api->ctx_set_current(impl_->context);
  impl_->api->graph_exec_destroy(static_cast<CUgraphExec>(graph_exec));
}

void* Context::stream_handle() const {
  return impl_->stream;
}

// Buffer ---------------------------------------------------------------------------------------

Buffer::Buffer(Context& context, std::size_t bytes) : context_(&context), bytes_(bytes) {
  if (bytes == 0) throw UsageError("cuda::Buffer: a buffer needs at least one byte");
  Context::Impl& impl = *context.impl_;
  impl.throw_if_lost();
  impl.make_current();
  CUdeviceptr pointer = 0;
  impl.check(
      impl.api->mem_alloc(&pointer, bytes),
      "cuMemAlloc of " + std::to_string(bytes) + " bytes on " + context.info().identity.product);
  // The deleter keeps the context (and its driver table) alive until the memory is freed.
  std::shared_ptr<Context> owner = context.shared_from_this();
  pointer_ = std::shared_ptr<std::uint64_t>(new std::uint64_t(pointer), [owner](std::uint64_t* p) {
    Context::Impl& i = *owner->impl_;
    if (!i.lost.load()) {
      i.api->ctx_set_current(i.context);
      i.api->mem_free(static_cast<CUdeviceptr>(*p));
    }
    delete p;
  });
}

void Buffer::write(const void* data, std::size_t bytes) {
  if (!pointer_) throw UsageError("cuda::Buffer::write: an empty buffer");
  if (bytes > bytes_) throw UsageError("cuda::Buffer::write: more bytes than the buffer holds");
  Context::Impl& impl = *context_->impl_;
  impl.throw_if_lost();
  impl.make_current();
  impl.check(impl.api->memcpy_htod_async(*pointer_, data, bytes, impl.stream), "cuMemcpyHtoDAsync");
  impl.check(impl.api->stream_synchronize(impl.stream), "cuStreamSynchronize after a copy");
}

void Buffer::read(void* data, std::size_t bytes) const {
  if (!pointer_) throw UsageError("cuda::Buffer::read: an empty buffer");
  if (bytes > bytes_) throw UsageError("cuda::Buffer::read: more bytes than the buffer holds");
  Context::Impl& impl = *context_->impl_;
  impl.throw_if_lost();
  impl.make_current();
  impl.check(impl.api->memcpy_dtoh_async(data, *pointer_, bytes, impl.stream), "cuMemcpyDtoHAsync");
  impl.check(impl.api->stream_synchronize(impl.stream), "cuStreamSynchronize after a copy");
}

// Function -------------------------------------------------------------------------------------

namespace {

struct LaunchShape {
  Dim3 grid, block;
  unsigned dynamic_shared;
};

std::string dims(Dim3 d) {
  return std::to_string(d.x) + "x" + std::to_string(d.y) + "x" + std::to_string(d.z);
}

// Every limit a launch must respect, checked before anything is enqueued; the text of the
// first one broken (naming the limit), or "" when the launch fits.
std::string broken_limit(const DeviceInfo& info, const LaunchShape& s, int max_threads,
                         int static_shared, int registers) {
  const unsigned block[3] = {s.block.x, s.block.y, s.block.z};
  const unsigned grid[3] = {s.grid.x, s.grid.y, s.grid.z};
  const char* axis[3] = {"x", "y", "z"};
  for (int d = 0; d < 3; ++d) {
    if (block[d] == 0 || grid[d] == 0) return "a block or grid dimension is 0";
    if (info.max_block[d] > 0 && block[d] > static_cast<unsigned>(info.max_block[d]))
      return "block dimension " + std::string(axis[d]) + " of " + std::to_string(block[d]) +
             " exceeds the device's maximum " + std::to_string(info.max_block[d]);
    if (info.max_grid[d] > 0 && grid[d] > static_cast<unsigned>(info.max_grid[d]))
      return "grid dimension " + std::string(axis[d]) + " of " + std::to_string(grid[d]) +
             " exceeds the device's maximum " + std::to_string(info.max_grid[d]);
  }
  const std::uint64_t threads = std::uint64_t{s.block.x} * s.block.y * s.block.z;
  // Text only for a launch that is refused: a served call's launch allocates nothing here.
  auto block_text = [&] {
    return std::to_string(threads) + " threads per block (" + dims(s.block) + ")";
  };
  if (info.max_threads_per_block > 0 &&
      threads > static_cast<std::uint64_t>(info.max_threads_per_block))
    return block_text() + " exceed the device's maximum of " +
           std::to_string(info.max_threads_per_block) + " threads per block";
  if (max_threads > 0 && threads > static_cast<std::uint64_t>(max_threads))
    return block_text() + " exceed this function's maximum of " + std::to_string(max_threads) +
           " threads per block (CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK: its registers)";
  const int optin =
      info.shared_per_block_optin > 0 ? info.shared_per_block_optin : info.shared_per_block;
  if (optin > 0 && static_cast<std::int64_t>(s.dynamic_shared) >
                       static_cast<std::int64_t>(optin) - static_shared)
    return std::to_string(s.dynamic_shared) + " bytes of dynamic shared memory exceed the " +
           "opt-in maximum of " + std::to_string(optin) + " bytes per block minus the " +
           "function's " + std::to_string(static_shared) + " bytes of static shared memory";
  if (registers > 0 && info.registers_per_block > 0 &&
      threads * static_cast<std::uint64_t>(registers) >
          static_cast<std::uint64_t>(info.registers_per_block))
    return std::to_string(registers) + " registers per thread x " + std::to_string(threads) +
           " threads exceed the device's " + std::to_string(info.registers_per_block) +
           " registers per block";
  return "";
}

}  // namespace

void Function::launch(Dim3 grid, Dim3 block, unsigned dynamic_shared, std::span<void*> args) {
  if (!context_ || !handle_) throw UsageError("cuda::Function::launch: an empty function");
  Context::Impl& impl = *context_->impl_;
  impl.throw_if_lost();
  const DeviceInfo& info = context_->info();
  if (std::string why = broken_limit(info, {grid, block, dynamic_shared}, max_threads_,
                                     static_shared_, registers_);
      !why.empty())
    throw TrialError(Status::launch_failed, name_ + ": " + why);
  impl.make_current();
  auto function = static_cast<CUfunction>(handle_);
  const int plain = info.shared_per_block > 0 ? info.shared_per_block : kDefaultSharedPerBlock;
  // Over the default a block must opt in to the dynamic shared memory it asks for.
  if (static_cast<std::int64_t>(dynamic_shared) + static_shared_ > plain)
    impl.check(
        impl.api->func_set_attribute(function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                     static_cast<int>(dynamic_shared)),
        "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES) for " + name_);
  context_->before_enqueue();
  const CUresult launched = impl.api->launch_kernel(function, grid.x, grid.y, grid.z, block.x,
                                                    block.y, block.z, dynamic_shared, impl.stream,
                                                    args.empty() ? nullptr : args.data(), nullptr);
  if (launched != CUDA_SUCCESS) impl.check(launched, "cuLaunchKernel of " + name_);
}

}  // namespace tunekit::cuda

// Opening ---------------------------------------------------------------------------------------

namespace tunekit::detail {
namespace {

// Setup calls whose failure is not a candidate's fault.
void check_open(const DriverApi& api, CUresult code, std::string_view what) {
  if (code != CUDA_SUCCESS)
    throw FatalError("CUDA: " + std::string(what) + " failed: " + cu_error_name(&api, code));
}

// The backlog kernel, compiled through the context's compiler; none without a clock rate.
void load_backlog(cuda::Context& context, double seconds) {
  auto& impl = ContextAccess::impl(context);
  const int khz = context.info().clock_khz;
  if (seconds <= 0 || khz <= 0) return;
  try {
    context.function(cuda::kSpinSource, {}, cuda::kSpinName);
  } catch (const TrialError& e) {
    // Every CUDA kernel is built the same way: one that fails here means none would build.
    throw FatalError(std::string("CUDA: the timing backlog kernel did not build for ") +
                     context.arch() + " (" + e.what() +
                     "); the op kernels would not build either: check NVRTC (its version is in "
                     "'tunekit devices') and --arch; from the library, "
                     "ContextOptions::backlog_seconds = 0 opens the context without it");
  }
  // Its handle, from the function table function() just filled.
  impl.spin =
      impl.functions.at(cuda::function_key(cuda::kSpinSource, {}, context.arch(), cuda::kSpinName))
          .handle;
  impl.backlog_cycles = static_cast<long long>(seconds * khz * 1000.0);
}

}  // namespace

std::shared_ptr<cuda::Context> ContextAccess::open(std::shared_ptr<const DriverApi> api,
                                                   std::string_view selector,
                                                   cuda::ContextOptions options,
                                                   std::unique_ptr<cuda::Compiler> compiler) {
  std::vector<cuda::DeviceInfo> devices = list_devices(api.get());
  const std::size_t index = cuda::select_device(devices, selector);
  std::shared_ptr<cuda::Context> self(new cuda::Context());
  self->info_ = std::move(devices[index]);
  self->arch_ = options.arch.empty() ? self->info_.arch() : options.arch;
  self->impl_ = std::make_unique<cuda::Context::Impl>();
  cuda::Context::Impl& impl = *self->impl_;
  impl.api = std::move(api);
  const DriverApi& a = *impl.api;
  const std::string& product = self->info_.identity.product;
  check_open(a, a.device_get(&impl.device, static_cast<int>(self->info_.index)), "cuDeviceGet");
  check_open(a, a.primary_ctx_retain(&impl.context, impl.device),
             "cuDevicePrimaryCtxRetain on " + product);
  check_open(a, a.ctx_set_current(impl.context), "cuCtxSetCurrent");
  // Non-blocking: work others put on the legacy default stream does not serialise with ours.
  check_open(a, a.stream_create(&impl.stream, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
  check_open(a, a.event_create(&impl.start, CU_EVENT_DEFAULT), "cuEventCreate");
  check_open(a, a.event_create(&impl.stop, CU_EVENT_DEFAULT), "cuEventCreate");
  // NVRTC missing is found at the first compile (the backlog kernel's, below).
  if (!compiler)
    compiler = std::make_unique<cuda::CachingCompiler>(cuda::nvrtc_compiler(),
                                                       std::move(options.module_cache));
  self->compiler_ = std::move(compiler);
  load_backlog(*self, options.backlog_seconds);
  return self;
}

}  // namespace tunekit::detail
