#!/usr/bin/env python3
"""What a register-tiled sgemm micro-kernel reaches through PoCL on this machine, with and
without packed operands: the ceiling the OpenCL sgemm space (kernels/opencl/sgemm.cl, whose
device layout is A transposed and B row-major, unpacked) is measured against.

One work-item computes MR x (16 NRV) of C with NRV float16 accumulators per row (the BLIS
micro-kernel: one float16 load of B per vector and k, one broadcast of A per row and k), over TI
consecutive row panels (the B panel stays in L2 between them); K unrolled by KU. --pack-a lays A
out in panels of MR rows, k-major inside a panel; --pack-b lays B out in panels of 16 NRV
columns; otherwise A is transposed (K x M) and B row-major, as tunekit's op uploads them. The
packing is done on the host, outside the timing: an upper bound of what a kernel that packs
inside its call would reach. Checked against a float64 numpy product; timed by OpenCL events
after 3 warm launches (median of --runs), GFLOP/s from 2 m n k.

    /tmp/ocl-venv/bin/python bench/peer/pocl_packed_ceiling.py [--size 1024] [--mr 8] [--nrv 2]
        [--ku 4] [--ti 4] [--pack-a] [--pack-b] [--runs 15]
"""
import argparse
import statistics

import numpy as np
import pyopencl as cl

SOURCE = r"""
__kernel __attribute__((reqd_work_group_size(1, 1, 1)))
void micro(const int K, const int M, const int N, __global const float* restrict A,
           __global const float16* restrict B, __global float* restrict C) {
  const int jp = get_global_id(0);
  for (int t = 0; t < TI; ++t) {
    const int ip = get_global_id(1) * TI + t;
#if PACKA
    __global const float* a = A + (size_t)ip * K * MR;
#define AIDX(k, i) ((k) * MR + (i))
#else
    __global const float* a = A + ip * MR;
#define AIDX(k, i) ((size_t)(k) * M + (i))
#endif
#if PACKB
    __global const float16* b = B + (size_t)jp * K * NRV;
#define BIDX(k, j) ((k) * NRV + (j))
#else
    __global const float16* b = B + jp * NRV;
#define BIDX(k, j) ((size_t)(k) * (N / 16) + (j))
#endif
    float16 acc[MR][NRV];
#pragma unroll
    for (int i = 0; i < MR; ++i)
#pragma unroll
      for (int j = 0; j < NRV; ++j) acc[i][j] = (float16)(0.0f);
    for (int k = 0; k < K; k += KU) {
#pragma unroll
      for (int u = 0; u < KU; ++u) {
        float16 bv[NRV];
#pragma unroll
        for (int j = 0; j < NRV; ++j) bv[j] = b[BIDX(k + u, j)];
#pragma unroll
        for (int i = 0; i < MR; ++i) {
          const float av = a[AIDX(k + u, i)];
#pragma unroll
          for (int j = 0; j < NRV; ++j) acc[i][j] = mad((float16)(av), bv[j], acc[i][j]);
        }
      }
    }
#pragma unroll
    for (int i = 0; i < MR; ++i)
#pragma unroll
      for (int j = 0; j < NRV; ++j)
        vstore16(acc[i][j], 0, C + (size_t)(ip * MR + i) * N + jp * 16 * NRV + j * 16);
  }
}
"""


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--size", type=int, default=1024, help="m = n = k")
    p.add_argument("--mr", type=int, default=8)
    p.add_argument("--nrv", type=int, default=2)
    p.add_argument("--ku", type=int, default=4)
    p.add_argument("--ti", type=int, default=4)
    p.add_argument("--pack-a", action="store_true")
    p.add_argument("--pack-b", action="store_true")
    p.add_argument("--runs", type=int, default=15)
    a = p.parse_args()
    n = a.size
    nr = 16 * a.nrv
    if n % (a.mr * a.ti) or n % nr or n % a.ku:
        p.error("--size must be a multiple of mr x ti, 16 x nrv and ku")
    ctx = cl.Context(cl.get_platforms()[0].get_devices())
    queue = cl.CommandQueue(ctx, properties=cl.command_queue_properties.PROFILING_ENABLE)
    options = (f"-DMR={a.mr} -DNRV={a.nrv} -DKU={a.ku} -DTI={a.ti} -DPACKA={int(a.pack_a)} "
               f"-DPACKB={int(a.pack_b)}")
    kernel = cl.Program(ctx, SOURCE).build(options=options).micro
    rng = np.random.default_rng(1)
    A = rng.standard_normal((n, n), dtype=np.float32)
    B = rng.standard_normal((n, n), dtype=np.float32)
    a_dev = (A.reshape(n // a.mr, a.mr, n).transpose(0, 2, 1) if a.pack_a else A.T).copy()
    b_dev = B.reshape(n, n // nr, nr).transpose(1, 0, 2).copy() if a.pack_b else B
    mf = cl.mem_flags
    da = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=a_dev)
    db = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=b_dev)
    C = np.zeros((n, n), np.float32)
    dc = cl.Buffer(ctx, mf.WRITE_ONLY, C.nbytes)

    def launch():
        e = kernel(queue, (n // nr, n // a.mr // a.ti), (1, 1), np.int32(n), np.int32(n),
                   np.int32(n), da, db, dc)
        e.wait()
        return (e.profile.end - e.profile.start) * 1e-9

    for _ in range(3):
        launch()
    cl.enqueue_copy(queue, C, dc).wait()
    error = float(np.abs(C - A.astype(np.float64) @ B).max())
    times = [launch() for _ in range(a.runs)]
    median = statistics.median(times)
    flops = 2.0 * n ** 3
    print(f"{options}: median {median * 1e3:.2f} ms = {flops / median / 1e9:.1f} GFLOP/s "
          f"(min {flops / min(times) / 1e9:.1f}), max abs error {error:.2e}")


if __name__ == "__main__":
    main()
