// What an AttentionWorkspace holds: the steps' arguments of the unfused composition (their
// vectors reused call after call), and the per-thread scratch of the fused kernels. Private to
// kernels/attention.
#pragma once

#include <cstddef>
#include <vector>

#include "attention/attention.hpp"
#include "attention/fused_norm_projection.hpp"
#include "attention/tile_gemm.hpp"

namespace tunekit::kernels {

// One thread's scratch for the streaming kernel: a query block (scaled), its scores block,
// its output accumulator and running max and sum; the packed K_hᵀ blocks and V_h of the head
// it works on.
struct StreamSlot {
  attention_detail::Floats q, s, o, m, l;
  attention_detail::Floats kt, v;
};

// One thread's arguments for one head of the unfused composition. The scores and the
// probabilities are two tokens² buffers passed from step to step by swapping vectors.
struct HeadSlot {
  SgemmArgs scores;   // a = Q_h·(1/√hd), b = K_hᵀ, c = S
  SoftmaxArgs probs;  // x = S (lent from scores.c), y = P
  SgemmArgs context;  // a = P (lent from probs.y), b = V_h, c = O_h
};

struct AttentionWorkspace::Impl {
  RmsnormArgs norm;  // x, w lent from the caller; y = h
  SgemmArgs qkv;     // a = h (swapped with norm.y), b = Wqkv (lent), c = QKV
  SgemmArgs out;     // a = concat(O_h), b = Wo (lent), c = O·Wo
  std::vector<HeadSlot> heads;
  std::vector<StreamSlot> stream;
  FusedNormScratch fused;
};

}  // namespace tunekit::kernels
