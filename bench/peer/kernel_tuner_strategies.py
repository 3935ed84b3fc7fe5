#!/usr/bin/env python3
"""Kernel Tuner's strategies in simulation mode on the recorded spaces (issue #11 item 8).

For every cache file (a Kernel Tuner cache, gzip-compressed JSON, under the repository's data/)
and every strategy, runs Kernel Tuner 1.5 in simulation mode with a budget of B evaluations,
B = the methodology cutoff budget of that file (random search's expected evaluations to reach
0.96 of the median -> optimum gap, computed as include/tunekit/methodology.hpp does), seeded
repeats, and writes each run's trace: the recorded objective of every configuration in the
order Kernel Tuner first evaluated it (`inf` where the configuration failed). The traces are
scored by tunekit's own scorer, `strategy_bench --peer DIR` (the same methodology_score as
tunekit's strategies get), so both sides are measured with one scorer.

The space is reproduced exactly: the tunable parameters of the file and one restriction, "the
configuration is in the cache file" (failed configurations included: they fail when evaluated,
as in tunekit's replay). A configuration counts once, the first time it is evaluated (Kernel
Tuner's own max_fevals counts the same way: repeats are served from its cache for free).

    python3 -m venv /work/kt-venv && /work/kt-venv/bin/pip install kernel_tuner
    /work/kt-venv/bin/python bench/peer/kernel_tuner_strategies.py --out kt-traces \
        [--datasets DIR] [--seeds 10] [--strategies a,b,...] [--jobs N]

Output: DIR/<kernel dir>__<file stem>__<strategy>.trace, one line per seed:
`seed<TAB>v1 v2 ... vB` (milliseconds, `inf` for failures), plus DIR/manifest.tsv
(dataset, strategy, seed, evaluations, seconds). Seeds are 1000 .. 1000 + seeds - 1
(random.seed and numpy.random.seed before each run).
"""
import argparse
import gzip
import json
import math
import multiprocessing
import os
import random
import shutil
import sys
import tempfile
import time
import warnings

DEFAULT_STRATEGIES = [
    "adaptive_tabu_greywolf",
    "hybrid_vndx",
    "genetic_algorithm",
    "pso",
    "simulated_annealing",
    "greedy_ils",
    "diff_evo",
    "firefly_algorithm",
    "dual_annealing",
    "random_sample",
]


