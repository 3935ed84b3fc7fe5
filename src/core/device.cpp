#include "tunekit/device.hpp"

namespace tunekit {
namespace {

// Runs a candidate synchronously on the calling thread: launch is the call, sync a no-op.
class HostTrial final : public Trial {
 public:
  HostTrial(Workload& workload, std::size_t index) : workload_(workload), index_(index) {}
  Outcome build() override { return workload_.build_candidate(index_); }
  Outcome prepare() override { return Outcome::success(); }
  void launch() override { workload_.run_candidate(index_); }
  void sync() override {}
  void release() override {}

 private:
  Workload& workload_;
  std::size_t index_;
};

}  // namespace

std::unique_ptr<Trial> Device::make_trial(Workload& workload, std::size_t index) {
  return std::make_unique<HostTrial>(workload, index);
}

}  // namespace tunekit
