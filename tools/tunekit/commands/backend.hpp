// The backends a CLI command runs on (--backend NAME, --device SELECTOR), one table: each entry
// names its built-in ops and opens a device session that makes them. `tune`, `tune --pending`
// and `ops` find backends here and never switch over them.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "tunekit/catalog.hpp"
#include "tunekit/cpu.hpp"
#include "tunekit/device.hpp"
#include "tunekit/op.hpp"

namespace tunekit::cli {

// One opened device and the built-in ops made for it.
class BackendSession {
 public:
  virtual ~BackendSession() = default;
  virtual Device& device() = 0;
  // This backend's op `name` on the device; nullptr when the backend has no op of that name.
  virtual std::unique_ptr<OpBase> make_op(std::string_view name, cpu::ThreadPool& pool) = 0;
};

struct BackendEntry {
  std::string name;   // --backend NAME
  std::string title;  // in messages: "CPU", "OpenCL", "CUDA"
  std::string description;
  // The built-in ops: name, description, example shape, and `make` building the op without a
  // device (for listing its key fields and space; nothing runs).
  std::function<std::vector<CatalogEntry>()> ops;
  // Opens the device `device_selector` picks ("" the first); UsageError when there is none,
  // saying why and what to install.
  std::function<std::unique_ptr<BackendSession>(const std::string& device_selector)> open;
};

const std::vector<BackendEntry>& backends();
// "" is cpu. UsageError naming the backends for an unknown name.
const BackendEntry& find_backend(std::string_view name);
// The backend's op `name` (UsageError listing the backend's ops otherwise).
CatalogEntry find_backend_op(const BackendEntry& backend, std::string_view name);

struct Backend {
  std::unique_ptr<BackendSession> session;
  std::unique_ptr<OpBase> op;
  Device& device() const { return session->device(); }
};

// Opens `backend` (see find_backend) on `device_selector` and builds its op `op_name`.
// UsageError for an unknown backend or op, --device on the CPU, or no device.
Backend open_backend(const std::string& backend, const std::string& device_selector,
                     std::string_view op_name, cpu::ThreadPool& pool);

}  // namespace tunekit::cli
