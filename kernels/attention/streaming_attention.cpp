// Streaming attention: packing of a head's operands, the online softmax over one scores
// block, the query-block loop, and the split over threads (heads or query blocks).
#include "attention/streaming_attention.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "common.hpp"
#include "exp_poly.hpp"

namespace tunekit::kernels {
namespace {

using namespace attention_detail;
using U16 = std::uint32_t __attribute__((vector_size(64)));

// std::bit_cast of vector types trips GCC 12's -Wstrict-aliasing at -O2; memcpy does not.
template <class To, class From>
To bits_as(const From& from) {
  static_assert(sizeof(To) == sizeof(From));
  To to;
  std::memcpy(&to, &from, sizeof to);
  return to;
}

V16 splat(float v) {
  return V16{} + v;
}

// By reference: vectors by value change the ABI without AVX-512 (-Wpsabi).
void exp_lanes(const V16& in, V16& out) {
  // Clamp at -88 so k stays in [-127, 0]: 2^k's bits are then zero, the result exactly 0.
  const V16 lo = splat(exp_poly::kMin);
  const V16 x = in < lo ? lo : in;
  const V16 shifter = splat(exp_poly::kShifter);
  const V16 t = x * exp_poly::kLog2e + shifter;
  const V16 k = t - shifter;
  const V16 r = (x - k * exp_poly::kLn2Hi) - k * exp_poly::kLn2Lo;
  const V16 p = exp_poly::of_reduced(r);
  // t and the shifter share a binade with a unit ulp: their bit patterns differ by k.
  const U16 k_bits = bits_as<U16>(t) - bits_as<U16>(shifter);
  const U16 two_k_bits = (k_bits + 127u) << 23;
  out = p * bits_as<V16>(two_k_bits);
}

float horizontal_max(const V16& v) {
  float lanes[kLanes];
  std::memcpy(lanes, &v, sizeof lanes);
  return *std::max_element(lanes, lanes + kLanes);
}

float horizontal_sum(const V16& v) {
  float lanes[kLanes];
  std::memcpy(lanes, &v, sizeof lanes);
  return combine_lanes(lanes);
}

// Folds one row of a scores block (n valid values, the row padded to a multiple of 16) into
// the running max m and sum l; overwrites the row with exp(s - m_new) (0 in the padding) and
// returns the factor the row's output accumulator must be scaled by.
float online_softmax_row(float* s, std::size_t n, float& m, float& l) {
  const std::size_t padded = round_up(n, kLanes);
  std::fill(s + n, s + padded, -std::numeric_limits<float>::infinity());
  V16 vmax = splat(-std::numeric_limits<float>::infinity());
  for (std::size_t j = 0; j < padded; j += kLanes) {
    V16 v;
    std::memcpy(&v, s + j, sizeof v);
    vmax = v > vmax ? v : vmax;
  }
  const float m_new = std::max(m, horizontal_max(vmax));
  const V16 shift = splat(m_new);
  V16 sum{};
  for (std::size_t j = 0; j < padded; j += kLanes) {
    V16 v, e;
    std::memcpy(&v, s + j, sizeof v);
    v -= shift;
    exp_lanes(v, e);
    sum += e;
    std::memcpy(s + j, &e, sizeof e);
  }
  // 0 on the first block (m = -inf); exactly 1 when the max did not grow (most blocks).
  const float alpha = m_new == m ? 1.0f : std::exp(m - m_new);
  l = l * alpha + horizontal_sum(sum);
  m = m_new;
  return alpha;
}

// A head's operands, packed once per head: K_hᵀ per key block (each block its own slivers,
// so any block size lines up with them) and V_h in slivers over all tokens.
struct HeadOperands {
  const float* kt;
  const float* v;
  std::size_t kt_block_stride;  // floats between two key blocks' packed K_hᵀ
};

HeadOperands pack_head(const StreamingShape& sh, cpu::ThreadPool& pool, int threads,
                       const float* qkv, std::size_t head, StreamSlot& slot) {
  const std::size_t hd = sh.d / sh.heads, ld = 3 * sh.d;
  const std::size_t kbp = round_up(sh.k_block, kNr);
  const std::size_t blocks = ceil_div(sh.tokens, sh.k_block), v_slivers = ceil_div(hd, kNr);
  float* kt = at_least(slot.kt, blocks * kbp * hd);
  float* v = at_least(slot.v, v_slivers * kNr * sh.tokens);
  const float* k_rows = qkv + sh.d + head * hd;
  const float* v_rows = qkv + 2 * sh.d + head * hd;
  // One task per key block of K_hᵀ and per sliver of V_h.
  run_tasks(pool, blocks + v_slivers, threads, [&](std::size_t task) {
    if (task < blocks) {
      const std::size_t k0 = task * sh.k_block, n = std::min(sh.k_block, sh.tokens - k0);
      pack_b_columns(k_rows + k0 * ld, ld, hd, n, kt + task * kbp * hd);
      return;
    }
    const std::size_t s = task - blocks, cols = std::min<std::size_t>(kNr, hd - s * kNr);
    pack_b_rows(v_rows + s * kNr, ld, sh.tokens, cols, v + s * kNr * sh.tokens);
  });
  return {kt, v, kbp * hd};
}

// One query block [q0, q0 + qb) of one head: out rows get softmax(Q·Kᵀ/√hd)·V.
void query_block(const StreamingShape& sh, const float* qkv, std::size_t head,
                 const HeadOperands& ops, std::size_t q0, StreamSlot& slot, float* out) {
  const std::size_t hd = sh.d / sh.heads, ld = 3 * sh.d;
  const std::size_t qb = std::min(sh.q_block, sh.tokens - q0);
  const std::size_t qbp = round_up(sh.q_block, kMr), kbp = round_up(sh.k_block, kNr);
  // The scale folded into Q: the scores come out of the product already divided by √hd.
  const float scale = 1.0f / std::sqrt(static_cast<float>(hd));
  float* q = at_least(slot.q, qbp * hd);
  float* s = at_least(slot.s, qbp * kbp);
  float* o = at_least(slot.o, qbp * hd);
  float* m = at_least(slot.m, qbp);
  float* l = at_least(slot.l, qbp);
  for (std::size_t i = 0; i < qb; ++i) {
    const float* src = qkv + (q0 + i) * ld + head * hd;
    for (std::size_t p = 0; p < hd; ++p) q[i * hd + p] = src[p] * scale;
  }
  std::fill(q + qb * hd, q + qbp * hd, 0.0f);  // the register tile's padding rows
  std::fill(o, o + qbp * hd, 0.0f);
  std::fill(m, m + qbp, -std::numeric_limits<float>::infinity());
  std::fill(l, l + qbp, 0.0f);
  for (std::size_t k0 = 0; k0 < sh.tokens; k0 += sh.k_block) {
    const std::size_t kb = std::min(sh.k_block, sh.tokens - k0);
    const float* kt = ops.kt + (k0 / sh.k_block) * ops.kt_block_stride;
    block_product(qb, kb, hd, q, hd, kt, hd, 0, s, kbp, false);
    for (std::size_t i = 0; i < qb; ++i) {
      const float alpha = online_softmax_row(s + i * kbp, kb, m[i], l[i]);
      if (alpha != 1.0f) {
        for (std::size_t p = 0; p < hd; ++p) o[i * hd + p] *= alpha;
      }
    }
    block_product(qb, hd, kb, s, kbp, ops.v, sh.tokens, k0, o, hd, true);
  }
  for (std::size_t i = 0; i < qb; ++i) {
    const float inv = 1.0f / l[i];
    float* dst = out + (q0 + i) * sh.d + head * hd;
    for (std::size_t p = 0; p < hd; ++p) dst[p] = o[i * hd + p] * inv;
  }
}

}  // namespace

void exp16(const float* x, float* y) {
  V16 in, res;
  std::memcpy(&in, x, sizeof in);
  exp_lanes(in, res);
  std::memcpy(y, &res, sizeof res);
}

void streaming_attention(const StreamingShape& sh, cpu::ThreadPool& pool, const float* qkv,
                         float* out, std::vector<StreamSlot>& slots) {
  const std::size_t q_blocks = ceil_div(sh.tokens, sh.q_block);
  const std::size_t workers = std::max<std::size_t>(1, sh.threads);
  if (slots.size() < workers) slots.resize(workers);
  // Static split: task t takes every workers-th unit, so task t alone uses slot t.
  if (sh.heads_parallel) {
    const std::size_t tasks = std::min(workers, sh.heads);
    run_tasks(pool, tasks, static_cast<int>(tasks), [&](std::size_t t) {
      for (std::size_t h = t; h < sh.heads; h += tasks) {
        const HeadOperands ops = pack_head(sh, pool, 1, qkv, h, slots[t]);
        for (std::size_t b = 0; b < q_blocks; ++b)
          query_block(sh, qkv, h, ops, b * sh.q_block, slots[t], out);
      }
    });
    return;
  }
  const std::size_t tasks = std::min(workers, q_blocks);
  for (std::size_t h = 0; h < sh.heads; ++h) {
    const HeadOperands ops = pack_head(sh, pool, sh.threads, qkv, h, slots[0]);
    run_tasks(pool, tasks, static_cast<int>(tasks), [&](std::size_t t) {
      for (std::size_t b = t; b < q_blocks; b += tasks)
        query_block(sh, qkv, h, ops, b * sh.q_block, slots[t], out);
    });
  }
}

}  // namespace tunekit::kernels
