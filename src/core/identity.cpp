#include "tunekit/identity.hpp"

#include <string>

namespace tunekit {
namespace {

// Appends "<len>:<text>" so no two field sequences share an encoding.
void put(std::string& out, std::string_view text) {
  out += std::to_string(text.size());
  out += ':';
  out += text;
}

}  // namespace

Toolchain this_toolchain() {
  Toolchain t;
  t.tunekit_version = TUNEKIT_VERSION;
#if defined(__clang__)
  t.compiler = std::string("clang ") + __clang_version__;
#elif defined(__GNUC__)
  t.compiler = "gcc " + std::to_string(__GNUC__) + "." + std::to_string(__GNUC_MINOR__) + "." +
               std::to_string(__GNUC_PATCHLEVEL__);
#else
  t.compiler = "unknown";
#endif
  return t;
}

std::string device_text(const DeviceIdentity& d) {
  std::string out;
  for (std::string_view field : {std::string_view(d.backend), std::string_view(d.vendor),
                                 std::string_view(d.product), std::string_view(d.architecture)})
    put(out, field);
  put(out, std::to_string(d.features.size()));
  for (const auto& f : d.features) put(out, f);
  // Not memory_bytes: a machine's memory size does not change which kernel is fastest, and it
  // is not stable (hwloc reads a virtual machine's NUMA MemTotal, which was seen moving by
  // 512 MB between two processes a few seconds apart): in the digest it made stored choices,
  // device profiles and device locks miss their own machine.
  for (std::uint64_t n :
       {static_cast<std::uint64_t>(d.compute_units), d.l1d_bytes, d.l2_bytes, d.l3_bytes})
    put(out, std::to_string(n));
  put(out, d.driver);
  return out;
}

std::string Identity::encode() const {
  std::string out = "tunekit-identity-1;";
  put(out, device_text(device));
  put(out, toolchain.tunekit_version);
  put(out, toolchain.compiler);
  put(out, std::to_string(toolchain.runtimes.size()));
  for (const auto& r : toolchain.runtimes) put(out, r);
  put(out, std::to_string(environment.size()));
  for (const auto& [name, value] : environment) {
    put(out, name);
    put(out, value);
  }
  put(out, to_string(numerics_policy));
  put(out, op);
  put(out, candidates.hex());
  put(out, key.encode());
  if (scope != "kernel") {
    put(out, "scope");
    put(out, scope);
  }
  return out;
}

Digest Identity::digest() const {
  return Digest::of(encode());
}

}  // namespace tunekit
