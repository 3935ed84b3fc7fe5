// sgemm on OpenCL, after CLBlast's xgemm: C[Mp x Np] = A[Mp x Kp] . B[Kp x Np], single precision.
// Device layouts (row-major): At = A transposed, Kp x Mp (M contiguous, as CLBlast's A), B is
// Kp x Np, C is Mp x Np. The host pads M and N to multiples of 128 and K to a multiple of 32
// with zeros (as CLBlast's indirect kernels do), so no tile of any configuration needs bounds
// checks. Compile-time parameters (-D):
//   MWG, NWG, KWG  work-group tile: MWG rows x NWG columns of C, KWG-deep steps over K
//   MDIMC, NDIMC   threads of a work-group along M (local dim 1) and N (local dim 0)
//   VWM            vector width (1-16) of A loads along M (a thread's rows come in VWM-row vectors)
//   VWN            vector width (1-16) of B loads and C stores along N
//   SA, SB         1: stage the KWG x MWG tile of A / the KWG x NWG tile of B in local memory
//   MDIMA, NDIMB   with SA / SB: the work-group re-shaped as MDIMA x (MDIMC*NDIMC/MDIMA)
//                  (NDIMB x ...) threads for loading the A (B) tile into local memory
//   KWI            unroll factor of the loop over the KWG values of a step
//   STRM, STRN     0: each thread's vectors along M (N) are contiguous; 1: strided by the
//                  thread count MDIMC (NDIMC), so neighbouring threads touch neighbouring
//                  vectors (also for the tile loads, strided by MDIMA / NDIMB)
// Each thread computes MWI = MWG/MDIMC rows x NWI = NWG/NDIMC columns of C. Every configuration
// sums each dot product in the same order (k ascending, one mad per term).
#define MWI (MWG / MDIMC)  // rows of C per thread
#define NWI (NWG / NDIMC)  // columns of C per thread
#define MVI (MWI / VWM)    // A vectors per thread and k
#define NVI (NWI / VWN)    // B (and C) vectors per thread and k
#define KDIMA ((MDIMC * NDIMC) / MDIMA)
#define KDIMB ((MDIMC * NDIMC) / NDIMB)
#define MVA (MWG / MDIMA / VWM)  // A vectors each thread loads per k row of the tile
#define KWA (KWG / KDIMA)        // k rows of the A tile each thread loads
#define NVB (NWG / NDIMB / VWN)
#define KWB (KWG / KDIMB)

#if VWM == 1
typedef float floatm;
#define UNPACKM(v, dst) ((dst)[0] = (v))
#elif VWM == 2
typedef float2 floatm;
#define UNPACKM(v, dst) vstore2(v, 0, dst)
#elif VWM == 4
typedef float4 floatm;
#define UNPACKM(v, dst) vstore4(v, 0, dst)
#elif VWM == 8
typedef float8 floatm;
#define UNPACKM(v, dst) vstore8(v, 0, dst)
#elif VWM == 16
typedef float16 floatm;
#define UNPACKM(v, dst) vstore16(v, 0, dst)
#endif

#if VWN == 1
typedef float floatn;
#elif VWN == 2
typedef float2 floatn;
#elif VWN == 4
typedef float4 floatn;
#elif VWN == 8
typedef float8 floatn;
#elif VWN == 16
typedef float16 floatn;
#endif

// Position (in vectors) within the tile of a thread's i-th vector along M / N.
#if STRM
#define MPOS(t, i) ((t) + (i) * MDIMC)
#else
#define MPOS(t, i) ((t) * MVI + (i))
#endif
#if STRN
#define NPOS(t, i) ((t) + (i) * NDIMC)
#else
#define NPOS(t, i) ((t) * NVI + (i))
#endif

