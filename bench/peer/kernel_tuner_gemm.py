#!/usr/bin/env python3
"""Tunes tunekit's OpenCL sgemm space with Kernel Tuner on the first OpenCL device and prints
the best configuration's time and the total tuning time.

The same kernel (kernels/opencl/sgemm.cl, arguments `Mp, Np, Kp, At, B, C`), the same buffers
as kernels/opencl/cl_sgemm.cpp prepares them (A transposed on the device to Kp x Mp, B Kp x Np,
C Mp x Np, zero padding of M and N to 128 and K to 32), the same launch geometry (global
Np/NWG*NDIMC x Mp/MWG*MDIMC, work-group NDIMC x MDIMC) and the same 14 parameters and 10
constraints as `sgemm_space()` (876,532 valid points; the script checks the count Kernel Tuner
builds, before the timed run). Every evaluated configuration is verified against a float64
reference.

A budget as tunekit's `--budget`: `--time-limit S` (Kernel Tuner's `time_limit`, which counts
its start-up, search-space construction included) and/or `--max-fevals N`.

    python3 -m venv /work/kt-venv-ocl && /work/kt-venv-ocl/bin/pip install kernel_tuner pyopencl
    /work/kt-venv-ocl/bin/python bench/peer/kernel_tuner_gemm.py --m 1024 --n 1024 --k 1024 \
        --strategy adaptive_tabu_greywolf --time-limit 120 [--json FILE] [--seed 1]

Run by bench/peer/gemm_peer.sh when kernel_tuner and pyopencl import; not a dependency.
"""
import argparse
import collections
import json
import os
import random
import sys
import time

import numpy as np
import kernel_tuner

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.join(HERE, "..", "..", "kernels", "opencl", "sgemm.cl")
PAD_MN, PAD_K = 128, 32  # kSgemmPadMN, kSgemmPadK (kernels/opencl/cl_ops.hpp)

# sgemm_space() in kernels/opencl/cl_sgemm.cpp, parameter for parameter and constraint for
# constraint (Kernel Tuner's restriction strings are Python expressions, as tunekit's are).
TUNE_PARAMS = collections.OrderedDict(
    MWG=[16, 32, 64, 128], NWG=[16, 32, 64, 128], KWG=[16, 32], MDIMC=[1, 2, 4, 8, 16, 32],
    NDIMC=[1, 2, 4, 8, 16, 32], VWM=[1, 2, 4, 8, 16], VWN=[1, 2, 4, 8, 16], SA=[0, 1], SB=[0, 1],
    MDIMA=[8, 16, 32], NDIMB=[8, 16, 32], KWI=[1, 2, 4, 8], STRM=[0, 1], STRN=[0, 1])
RESTRICTIONS = [
    "KWG % KWI == 0",
    "MWG % (MDIMC * VWM) == 0",
    "NWG % (NDIMC * VWN) == 0",
    "SA == 0 or MWG % (MDIMA * VWM) == 0",
    "SA == 0 or (MDIMA <= MDIMC * NDIMC and KWG % ((MDIMC * NDIMC) // MDIMA) == 0)",
    "SB == 0 or NWG % (NDIMB * VWN) == 0",
    "SB == 0 or (NDIMB <= MDIMC * NDIMC and KWG % ((MDIMC * NDIMC) // NDIMB) == 0)",
    "SA == 1 or MDIMA == 8",
    "SB == 1 or NDIMB == 8",
    "STRM == 0 or MWG // (MDIMC * VWM) > 1 or (SA == 1 and MWG // (MDIMA * VWM) > 1)",
    "STRN == 0 or NWG // (NDIMC * VWN) > 1 or (SB == 1 and NWG // (NDIMB * VWN) > 1)",
    "(MWG // MDIMC) * (NWG // NDIMC) <= 256",
]
SPACE_SIZE = 876532
DEFAULT = dict(MWG=32, NWG=32, KWG=16, MDIMC=8, NDIMC=8, VWM=1, VWN=1, SA=0, SB=0, MDIMA=8,
               NDIMB=8, KWI=1, STRM=0, STRN=1)


def round_up(x, to):
    return (x + to - 1) // to * to


