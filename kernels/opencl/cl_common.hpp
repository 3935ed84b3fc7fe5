// Helpers shared by the built-in OpenCL kernels: per-workload kernels by build options,
// candidates from a Space, and the host mirror of a device output. Private to kernels/.
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common.hpp"
#include "tunekit/opencl.hpp"
#include "tunekit/space.hpp"
#include "tunekit/value.hpp"

namespace tunekit::kernels::cl {

// The kernels one workload launches, one per build options (built through the context's
// program cache, so a second workload of the same key builds nothing).
class KernelSet {
 public:
  explicit KernelSet(std::shared_ptr<opencl::Context> context) : context_(std::move(context)) {}
  opencl::Kernel& get(std::string_view source, const std::string& options, const std::string& name);
  opencl::Context& context() { return *context_; }
  const std::shared_ptr<opencl::Context>& shared() const { return context_; }

 private:
  std::shared_ptr<opencl::Context> context_;
  std::map<std::string, opencl::Kernel> kernels_;
};

// "-DMWG=64 -DNWG=64 ..." from a config (integers and identifiers as they are).
std::string build_options(const Config& config);
// "MWG64_NWG64_..." from a config: a stable candidate name.
std::string candidate_name(const Config& config);
// Every valid point of the space, in enumeration order.
std::vector<Config> space_points(const Space& space);

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