__kernel __attribute__((reqd_work_group_size(NDIMC, MDIMC, 1)))
void sgemm(const int Mp, const int Np, const int Kp, __global const floatm* restrict At,
           __global const floatn* restrict B, __global floatn* restrict C) {
  const int tx = get_local_id(0);
  const int ty = get_local_id(1);
  const int mv0 = get_group_id(1) * (MWG / VWM);  // the tile's first vector along M
  const int nv0 = get_group_id(0) * (NWG / VWN);
  const int mstride = Mp / VWM, nstride = Np / VWN;  // row strides of At and B, in vectors
#if SA || SB
  const int tid = ty * NDIMC + tx;
#endif
#if SA
  __local floatm Al[KWG * (MWG / VWM)];
#endif
#if SB
  __local floatn Bl[KWG * (NWG / VWN)];
#endif
  floatn acc[MWI][NVI];
#pragma unroll
  for (int mi = 0; mi < MWI; ++mi)
#pragma unroll
    for (int ni = 0; ni < NVI; ++ni) acc[mi][ni] = (floatn)(0.0f);

  for (int k0 = 0; k0 < Kp; k0 += KWG) {
#if SA
    {  // The A tile through the re-shaped MDIMA x KDIMA grid.
      const int la0 = tid % MDIMA, la1 = tid / MDIMA;
#pragma unroll
      for (int i = 0; i < MVA; ++i) {
#if STRM
        const int mg = la0 + i * MDIMA;
#else
        const int mg = la0 * MVA + i;
#endif
#pragma unroll
        for (int j = 0; j < KWA; ++j) {
          const int kg = la1 * KWA + j;
          Al[kg * (MWG / VWM) + mg] = At[(k0 + kg) * mstride + mv0 + mg];
        }
      }
    }
#endif
#if SB
    {  // The B tile through the re-shaped NDIMB x KDIMB grid.
      const int lb0 = tid % NDIMB, lb1 = tid / NDIMB;
#pragma unroll
      for (int i = 0; i < NVB; ++i) {
#if STRN
        const int ng = lb0 + i * NDIMB;
#else
        const int ng = lb0 * NVB + i;
#endif
#pragma unroll
        for (int j = 0; j < KWB; ++j) {
          const int kg = lb1 * KWB + j;
          Bl[kg * (NWG / VWN) + ng] = B[(k0 + kg) * nstride + nv0 + ng];
        }
      }
    }
#endif
#if SA || SB
    barrier(CLK_LOCAL_MEM_FENCE);
#endif
    for (int kw = 0; kw < KWG; kw += KWI) {
#pragma unroll
      for (int ku = 0; ku < KWI; ++ku) {
        const int kk = kw + ku;  // k within the step
        float a[MWI];            // this thread's rows of A at k0 + kk
#pragma unroll
        for (int i = 0; i < MVI; ++i) {
#if SA
          const floatm v = Al[kk * (MWG / VWM) + MPOS(ty, i)];
#else
          const floatm v = At[(k0 + kk) * mstride + mv0 + MPOS(ty, i)];
#endif
          UNPACKM(v, &a[i * VWM]);
        }
        floatn b[NVI];  // this thread's columns of B at k0 + kk
#pragma unroll
        for (int ni = 0; ni < NVI; ++ni) {
#if SB
          b[ni] = Bl[kk * (NWG / VWN) + NPOS(tx, ni)];
#else
          b[ni] = B[(k0 + kk) * nstride + nv0 + NPOS(tx, ni)];
#endif
        }
#pragma unroll
        for (int mi = 0; mi < MWI; ++mi)
#pragma unroll
          for (int ni = 0; ni < NVI; ++ni) acc[mi][ni] = mad((floatn)(a[mi]), b[ni], acc[mi][ni]);
      }
    }
#if SA || SB
    barrier(CLK_LOCAL_MEM_FENCE);
#endif
  }
  // Row mi of this thread is component mi % VWM of its vector mi / VWM along M.
#pragma unroll
  for (int mi = 0; mi < MWI; ++mi) {
    const int row = (mv0 + MPOS(ty, mi / VWM)) * VWM + mi % VWM;
#pragma unroll
    for (int ni = 0; ni < NVI; ++ni) C[row * nstride + nv0 + NPOS(tx, ni)] = acc[mi][ni];
  }
}
