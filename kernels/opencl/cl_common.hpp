// Helpers shared by the built-in OpenCL kernels: per-workload kernels by build options, the
// ops' build step, and the host mirror of a device output. Private to kernels/.
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common.hpp"
#include "tunekit/opencl.hpp"
#include "tunekit/outcome.hpp"
#include "tunekit/value.hpp"

namespace tunekit::kernels::cl {

// The kernels one workload launches, one per build options (built through the context's
// program cache: after the op's build step, or for a second workload of the same key, that is
// a hit). Thread-safe: the map is locked only to look up and insert, a build runs outside it.
class KernelSet {
 public:
  explicit KernelSet(std::shared_ptr<opencl::Context> context) : context_(std::move(context)) {}
  opencl::Kernel& get(std::string_view source, const std::string& options, const std::string& name);
  opencl::Context& context() { return *context_; }
  const std::shared_ptr<opencl::Context>& shared() const { return context_; }

 private:
  std::shared_ptr<opencl::Context> context_;
  std::mutex mutex_;
  std::map<std::string, opencl::Kernel> kernels_;  // node-based: references stay valid
};

// "-DMWG=64 -DNWG=64 ..." from a config (integers and identifiers as they are).
std::string build_options(const Config& config);

// The build step of the built-in ops (Op::build): the program for one set of build options
// built through the context's caching compiler, then one work-group of `local` dispatched on a
// private queue (Kernel::warm_up) with the arguments `bind` sets, so a driver that generates
// code lazily at a kernel's first launch (PoCL, per work-group size) does it here too. `bind`
// receives the kernel and a scratch buffer of `scratch_bytes` (not initialised: its values are
// whatever the device had) to bind to every buffer argument; it must choose sizes so that one
// work-group stays inside it. Memoised per options
// (a second call answers the first's outcome) and thread-safe: different options build at
// once, a second asker of the same waits for the first. A build failure is compile_failed with
// the log; a warm-up the device refuses is not a build failure (the launch classifies it).
class BuildStep {
 public:
  using Bind = std::function<void(opencl::Kernel&, opencl::Buffer& scratch)>;
  BuildStep(std::shared_ptr<opencl::Context> context, std::string_view source, std::string name)
      : context_(std::move(context)), source_(source), name_(std::move(name)) {}
  Outcome operator()(const std::string& options, std::span<const std::size_t> local,
                     std::size_t scratch_bytes, const Bind& bind);

 private:
  struct Entry {
    std::once_flag once;
    Outcome outcome;
  };
  std::shared_ptr<opencl::Context> context_;
  std::string_view source_;
  std::string name_;
  std::mutex mutex_;
  std::map<std::string, std::shared_ptr<Entry>> entries_;
};

// A rows x cols output kept on the device (as padded_rows x padded_cols, padding zero) with a
// host mirror that validation reads and poisons. The host learns the device's values through
// read(); a launch after read() first writes the host's values back, so the NaN poison of
// validation reaches the device and a kernel that skips an element cannot pass. `host` must
// outlive the mirror and stay where it is (keep both in one heap-allocated state).
class MirroredOutput {
 public:
  MirroredOutput(opencl::Context& context, std::vector<float>& host, std::size_t rows,
                 std::size_t cols, std::size_t padded_rows, std::size_t padded_cols);
  MirroredOutput(opencl::Context& context, std::vector<float>& host)
      : MirroredOutput(context, host, 1, host.size(), 1, host.size()) {}
  void before_launch();  // writes the host's values back once after a read()
  void read();           // device -> host; marks the host as possibly changed
  void write();          // host -> device (a reference computed on the host)
  opencl::Buffer& buffer() { return buffer_; }

 private:
  std::vector<float>* host_;
  std::size_t rows_, cols_, padded_cols_;
  std::vector<float> staging_;  // padded copy; empty when there is no padding
  opencl::Buffer buffer_;
  bool host_exposed_ = false;
};

}  // namespace tunekit::kernels::cl
