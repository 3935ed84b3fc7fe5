// The built-in stack workloads, by name (`tunekit stack tune <name>`): multi-op workloads
// whose operator, graph and application decisions tunekit makes.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "tunekit/cpu.hpp"
#include "tunekit/stack.hpp"
#include "tunekit/stack_summary.hpp"
#include "tunekit/tuner.hpp"

namespace tunekit {

struct StackWorkloadEntry {
  std::string name;
  std::string description;
  std::string example_shape;  // e.g. "tokens=2048,d=512"
  // Decides every level at `shape` (tuning as the tuner's and the controller's modes say)
  // and summarises the decisions. A malformed shape is a UsageError.
  std::function<stack::StackSummary(Tuner& tuner, stack::StackController& controller,
                                    cpu::ThreadPool& pool, std::string_view shape)>
      decide;
};

const std::vector<StackWorkloadEntry>& builtin_stack_workloads();
// The entry for a name; a UsageError listing the known names otherwise.
const StackWorkloadEntry& find_stack_workload(std::string_view name);

}  // namespace tunekit
