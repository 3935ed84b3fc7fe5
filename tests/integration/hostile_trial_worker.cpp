// A spawned trial worker program for the isolation tests (spawned_worker_test.cpp): serves the
// hostile op its host names ("hostile:segfault,hang,...", fakes/hostile_op.hpp) on a CPU device,
// as `tunekit trial-worker` serves the built-in ops on an OpenCL or CUDA device.
#include <cstdlib>
#include <filesystem>
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
  return tunekit::serve_trial_worker(std::stoi(argv[3]), [&](const tunekit::TrialWorkerRequest& r) {
    if (r.device.backend != "cpu")
      throw tunekit::UsageError("this program opens only the cpu backend");
    // A candidate left the device unusable (fakes/hostile_op.hpp "break_device").
    const char* marker = std::getenv("TUNEKIT_TEST_BROKEN_DEVICE");
    if (marker && std::filesystem::exists(marker))
      throw tunekit::UsageError("the device is broken");
    op = tunekit::testing::hostile_op_named(r.op);
    if (!op) throw tunekit::UsageError("no op " + r.op + " here");
    return tunekit::TrialWorkerTarget{&device, op.get()};
  });
}
