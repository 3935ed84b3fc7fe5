// The catalog of built-in stack workloads (tunekit/stack_catalog.hpp).
#include "tunekit/stack_catalog.hpp"

#include "attention/attention_stack.hpp"
#include "tunekit/errors.hpp"

namespace tunekit {
namespace {

stack::StackSummary decide_attention(Tuner& tuner, stack::StackController& controller,
                                     cpu::ThreadPool& pool, std::string_view shape) {
  kernels::AttentionStack block(tuner, controller, pool, kernels::parse_attention_shape(shape));
  return kernels::summarize(block.decide());
}

}  // namespace

const std::vector<StackWorkloadEntry>& builtin_stack_workloads() {
  static const std::vector<StackWorkloadEntry> entries{
      {"attention",
       "a transformer attention block (rmsnorm, QKV, per-head QKᵀ, softmax, ·V, output "
       "projection, residual): kernel choices per op, fused graphs (streaming attention, rmsnorm "
       "fused into the QKV packing), thread and block plans",
       "tokens=2048,d=512", decide_attention},
  };
  return entries;
}

const StackWorkloadEntry& find_stack_workload(std::string_view name) {
  std::string known;
  for (const StackWorkloadEntry& entry : builtin_stack_workloads()) {
    if (entry.name == name) return entry;
    known += (known.empty() ? "" : ", ") + entry.name;
  }
  throw UsageError("unknown stack workload '" + std::string(name) +
                   "'; the built-in ones are: " + known);
}

}  // namespace tunekit
