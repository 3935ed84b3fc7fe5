// The built-in CUDA ops (sgemm, softmax, rmsnorm, conv2d), by name: `tunekit tune <op>
// --backend cuda` tunes these. Each op is a space op (Op::space): its candidates are the valid
// points of its Space, compiled by NVRTC through the context's module cache in the op's build
// step for the points a strategy proposes; every candidate is validated against the CPU
// reference. sgemm's space holds cuBLAS (cublasSgemm, cublasGemmEx algorithms) as library
// points, measured in every search.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "tunekit/cpu.hpp"
#include "tunekit/cuda.hpp"
#include "tunekit/op.hpp"
#include "tunekit/space.hpp"

namespace tunekit::cuda {

struct CatalogEntry {
  std::string name;
  std::string description;
  std::string example_shape;
  std::function<Space()> space;  // the tunable space the candidates come from
  // The op on `context` (null: for listing only; building or tuning it is a UsageError);
  // `pool` runs the CPU reference.
  std::function<std::unique_ptr<OpBase>(std::shared_ptr<Context> context, cpu::ThreadPool& pool)>
      make;
};

const std::vector<CatalogEntry>& builtin_ops();
// The entry for a name; a UsageError listing the CUDA ops otherwise.
const CatalogEntry& find_builtin_op(std::string_view name);

}  // namespace tunekit::cuda
