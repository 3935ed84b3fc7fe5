#!/usr/bin/env python3
"""Re-times configurations of kernels/opencl/sgemm.cl, independently of tunekit.

Builds the kernel with pyopencl for each config (`-DMWG=64 -DNWG=64 ...`, the same options
tunekit's build step passes), prepares the buffers the way kernels/opencl/cl_sgemm.cpp does (A
transposed to Kp x Mp, B Kp x Np, zero padding of M and N to 128 and K to 32), checks the
result against a float64 numpy reference, then times warm launches two ways:

  * events: CL_QUEUE_PROFILING_ENABLE, each launch's end - start (one launch, then finish)
  * wall:   perf_counter around one enqueue + finish

after `--warmup` untimed launches (the first launch carries PoCL's code generation for the
work-group size). Prints the median, min and p90 of each and the GFLOP/s of the median, using
the UNPADDED 2*m*n*k flops (the padded work is the kernel's cost, not the problem's).

    /work/kt-venv-ocl/bin/python bench/peer/retime_sgemm_cl.py \
        --config MWG=64,NWG=64,KWG=16,... [--config ...] [--m 1024 --n 1024 --k 1024] \
        [--runs 20] [--json]

The config text is what tunekit's report names a candidate (`MWG=..,NWG=..,...`). With several
`--config`s they are timed interleaved (launch r of each before launch r + 1 of any), so a
change of machine load during the run moves them all alike.
"""
import argparse
import json
import os
import statistics
import sys
import time

import numpy as np
import pyopencl as cl

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.join(HERE, "..", "..", "kernels", "opencl", "sgemm.cl")
PAD_MN, PAD_K = 128, 32  # kSgemmPadMN, kSgemmPadK


def round_up(x, to):
    return (x + to - 1) // to * to


def parse_config(text):
    out = {}
    for part in text.split(","):
        name, value = part.split("=")
        out[name.strip()] = int(value)
    return out


