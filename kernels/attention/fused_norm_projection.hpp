// The QKV projection with rmsnorm fused into its A packing: each block of rows is normalised
// (x·inv_rms·w) straight into the block buffer the product reads, so h = rmsnorm(x) is never
// written out. Private to kernels/attention.
#pragma once

#include <cstddef>
#include <vector>

#include "attention/tile_gemm.hpp"
#include "tunekit/cpu.hpp"

namespace tunekit::kernels {

struct FusedNormScratch {
  attention_detail::Floats wpack;                 // B (d×n) packed in slivers
  attention_detail::Floats inv;                   // each row's 1/rms
  std::vector<attention_detail::Floats> ablocks;  // one normalised row block per thread
};

// c[tokens×n] = rmsnorm(x[tokens×d], w, eps) · b[d×n], rows split over `threads`.
void fused_norm_projection(cpu::ThreadPool& pool, int threads, std::size_t tokens, std::size_t d,
                           std::size_t n, float eps, const float* x, const float* w, const float* b,
                           float* c, FusedNormScratch& scratch);

}  // namespace tunekit::kernels
