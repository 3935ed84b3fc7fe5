// Context (device, context, profiling queue, event window), buffers, kernels and the Device.
#include <algorithm>
#include <limits>
#include <memory>
#include <numeric>
#include <type_traits>

#include "backends/opencl/cl_api.hpp"
#include "backends/opencl/cl_compiler.hpp"
#include "backends/opencl/device_list.hpp"
#include "tunekit/errors.hpp"
#include "tunekit/opencl.hpp"

namespace tunekit::opencl {

using detail::cl_check_fatal;
using detail::cl_check_trial;
using detail::cl_error_name;

struct Context::Impl {
  cl_device_id device = nullptr;
  cl_context context = nullptr;
  cl_command_queue queue = nullptr;
  bool recording = false;
  std::vector<cl_event> events;

  void release_events() {
    for (cl_event e : events) clReleaseEvent(e);
    events.clear();
  }
  ~Impl() {
    release_events();
    if (queue) clReleaseCommandQueue(queue);
    if (context) clReleaseContext(context);
  }
};

std::shared_ptr<Context> Context::open(std::string_view selector) {
  std::vector<cl_device_id> ids;
  std::vector<DeviceInfo> devices = detail::enumerate_devices(&ids);
  const std::size_t index = select_device(devices, selector);
  std::shared_ptr<Context> self(new Context());
  self->impl_ = std::make_unique<Impl>();
  self->info_ = devices[index];
  Impl& impl = *self->impl_;
  impl.device = ids[index];
  cl_int err = CL_SUCCESS;
  impl.context = clCreateContext(nullptr, 1, &impl.device, nullptr, nullptr, &err);
  cl_check_fatal(err, "clCreateContext for " + self->info_.identity.product);
  // In order, with profiling: the events of a window are the clock (DESIGN §5).
  impl.queue = clCreateCommandQueue(impl.context, impl.device, CL_QUEUE_PROFILING_ENABLE, &err);
  cl_check_fatal(err, "clCreateCommandQueue (profiling) for " + self->info_.identity.product);
  self->compiler_ = std::make_unique<CachingCompiler>(
      self->raw_compiler(), self->info_.identity.product + "|" + self->info_.identity.driver + "|" +
                                std::to_string(index));
  return self;
}

Context::~Context() = default;

std::unique_ptr<Compiler> Context::raw_compiler() {
  return std::make_unique<detail::ClCompiler>(*this);
}

Kernel Context::kernel(std::string_view source, const std::string& options,
                       const std::string& name) {
  return compiler_->build(source, options).kernel(name);
}

void Context::finish() {
  cl_check_trial(clFinish(impl_->queue), "clFinish");
}

void Context::begin_window() {
  impl_->release_events();
  impl_->recording = true;
}

double Context::end_window() {
  impl_->recording = false;
  finish();
  cl_ulong first = std::numeric_limits<cl_ulong>::max();
  cl_ulong last = 0;
  for (cl_event e : impl_->events) {
    cl_int status = CL_COMPLETE;
    clGetEventInfo(e, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, nullptr);
    if (status < 0) {
      impl_->release_events();
      throw TrialError(Status::launch_failed,
                       "a kernel failed on the device: " + cl_error_name(status));
    }
    cl_ulong start = 0, end = 0;
    if (clGetEventProfilingInfo(e, CL_PROFILING_COMMAND_START, sizeof start, &start, nullptr) !=
            CL_SUCCESS ||
        clGetEventProfilingInfo(e, CL_PROFILING_COMMAND_END, sizeof end, &end, nullptr) !=
            CL_SUCCESS) {
      impl_->release_events();
      return 0;  // no reading: the window is refused as not_measured
    }
    first = std::min(first, start);
    last = std::max(last, end);
  }
  const bool any = !impl_->events.empty();
  impl_->release_events();
  if (!any || last <= first) return 0;
  return static_cast<double>(last - first) * 1e-9;
}

void Context::record(void* event) {
  auto e = static_cast<cl_event>(event);
  if (impl_->recording) {
    impl_->events.push_back(e);
  } else {
    clReleaseEvent(e);
  }
}

void* Context::queue_handle() const {
  return impl_->queue;
}
void* Context::context_handle() const {
  return impl_->context;
}
void* Context::device_handle() const {
  return impl_->device;
}

// Buffer ---------------------------------------------------------------------------------------

Buffer::Buffer(Context& context, std::size_t bytes) : context_(&context), bytes_(bytes) {
  const DeviceInfo& info = context.info();
  if (bytes == 0) throw UsageError("opencl::Buffer: a buffer needs at least one byte");
  if (info.max_allocation > 0 && bytes > info.max_allocation) {
    throw TrialError(Status::out_of_memory, "a buffer of " + std::to_string(bytes) +
                                                " bytes exceeds the largest "
                                                "allocation of " +
                                                info.identity.product + " (" +
                                                std::to_string(info.max_allocation) + " bytes)");
  }
  cl_int err = CL_SUCCESS;
  cl_mem mem = clCreateBuffer(static_cast<cl_context>(context.context_handle()), CL_MEM_READ_WRITE,
                              bytes, nullptr, &err);
  if (err != CL_SUCCESS) {
    throw TrialError(Status::out_of_memory, "allocating " + std::to_string(bytes) +
                                                " bytes failed: " + cl_error_name(err));
  }
  handle_ = std::shared_ptr<void>(mem, [](void* m) { clReleaseMemObject(static_cast<cl_mem>(m)); });
}

void Buffer::write(const void* data, std::size_t bytes) {
  if (!handle_) throw UsageError("opencl::Buffer::write: an empty buffer");
  if (bytes > bytes_) throw UsageError("opencl::Buffer::write: more bytes than the buffer holds");
  cl_check_trial(clEnqueueWriteBuffer(static_cast<cl_command_queue>(context_->queue_handle()),
                                      static_cast<cl_mem>(handle_.get()), CL_TRUE, 0, bytes, data,
                                      0, nullptr, nullptr),
                 "writing a buffer");
}

void Buffer::read(void* data, std::size_t bytes) const {
  if (!handle_) throw UsageError("opencl::Buffer::read: an empty buffer");
  if (bytes > bytes_) throw UsageError("opencl::Buffer::read: more bytes than the buffer holds");
  cl_check_trial(clEnqueueReadBuffer(static_cast<cl_command_queue>(context_->queue_handle()),
                                     static_cast<cl_mem>(handle_.get()), CL_TRUE, 0, bytes, data, 0,
                                     nullptr, nullptr),
                 "reading a buffer");
}

// Program and Kernel ---------------------------------------------------------------------------

Kernel Program::kernel(const std::string& name) const {
  if (!handle_ || !context_) throw UsageError("opencl::Program::kernel: an empty program");
  cl_int err = CL_SUCCESS;
  cl_kernel k = clCreateKernel(static_cast<cl_program>(handle_.get()), name.c_str(), &err);
  if (err != CL_SUCCESS)
    throw TrialError(Status::compile_failed,
                     "the program has no kernel '" + name + "': " + cl_error_name(err));
  std::shared_ptr<void> handle(k, [](void* p) { clReleaseKernel(static_cast<cl_kernel>(p)); });
  return Kernel(context_->shared_from_this(), std::move(handle), name);
}

void Kernel::set_arg(unsigned index, const Buffer& buffer) {
  cl_mem mem = static_cast<cl_mem>(buffer.handle());
  cl_check_trial(clSetKernelArg(static_cast<cl_kernel>(handle_.get()), index, sizeof mem, &mem),
                 "setting argument " + std::to_string(index) + " of " + name_);
}
void Kernel::set_arg(unsigned index, int value) {
  cl_int v = value;
  cl_check_trial(clSetKernelArg(static_cast<cl_kernel>(handle_.get()), index, sizeof v, &v),
                 "setting argument " + std::to_string(index) + " of " + name_);
}
void Kernel::set_arg(unsigned index, float value) {
  cl_float v = value;
  cl_check_trial(clSetKernelArg(static_cast<cl_kernel>(handle_.get()), index, sizeof v, &v),
                 "setting argument " + std::to_string(index) + " of " + name_);
}
void Kernel::set_local(unsigned index, std::size_t bytes) {
  cl_check_trial(clSetKernelArg(static_cast<cl_kernel>(handle_.get()), index, bytes, nullptr),
                 "setting local argument " + std::to_string(index) + " of " + name_);
}

std::size_t Kernel::max_work_group() const {
  std::size_t size = 0;
  clGetKernelWorkGroupInfo(static_cast<cl_kernel>(handle_.get()),
                           static_cast<cl_device_id>(context_->device_handle()),
                           CL_KERNEL_WORK_GROUP_SIZE, sizeof size, &size, nullptr);
  return size;
}

void Kernel::check_launch(std::span<const std::size_t> global,
                          std::span<const std::size_t> local) const {
  if (!handle_) throw UsageError("opencl::Kernel::launch: an empty kernel");
  const DeviceInfo& info = context_->info();
  if (global.empty() || global.size() > 3 || (!local.empty() && local.size() != global.size()))
    throw UsageError("opencl::Kernel::launch: 1 to 3 dimensions, local empty or of the same rank");
  if (local.empty()) return;
  const std::size_t group =
      std::accumulate(local.begin(), local.end(), std::size_t{1}, std::multiplies<>());
  auto refuse = [&](const std::string& why) {
    throw TrialError(Status::launch_failed, name_ + ": " + why);
  };
  if (group > info.max_work_group)
    refuse("work-group size " + std::to_string(group) + " exceeds the device's maximum " +
           std::to_string(info.max_work_group));
  if (const std::size_t kmax = max_work_group(); kmax > 0 && group > kmax)
    refuse("work-group size " + std::to_string(group) + " exceeds this kernel's maximum " +
           std::to_string(kmax) + " on the device");
  for (std::size_t d = 0; d < local.size(); ++d) {
    if (d < info.max_work_item_sizes.size() && local[d] > info.max_work_item_sizes[d])
      refuse("work-group dimension " + std::to_string(d) + " of " + std::to_string(local[d]) +
             " exceeds the device's maximum " + std::to_string(info.max_work_item_sizes[d]));
    if (local[d] == 0 || global[d] % local[d] != 0)
      refuse("global size " + std::to_string(global[d]) + " is not a multiple of the work-group " +
             "size " + std::to_string(local[d]) + " in dimension " + std::to_string(d));
  }
  cl_ulong local_bytes = 0;
  clGetKernelWorkGroupInfo(static_cast<cl_kernel>(handle_.get()),
                           static_cast<cl_device_id>(context_->device_handle()),
                           CL_KERNEL_LOCAL_MEM_SIZE, sizeof local_bytes, &local_bytes, nullptr);
  if (info.local_memory > 0 && local_bytes > info.local_memory)
    refuse("needs " + std::to_string(local_bytes) + " bytes of local memory, the device has " +
           std::to_string(info.local_memory));
}

void Kernel::launch(std::span<const std::size_t> global, std::span<const std::size_t> local) {
  check_launch(global, local);
  cl_event event = nullptr;
  const cl_int err = clEnqueueNDRangeKernel(
      static_cast<cl_command_queue>(context_->queue_handle()),
      static_cast<cl_kernel>(handle_.get()), static_cast<cl_uint>(global.size()), nullptr,
      global.data(), local.empty() ? nullptr : local.data(), 0, nullptr, &event);
  cl_check_trial(err, "enqueueing " + name_);
  context_->record(event);
}

void Kernel::warm_up(std::span<const std::size_t> local) {
  check_launch(local, local);
  // A queue of its own: the context's queue and its event window stay the timing's alone.
  cl_int err = CL_SUCCESS;
  cl_command_queue queue =
      clCreateCommandQueue(static_cast<cl_context>(context_->context_handle()),
                           static_cast<cl_device_id>(context_->device_handle()), 0, &err);
  cl_check_trial(err, "creating a queue to warm up " + name_);
  std::unique_ptr<std::remove_pointer_t<cl_command_queue>, decltype(&clReleaseCommandQueue)> owned(
      queue, &clReleaseCommandQueue);
  cl_check_trial(clEnqueueNDRangeKernel(queue, static_cast<cl_kernel>(handle_.get()),
                                        static_cast<cl_uint>(local.size()), nullptr, local.data(),
                                        local.data(), 0, nullptr, nullptr),
                 "enqueueing " + name_ + " to warm it up");
  cl_check_trial(clFinish(queue), "warming up " + name_);
}

// Device ---------------------------------------------------------------------------------------

namespace {

// launch enqueues (the candidate's function does), sync waits for the queue.
class OpenclTrial final : public Trial {
 public:
  OpenclTrial(Workload& workload, std::size_t index, Context& context)
      : workload_(workload), index_(index), context_(context) {}
  // The op's build step: the program through the context's cache (and warmed up), so the
  // first launch finds it built.
  Outcome build() override { return workload_.build_candidate(index_); }
  Outcome prepare() override { return Outcome::success(); }
  void launch() override { workload_.run_candidate(index_); }
  void sync() override { context_.finish(); }
  void release() override {}

 private:
  Workload& workload_;
  std::size_t index_;
  Context& context_;
};

}  // namespace

OpenclDevice::OpenclDevice(std::shared_ptr<Context> context)
    : context_(std::move(context)), clock_(context_) {
  if (!context_) throw UsageError("OpenclDevice needs a context: opencl::Context::open(...)");
}

std::unique_ptr<Trial> OpenclDevice::make_trial(Workload& workload, std::size_t index) {
  return std::make_unique<OpenclTrial>(workload, index, *context_);
}

}  // namespace tunekit::opencl
