#!/usr/bin/env python3
"""Tunes tunekit's OpenCL sgemm space (kernels/opencl/sgemm.cl, the same parameters and
constraints as kernels/opencl/cl_sgemm.cpp) with Kernel Tuner on the first OpenCL device, and
prints the best configuration's time and the total tuning time.

Run by bench/peer/gemm_peer.sh when kernel_tuner and pyopencl import; not a dependency."""
import argparse
import collections
import os
import sys
import time

import numpy as np
import kernel_tuner

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.join(HERE, "..", "..", "kernels", "opencl", "sgemm.cl")


def round_up(x, to):
    return (x + to - 1) // to * to


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--m", type=int, default=256)
    ap.add_argument("--n", type=int, default=256)
    ap.add_argument("--k", type=int, default=256)
    args = ap.parse_args()
    # Padding as kernels/opencl/cl_ops.hpp: M, N to 64, K to 32.
    mp, np_, kp = round_up(args.m, 64), round_up(args.n, 64), round_up(args.k, 32)
    rng = np.random.default_rng(1)
    a = np.zeros((mp, kp), dtype=np.float32)
    b = np.zeros((kp, np_), dtype=np.float32)
    a[: args.m, : args.k] = rng.uniform(-1, 1, (args.m, args.k)).astype(np.float32)
    b[: args.k, : args.n] = rng.uniform(-1, 1, (args.k, args.n)).astype(np.float32)
    c = np.zeros((mp, np_), dtype=np.float32)
    reference = (a.astype(np.float64) @ b.astype(np.float64)).astype(np.float32)

    # The space of kernels/opencl/cl_sgemm.cpp (sgemm_space), parameter for parameter.
    tune_params = collections.OrderedDict(
        MWG=[16, 32, 64], NWG=[16, 32, 64], KWG=[16, 32], MDIMC=[8, 16], NDIMC=[8, 16],
        VWM=[1, 4], VWN=[1, 4], SA=[0, 1], SB=[0, 1])
    restrictions = [
        "MWG % MDIMC == 0", "NWG % (NDIMC * VWN) == 0", "KWG % VWM == 0",
        "(MWG // MDIMC) * (NWG // NDIMC) >= 4", "(MWG // MDIMC) * (NWG // NDIMC) <= 16",
        "MWG == NWG", "MDIMC == NDIMC", "SA == SB"]
    with open(SOURCE) as f:
        source = f.read()
    start = time.perf_counter()
    results, env = kernel_tuner.tune_kernel(
        "sgemm", source, (np_, mp), [np.int32(kp), np.int32(np_), a, b, c], tune_params,
        lang="OpenCL", block_size_names=["NDIMC", "MDIMC"],
        grid_div_x=["NWG"], grid_div_y=["MWG"], restrictions=restrictions,
        answer=[None, None, None, None, reference], atol=1e-3 * max(1, args.k / 256),
        strategy="brute_force", verbose=False, quiet=True)
    total = time.perf_counter() - start
    valid = [r for r in results if isinstance(r.get("time"), float)]
    best = min(valid, key=lambda r: r["time"])
    name = "_".join(f"{p}{best[p]}" for p in tune_params)
    print(f"kernel_tuner {kernel_tuner.__version__}: {len(valid)} of {len(results)} configurations "
          f"measured on {env.get('device_name', '?')}")
    print(f"kernel_tuner best {best['time']:.3f} ms ({name}); total tuning time {total:.1f} s")


if __name__ == "__main__":
    sys.exit(main())