def cutoff_budget(values, cutoff=0.96):
    """(N + 1) / (M + 1) rounded up, as methodology_baseline() computes it."""
    ok = sorted(v for v in values if math.isfinite(v))
    m = len(ok)
    median = ok[m // 2] if m % 2 else 0.5 * (ok[m // 2 - 1] + ok[m // 2])
    target = median + cutoff * (ok[0] - median)
    good = sum(1 for v in ok if v <= target)
    return max(1, math.ceil((len(values) + 1) / (good + 1)))


def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        return json.load(f)


def objective(entry):
    t = entry.get("time")
    return float(t) if isinstance(t, (int, float)) else math.inf


def run_one(job):
    """One (dataset, strategy) with every seed; returns (name, strategy, lines, manifest)."""
    path, name, strategy, seeds, budget_override, tmpdir = job
    warnings.simplefilter("ignore")
    import numpy as np
    import kernel_tuner
    from constraint import FunctionConstraint
    import kernel_tuner.interface as kti

    data = load(path)
    keys = data["tune_params_keys"]
    entries = data["cache"]
    values = {k: objective(v) for k, v in entries.items()}
    budget = budget_override or cutoff_budget(list(values.values()))
    budget = min(budget, len(entries))

    # Kernel Tuner wants a plain .json cache; a private copy (it may reopen the file).
    cache_file = os.path.join(tmpdir, f"{name.replace('/', '__')}__{strategy}.json")
    with open(cache_file, "w") as f:
        json.dump(data, f)

    in_file = set(tuple(e[k] for k in keys) for e in entries.values())

    def in_cache(*param_values):
        return param_values in in_file

    # Build the search space once per process and dataset, then hand it to every run
    # (construction with a function restriction is the slow part, and it is deterministic).
    built = {}
    original = kti.Searchspace

    def cached_searchspace(*args, **kwargs):
        if "space" not in built:
            built["space"] = original(*args, **kwargs)
        return built["space"]

    kti.Searchspace = cached_searchspace
    lines, manifest = [], []
    try:
        for seed in seeds:
            random.seed(seed)
            np.random.seed(seed)
            start = time.time()
            results, _ = kernel_tuner.tune_kernel(
                data["kernel_name"],
                "",
                tuple(data["problem_size"]) if isinstance(data["problem_size"], list)
                else data["problem_size"],
                [],
                data["tune_params"],
                restrictions=[FunctionConstraint(in_cache)],
                cache=cache_file,
                simulation_mode=True,
                strategy=strategy,
                strategy_options={"max_fevals": budget},
                quiet=True,
                verbose=False,
            )
            seconds = time.time() - start
            if built["space"].size != len(entries):
                raise RuntimeError(f"{name}: Kernel Tuner's space has {built['space'].size} "
                                   f"configurations, the file {len(entries)}")
            seen, trace = set(), []
            for r in results:
                key = ",".join(str(r[k]) for k in keys)
                if key in seen:
                    continue
                if key not in values:
                    raise RuntimeError(f"{name}: {strategy} evaluated {key}, not in the file")
                seen.add(key)
                trace.append(values[key])
            trace = trace[:budget]
            lines.append(f"{seed}\t" + " ".join(repr(v) if math.isfinite(v) else "inf"
                                                 for v in trace))
            manifest.append(f"{name}\t{strategy}\t{seed}\t{len(trace)}\t{seconds:.1f}")
            print(f"{name} {strategy} seed {seed}: {len(trace)}/{budget} evaluations, "
                  f"{seconds:.1f} s", flush=True)
    finally:
        kti.Searchspace = original
        os.remove(cache_file)
    return name, strategy, lines, manifest


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--datasets", default=os.path.join(here, "..", "..", "data"))
    ap.add_argument("--out", required=True)
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--first-seed", type=int, default=1000)
    ap.add_argument("--strategies", default=",".join(DEFAULT_STRATEGIES))
    ap.add_argument("--only", default="", help="comma-separated dataset names (kernel/file stem)")
    ap.add_argument("--budget", type=int, default=0, help="override the cutoff budget")
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--keep", action="store_true",
                    help="skip (dataset, strategy) pairs whose trace file already exists")
    args = ap.parse_args()

    files = []
    for kernel in sorted(os.listdir(args.datasets)):
        d = os.path.join(args.datasets, kernel)
        if not os.path.isdir(d) or kernel == "spaces":
            continue
        for f in sorted(os.listdir(d)):
            if f.endswith(".json.gz") or f.endswith(".json"):
                stem = f[:-8] if f.endswith(".json.gz") else f[:-5]
                name = f"{kernel}/{stem}"
                if not args.only or name in args.only.split(","):
                    files.append((os.path.join(d, f), name))
    if not files:
        sys.exit(f"no cache files under {args.datasets}")
    os.makedirs(args.out, exist_ok=True)
    seeds = list(range(args.first_seed, args.first_seed + args.seeds))
    tmpdir = tempfile.mkdtemp(prefix="kt-sim-")
    jobs = [(path, name, s, seeds, args.budget, tmpdir) for path, name in files
            for s in args.strategies.split(",")
            if not (args.keep and os.path.exists(trace_path(args.out, name, s)))]
    try:
        if args.jobs > 1:
            with multiprocessing.Pool(args.jobs) as pool:
                done = pool.imap_unordered(run_one, jobs)
                collect(done, args.out)
        else:
            collect(map(run_one, jobs), args.out)
    finally:
        shutil.rmtree(tmpdir, ignore_errors=True)


def trace_path(out, name, strategy):
    return os.path.join(out, f"{name.replace('/', '__')}__{strategy}.trace")


def collect(done, out):
    with open(os.path.join(out, "manifest.tsv"), "a") as manifest:
        for name, strategy, lines, rows in done:
            with open(trace_path(out, name, strategy), "w") as f:
                f.write("\n".join(lines) + "\n")
            manifest.write("\n".join(rows) + "\n")
            manifest.flush()


if __name__ == "__main__":
    main()
