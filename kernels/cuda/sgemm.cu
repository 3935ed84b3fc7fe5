// sgemm on CUDA, a CUTLASS-style SIMT kernel: C = A . B, single precision, all row-major:
// A is Mp x Kp (row stride lda), B is Kp x Np (ldb), C is Mp x Np (ldc). The host pads M and N
// to a multiple of the largest block tile and K to one of the largest BK with zeros, and
// launches ceil(m / BM) x ceil(n / BN) blocks: a partial tile reads zeros and writes inside
// the padding, so no tile needs bounds checks. Compile-time parameters (-D):
//   BM, BN, BK   block tile: BM rows x BN columns of C per block, BK-deep steps over K
//   WM, WN       warp tile: each warp computes WM x WN of the block tile
//   TM, TN       thread tile: TM x TN accumulators per thread and warp sub-tile
//   WTN          the 32 threads of a warp as (32 / WTN) rows x WTN columns; a warp covers its
//                tile in WM / (32 / WTN * TM) x WN / (WTN * TN) sub-tiles
//   VW           vector width (1, 2, 4 floats) of the global loads of A (along K) and B (N)
//   STAGES       1: load, sync, compute, sync; 2: double-buffered shared tiles, the next
//                tile's global loads in flight (in registers) while the current one computes
// Split-k is a launch argument (gridDim.z splits of whole BK tiles): split 0 writes C, split
// z > 0 its partial W + (z - 1) * wstride, and sgemm_reduce adds them to C in split order.
// Without split-k every configuration sums each dot product in the same order (k ascending,
// one fma per term).
#define THREADS (32 * (BM / WM) * (BN / WN))
#define WTM (32 / WTN)
#define WMITER (WM / (WTM * TM))
#define WNITER (WN / (WTN * TN))
#define WSUBM (WM / WMITER)
#define WSUBN (WN / WNITER)
#define A_LOADS (BM * BK / (VW * THREADS))  // A vectors each thread loads per tile
#define B_LOADS (BK * BN / (VW * THREADS))
#define APAD 4  // keeps As rows 16-byte aligned and spreads the transposed stores over banks

// VW floats from global memory (aligned: row strides and offsets are multiples of VW).
__device__ __forceinline__ void load_vw(float* dst, const float* src) {
#if VW == 1
  dst[0] = __ldg(src);
#elif VW == 2
  const float2 v = __ldg(reinterpret_cast<const float2*>(src));
  dst[0] = v.x;
  dst[1] = v.y;
#elif VW == 4
  const float4 v = __ldg(reinterpret_cast<const float4*>(src));
  dst[0] = v.x;
  dst[1] = v.y;
  dst[2] = v.z;
  dst[3] = v.w;
#endif
}

// N consecutive floats to memory in the widest aligned stores (N is TN: 1, 2, 4 or 8).
template <int N>
__device__ __forceinline__ void store_row(float* dst, const float* src) {
  if constexpr (N % 4 == 0) {
#pragma unroll
    for (int i = 0; i < N; i += 4)
      *reinterpret_cast<float4*>(dst + i) = make_float4(src[i], src[i + 1], src[i + 2], src[i + 3]);
  } else if constexpr (N == 2) {
    *reinterpret_cast<float2*>(dst) = make_float2(src[0], src[1]);
  } else {
#pragma unroll
    for (int i = 0; i < N; ++i) dst[i] = src[i];
  }
}

struct Staging {
  float a[A_LOADS][VW];
  float b[B_LOADS][VW];
};

// Tile kt of A and B from global memory into registers.
__device__ __forceinline__ void load_tile(Staging& r, const float* __restrict__ A,
                                          const float* __restrict__ B, int lda, int ldb, int kt) {
  const int k0 = kt * BK;
#pragma unroll
  for (int i = 0; i < A_LOADS; ++i) {
    const int v = threadIdx.x + i * THREADS;
    const int row = v / (BK / VW), kv = v % (BK / VW);
    load_vw(r.a[i], A + (long long)row * lda + k0 + kv * VW);
  }
#pragma unroll
  for (int i = 0; i < B_LOADS; ++i) {
    const int v = threadIdx.x + i * THREADS;
    const int k = v / (BN / VW), nv = v % (BN / VW);
    load_vw(r.b[i], B + (long long)(k0 + k) * ldb + nv * VW);
  }
}

// The registers into shared buffer s: A transposed (As[k][m]), B as it is.
__device__ __forceinline__ void store_tile(const Staging& r, float (*As)[BM + APAD],
                                           float (*Bs)[BN]) {
#pragma unroll
  for (int i = 0; i < A_LOADS; ++i) {
    const int v = threadIdx.x + i * THREADS;
    const int row = v / (BK / VW), kv = v % (BK / VW);
#pragma unroll
    for (int j = 0; j < VW; ++j) As[kv * VW + j][row] = r.a[i][j];
  }
#pragma unroll
  for (int i = 0; i < B_LOADS; ++i) {
    const int v = threadIdx.x + i * THREADS;
    const int k = v / (BN / VW), nv = v % (BN / VW);
#pragma unroll
    for (int j = 0; j < VW; ++j) Bs[k][nv * VW + j] = r.b[i][j];
  }
}

