#include "commands/backend.hpp"

#include <vector>

#include <fmt/format.h>

#include "tunekit/errors.hpp"
#include "tunekit/opencl.hpp"
#include "tunekit/opencl_catalog.hpp"

namespace tunekit::cli {

const CatalogEntry& opencl_entry(const std::string& name) {
  const opencl::CatalogEntry& cl = opencl::find_builtin_op(name);
  static const std::vector<CatalogEntry> mirrors = [] {
    std::vector<CatalogEntry> out;
    for (const opencl::CatalogEntry& e : opencl::builtin_ops())
      out.push_back({e.name, e.description, e.example_shape, nullptr});
    return out;
  }();
  for (const CatalogEntry& e : mirrors)
    if (e.name == cl.name) return e;
  throw UsageError("unknown OpenCL op '" + name + "'");  // unreachable: find_builtin_op threw
}

Backend open_backend(const std::string& backend, const std::string& device_selector,
                     const CatalogEntry& entry, cpu::ThreadPool& pool) {
  Backend out;
  if (backend.empty() || backend == "cpu") {
    if (!device_selector.empty())
      throw UsageError("--device picks an OpenCL device: add --backend opencl");
    out.device = std::make_unique<cpu::CpuDevice>();
    out.op = entry.make(pool);
    return out;
  }
  if (backend != "opencl")
    throw UsageError(fmt::format("unknown --backend '{}': use cpu or opencl", backend));
  const opencl::CatalogEntry& cl_entry = opencl::find_builtin_op(entry.name);
  std::shared_ptr<opencl::Context> context = opencl::Context::open(device_selector);
  out.op = cl_entry.make(context, pool);
  out.device = std::make_unique<opencl::OpenclDevice>(std::move(context));
  return out;
}

}  // namespace tunekit::cli
