// sgemm on OpenCL: C[Mp x Np] = A[Mp x Kp] . B[Kp x Np], row-major, single precision. The host
// pads M and N to multiples of 64 and K to a multiple of 32 with zeros (as CLBlast's indirect
// kernels do), so no tile needs bounds checks. Compile-time parameters (-D):
//   MWG, NWG, KWG  work-group tile: MWG rows x NWG columns of C, KWG-deep steps over K
//   MDIMC, NDIMC   threads of a work-group along M (local dim 1) and N (local dim 0)
//   VWM            A values read per load as one vector along K (KWG % VWM == 0)
//   VWN            B values read and C values stored per access as one vector along N
//   SA, SB         1: stage the A / B tile in local memory first; 0: read global memory
// Each thread computes MWI = MWG/MDIMC rows x NWI = NWG/NDIMC columns; its columns are VWN-wide
// vectors strided by NDIMC so that neighbouring threads touch neighbouring vectors.
#define MWI (MWG / MDIMC)
#define NWI (NWG / NDIMC)
#define NVW (NWI / VWN)

#if VWN == 1
typedef float floatn;
#define LOADN(p) (*(p))
#define STOREN(v, p) (*(p) = (v))
#elif VWN == 2
typedef float2 floatn;
#define LOADN(p) vload2(0, p)
#define STOREN(v, p) vstore2(v, 0, p)
#elif VWN == 4
typedef float4 floatn;
#define LOADN(p) vload4(0, p)
#define STOREN(v, p) vstore4(v, 0, p)
#elif VWN == 8
typedef float8 floatn;
#define LOADN(p) vload8(0, p)
#define STOREN(v, p) vstore8(v, 0, p)
#endif

#if VWM == 1
#define LOADM(dst, p) ((dst)[0] = *(p))
#elif VWM == 2
#define LOADM(dst, p) vstore2(vload2(0, p), 0, dst)
#elif VWM == 4
#define LOADM(dst, p) vstore4(vload4(0, p), 0, dst)
#elif VWM == 8
#define LOADM(dst, p) vstore8(vload8(0, p), 0, dst)
#endif

__kernel __attribute__((reqd_work_group_size(NDIMC, MDIMC, 1)))
void sgemm(const int Kp, const int Np, __global const float* restrict A,
           __global const float* restrict B, __global float* restrict C) {
  const int tx = get_local_id(0);
  const int ty = get_local_id(1);
  const int m0 = get_group_id(1) * MWG;
  const int n0 = get_group_id(0) * NWG;
#if SA
  __local float Al[MWG * KWG];
#endif
#if SB
  __local float Bl[KWG * NWG];
#endif
  floatn acc[MWI][NVW];
  for (int wm = 0; wm < MWI; ++wm)
    for (int wn = 0; wn < NVW; ++wn) acc[wm][wn] = (floatn)(0.0f);

  for (int k0 = 0; k0 < Kp; k0 += KWG) {
#if SA
    for (int i = ty * NDIMC + tx; i < MWG * KWG; i += MDIMC * NDIMC)
      Al[i] = A[(m0 + i / KWG) * Kp + k0 + i % KWG];
#endif
#if SB
    for (int i = ty * NDIMC + tx; i < KWG * NWG; i += MDIMC * NDIMC)
      Bl[i] = B[(k0 + i / NWG) * Np + n0 + i % NWG];
#endif
#if SA || SB
    barrier(CLK_LOCAL_MEM_FENCE);
#endif
    for (int kk = 0; kk < KWG; kk += VWM) {
      float a[MWI][VWM];
      for (int wm = 0; wm < MWI; ++wm) {
        const int row = ty * MWI + wm;
#if SA
        LOADM(a[wm], &Al[row * KWG + kk]);
#else
        LOADM(a[wm], &A[(m0 + row) * Kp + k0 + kk]);
#endif
      }
      for (int v = 0; v < VWM; ++v) {
        floatn b[NVW];
        for (int wn = 0; wn < NVW; ++wn) {
          const int col = (tx + wn * NDIMC) * VWN;
#if SB
          b[wn] = LOADN(&Bl[(kk + v) * NWG + col]);
#else
          b[wn] = LOADN(&B[(k0 + kk + v) * Np + n0 + col]);
#endif
        }
        for (int wm = 0; wm < MWI; ++wm)
          for (int wn = 0; wn < NVW; ++wn) acc[wm][wn] = mad((floatn)(a[wm][v]), b[wn], acc[wm][wn]);
      }
    }
#if SA || SB
    barrier(CLK_LOCAL_MEM_FENCE);
#endif
  }
  for (int wm = 0; wm < MWI; ++wm) {
    const int row = m0 + ty * MWI + wm;
    for (int wn = 0; wn < NVW; ++wn) {
      const int col = n0 + (tx + wn * NDIMC) * VWN;
      STOREN(acc[wm][wn], &C[row * Np + col]);
    }
  }
}
