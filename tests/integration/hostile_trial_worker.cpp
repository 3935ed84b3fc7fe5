// A spawned trial worker program for the isolation tests (spawned_worker_test.cpp): serves the
// hostile op its host names ("hostile:segfault,hang,...", fakes/hostile_op.hpp) on a CPU device,
// as `tunekit trial-worker` serves the built-in ops on an OpenCL or CUDA device.
#include <memory>
#include <string>
#include <string_view>

#include "fakes/hostile_op.hpp"
#include "tunekit/cpu.hpp"
#include "tunekit/errors.hpp"
#include "tunekit/trial_worker.hpp"

int main(int argc, char** argv) {
  if (argc != 4 || std::string_view(argv[1]) != "trial-worker" ||
      std::string_view(argv[2]) != "--fd")
    return 64;
  tunekit::cpu::CpuDevice device;
  std::unique_ptr<tunekit::OpBase> op;
  return tunekit::serve_trial_worker(
      std::stoi(argv[3]), [&](const tunekit::DeviceReopen& reopen, std::string_view name) {
        if (reopen.backend != "cpu")
          throw tunekit::UsageError("this program opens only the cpu backend");
        op = tunekit::testing::hostile_op_named(std::string(name));
        if (!op) throw tunekit::UsageError("no op " + std::string(name) + " here");
        return tunekit::TrialWorkerTarget{&device, op.get()};
      });
}