def config_text(r):
    return ",".join(f"{p}={r[p]}" for p in TUNE_PARAMS)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--m", type=int, default=256)
    ap.add_argument("--n", type=int, default=256)
    ap.add_argument("--k", type=int, default=256)
    ap.add_argument("--strategy", default="adaptive_tabu_greywolf",
                    help="a Kernel Tuner strategy (brute_force would take days on this space)")
    ap.add_argument("--time-limit", type=float, default=None, help="seconds (time_limit)")
    ap.add_argument("--max-fevals", type=int, default=None)
    ap.add_argument("--iterations", type=int, default=7, help="Kernel Tuner's iterations")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--json", default=None, help="write every evaluated result here")
    ap.add_argument("--skip-space-check", action="store_true",
                    help="do not check that Kernel Tuner's space has 876,532 points")
    args = ap.parse_args()
    if args.time_limit is None and args.max_fevals is None:
        ap.error("give --time-limit and/or --max-fevals: the space has 876,532 points")
    random.seed(args.seed)
    np.random.seed(args.seed)

    m, n, k = args.m, args.n, args.k
    mp, np_, kp = round_up(m, PAD_MN), round_up(n, PAD_MN), round_up(k, PAD_K)
    rng = np.random.default_rng(1)
    a = rng.uniform(-1, 1, (m, k)).astype(np.float32)
    b = rng.uniform(-1, 1, (k, n)).astype(np.float32)
    at = np.zeros((kp, mp), dtype=np.float32)  # At[k][m] = A[m][k]
    at[:k, :m] = a.T
    bp = np.zeros((kp, np_), dtype=np.float32)
    bp[:k, :n] = b
    c = np.zeros((mp, np_), dtype=np.float32)
    reference = np.zeros((mp, np_), dtype=np.float32)
    reference[:m, :n] = (a.astype(np.float64) @ b.astype(np.float64)).astype(np.float32)

    strategy_options = {}
    if args.time_limit is not None:
        strategy_options["time_limit"] = args.time_limit
    if args.max_fevals is not None:
        strategy_options["max_fevals"] = args.max_fevals
    if not args.skip_space_check:
        # Outside the timed run: Kernel Tuner's own search-space construction must give the
        # same valid points as sgemm_space() (it builds the space again inside tune_kernel).
        from kernel_tuner.searchspace import Searchspace
        size = Searchspace(TUNE_PARAMS, RESTRICTIONS, 1 << 30).size
        if size != SPACE_SIZE:
            print(f"kernel_tuner_gemm.py: Kernel Tuner builds {size} points, sgemm_space() "
                  f"{SPACE_SIZE}", file=sys.stderr)
            return 1
    with open(SOURCE) as f:
        source = f.read()
    start = time.perf_counter()
    results, env = kernel_tuner.tune_kernel(
        "sgemm", source, (np_, mp),
        [np.int32(mp), np.int32(np_), np.int32(kp), at, bp, c], TUNE_PARAMS,
        lang="OpenCL", block_size_names=["NDIMC", "MDIMC"],
        grid_div_x=["NWG"], grid_div_y=["MWG"], restrictions=RESTRICTIONS,
        answer=[None, None, None, None, None, reference], atol=1e-3 * max(1, k / 256),
        strategy=args.strategy, strategy_options=strategy_options,
        iterations=args.iterations, verbose=False, quiet=True)
    total = time.perf_counter() - start
    valid = [r for r in results if isinstance(r.get("time"), float)]
    compile_s = sum(r.get("compile_time", 0) for r in results) / 1e3
    bench_s = sum(r.get("benchmark_time", 0) for r in results) / 1e3
    verify_s = sum(r.get("verification_time", 0) for r in results) / 1e3
    print(f"kernel_tuner {kernel_tuner.__version__} ({args.strategy}, seed {args.seed}, "
          f"{strategy_options}): {len(valid)} of {len(results)} configurations measured on "
          f"{env.get('device_name', '?')}")
    if valid:
        best = min(valid, key=lambda r: r["time"])
        print(f"kernel_tuner best {best['time']:.3f} ms mean of {args.iterations} "
              f"({config_text(best)}); total tuning time {total:.1f} s "
              f"(compiling {compile_s:.1f} s, benchmarking {bench_s:.1f} s, "
              f"verifying {verify_s:.1f} s)")
    else:
        best = None
        print(f"kernel_tuner: no configuration measured; total tuning time {total:.1f} s")
    if args.json:
        def plain(r):
            return {key: (v if isinstance(v, (int, float, str, list)) or v is None else str(v))
                    for key, v in r.items()}
        with open(args.json, "w") as f:
            json.dump({"strategy": args.strategy, "options": strategy_options,
                       "seed": args.seed, "total_seconds": total, "compile_seconds": compile_s,
                       "benchmark_seconds": bench_s, "verification_seconds": verify_s,
                       "best": plain(best) if best else None,
                       "results": [plain(r) for r in results]}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
