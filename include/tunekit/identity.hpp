// Identity (DESIGN §3): everything a stored choice must match to be served.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "tunekit/candidate.hpp"
#include "tunekit/device.hpp"
#include "tunekit/key.hpp"

namespace tunekit {

struct Toolchain {
  std::string tunekit_version;        // e.g. "0.1.0"
  std::string compiler;               // compiler id and version, e.g. "gcc 12.2.0"
  std::vector<std::string> runtimes;  // backend runtime versions, e.g. "hwloc 2.9.0"
};

// The toolchain this library was built with.
Toolchain this_toolchain();

// Application-set tags (compiler flags, power regime, load class), ordered by name.
using EnvironmentTags = std::map<std::string, std::string>;

struct Identity {
  DeviceIdentity device;
  Toolchain toolchain;
  EnvironmentTags environment;
  Numerics numerics_policy = Numerics::reassociates;
  std::string op;
  Digest candidates;  // the op's candidate-set checksum
  Key key;
  // What is decided: "kernel" for the kernel tuner's choices, a stack decision's scope
  // ("operator", "graph", "application") otherwise. Encoded only when not "kernel", so the
  // digests of kernel choices stored before the field existed do not change.
  std::string scope = "kernel";

  // Length-delimited canonical encoding of every field above; digest() names it.
  std::string encode() const;
  Digest digest() const;
};

// The device fields that identify a device (not its free memory or load).
std::string device_text(const DeviceIdentity& device);

}  // namespace tunekit
