// Row-wise RMS normalisation on OpenCL: y = x / sqrt(mean(x^2) + eps) * w over each row of a
// rows x cols row-major matrix, w of length cols. One work-group of WG work-items per row.
// Parameters (-D):
//   WG  work-items per row (a power of two); the sum of squares is a tree in local memory
//   VW  values each work-item reads per access as one vector (a scalar tail covers the rest)
#if VW == 1
typedef float floatv;
#define LOADV(p) (*(p))
#define STOREV(v, p) (*(p) = (v))
#define HSUM(v) (v)
#elif VW == 2
typedef float2 floatv;
#define LOADV(p) vload2(0, p)
#define STOREV(v, p) vstore2(v, 0, p)
#define HSUM(v) ((v).s0 + (v).s1)
#elif VW == 4
typedef float4 floatv;
#define LOADV(p) vload4(0, p)
#define STOREV(v, p) vstore4(v, 0, p)
#define HSUM(v) (((v).s0 + (v).s1) + ((v).s2 + (v).s3))
#endif

__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void rmsnorm(const int cols, const float eps, __global const float* restrict x,
             __global const float* restrict w, __global float* restrict y) {
  __local float scratch[WG];
  const int l = get_local_id(0);
  __global const float* xr = x + (long)get_group_id(0) * cols;
  __global float* yr = y + (long)get_group_id(0) * cols;
  const int full = cols / (WG * VW) * (WG * VW);

  float s = 0.0f;
  for (int c = l * VW; c < full; c += WG * VW) {
    const floatv v = LOADV(xr + c);
    s += HSUM(v * v);
  }
  for (int c = full + l; c < cols; c += WG) s = mad(xr[c], xr[c], s);
  scratch[l] = s;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int width = WG / 2; width > 0; width /= 2) {
    if (l < width) scratch[l] += scratch[l + width];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  const float scale = rsqrt(scratch[0] / (float)cols + eps);
  for (int c = l * VW; c < full; c += WG * VW) STOREV(LOADV(xr + c) * scale * LOADV(w + c), yr + c);
  for (int c = full + l; c < cols; c += WG) yr[c] = xr[c] * scale * w[c];
}
