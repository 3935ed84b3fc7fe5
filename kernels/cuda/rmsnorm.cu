// Row-wise RMS normalisation on CUDA: y = x / sqrt(mean(x^2) + eps) * w over each row of a
// rows x cols matrix stored with row stride ld (a multiple of 4 floats, so every row starts
// 16-byte aligned), w of length cols. Parameters (-D):
//   TPR  threads per row: 32 is a warp per row (shuffle reduction only); more is a group of
//        TPR / 32 warps per row, whose warp sums meet in shared memory
//   RPB  rows per block: the block is TPR x RPB threads, row group g = threadIdx.x / TPR
//   VW   floats per load and store (float, float2, float4); a scalar tail covers the rest
#define WPR (TPR / 32)  // warps per row

#if VW == 1
typedef float floatv;
#elif VW == 2
typedef float2 floatv;
#elif VW == 4
typedef float4 floatv;
#endif

__device__ __forceinline__ float vsumsq(floatv v) {
#if VW == 1
  return v * v;
#elif VW == 2
  return v.x * v.x + v.y * v.y;
#else
  return (v.x * v.x + v.y * v.y) + (v.z * v.z + v.w * v.w);
#endif
}

__device__ __forceinline__ floatv vnorm(floatv v, float s, floatv w) {
#if VW == 1
  return v * s * w;
#elif VW == 2
  return make_float2(v.x * s * w.x, v.y * s * w.y);
#else
  return make_float4(v.x * s * w.x, v.y * s * w.y, v.z * s * w.z, v.w * s * w.w);
#endif
}

// The row group's sum: a butterfly over the warp, then (TPR > 32) the warps' sums in a fixed
// order, so every thread of the group gets the same value.
__device__ __forceinline__ float group_sum(float v, float* shared) {
#pragma unroll
  for (int o = 16; o > 0; o /= 2) v += __shfl_xor_sync(0xffffffffu, v, o);
#if WPR > 1
  const int g = threadIdx.x / TPR, w = (threadIdx.x % TPR) / 32;
  if (threadIdx.x % 32 == 0) shared[g * WPR + w] = v;
  __syncthreads();
  v = shared[g * WPR];
#pragma unroll
  for (int i = 1; i < WPR; ++i) v += shared[g * WPR + i];
#endif
  return v;
}

extern "C" __global__ void __launch_bounds__(TPR * RPB)
    rmsnorm(const float* __restrict__ x, const float* __restrict__ w, float* __restrict__ y,
            int rows, int cols, int ld, float eps) {
  __shared__ float red[RPB * WPR];
  const int row = blockIdx.x * RPB + threadIdx.x / TPR;
  const int l = threadIdx.x % TPR;
  // A row past the end computes on nothing: every thread stays for the block's barrier.
  const int n = row < rows ? cols : 0;
  const float* xr = x + (long long)(row < rows ? row : 0) * ld;
  float* yr = y + (long long)(row < rows ? row : 0) * ld;
  const int full = n / (TPR * VW) * (TPR * VW);

  float s = 0.0f;
  for (int c = l * VW; c < full; c += TPR * VW)
    s += vsumsq(*reinterpret_cast<const floatv*>(xr + c));
  for (int c = full + l; c < n; c += TPR) s = fmaf(xr[c], xr[c], s);
  s = group_sum(s, red);
  const float scale = rsqrtf(s / (float)cols + eps);
  for (int c = l * VW; c < full; c += TPR * VW)
    *reinterpret_cast<floatv*>(yr + c) = vnorm(*reinterpret_cast<const floatv*>(xr + c), scale,
                                               *reinterpret_cast<const floatv*>(w + c));
  for (int c = full + l; c < n; c += TPR) yr[c] = xr[c] * scale * w[c];
}
