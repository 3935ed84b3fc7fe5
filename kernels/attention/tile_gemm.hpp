// The small register-blocked products the fused attention kernels are built from: an MR×NR
// micro-kernel over an A block read in place (row-major with a leading dimension, so a scores
// block or a normalised row block is used where it lies) and a B operand packed in NR-column
// slivers, plus the packers. sgemm's kernels take whole owned matrices; these take pointers
// and strides into a head's slice. Private to kernels/attention.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <new>
#include <vector>

namespace tunekit::kernels::attention_detail {

// A float vector aligned to a cache line, so 16-lane loads never split one.
template <class T>
struct AlignedAllocator {
  using value_type = T;
  AlignedAllocator() = default;
  template <class U>
  AlignedAllocator(const AlignedAllocator<U>&) {}
  T* allocate(std::size_t n) {
    return static_cast<T*>(::operator new[](n * sizeof(T), std::align_val_t{64}));
  }
  void deallocate(T* p, std::size_t) { ::operator delete[](p, std::align_val_t{64}); }
  template <class U>
  bool operator==(const AlignedAllocator<U>&) const {
    return true;
  }
};
using Floats = std::vector<float, AlignedAllocator<float>>;

// Grows v to at least n elements (never shrinks: a workspace keeps its largest size).
inline float* at_least(Floats& v, std::size_t n) {
  if (v.size() < n) v.resize(n);
  return v.data();
}

// The register block: 8 rows × 32 columns, 16 accumulators of 16 lanes (AVX-512; two AVX
// halves each elsewhere), the shape sgemm's fastest tiles on this machine share.
inline constexpr int kMr = 8;
inline constexpr int kNr = 32;
inline constexpr int kLanes = 16;
using V16 = float __attribute__((vector_size(64)));

// C[0:mr, 0:nr] (=|+=) A[0:kMr, 0:k] · Bsliver[0:k, 0:kNr]. A is row-major with leading
// dimension lda and kMr readable rows (padded by the caller), or, when PackedA, an MR-row
// sliver packed column by column (element (i, p) at a[p·kMr + i]; lda unused). A partial tile
// is written through a temporary so nothing outside C's mr×nr corner is touched.
template <bool PackedA = false>
void micro_tile(std::size_t k, const float* __restrict a, std::size_t lda,
                const float* __restrict b, float* c, std::size_t ldc, std::size_t mr,
                std::size_t nr, bool accumulate) {
  constexpr int nv = kNr / kLanes;
  V16 acc[kMr][nv];
  for (int i = 0; i < kMr; ++i) {
    for (int v = 0; v < nv; ++v) acc[i][v] = V16{};
  }
  for (std::size_t p = 0; p < k; ++p) {
    V16 bv[nv];
    for (int v = 0; v < nv; ++v) std::memcpy(&bv[v], b + p * kNr + v * kLanes, sizeof(V16));
    for (int i = 0; i < kMr; ++i) {
      const float av = PackedA ? a[p * kMr + i] : a[i * lda + p];
      for (int v = 0; v < nv; ++v) acc[i][v] += av * bv[v];
    }
  }
  if (mr == kMr && nr == kNr) {
    for (int i = 0; i < kMr; ++i) {
      for (int v = 0; v < nv; ++v) {
        float* dst = c + i * ldc + v * kLanes;
        if (accumulate) {
          V16 old;
          std::memcpy(&old, dst, sizeof old);
          acc[i][v] += old;
        }
        std::memcpy(dst, &acc[i][v], sizeof(V16));
      }
    }
    return;
  }
  alignas(64) float tile[kMr * kNr];
  for (int i = 0; i < kMr; ++i) {
    for (int v = 0; v < nv; ++v) std::memcpy(tile + i * kNr + v * kLanes, &acc[i][v], sizeof(V16));
  }
  for (std::size_t i = 0; i < mr; ++i) {
    for (std::size_t j = 0; j < nr; ++j)
      c[i * ldc + j] = accumulate ? c[i * ldc + j] + tile[i * kNr + j] : tile[i * kNr + j];
  }
}

// C[0:m, 0:n] (=|+=) A[0:m, 0:k] · B where B is packed (pack_b_rows / pack_b_columns) with
// `b_rows` rows per sliver and this product's rows starting at row b_row0 of it. A must have
// round_up(m, kMr) readable rows.
inline void block_product(std::size_t m, std::size_t n, std::size_t k, const float* a,
                          std::size_t lda, const float* bpack, std::size_t b_rows,
                          std::size_t b_row0, float* c, std::size_t ldc, bool accumulate) {
  for (std::size_t j = 0; j < n; j += kNr) {
    const float* sliver = bpack + (j / kNr) * b_rows * kNr + b_row0 * kNr;
    const std::size_t nr = std::min<std::size_t>(kNr, n - j);
    for (std::size_t i = 0; i < m; i += kMr) {
      micro_tile(k, a + i * lda, lda, sliver, c + i * ldc + j, ldc,
                 std::min<std::size_t>(kMr, m - i), nr, accumulate);
    }
  }
}

// Packs B[0:k, 0:n] (row p at b + p·ldb) into slivers of kNr columns: B[p][s·kNr + j] goes to
// out[s·k·kNr + p·kNr + j]; columns past n are zero. out holds round_up(n, kNr)·k floats.
inline void pack_b_rows(const float* b, std::size_t ldb, std::size_t k, std::size_t n, float* out) {
  for (std::size_t s = 0; s * kNr < n; ++s) {
    const std::size_t cols = std::min<std::size_t>(kNr, n - s * kNr);
    float* dst = out + s * k * kNr;
    for (std::size_t p = 0; p < k; ++p) {
      const float* src = b + p * ldb + s * kNr;
      std::copy(src, src + cols, dst + p * kNr);
      std::fill(dst + p * kNr + cols, dst + (p + 1) * kNr, 0.0f);
    }
  }
}

// Packs Bᵀ where B = Kᵀ: column j of B is row j of K (at k_rows + j·ldk, k values), so the
// product A·B is A·Kᵀ. Same sliver layout as pack_b_rows over n = rows of K.
inline void pack_b_columns(const float* k_rows, std::size_t ldk, std::size_t k, std::size_t n,
                           float* out) {
  for (std::size_t s = 0; s * kNr < n; ++s) {
    const std::size_t cols = std::min<std::size_t>(kNr, n - s * kNr);
    float* dst = out + s * k * kNr;
    for (std::size_t j = 0; j < cols; ++j) {
      const float* src = k_rows + (s * kNr + j) * ldk;
      for (std::size_t p = 0; p < k; ++p) dst[p * kNr + j] = src[p];
    }
    for (std::size_t j = cols; j < kNr; ++j) {
      for (std::size_t p = 0; p < k; ++p) dst[p * kNr + j] = 0.0f;
    }
  }
}

}  // namespace tunekit::kernels::attention_detail
