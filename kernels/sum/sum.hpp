// sum: reduction of n f32 values to one f32 value; serial, pairwise, and blocked with 4-16
// accumulators over 1..N threads. Private to kernels/ and its tests.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "tunekit/cpu.hpp"
#include "tunekit/op.hpp"

namespace tunekit::kernels {

struct SumArgs {
  std::size_t n = 0;
  std::vector<float> x;
  float result = 0.0f;  // every candidate overwrites it
};

// n is at most 2^28 (1 GiB of input).
inline constexpr std::int64_t kSumMaxN = std::int64_t{1} << 28;

enum class SumAlgo {
  serial,    // one running sum, in order
  pairwise,  // recursive halves down to blocks of 128 summed in order
  blocked,   // acc interleaved running sums per thread's chunk; chunks combined in order
};
std::string_view to_string(SumAlgo algo);

struct SumPlan {
  SumAlgo algo = SumAlgo::serial;
  int acc = 1;  // blocked: 4, 8 or 16 accumulators
  int threads = 1;
};

// Throws std::invalid_argument for an unsupported acc with blocked.
void sum_run(const SumPlan& plan, cpu::ThreadPool& pool, SumArgs& args);
void sum_reference(SumArgs& args);  // in double

// Deterministic inputs: x uniform in [-1, 1), result zero; input set 1 has other values.
SumArgs make_sum_args(std::size_t n, int input_set = 0);

std::unique_ptr<Op<SumArgs>> make_sum_op_typed(cpu::ThreadPool& pool);
std::unique_ptr<OpBase> make_sum_op(cpu::ThreadPool& pool);

}  // namespace tunekit::kernels
