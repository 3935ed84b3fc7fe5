// The program side of a spawned trial worker (DESIGN §11, docs/guide.md "Isolated trials"): a
// device whose driver state does not survive fork() (OpenCL, CUDA: Device::Workers::spawned)
// runs isolated trials in a fresh process of IsolationOptions::worker_program, started as
// `PROGRAM trial-worker --fd 3`. That program opens the device and the op the host names, makes
// the same inputs and reference, and answers each phase on the socket. `tunekit trial-worker`
// is one; a program of your own (with ops of your own) calls serve_trial_worker the same way.
#pragma once

#include <functional>
#include <string>

#include "tunekit/device.hpp"
#include "tunekit/op.hpp"

namespace tunekit {

// What the host names: its device (as Device::reopen() says), the op by name, and the host's
// store spec (where a source backend keeps its compile cache: the worker's builds are hits
// there after the host's compile pass).
struct TrialWorkerRequest {
  DeviceReopen device;
  std::string op;
  std::string store;
};
// The device and op a worker serves; the program keeps both alive while serving.
struct TrialWorkerTarget {
  Device* device = nullptr;
  const OpBase* op = nullptr;
};
// Opens the device and finds the op the request names; throws (UsageError, with why) when it
// cannot. Called once, before any trial.
using TrialWorkerOpen = std::function<TrialWorkerTarget(const TrialWorkerRequest& request)>;

// Serves the host on socket `fd` until it closes: the setup first (refused, with why, when the
// device or op cannot be opened or the op's candidate-set checksum differs from the host's),
// then one answer per phase. Returns the process's exit status (0 when the host closed).
int serve_trial_worker(int fd, const TrialWorkerOpen& open);

}  // namespace tunekit
