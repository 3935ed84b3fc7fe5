// softmax: row-wise y[r, :] = exp(x[r, :] - max) / sum(exp(x[r, :] - max)) over a row-major
// rows×cols f32 matrix. Private to kernels/ and its tests.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "tunekit/cpu.hpp"
#include "tunekit/op.hpp"

namespace tunekit::kernels {

struct SoftmaxArgs {
  std::size_t rows = 0;
  std::size_t cols = 0;
  std::vector<float> x;  // rows×cols, row-major
  std::vector<float> y;  // rows×cols, every candidate overwrites all of it
};

// rows and cols are each at most 2^24 and rows·cols at most 2^27 (x and y: 1 GiB).
inline constexpr std::int64_t kSoftmaxMaxDim = std::int64_t{1} << 24;
inline constexpr std::int64_t kSoftmaxMaxElements = std::int64_t{1} << 27;

enum class SoftmaxAlgo {
  two_pass,       // max; y = exp(x - max) with std::exp; sum y; scale
  two_pass_poly,  // the same with an inlined polynomial exp that vectorises (approximate)
  online,         // running max with a rescaled running sum in one pass; then exp and scale
};
std::string_view to_string(SoftmaxAlgo algo);

struct SoftmaxPlan {
  SoftmaxAlgo algo = SoftmaxAlgo::two_pass;
  int vec = 1;  // partial-sum lanes: 1 (serial), 4, 8 or 16
  std::size_t rows_per_task = 16;
  int threads = 1;
};

// Throws std::invalid_argument for an unsupported vec or rows_per_task == 0.
void softmax_run(const SoftmaxPlan& plan, cpu::ThreadPool& pool, SoftmaxArgs& args);
void softmax_reference(SoftmaxArgs& args);  // in double

// Deterministic inputs: x uniform in [-1, 1), y zero; input set 1 has other values.
SoftmaxArgs make_softmax_args(std::size_t rows, std::size_t cols, int input_set = 0);

std::unique_ptr<Op<SoftmaxArgs>> make_softmax_op_typed(cpu::ThreadPool& pool);
std::unique_ptr<OpBase> make_softmax_op(cpu::ThreadPool& pool);

}  // namespace tunekit::kernels
