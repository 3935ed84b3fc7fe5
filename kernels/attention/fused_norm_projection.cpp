// The fused rmsnorm + QKV projection: each row's 1/rms first, B packed once per call; then,
// one kc-deep panel of B at a time, row blocks normalised while being packed into a per-thread
// block buffer (the layout the micro-kernel reads) and multiplied against the panel.
#include "attention/fused_norm_projection.hpp"

#include <algorithm>
#include <cmath>

#include "common.hpp"

namespace tunekit::kernels {
namespace {

using namespace attention_detail;

constexpr std::size_t kRowBlock = 96;  // rows per block: a 96×256 block is 96 KiB (L2)
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

// Normalises rows [r0, r0 + rows) × columns [pc, pc + kc) of x (row r's 1/rms in inv[r])
// while packing them into slivers of kMr rows, column by column (row i of sliver s, column p
// at block[s·kc + p·kMr + i]), the layout the micro-kernel's broadcasts walk in order; rows
// past the end are zero.
void normalise_block(const float* x, const float* w, const float* inv, std::size_t d,
                     std::size_t r0, std::size_t rows, std::size_t pc, std::size_t kc,
                     float* block) {
  for (std::size_t s = 0; s < rows; s += kMr) {
    float* sliver = block + s * kc;
    for (std::size_t i = 0; i < static_cast<std::size_t>(kMr); ++i) {
      if (s + i >= rows) {
        for (std::size_t p = 0; p < kc; ++p) sliver[p * kMr + i] = 0.0f;
        continue;
      }
      const float* src = x + (r0 + s + i) * d + pc;
      const float r = inv[r0 + s + i];
      for (std::size_t p = 0; p < kc; ++p) sliver[p * kMr + i] = src[p] * r * w[pc + p];
    }
  }
}

// C[0:rows, 0:n] (=|+=) the packed block (kc columns) · the packed panel of B's rows
// [pc, pc + kc) (its slivers kc·kNr apart).
void block_times_panel(std::size_t rows, std::size_t n, std::size_t pc, std::size_t kc,
                       const float* block, const float* panel, float* c) {
  for (std::size_t j = 0; j < n; j += kNr) {
    const float* sliver = panel + (j / kNr) * kc * kNr;
    const std::size_t nr = std::min<std::size_t>(kNr, n - j);
    for (std::size_t i = 0; i < rows; i += kMr) {
      micro_tile<true>(kc, block + i * kc, 0, sliver, c + i * n + j, n,
                       std::min<std::size_t>(kMr, rows - i), nr, pc != 0);
    }
  }
}

}  // namespace

void fused_norm_projection(cpu::ThreadPool& pool, int threads, std::size_t tokens, std::size_t d,
                           std::size_t n, float eps, const float* x, const float* w, const float* b,
                           float* c, FusedNormScratch& scratch) {
  // B packed panel by panel (kc rows each, as sgemm's jpi order packs it), so one panel's
  // slivers are contiguous.
  const std::size_t slivers = ceil_div(n, kNr), padded = slivers * kNr;
  float* wpack = at_least(scratch.wpack, padded * d);
  run_tasks(pool, slivers, threads, [&](std::size_t s) {
    const std::size_t cols = std::min<std::size_t>(kNr, n - s * kNr);
    for (std::size_t pc = 0; pc < d; pc += kDepth) {
      const std::size_t kc = std::min(kDepth, d - pc);
      pack_b_rows(b + pc * n + s * kNr, n, kc, cols, wpack + pc * padded + s * kc * kNr);
    }
  });
  float* inv = at_least(scratch.inv, tokens);
  run_row_tasks(pool, tokens, 64, threads,
                [&](std::size_t r) { inv[r] = inverse_rms(x + r * d, d, eps); });
  const std::size_t blocks = ceil_div(tokens, kRowBlock);
  const std::size_t tasks = std::min<std::size_t>(std::max(1, threads), blocks);
  if (scratch.ablocks.size() < tasks) scratch.ablocks.resize(tasks);
  // GotoBLAS order: one kc-deep panel of B (kc×n, L2-resident) at a time, every row block
  // against it; task t takes every tasks-th block, so it alone uses ablocks[t].
  for (std::size_t pc = 0; pc < d; pc += kDepth) {
    const std::size_t kc = std::min(kDepth, d - pc);
    run_tasks(pool, tasks, static_cast<int>(tasks), [&](std::size_t t) {
      float* block = at_least(scratch.ablocks[t], kRowBlock * kDepth);
      for (std::size_t blk = t; blk < blocks; blk += tasks) {
        const std::size_t r0 = blk * kRowBlock, rows = std::min(kRowBlock, tokens - r0);
        normalise_block(x, w, inv, d, r0, rows, pc, kc, block);
        block_times_panel(rows, n, pc, kc, block, wpack + pc * padded, c + r0 * n);
      }
    });
  }
}

}  // namespace tunekit::kernels
