// Row-wise softmax on OpenCL: y = exp(x - max(x)) / sum(exp(x - max(x))) over each row of a
// rows x cols row-major matrix. One work-group of WG work-items per row. Parameters (-D):
//   WG  work-items per row (a power of two); the tree reductions run in local memory
//   VW  values each work-item reads per access as one vector (a scalar tail covers the rest)
//   EXP exp (accurate) or native_exp (approximate, faster on some devices)
#if VW == 1
typedef float floatv;
#define LOADV(p) (*(p))
#define STOREV(v, p) (*(p) = (v))
#define HMAX(v) (v)
#define HSUM(v) (v)
#elif VW == 2
typedef float2 floatv;
#define LOADV(p) vload2(0, p)
#define STOREV(v, p) vstore2(v, 0, p)
#define HMAX(v) fmax((v).s0, (v).s1)
#define HSUM(v) ((v).s0 + (v).s1)
#elif VW == 4
typedef float4 floatv;
#define LOADV(p) vload4(0, p)
#define STOREV(v, p) vstore4(v, 0, p)
#define HMAX(v) fmax(fmax((v).s0, (v).s1), fmax((v).s2, (v).s3))
#define HSUM(v) (((v).s0 + (v).s1) + ((v).s2 + (v).s3))
#endif

float reduce_max(__local float* scratch, float v) {
  const int l = get_local_id(0);
  scratch[l] = v;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int w = WG / 2; w > 0; w /= 2) {
    if (l < w) scratch[l] = fmax(scratch[l], scratch[l + w]);
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  const float r = scratch[0];
  barrier(CLK_LOCAL_MEM_FENCE);
  return r;
}

float reduce_sum(__local float* scratch, float v) {
  const int l = get_local_id(0);
  scratch[l] = v;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int w = WG / 2; w > 0; w /= 2) {
    if (l < w) scratch[l] += scratch[l + w];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  const float r = scratch[0];
  barrier(CLK_LOCAL_MEM_FENCE);
  return r;
}

__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void softmax(const int cols, __global const float* restrict x, __global float* restrict y) {
  __local float scratch[WG];
  const int l = get_local_id(0);
  __global const float* xr = x + (long)get_group_id(0) * cols;
  __global float* yr = y + (long)get_group_id(0) * cols;
  const int full = cols / (WG * VW) * (WG * VW);  // columns covered by whole vectors

  float m = -INFINITY;
  for (int c = l * VW; c < full; c += WG * VW) m = fmax(m, HMAX(LOADV(xr + c)));
  for (int c = full + l; c < cols; c += WG) m = fmax(m, xr[c]);
  m = reduce_max(scratch, m);

  float s = 0.0f;
  for (int c = l * VW; c < full; c += WG * VW) {
    const floatv e = EXP(LOADV(xr + c) - m);
    STOREV(e, yr + c);
    s += HSUM(e);
  }
  for (int c = full + l; c < cols; c += WG) {
    const float e = EXP(xr[c] - m);
    yr[c] = e;
    s += e;
  }
  s = reduce_sum(scratch, s);
  const float inv = 1.0f / s;
  // Each work-item scales exactly the elements it wrote: no barrier needed.
  for (int c = l * VW; c < full; c += WG * VW) STOREV(LOADV(yr + c) * inv, yr + c);
  for (int c = full + l; c < cols; c += WG) yr[c] *= inv;
}
