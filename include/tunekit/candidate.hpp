// Candidate: one implementation an op can choose, with what the tuner needs to rank it.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "tunekit/key.hpp"
#include "tunekit/value.hpp"

namespace tunekit {

// How a candidate's results relate to the default's (DESIGN §3).
enum class Numerics {
  bitwise,       // same results as the default
  reassociates,  // changes summation order
  approximate,   // changes values beyond reordering
};
std::string_view to_string(Numerics numerics);
std::optional<Numerics> numerics_from_string(std::string_view name);

struct Candidate {
  std::string name;  // stable; part of the candidate-set checksum
  int version = 1;   // bump when the implementation changes
  Config config;
  Numerics numerics = Numerics::bitwise;
  int preference = 0;  // lower wins ties (after the default)
  int group = 0;       // plan group: groups are measured in ascending order
  std::size_t scratch_bytes = 0;
  // Declines a key by returning a reason (that is `rejected`, not a failure). Empty: serves all.
  std::function<std::optional<std::string>(const Key&)> eligible;
};

}  // namespace tunekit
