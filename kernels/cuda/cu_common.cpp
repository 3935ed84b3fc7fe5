#include "cuda/cu_common.hpp"

#include <algorithm>

#include "tunekit/errors.hpp"

namespace tunekit::kernels::cu {

std::vector<std::string> define_options(const Config& config,
                                        const std::vector<std::string_view>& launch_only) {
  std::vector<std::string> out;
  for (const Field& f : config.fields()) {
    if (std::find(launch_only.begin(), launch_only.end(), f.name) != launch_only.end()) continue;
    out.push_back("-D" + f.name + "=" +
                  (f.value.is_string() ? f.value.as_string() : f.value.text()));
  }
  return out;
}

cuda::Function& FunctionSet::get(std::string_view source, const std::vector<std::string>& options,
                                 const std::string& name) {
  std::string key = name;
  for (const std::string& o : options) key += '\n' + o;
  {
    std::lock_guard lock(mutex_);
    if (auto it = functions_.find(key); it != functions_.end()) return it->second;
  }
  cuda::Function f = context_->function(source, options, name);  // outside the lock
  std::lock_guard lock(mutex_);
  return functions_.try_emplace(std::move(key), std::move(f)).first->second;  // a racing twin wins
}

const std::shared_ptr<cuda::Context>& require_context(
    const std::shared_ptr<cuda::Context>& context) {
  if (!context)
    throw UsageError(
        "this CUDA op was made without a context (for listing): make it on one "
        "from cuda::Context::open to build or tune it");
  return context;
}

Outcome build_functions(cuda::Context& context, std::string_view source,
                        const std::vector<std::string>& options,
                        const std::vector<std::string>& names) {
  try {
    for (const std::string& name : names) context.function(source, options, name);
  } catch (const TrialError& e) {
    return {e.status(), e.what()};
  }
  return Outcome::success();
}

DeviceOutput::DeviceOutput(cuda::Context& context, std::vector<float>& host, std::size_t rows,
                           std::size_t cols, std::size_t padded_rows, std::size_t padded_cols)
    : host_(&host),
      rows_(rows),
      cols_(cols),
      padded_cols_(padded_cols),
      buffer_(context, padded_rows * padded_cols * sizeof(float)) {
  if (host.size() != rows * cols || padded_rows < rows || padded_cols < cols)
    throw UsageError("DeviceOutput: host size or padding does not match rows x cols");
  if (padded_rows != rows || padded_cols != cols) staging_.assign(padded_rows * padded_cols, 0.0f);
  write();
}

void DeviceOutput::read() {
  if (staging_.empty()) {
    buffer_.read(host_->data(), host_->size() * sizeof(float));
    return;
  }
  buffer_.read(staging_.data(), staging_.size() * sizeof(float));
  for (std::size_t r = 0; r < rows_; ++r)
    std::copy_n(staging_.data() + r * padded_cols_, cols_, host_->data() + r * cols_);
}

void DeviceOutput::write() {
  if (staging_.empty()) {
    buffer_.write(host_->data(), host_->size() * sizeof(float));
    return;
  }
  // Outside rows x cols the staging copy holds what the device last had there: no kernel reads
  // an output's padding, and read() never copies it back.
  for (std::size_t r = 0; r < rows_; ++r)
    std::copy_n(host_->data() + r * cols_, cols_, staging_.data() + r * padded_cols_);
  buffer_.write(staging_.data(), staging_.size() * sizeof(float));
}

void upload_padded(cuda::Buffer& buffer, const std::vector<float>& host, std::size_t rows,
                   std::size_t cols, std::size_t rows_p, std::size_t cols_p) {
  if (rows == rows_p && cols == cols_p) {
    buffer.write(host.data(), host.size() * sizeof(float));
    return;
  }
  std::vector<float> padded(rows_p * cols_p, 0.0f);
  for (std::size_t r = 0; r < rows; ++r)
    std::copy_n(host.data() + r * cols, cols, padded.data() + r * cols_p);
  buffer.write(padded.data(), padded.size() * sizeof(float));
}

}  // namespace tunekit::kernels::cu
