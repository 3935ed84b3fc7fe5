// Row-wise softmax on CUDA: y = exp(x - max(x)) / sum(exp(x - max(x))) over each row of a
// rows x cols matrix stored with row stride ld (a multiple of 4 floats, so every row starts
// 16-byte aligned). Parameters (-D):
//   TPR  threads per row: 32 is a warp per row (shuffle reductions only); more is a group of
//        TPR / 32 warps per row, whose warp results meet in shared memory
//   RPB  rows per block: the block is TPR x RPB threads, row group g = threadIdx.x / TPR
//   VW   floats per load and store (float, float2, float4); a scalar tail covers the rest
//   EXP  expf (accurate) or __expf (the fast approximate intrinsic)
#define WPR (TPR / 32)  // warps per row

#if VW == 1
typedef float floatv;
#elif VW == 2
typedef float2 floatv;
#elif VW == 4
typedef float4 floatv;
#endif

__device__ __forceinline__ float vmax(float a, floatv v) {
#if VW == 1
  return fmaxf(a, v);
#elif VW == 2
  return fmaxf(a, fmaxf(v.x, v.y));
#else
  return fmaxf(a, fmaxf(fmaxf(v.x, v.y), fmaxf(v.z, v.w)));
#endif
}

__device__ __forceinline__ floatv vexp(floatv v, float m) {
#if VW == 1
  return EXP(v - m);
#elif VW == 2
  return make_float2(EXP(v.x - m), EXP(v.y - m));
#else
  return make_float4(EXP(v.x - m), EXP(v.y - m), EXP(v.z - m), EXP(v.w - m));
#endif
}

__device__ __forceinline__ float vsum(floatv v) {
#if VW == 1
  return v;
#elif VW == 2
  return v.x + v.y;
#else
  return (v.x + v.y) + (v.z + v.w);
#endif
}

__device__ __forceinline__ floatv vscale(floatv v, float s) {
#if VW == 1
  return v * s;
#elif VW == 2
  return make_float2(v.x * s, v.y * s);
#else
  return make_float4(v.x * s, v.y * s, v.z * s, v.w * s);
#endif
}

// The row group's maximum (sum): a butterfly over the warp, then (TPR > 32) the warps'
// results in a fixed order, so every thread of the group gets the same value.
__device__ __forceinline__ float group_max(float v, float* shared) {
#pragma unroll
  for (int o = 16; o > 0; o /= 2) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
#if WPR > 1
  const int g = threadIdx.x / TPR, w = (threadIdx.x % TPR) / 32;
  if (threadIdx.x % 32 == 0) shared[g * WPR + w] = v;
  __syncthreads();
  v = shared[g * WPR];
#pragma unroll
  for (int i = 1; i < WPR; ++i) v = fmaxf(v, shared[g * WPR + i]);
#endif
  return v;
}

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
    softmax(const float* __restrict__ x, float* __restrict__ y, int rows, int cols, int ld) {
  __shared__ float red_max[RPB * WPR], red_sum[RPB * WPR];
  const int row = blockIdx.x * RPB + threadIdx.x / TPR;
  const int l = threadIdx.x % TPR;
  // A row past the end computes on nothing: every thread stays for the block's barriers.
  const int n = row < rows ? cols : 0;
  const float* xr = x + (long long)(row < rows ? row : 0) * ld;
  float* yr = y + (long long)(row < rows ? row : 0) * ld;
  const int full = n / (TPR * VW) * (TPR * VW);  // columns covered by whole vectors

  float m = __int_as_float(0xff800000);  // -infinity
  for (int c = l * VW; c < full; c += TPR * VW)
    m = vmax(m, *reinterpret_cast<const floatv*>(xr + c));
  for (int c = full + l; c < n; c += TPR) m = fmaxf(m, xr[c]);
  m = group_max(m, red_max);

  float s = 0.0f;
  for (int c = l * VW; c < full; c += TPR * VW) {
    const floatv e = vexp(*reinterpret_cast<const floatv*>(xr + c), m);
    *reinterpret_cast<floatv*>(yr + c) = e;
    s += vsum(e);
  }
  for (int c = full + l; c < n; c += TPR) {
    const float e = EXP(xr[c] - m);
    yr[c] = e;
    s += e;
  }
  s = group_sum(s, red_sum);
  const float inv = 1.0f / s;
  // Each thread scales exactly the elements it wrote: no barrier needed.
  for (int c = l * VW; c < full; c += TPR * VW)
    *reinterpret_cast<floatv*>(yr + c) = vscale(*reinterpret_cast<const floatv*>(yr + c), inv);
  for (int c = full + l; c < n; c += TPR) yr[c] *= inv;
}
