// 2D convolution on CUDA ("valid" correlation, as Kernel Tuner's convolution example):
//   out[y][x] = sum_{i < FH, j < FW} in[y + i][x + j] * filter[i][j]
// over an output of Hp x Wp and an input of (Hp + FH - 1) x (Wp + FW - 1), row-major. The host
// pads Hp to a multiple of 64 and Wp to one of 128 with zeros (the largest tiles) and launches
// ceil(h / TILE_H) x ceil(w / TILE_W) blocks, so no tile needs bounds checks. Parameters (-D):
//   BX, BY  a block of BX x BY threads
//   TX, TY  outputs per thread along x and y (strided by BX / BY so neighbours coalesce)
//   SL      1: stage the input tile (with its FH-1 / FW-1 halo) in shared memory first
//   FH, FW  the filter's size (from the key)
#define TILE_W (BX * TX)
#define TILE_H (BY * TY)

extern "C" __global__ void __launch_bounds__(BX * BY)
    conv2d(const float* __restrict__ in, const float* __restrict__ filter,
           float* __restrict__ out, int Wp) {
  const int in_w = Wp + FW - 1;
  const int lx = threadIdx.x, ly = threadIdx.y;
  const int x0 = blockIdx.x * TILE_W, y0 = blockIdx.y * TILE_H;
#if SL
  __shared__ float tile[TILE_H + FH - 1][TILE_W + FW - 1];
  for (int i = ly; i < TILE_H + FH - 1; i += BY)
    for (int j = lx; j < TILE_W + FW - 1; j += BX)
      tile[i][j] = in[(long long)(y0 + i) * in_w + x0 + j];
  __syncthreads();
#define IN(yy, xx) tile[yy][xx]
#else
#define IN(yy, xx) __ldg(in + (long long)(y0 + (yy)) * in_w + x0 + (xx))
#endif
  float acc[TY][TX];
#pragma unroll
  for (int ty = 0; ty < TY; ++ty)
#pragma unroll
    for (int tx = 0; tx < TX; ++tx) acc[ty][tx] = 0.0f;
  // Filter rows are unrolled only for small filters: a 17 x 17 filter fully unrolled keeps
  // 289 taps in flight and spills registers.
#if FH * FW <= 64
#pragma unroll
#else
#pragma unroll 1
#endif
  for (int i = 0; i < FH; ++i) {
#pragma unroll
    for (int j = 0; j < FW; ++j) {
      const float f = __ldg(filter + i * FW + j);
#pragma unroll
      for (int ty = 0; ty < TY; ++ty)
#pragma unroll
        for (int tx = 0; tx < TX; ++tx)
          acc[ty][tx] = fmaf(IN(ly + ty * BY + i, lx + tx * BX + j), f, acc[ty][tx]);
    }
  }
#pragma unroll
  for (int ty = 0; ty < TY; ++ty)
#pragma unroll
    for (int tx = 0; tx < TX; ++tx)
      out[(long long)(y0 + ly + ty * BY) * Wp + x0 + lx + tx * BX] = acc[ty][tx];
}
