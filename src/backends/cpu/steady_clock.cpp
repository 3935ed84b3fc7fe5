#include <chrono>

#include "tunekit/cpu.hpp"

namespace tunekit::cpu {
namespace {
long long now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}
}  // namespace

void SteadyClock::begin() {
  start_ns_ = now_ns();
}
double SteadyClock::end() {
  return static_cast<double>(now_ns() - start_ns_) * 1e-9;
}

}  // namespace tunekit::cpu