// One BK step of outer products from shared buffer s into the accumulators.
__device__ __forceinline__ void compute_tile(float (&acc)[WMITER * TM][WNITER * TN],
                                             const float (*As)[BM + APAD], const float (*Bs)[BN],
                                             int a_base, int b_base) {
#pragma unroll
  for (int kk = 0; kk < BK; ++kk) {
    float ra[WMITER * TM], rb[WNITER * TN];
#pragma unroll
    for (int wi = 0; wi < WMITER; ++wi)
#pragma unroll
      for (int t = 0; t < TM; ++t) ra[wi * TM + t] = As[kk][a_base + wi * WSUBM + t];
#pragma unroll
    for (int wj = 0; wj < WNITER; ++wj)
#pragma unroll
      for (int u = 0; u < TN; ++u) rb[wj * TN + u] = Bs[kk][b_base + wj * WSUBN + u];
#pragma unroll
    for (int i = 0; i < WMITER * TM; ++i)
#pragma unroll
      for (int j = 0; j < WNITER * TN; ++j) acc[i][j] = fmaf(ra[i], rb[j], acc[i][j]);
  }
}

extern "C" __global__ void __launch_bounds__(THREADS, 1)
    sgemm(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C,
          float* __restrict__ W, int lda, int ldb, int ldc, int ktiles, int ktiles_per_split,
          long long wstride) {
  __shared__ __align__(16) float As[STAGES][BK][BM + APAD];
  __shared__ __align__(16) float Bs[STAGES][BK][BN];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int warp_m = warp / (BN / WN), warp_n = warp % (BN / WN);
  // The first row (column) of this thread's first sub-tile, within the block tile.
  const int a_base = warp_m * WM + (lane / WTN) * TM;
  const int b_base = warp_n * WN + (lane % WTN) * TN;
  const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
  const int kt0 = blockIdx.z * ktiles_per_split;
  const int kt1 = min(ktiles, kt0 + ktiles_per_split);
  A += (long long)m0 * lda;
  B += n0;

  float acc[WMITER * TM][WNITER * TN];
#pragma unroll
  for (int i = 0; i < WMITER * TM; ++i)
#pragma unroll
    for (int j = 0; j < WNITER * TN; ++j) acc[i][j] = 0.0f;

  Staging r;
#if STAGES == 1
  for (int kt = kt0; kt < kt1; ++kt) {
    load_tile(r, A, B, lda, ldb, kt);
    store_tile(r, As[0], Bs[0]);
    __syncthreads();
    compute_tile(acc, As[0], Bs[0], a_base, b_base);
    __syncthreads();
  }
#else
  if (kt0 < kt1) {
    load_tile(r, A, B, lda, ldb, kt0);
    store_tile(r, As[0], Bs[0]);
    __syncthreads();
  }
  for (int kt = kt0; kt < kt1; ++kt) {
    const int s = (kt - kt0) & 1;
    const bool more = kt + 1 < kt1;
    if (more) load_tile(r, A, B, lda, ldb, kt + 1);  // in flight while this tile computes
    compute_tile(acc, As[s], Bs[s], a_base, b_base);
    // Buffer s ^ 1 was last read before the previous barrier: safe to overwrite.
    if (more) store_tile(r, As[s ^ 1], Bs[s ^ 1]);
    __syncthreads();
  }
#endif

  float* out = blockIdx.z == 0 ? C : W + (long long)(blockIdx.z - 1) * wstride;
#pragma unroll
  for (int wi = 0; wi < WMITER; ++wi)
#pragma unroll
    for (int t = 0; t < TM; ++t) {
      const int row = m0 + a_base + wi * WSUBM + t;
#pragma unroll
      for (int wj = 0; wj < WNITER; ++wj)
        store_row<TN>(out + (long long)row * ldc + n0 + b_base + wj * WSUBN,
                      &acc[wi * TM + t][wj * TN]);
    }
}

// Split-k's second step: C[r][c] = ((C + W_0) + W_1) + ... over the m x n result, in split
// order (deterministic: the same bits on every run). One thread per element.
extern "C" __global__ void __launch_bounds__(256)
    sgemm_reduce(float* __restrict__ C, const float* __restrict__ W, int m, int n, int ldc,
                 int partials, long long wstride) {
  const int c = blockIdx.x * 256 + threadIdx.x;
  const int r = blockIdx.y;
  if (c >= n || r >= m) return;
  const long long i = (long long)r * ldc + c;
  float v = C[i];
  for (int p = 0; p < partials; ++p) v += W[p * wstride + i];
  C[i] = v;
}
