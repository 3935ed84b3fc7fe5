// The backend a CLI command runs on (--backend cpu|opencl, --device SELECTOR): the Device and
// the op built for it.
#pragma once

#include <memory>
#include <string>

#include "tunekit/catalog.hpp"
#include "tunekit/cpu.hpp"
#include "tunekit/device.hpp"
#include "tunekit/op.hpp"

namespace tunekit::cli {

struct Backend {
  std::unique_ptr<Device> device;
  std::unique_ptr<OpBase> op;
};

// "cpu" (default, "" too) runs `entry`'s CPU op on the host; "opencl" opens the device
// `device_selector` picks (index or name substring) and builds the OpenCL op of the same
// name. UsageError for an unknown backend, an op without an OpenCL version, --device on the
// CPU, or no OpenCL device (with how to install one).
// The OpenCL op `name` as a CatalogEntry (name, description, example shape; building goes
// through open_backend). UsageError listing the OpenCL ops when there is none of that name.
const CatalogEntry& opencl_entry(const std::string& name);

Backend open_backend(const std::string& backend, const std::string& device_selector,
                     const CatalogEntry& entry, cpu::ThreadPool& pool);

}  // namespace tunekit::cli
