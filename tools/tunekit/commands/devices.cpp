// tunekit devices [--json]: every backend's devices (the host CPU, each OpenCL device, each CUDA
// device). A backend without a runtime or a device lists none and says why; the exit status is 0.
#include <iostream>
#include <string>

#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "commands/commands.hpp"
#include "tunekit/cpu.hpp"
#include "tunekit/cuda.hpp"
#include "tunekit/opencl.hpp"

namespace tunekit::cli {
namespace {

using Json = nlohmann::ordered_json;

std::string mib(std::uint64_t bytes) {
  return fmt::format("{} MiB", bytes >> 20);
}

Json identity_json(const DeviceIdentity& id) {
  Json j;
  j["backend"] = id.backend;
  j["vendor"] = id.vendor;
  j["product"] = id.product;
  j["architecture"] = id.architecture;
  j["compute_units"] = id.compute_units;
  j["memory_bytes"] = id.memory_bytes;
  j["driver"] = id.driver;
  return j;
}

Json cuda_json(const cuda::DeviceInfo& d) {
  Json j = identity_json(d.identity);
  j["index"] = d.index;
  j["compute_capability"] = fmt::format("{}.{}", d.cc_major, d.cc_minor);
  j["sm_count"] = d.sm_count;
  j["l2_bytes"] = d.l2_bytes;
  j["shared_per_block_optin_bytes"] = d.shared_per_block_optin;
  j["max_threads_per_block"] = d.max_threads_per_block;
  return j;
}

// The CUDA section: the devices, or why there are none (no driver: the loader's message).
void print_cuda(const std::vector<cuda::DeviceInfo>& devices, const cuda::DriverStatus& driver) {
  const std::string nvrtc = cuda::nvrtc_version();
  std::cout << "cuda: (NVRTC " << (nvrtc.empty() ? "not found" : nvrtc) << ")\n";
  if (devices.empty()) {
    std::cout << "  no CUDA device (" << (driver.loaded ? "the driver lists none" : driver.message)
              << ")\n";
    return;
  }
  for (const cuda::DeviceInfo& d : devices) {
    std::cout << fmt::format(
        "  {}: {} — compute capability {}.{} ({}), {} SMs, {}, L2 {} MiB\n     driver {}\n",
        d.index, d.identity.product, d.cc_major, d.cc_minor, d.arch(), d.sm_count,
        mib(d.global_memory), d.l2_bytes >> 20, d.identity.driver);
  }
  std::cout << "Pick one with 'tunekit tune OP --backend cuda --device INDEX|NAME'.\n";
}

void run_devices(bool json) {
  const cuda::DriverStatus driver = cuda::driver_status();
  const std::vector<cuda::DeviceInfo> cuda_devices = cuda::list_devices();
  const DeviceIdentity host = cpu::host_identity();
  const std::vector<opencl::DeviceInfo> devices = opencl::list_devices();
  if (json) {
    Json out;
    out["cpu"] = Json::array({identity_json(host)});
    Json cl = Json::array();
    for (const opencl::DeviceInfo& d : devices) {
      Json j = identity_json(d.identity);
      j["index"] = d.index;
      j["platform"] = d.platform;
      j["opencl_version"] = d.opencl_version;
      j["local_memory_bytes"] = d.local_memory;
      j["max_allocation_bytes"] = d.max_allocation;
      j["max_work_group"] = d.max_work_group;
      cl.push_back(std::move(j));
    }
    out["opencl"] = std::move(cl);
    Json cu = Json::array();
    for (const cuda::DeviceInfo& d : cuda_devices) cu.push_back(cuda_json(d));
    out["cuda"] = std::move(cu);
    out["cuda_driver"] = Json{{"loaded", driver.loaded},
                              {"version", driver.version},
                              {"message", driver.message},
                              {"nvrtc", cuda::nvrtc_version()}};
    std::cout << out.dump(2) << '\n';
    return;
  }
  std::cout << "cpu:\n"
            << fmt::format("  0: {} ({}, {} cores, {})\n", host.product, host.architecture,
                           host.compute_units, mib(host.memory_bytes));
  std::cout << "opencl:\n";
  if (devices.empty()) {
    std::cout << "  no OpenCL platform found (install an OpenCL runtime, e.g. pocl-opencl-icd; "
                 "check OCL_ICD_VENDORS)\n";
  }
  for (const opencl::DeviceInfo& d : devices) {
    std::cout << fmt::format(
        "  {}: {} — {} ({})\n     driver {}, {} compute units, global {}, local {} KiB, max "
        "allocation {}, max work-group {}\n",
        d.index, d.identity.product, d.identity.vendor, d.platform, d.identity.driver,
        d.identity.compute_units, mib(d.global_memory), d.local_memory >> 10, mib(d.max_allocation),
        d.max_work_group);
  }
  if (!devices.empty())
    std::cout << "Pick one with 'tunekit tune OP --backend opencl --device INDEX|NAME'.\n";
  print_cuda(cuda_devices, driver);
}

}  // namespace

void register_devices(CLI::App& app) {
  auto json = std::make_shared<bool>(false);
  CLI::App* devices = app.add_subcommand(
      "devices", "List every backend's devices (the CPU, each OpenCL device, each CUDA device)");
  devices->add_flag("--json", *json, "Write the list as JSON");
  devices->callback([json] { run_devices(*json); });
}

}  // namespace tunekit::cli
