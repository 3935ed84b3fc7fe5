// The fused rmsnorm + QKV projection: B packed once per call, then row blocks normalised into
// a per-thread block buffer and multiplied in kc-deep steps (a kc×32 sliver of B stays in L1
// while the block's register tiles pass over it).
#include "attention/fused_norm_projection.hpp"

#include <algorithm>
#include <cmath>

#include "common.hpp"

namespace tunekit::kernels {
namespace {

using namespace attention_detail;

constexpr std::size_t kRowBlock = 96;  // rows per block: 96×d floats stay in L2 up to d = 4096
constexpr std::size_t kDepth = 256;    // kc: a 256×32 sliver of B is 32 KiB (L1 is 48 KiB)

// The row's 1/sqrt(mean(x²) + eps), its sum of squares in 16 lanes (as rmsnorm's v16).
float inverse_rms(const float* x, std::size_t d, float eps) {
  float lanes[16] = {};
  std::size_t j = 0;
  for (; j + 16 <= d; j += 16) {
    for (int l = 0; l < 16; ++l) lanes[l] += x[j + l] * x[j + l];
  }
  float tail = 0.0f;
  for (; j < d; ++j) tail += x[j] * x[j];
  const float mean = (combine_lanes(lanes) + tail) / static_cast<float>(d);
  return 1.0f / std::sqrt(mean + eps);
}

// Normalises rows [r0, r0 + rows) of x into block (d floats a row), zero rows up to a whole
// register tile.
void normalise_block(const float* x, const float* w, std::size_t d, float eps, std::size_t r0,
                     std::size_t rows, float* block) {
  for (std::size_t i = 0; i < rows; ++i) {
    const float* src = x + (r0 + i) * d;
    const float inv = inverse_rms(src, d, eps);
    float* dst = block + i * d;
    for (std::size_t p = 0; p < d; ++p) dst[p] = src[p] * inv * w[p];
  }
  std::fill(block + rows * d, block + round_up(rows, kMr) * d, 0.0f);
}

}  // namespace

void fused_norm_projection(cpu::ThreadPool& pool, int threads, std::size_t tokens, std::size_t d,
                           std::size_t n, float eps, const float* x, const float* w, const float* b,
                           float* c, FusedNormScratch& scratch) {
  const std::size_t slivers = ceil_div(n, kNr);
  float* wpack = at_least(scratch.wpack, slivers * kNr * d);
  run_tasks(pool, slivers, threads, [&](std::size_t s) {
    const std::size_t cols = std::min<std::size_t>(kNr, n - s * kNr);
    pack_b_rows(b + s * kNr, n, d, cols, wpack + s * d * kNr);
  });
  const std::size_t blocks = ceil_div(tokens, kRowBlock);
  const std::size_t tasks = std::min<std::size_t>(std::max(1, threads), blocks);
  if (scratch.ablocks.size() < tasks) scratch.ablocks.resize(tasks);
  // Static split: task t takes every tasks-th block, so it alone uses ablocks[t].
  run_tasks(pool, tasks, static_cast<int>(tasks), [&](std::size_t t) {
    float* block = at_least(scratch.ablocks[t], kRowBlock * d);
    for (std::size_t blk = t; blk < blocks; blk += tasks) {
      const std::size_t r0 = blk * kRowBlock, rows = std::min(kRowBlock, tokens - r0);
      normalise_block(x, w, d, eps, r0, rows, block);
      for (std::size_t pc = 0; pc < d; pc += kDepth) {
        const std::size_t kc = std::min(kDepth, d - pc);
        block_product(rows, n, kc, block + pc, d, wpack, d, pc, c + r0 * n, n, pc != 0);
      }
    }
  });
}

}  // namespace tunekit::kernels
