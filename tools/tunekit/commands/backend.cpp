#include "commands/backend.hpp"

#include <regex>

#include <fmt/format.h>

#include "tunekit/cuda.hpp"
#include "tunekit/cuda_catalog.hpp"
#include "tunekit/errors.hpp"
#include "tunekit/opencl.hpp"
#include "tunekit/opencl_catalog.hpp"

namespace tunekit::cli {
namespace {

class CpuSession final : public BackendSession {
 public:
  Device& device() override { return device_; }
  std::unique_ptr<OpBase> make_op(std::string_view name, cpu::ThreadPool& pool) override {
    for (const CatalogEntry& e : builtin_ops())
      if (e.name == name) return e.make(pool);
    return nullptr;
  }

 private:
  cpu::CpuDevice device_;
};

// A source backend's session: a context shared by the Device and every op made on it.
template <class Context, class DeviceType, class Entry>
class ContextSession final : public BackendSession {
 public:
  ContextSession(std::shared_ptr<Context> context, const std::vector<Entry>& entries)
      : context_(std::move(context)), device_(context_), entries_(entries) {}
  Device& device() override { return device_; }
  std::unique_ptr<OpBase> make_op(std::string_view name, cpu::ThreadPool& pool) override {
    for (const Entry& e : entries_)
      if (e.name == name) return e.make(context_, pool);
    return nullptr;
  }

 private:
  std::shared_ptr<Context> context_;
  DeviceType device_;
  const std::vector<Entry>& entries_;
};

// A source backend's ops as CatalogEntry rows, built without a context (listing only).
template <class Entry>
std::vector<CatalogEntry> listed(const std::vector<Entry>& entries) {
  std::vector<CatalogEntry> out;
  for (const Entry& e : entries) {
    out.push_back({e.name, e.description, e.example_shape,
                   [make = e.make](cpu::ThreadPool& pool) { return make(nullptr, pool); }});
  }
  return out;
}

void refuse_arch(const BackendOpen& how, const char* backend) {
  if (!how.arch.empty())
    throw UsageError(fmt::format(
        "--arch names the architecture CUDA kernels are compiled for; {} takes none: drop it, "
        "or add --backend cuda",
        backend));
}

// The module cache beside a store on disk (cuda-modules/ in the store's directory), its
// warnings through the tool's log; --arch, when given, instead of the device's own.
cuda::ContextOptions cuda_options(const BackendOpen& how) {
  static const std::regex arch_form("sm_[0-9]{2,3}[af]?");
  if (!how.arch.empty() && !std::regex_match(how.arch, arch_form))
    throw UsageError(fmt::format(
        "--arch '{}' is not a CUDA architecture: give sm_ and its compute capability, e.g. "
        "sm_80 or sm_90 (default: the device's own)",
        how.arch));
  cuda::ContextOptions options;
  options.arch = how.arch;
  options.module_cache.directory = cuda::module_cache_directory(how.store);
  options.module_cache.on_warning = [log = how.log](std::string_view text) { log.warn(text); };
  return options;
}

std::vector<BackendEntry> make_backends() {
  std::vector<BackendEntry> out;
  out.push_back({"cpu", "CPU", "the host CPU: host functions, a thread pool, the steady clock",
                 [] { return builtin_ops(); },
                 [](const BackendOpen& how) -> std::unique_ptr<BackendSession> {
                   if (!how.device.empty())
                     throw UsageError(
                         "--device picks an OpenCL or CUDA device: add --backend opencl or "
                         "--backend cuda");
                   refuse_arch(how, "the CPU");
                   return std::make_unique<CpuSession>();
                 }});
  out.push_back({"opencl", "OpenCL",
                 "any OpenCL 1.2 device (PoCL on CPUs): runtime builds, profiling events",
                 [] { return listed(opencl::builtin_ops()); },
                 [](const BackendOpen& how) -> std::unique_ptr<BackendSession> {
                   refuse_arch(how, "OpenCL");
                   return std::make_unique<
                       ContextSession<opencl::Context, opencl::OpenclDevice, opencl::CatalogEntry>>(
                       opencl::Context::open(how.device), opencl::builtin_ops());
                 }});
  out.push_back({"cuda", "CUDA",
                 "NVIDIA GPUs: NVRTC builds, CUDA events, CUDA graphs for queued timing",
                 [] { return listed(cuda::builtin_ops()); },
                 [](const BackendOpen& how) -> std::unique_ptr<BackendSession> {
                   return std::make_unique<
                       ContextSession<cuda::Context, cuda::CudaDevice, cuda::CatalogEntry>>(
                       cuda::Context::open(how.device, cuda_options(how)), cuda::builtin_ops());
                 }});
  return out;
}

std::string names(const std::vector<CatalogEntry>& entries) {
  std::string out;
  for (const CatalogEntry& e : entries) out += (out.empty() ? "" : ", ") + e.name;
  return out;
}

}  // namespace

const std::vector<BackendEntry>& backends() {
  static const std::vector<BackendEntry> table = make_backends();
  return table;
}

const BackendEntry& find_backend(std::string_view name) {
  if (name.empty()) name = "cpu";
  std::string known;
  for (const BackendEntry& b : backends()) {
    if (b.name == name) return b;
    known += (known.empty() ? "" : ", ") + b.name;
  }
  throw UsageError(fmt::format("unknown --backend '{}': use one of {}", name, known));
}

CatalogEntry find_backend_op(const BackendEntry& backend, std::string_view name) {
  std::vector<CatalogEntry> ops = backend.ops();
  for (CatalogEntry& e : ops)
    if (e.name == name) return std::move(e);
  throw UsageError(
      fmt::format("unknown {} op '{}'; the {} ops are: {} ('tunekit ops' describes "
                  "each op and its key fields)",
                  backend.title, name, backend.title, names(ops)));
}

const OpBase* BackendOps::find(std::string_view name) {
  auto it = ops_.find(name);
  if (it == ops_.end()) it = ops_.emplace(std::string(name), session_->make_op(name, pool_)).first;
  return it->second.get();
}

Backend open_backend(const std::string& backend, const BackendOpen& how, std::string_view op_name,
                     cpu::ThreadPool& pool) {
  const BackendEntry& entry = find_backend(backend);
  find_backend_op(entry, op_name);  // an unknown op is refused before a device is opened
  Backend out;
  out.session = entry.open(how);
  out.op = out.session->make_op(op_name, pool);
  return out;
}

}  // namespace tunekit::cli
