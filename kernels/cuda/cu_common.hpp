// Helpers shared by the built-in CUDA kernels: compile options from a config, the per-workload
// functions, the ops' build step, launches, and the host mirror of a device output. Private to
// kernels/.
//
// The contract of a CUDA candidate (CudaDevice captures queued batches into a CUDA graph): its
// run function only enqueues kernels on the context's stream — no host copies, no
// synchronisation. So the host mirror of an output is moved by the op's hooks, never by a
// launch: outputs() reads the device, the validator's poison hook writes the poisoned host
// values to the device, the reference writes what the host computed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "tunekit/cuda.hpp"
#include "tunekit/outcome.hpp"
#include "tunekit/value.hpp"

namespace tunekit::kernels::cu {

// {"-DBM=128", "-DBN=64", ...} from a config (integers and identifiers as they are), leaving
// out the parameters named in `launch_only` (those that change the launch, not the kernel).
std::vector<std::string> define_options(const Config& config,
                                        const std::vector<std::string_view>& launch_only = {});

// The functions one workload launches, one per (name, options), got through the context
// (whose module cache makes that a hit after the op's build step). Thread-safe; the map is
// locked only to look up and insert, a compile runs outside it.
class FunctionSet {
 public:
  explicit FunctionSet(std::shared_ptr<cuda::Context> context) : context_(std::move(context)) {}
  cuda::Function& get(std::string_view source, const std::vector<std::string>& options,
                      const std::string& name);

 private:
  std::shared_ptr<cuda::Context> context_;
  std::mutex mutex_;
  std::map<std::string, cuda::Function> functions_;  // node-based: references stay valid
};

// The build step of the built-in ops (Op::build): every kernel a point launches compiled
// (and loaded) through the context, so no timing window compiles. A compile failure is
// compile_failed with NVRTC's log; a module the driver refuses is compile_failed too. Safe to
// call concurrently (the context's compiler is).
Outcome build_functions(cuda::Context& context, std::string_view source,
                        const std::vector<std::string>& options,
                        const std::vector<std::string>& names);

// The context an op was made on; a UsageError when it was made without one (the catalog makes
// ops with a null context to list them) and is asked to build or make inputs.
const std::shared_ptr<cuda::Context>& require_context(
    const std::shared_ptr<cuda::Context>& context);

// Enqueues f on the context's stream with the arguments by value (each passed to the driver
// as a pointer to it, as cuLaunchKernel takes them).
template <class... T>
void launch(cuda::Function& f, cuda::Dim3 grid, cuda::Dim3 block, T... values) {
  void* args[] = {static_cast<void*>(&values)...};
  f.launch(grid, block, 0, args);
}

inline std::uint64_t ptr(const cuda::Buffer& buffer) {
  return buffer.device_pointer();
}

inline unsigned blocks(std::size_t count, std::size_t per) {
  return static_cast<unsigned>((count + per - 1) / per);
}

// A rows x cols f32 output kept on the device as padded_rows x padded_cols (padding zero) and
// its host mirror, which validation reads and poisons. read() and write() copy (and wait); a
// launch never does. `host` must outlive the mirror and stay where it is (keep both in one
// heap-allocated state).
class DeviceOutput {
 public:
  DeviceOutput(cuda::Context& context, std::vector<float>& host, std::size_t rows, std::size_t cols,
               std::size_t padded_rows, std::size_t padded_cols);
  void read();   // device -> host
  void write();  // host -> device (the poison, or a reference computed on the host)
  cuda::Buffer& buffer() { return buffer_; }

 private:
  std::vector<float>* host_;
  std::size_t rows_, cols_, padded_cols_;
  std::vector<float> staging_;  // the padded copy; empty when there is no padding
  cuda::Buffer buffer_;
};

// `host` (rows x cols) into a zero-padded rows_p x cols_p device buffer.
void upload_padded(cuda::Buffer& buffer, const std::vector<float>& host, std::size_t rows,
                   std::size_t cols, std::size_t rows_p, std::size_t cols_p);

}  // namespace tunekit::kernels::cu
