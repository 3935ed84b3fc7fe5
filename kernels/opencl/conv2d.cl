// 2D convolution on OpenCL ("valid" correlation, as Kernel Tuner's convolution example):
//   out[y][x] = sum_{i < FH, j < FW} in[y + i][x + j] * filter[i][j]
// over an output of Hp x Wp and an input of (Hp + FH - 1) x (Wp + FW - 1), row-major. The host
// pads Hp to a multiple of 64 and Wp to one of 128 with zeros, so no tile needs bounds checks.
// Parameters (-D):
//   BX, BY  work-group of BX x BY work-items
//   TX, TY  outputs per work-item along x and y (strided by BX / BY so neighbours coalesce)
//   SL      1: stage the input tile (with its FH-1 / FW-1 halo) in local memory first
//   FH, FW  the filter's size (from the key)
#define TILE_W (BX * TX)
#define TILE_H (BY * TY)

__kernel __attribute__((reqd_work_group_size(BX, BY, 1)))
void conv2d(const int Wp, __global const float* restrict in, __global const float* restrict filter,
            __global float* restrict out) {
  const int in_w = Wp + FW - 1;
  const int lx = get_local_id(0);
  const int ly = get_local_id(1);
  const int x0 = get_group_id(0) * TILE_W;
  const int y0 = get_group_id(1) * TILE_H;
#if SL
  __local float tile[TILE_H + FH - 1][TILE_W + FW - 1];
  for (int i = ly; i < TILE_H + FH - 1; i += BY)
    for (int j = lx; j < TILE_W + FW - 1; j += BX) tile[i][j] = in[(y0 + i) * in_w + x0 + j];
  barrier(CLK_LOCAL_MEM_FENCE);
#define IN(yy, xx) tile[yy][xx]
#else
#define IN(yy, xx) in[(y0 + (yy)) * in_w + x0 + (xx)]
#endif
  float acc[TY][TX];
  for (int ty = 0; ty < TY; ++ty)
    for (int tx = 0; tx < TX; ++tx) acc[ty][tx] = 0.0f;
  for (int i = 0; i < FH; ++i) {
    for (int j = 0; j < FW; ++j) {
      const float f = filter[i * FW + j];
      for (int ty = 0; ty < TY; ++ty)
        for (int tx = 0; tx < TX; ++tx)
          acc[ty][tx] += IN(ly + ty * BY + i, lx + tx * BX + j) * f;
    }
  }
  for (int ty = 0; ty < TY; ++ty)
    for (int tx = 0; tx < TX; ++tx)
      out[(y0 + ly + ty * BY) * Wp + x0 + lx + tx * BX] = acc[ty][tx];
}
