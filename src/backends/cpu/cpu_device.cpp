#include <algorithm>
#include <cmath>

#include "backends/cpu/thread_settle.hpp"
#include "tunekit/cpu.hpp"

namespace tunekit::cpu {
namespace {
std::size_t evictor_bytes(const DeviceIdentity& id) {
  std::uint64_t llc = std::max({id.l3_bytes, id.l2_bytes, std::uint64_t{8} << 20});
  return static_cast<std::size_t>(2 * llc);
}
}  // namespace

CpuDevice::CpuDevice() : identity_(host_identity()), evictor_(evictor_bytes(identity_)) {}

double CpuDevice::settle(double limit_seconds) {
  return limit_seconds > 0 ? detail::settle_threads(limit_seconds, co_runners_) : 0;
}

std::optional<double> CpuDevice::cross_cpu_round_trip() {
  const double ns = cross_cpu_round_trip_ns();
  return std::isnan(ns) ? std::nullopt : std::optional<double>(ns);
}

}  // namespace tunekit::cpu
