// Streaming attention (flash-attention style, on the CPU): per head and query block, a loop
// over key blocks computes the block's scores in a small buffer, folds them into a running
// max and sum (rescaling the output accumulator when the max grows) and accumulates P·V; the
// tokens×tokens scores are never materialised. Private to kernels/attention.
#pragma once

#include <cstddef>
#include <vector>

#include "attention/attention_workspace.hpp"
#include "tunekit/cpu.hpp"

namespace tunekit::kernels {

struct StreamingShape {
  std::size_t tokens, d, heads;
  std::size_t q_block, k_block;
  int threads;
  bool heads_parallel;  // heads over the threads (each head on one); else query blocks
};

// qkv: tokens×3d (Q | K | V columns); out: tokens×d, head h written to columns h·hd.. of
// every row. slots grows to the threads used.
void streaming_attention(const StreamingShape& shape, cpu::ThreadPool& pool, const float* qkv,
                         float* out, std::vector<StreamSlot>& slots);

// exp(x) on 16 lanes, the polynomial of softmax's two_pass_poly (within 2 ulps of std::exp on
// [-87, 0]; exactly 0 at and below -88, -inf included). Exposed for its test.
void exp16(const float* x, float* y);

}  // namespace tunekit::kernels
