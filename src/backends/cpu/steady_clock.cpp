#include <chrono>

#include "backends/cpu/run_queue_wait.hpp"
#include "tunekit/cpu.hpp"

namespace tunekit::cpu {
namespace {
long long now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}
}  // namespace

class SteadyClock::Waits : public detail::RunQueueWait {};

SteadyClock::SteadyClock() : waits_(std::make_unique<Waits>()) {}
SteadyClock::~SteadyClock() = default;

// The waits are read before the start and after the end, so their cost is not in the reading.
void SteadyClock::begin() {
  waits_->start();
  start_ns_ = now_ns();
}
double SteadyClock::end() {
  const double seconds = static_cast<double>(now_ns() - start_ns_) * 1e-9;
  waited_ = waits_->since_start();
  return seconds;
}

}  // namespace tunekit::cpu