def quantile(xs, q):
    s = sorted(xs)
    return s[min(len(s) - 1, int(q * (len(s) - 1) + 0.5))]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--config", required=True, action="append",
                    help="a config; repeat it to time several, interleaved launch by launch")
    ap.add_argument("--m", type=int, default=1024)
    ap.add_argument("--n", type=int, default=1024)
    ap.add_argument("--k", type=int, default=1024)
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--device", type=int, default=0, help="index over all platforms' devices")
    ap.add_argument("--json", action="store_true", help="one JSON object per config and line")
    args = ap.parse_args()
    m, n, k = args.m, args.n, args.k
    mp, np_, kp = round_up(m, PAD_MN), round_up(n, PAD_MN), round_up(k, PAD_K)

    devices = [d for p in cl.get_platforms() for d in p.get_devices()]
    dev = devices[args.device]
    ctx = cl.Context([dev])
    queue = cl.CommandQueue(ctx, properties=cl.command_queue_properties.PROFILING_ENABLE)

    rng = np.random.default_rng(1)
    a = rng.uniform(-1, 1, (m, k)).astype(np.float32)
    b = rng.uniform(-1, 1, (k, n)).astype(np.float32)
    at_p = np.zeros((kp, mp), dtype=np.float32)  # At[k][m] = A[m][k], as cl_sgemm.cpp
    at_p[:k, :m] = a.T
    b_p = np.zeros((kp, np_), dtype=np.float32)
    b_p[:k, :n] = b
    mf = cl.mem_flags
    d_at = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=at_p)
    d_b = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=b_p)
    reference = a.astype(np.float64) @ b.astype(np.float64)
    tol = 2.0 ** -20 * k + 2.0 ** -17 * float(np.max(np.abs(reference)))
    with open(SOURCE) as f:
        source = f.read()

    entries = []
    for text in args.config:
        cfg = parse_config(text)
        c_p = np.full((mp, np_), np.nan, dtype=np.float32)  # poisoned: a skipped store shows
        d_c = cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=c_p)
        t0 = time.perf_counter()
        program = cl.Program(ctx, source).build(
            options=[f"-D{name}={value}" for name, value in cfg.items()])
        build_s = time.perf_counter() - t0
        kernel = cl.Kernel(program, "sgemm")
        kernel.set_args(np.int32(mp), np.int32(np_), np.int32(kp), d_at, d_b, d_c)
        # The program and the output buffer stay referenced as long as the kernel: a kernel
        # argument does not keep its buffer alive (a freed one aborts PoCL at the launch).
        e = {"text": text, "kernel": kernel, "program": program, "c": d_c, "build_s": build_s,
             "events": [], "walls": [],
             "global": (np_ // cfg["NWG"] * cfg["NDIMC"], mp // cfg["MWG"] * cfg["MDIMC"]),
             "local": (cfg["NDIMC"], cfg["MDIMC"])}
        t0 = time.perf_counter()
        cl.enqueue_nd_range_kernel(queue, kernel, e["global"], e["local"]).wait()
        e["first_s"] = time.perf_counter() - t0  # PoCL generates code at the first launch
        cl.enqueue_copy(queue, c_p, d_c).wait()
        e["err"] = float(np.max(np.abs(c_p[:m, :n] - reference)))
        e["correct"] = bool(np.all(np.isfinite(c_p[:m, :n]))) and e["err"] <= max(tol, 1e-3 * max(1, k / 256))
        entries.append(e)

    def launch(e):
        return cl.enqueue_nd_range_kernel(queue, e["kernel"], e["global"], e["local"])

    for e in entries:
        for _ in range(args.warmup):
            launch(e)
    queue.finish()
    # Round-robin: launch r of every config before launch r + 1 of any, so load drift during
    # the run hits every config alike.
    for _ in range(args.runs):
        for e in entries:
            t0 = time.perf_counter()
            ev = launch(e)
            queue.finish()
            e["walls"].append(time.perf_counter() - t0)
            e["events"].append((ev.profile.end - ev.profile.start) * 1e-9)

    flops = 2.0 * m * n * k
    status = 0
    for e in entries:
        events, walls = e["events"], e["walls"]
        ev_med, wall_med = statistics.median(events), statistics.median(walls)
        result = {
            "config": e["text"], "m": m, "n": n, "k": k, "device": dev.name,
            "build_seconds": e["build_s"], "first_launch_seconds": e["first_s"],
            "max_abs_error": e["err"], "correct": e["correct"], "runs": args.runs,
            "event_ms": {"median": ev_med * 1e3, "min": min(events) * 1e3,
                         "p90": quantile(events, 0.9) * 1e3},
            "wall_ms": {"median": wall_med * 1e3, "min": min(walls) * 1e3,
                        "p90": quantile(walls, 0.9) * 1e3},
            "gflops_event_median": flops / ev_med * 1e-9,
            "gflops_wall_median": flops / wall_med * 1e-9,
            "gflops_event_min": flops / min(events) * 1e-9,
        }
        status |= 0 if e["correct"] else 1
        if args.json:
            print(json.dumps(result))
        else:
            print(f"{e['text']} on {dev.name} at {m}x{n}x{k}: correct={e['correct']} "
                  f"(max abs error {e['err']:.2e}); build {e['build_s']:.2f} s, first launch "
                  f"{e['first_s']:.3f} s")
            print(f"  events: median {ev_med * 1e3:.2f} ms (min {min(events) * 1e3:.2f}, p90 "
                  f"{quantile(events, 0.9) * 1e3:.2f}) = {result['gflops_event_median']:.1f} GFLOP/s")
            print(f"  wall:   median {wall_med * 1e3:.2f} ms (min {min(walls) * 1e3:.2f}, p90 "
                  f"{quantile(walls, 0.9) * 1e3:.2f}) = {result['gflops_wall_median']:.1f} GFLOP/s")
    return status


if __name__ == "__main__":
    sys.exit(main())
