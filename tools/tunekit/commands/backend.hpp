// The backends a CLI command runs on (--backend NAME, --device SELECTOR), one table: each entry
// names its built-in ops and opens a device session that makes them. `tune`, `tune --pending`
// and `ops` find backends here and never switch over them.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "tunekit/catalog.hpp"
#include "tunekit/cpu.hpp"
#include "tunekit/device.hpp"
#include "tunekit/log.hpp"
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

// What opening a device takes from the command line.
struct BackendOpen {
  std::string device;  // --device: an index or part of a name ("" the first)
  std::string arch;    // --arch: the architecture a source backend compiles for ("" the device's)
  std::string store;   // the store spec: a backend's compile cache goes beside a store on disk
  Log log;             // where a backend's warnings go (a compile cache file refused, ...)
};

struct BackendEntry {
  std::string name;   // --backend NAME
  std::string title;  // in messages: "CPU", "OpenCL", "CUDA"
  std::string description;
  // The built-in ops: name, description, example shape, and `make` building the op without a
  // device (for listing its key fields and space; nothing runs).
  std::function<std::vector<CatalogEntry>()> ops;
  // Opens the device `how.device` picks; UsageError when there is none, saying why and what to
  // install, and for options this backend does not take (--device on the CPU, --arch but on
  // CUDA).
  std::function<std::unique_ptr<BackendSession>(const BackendOpen& how)> open;
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

// A backend's device and its built-in ops by name, each built once when first asked for
// (`tune --pending` and `worker` meet ops by the names stored or queued).
class BackendOps {
 public:
  BackendOps(const std::string& backend, const BackendOpen& how, cpu::ThreadPool& pool)
      : pool_(pool), session_(find_backend(backend).open(how)) {}
  Device& device() { return session_->device(); }
  // The op `name`; nullptr when this backend has none of that name.
  const OpBase* find(std::string_view name);

 private:
  cpu::ThreadPool& pool_;
  std::unique_ptr<BackendSession> session_;
  std::map<std::string, std::unique_ptr<OpBase>, std::less<>> ops_;
};

// Opens `backend` (see find_backend) as `how` says and builds its op `op_name`. UsageError for
// an unknown backend or op, --device on the CPU, --arch off CUDA, or no device.
Backend open_backend(const std::string& backend, const BackendOpen& how, std::string_view op_name,
                     cpu::ThreadPool& pool);

}  // namespace tunekit::cli
