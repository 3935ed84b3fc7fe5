#include "opencl/cl_common.hpp"

#include <algorithm>

#include "tunekit/errors.hpp"

namespace tunekit::kernels::cl {

opencl::Kernel& KernelSet::get(std::string_view source, const std::string& options,
                               const std::string& name) {
  const std::string key = name + '\n' + options;
  {
    std::lock_guard lock(mutex_);
    if (auto it = kernels_.find(key); it != kernels_.end()) return it->second;
  }
  opencl::Kernel kernel = context_->kernel(source, options, name);  // outside the lock
  std::lock_guard lock(mutex_);
  return kernels_.try_emplace(key, std::move(kernel)).first->second;  // a racing twin wins
}

Outcome BuildStep::operator()(const std::string& options, std::span<const std::size_t> local,
                              std::size_t scratch_bytes, const Bind& bind) {
  std::shared_ptr<Entry> entry;
  {
    std::lock_guard lock(mutex_);
    auto [it, inserted] = entries_.try_emplace(options);
    if (inserted) it->second = std::make_shared<Entry>();
    entry = it->second;
  }
  std::call_once(entry->once, [&] {
    opencl::Kernel kernel;
    try {
      kernel = context_->kernel(source_, options, name_);
    } catch (const TrialError& e) {
      entry->outcome = {e.status(), e.what()};
      return;
    }
    try {
      // Not written: nothing may enter the context's queue, which a timing may be using.
      opencl::Buffer scratch(*context_, scratch_bytes);
      bind(kernel, scratch);
      kernel.warm_up(local);
    } catch (const TrialError&) {
      // Work-group or resource limits: the launch checks the same and classifies it.
    }
    entry->outcome = Outcome::success();
  });
  return entry->outcome;
}

std::string build_options(const Config& config) {
  std::string out;
  for (const Field& f : config.fields()) {
    if (!out.empty()) out += ' ';
    out += "-D" + f.name + "=" + (f.value.is_string() ? f.value.as_string() : f.value.text());
  }
  return out;
}

MirroredOutput::MirroredOutput(opencl::Context& context, std::vector<float>& host, std::size_t rows,
                               std::size_t cols, std::size_t padded_rows, std::size_t padded_cols)
    : host_(&host),
      rows_(rows),
      cols_(cols),
      padded_cols_(padded_cols),
      buffer_(context, padded_rows * padded_cols * sizeof(float)) {
  if (host.size() != rows * cols || padded_rows < rows || padded_cols < cols)
    throw UsageError("MirroredOutput: host size or padding does not match rows x cols");
  if (padded_rows != rows || padded_cols != cols) staging_.assign(padded_rows * padded_cols, 0.0f);
  write();
}

void MirroredOutput::before_launch() {
  if (!host_exposed_) return;
  write();
}

void MirroredOutput::read() {
  if (staging_.empty()) {
    buffer_.read(host_->data(), host_->size() * sizeof(float));
  } else {
    buffer_.read(staging_.data(), staging_.size() * sizeof(float));
    for (std::size_t r = 0; r < rows_; ++r)
      std::copy_n(staging_.data() + r * padded_cols_, cols_, host_->data() + r * cols_);
  }
  host_exposed_ = true;
}

void MirroredOutput::write() {
  if (staging_.empty()) {
    buffer_.write(host_->data(), host_->size() * sizeof(float));
  } else {
    for (std::size_t r = 0; r < rows_; ++r)
      std::copy_n(host_->data() + r * cols_, cols_, staging_.data() + r * padded_cols_);
    buffer_.write(staging_.data(), staging_.size() * sizeof(float));
  }
  host_exposed_ = false;
}

}  // namespace tunekit::kernels::cl
