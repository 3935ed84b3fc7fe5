// rmsnorm: row-wise y[r, j] = x[r, j] / sqrt(mean(x[r, :]²) + eps) · w[j] over a row-major
// rows×cols f32 matrix with a weight vector of length cols. Private to kernels/ and its tests.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "tunekit/cpu.hpp"
#include "tunekit/op.hpp"

namespace tunekit::kernels {

struct RmsnormArgs {
  std::size_t rows = 0;
  std::size_t cols = 0;
  float eps = 1e-6f;
  std::vector<float> x;  // rows×cols, row-major
  std::vector<float> w;  // cols
  std::vector<float> y;  // rows×cols, every candidate overwrites all of it
};

// rows and cols are each at most 2^24 and rows·cols at most 2^27 (x and y: 1 GiB).
inline constexpr std::int64_t kRmsnormMaxDim = std::int64_t{1} << 24;
inline constexpr std::int64_t kRmsnormMaxElements = std::int64_t{1} << 27;

struct RmsnormPlan {
  int vec = 1;  // partial-sum lanes of the sum of squares: 1 (serial), 4, 8 or 16
  std::size_t rows_per_task = 16;
  int threads = 1;
};

// Throws std::invalid_argument for an unsupported vec or rows_per_task == 0.
void rmsnorm_run(const RmsnormPlan& plan, cpu::ThreadPool& pool, RmsnormArgs& args);
void rmsnorm_reference(RmsnormArgs& args);  // in double

// Deterministic inputs: x uniform in [-1, 1), w uniform in [0.5, 1.5), y zero, eps 1e-6;
// input set 1 has other values.
RmsnormArgs make_rmsnorm_args(std::size_t rows, std::size_t cols, int input_set = 0);

std::unique_ptr<Op<RmsnormArgs>> make_rmsnorm_op_typed(cpu::ThreadPool& pool);
std::unique_ptr<OpBase> make_rmsnorm_op(cpu::ThreadPool& pool);

}  // namespace tunekit::kernels
