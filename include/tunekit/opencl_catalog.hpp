// The built-in OpenCL ops (sgemm, softmax, rmsnorm, conv2d), by name: `tunekit tune <op>
// --backend opencl` tunes these. Each op is a space op (Op::space): its candidates are the
// valid points of its Space, built lazily through the op's build step (the program compiled
// through the context's cache) for the points a strategy proposes; every candidate is
// validated against the CPU reference.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "tunekit/cpu.hpp"
#include "tunekit/op.hpp"
#include "tunekit/opencl.hpp"
#include "tunekit/space.hpp"

namespace tunekit::opencl {

struct CatalogEntry {
  std::string name;
  std::string description;
  std::string example_shape;
  std::function<Space()> space;  // the tunable space the candidates come from
  // The op on `context`; `pool` runs the CPU reference.
  std::function<std::unique_ptr<OpBase>(std::shared_ptr<Context> context, cpu::ThreadPool& pool)>
      make;
};

const std::vector<CatalogEntry>& builtin_ops();
// The entry for a name; a UsageError listing the OpenCL ops otherwise.
const CatalogEntry& find_builtin_op(std::string_view name);

}  // namespace tunekit::opencl
