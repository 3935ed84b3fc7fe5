// tunekit trial-worker --fd N
// Not for people: a spawned trial worker (docs/guide.md "Isolated trials"). A tuner timing on a
// device whose driver state does not survive fork() (OpenCL, CUDA) under --isolation worker
// starts this executable so; it opens the device and the op the host names on socket N and
// runs the candidates' phases there, so a candidate that crashes or hangs takes only it down.
#include <memory>
#include <string>

#include <CLI/CLI.hpp>

#include "commands/backend.hpp"
#include "commands/bounds.hpp"
#include "commands/commands.hpp"
#include "commands/verbosity.hpp"
#include "tunekit/cpu.hpp"
#include "tunekit/errors.hpp"
#include "tunekit/trial_worker.hpp"

namespace tunekit::cli {
namespace {

struct TrialWorkerCommand {
  int fd = -1;
};

// The device and op a host names, opened once; alive while the worker serves.
class TrialWorkerOps {
 public:
  explicit TrialWorkerOps(Log log) : log_(std::move(log)), pool_(0) {}
  TrialWorkerTarget open(const TrialWorkerRequest& r) {
    // The host's store: a source backend's compile cache beside it has the host's builds.
    ops_ = std::make_unique<BackendOps>(
        r.device.backend, BackendOpen{r.device.device, r.device.arch, r.store, log_}, pool_);
    const OpBase* op = ops_->find(r.op);
    if (!op) throw UsageError("the " + r.device.backend + " backend has no op " + r.op);
    return {&ops_->device(), op};
  }

 private:
  Log log_;
  cpu::ThreadPool pool_;
  std::unique_ptr<BackendOps> ops_;
};

}  // namespace

void register_trial_worker(CLI::App& app) {
  auto command = std::make_shared<TrialWorkerCommand>();
  CLI::App* worker = app.add_subcommand(
      "trial-worker",
      "(internal) Serve isolated trials for a tuner on another process's socket; started by "
      "tunekit itself under --isolation worker on OpenCL and CUDA");
  worker->group("");  // not listed in --help
  worker->add_option("--fd", command->fd, "The socket's descriptor")
      ->required()
      ->transform(integer_in(0, 1 << 20));
  worker->callback([command, worker] {
    TrialWorkerOps ops(tool_log(*worker));
    const int status =
        serve_trial_worker(command->fd, [&](const TrialWorkerRequest& r) { return ops.open(r); });
    if (status != 0) throw CLI::RuntimeError(status);  // the host reads the socket, not this
  });
}

}  // namespace tunekit::cli
