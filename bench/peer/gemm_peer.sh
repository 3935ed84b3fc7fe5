#!/usr/bin/env bash
# Peer comparison on OpenCL (PoCL in CI): tunes the same GEMM space (kernels/opencl/sgemm.cl,
# the 876,532 points of sgemm_space() in kernels/opencl/cl_sgemm.cpp) on the same problem under
# the same wall-clock budget with tunekit and, when present, with Kernel Tuner (+ pyopencl)
# and CLTune's GEMM sample; prints for each the best configuration, its time as the tuner
# measured it, the total tuning time and what it was spent on; then re-times both picks with
# one independent loop (bench/peer/retime_sgemm_cl.py: warm launches, OpenCL events) so the
# best warm times are compared with one instrument. The peers are not dependencies: an absent
# peer is reported and skipped, and the script exits 0.
#
#   bench/peer/gemm_peer.sh [--tunekit PATH] [--shape m=1024,n=1024,k=1024] [--budget 120]
#                           [--strategy bayes:init=6] [--kt-strategy adaptive_tabu_greywolf]
#                           [--out DIR]   (defaults: the strategies of docs/opencl.md's run)
#   env: PEER_PYTHON (python with kernel_tuner + pyopencl; default python3),
#        CLTUNE_GEMM (path to CLTune's sample_gemm binary; default: found on PATH)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
tunekit="${TUNEKIT:-$root/build/bin/tunekit}"
shape="m=1024,n=1024,k=1024"
budget=120
strategy=bayes:init=6
kt_strategy=adaptive_tabu_greywolf
out=""
while [ $# -gt 0 ]; do
  case "$1" in
    --tunekit) tunekit="$2"; shift 2 ;;
    --shape) shape="$2"; shift 2 ;;
    --budget) budget="$2"; shift 2 ;;
    --strategy) strategy="$2"; shift 2 ;;
    --kt-strategy) kt_strategy="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    -h|--help) sed -n '2,15p' "$0"; exit 0 ;;
    *) echo "gemm_peer.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
py="${PEER_PYTHON:-python3}"
# Each tuner starts with an empty PoCL kernel cache of its own, so neither is handed the other's
# (or an earlier run's) compiled programs: total tuning time includes every compilation.
# POCL_CACHE_DIR is PoCL's; other runtimes ignore it.
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
[ -n "$out" ] || out="$scratch"
mkdir -p "$out"
fresh_cache() { local d="$scratch/pocl-$1"; mkdir -p "$d"; echo "$d"; }
m=$(sed -n 's/.*m=\([0-9]*\).*/\1/p' <<<"$shape"); n=$(sed -n 's/.*n=\([0-9]*\).*/\1/p' <<<"$shape")
k=$(sed -n 's/.*k=\([0-9]*\).*/\1/p' <<<"$shape")

echo "== GEMM space of kernels/opencl/sgemm.cl at $shape (876,532 configurations), budget ${budget} s"
echo "$(uptime | sed 's/.*load average/load average/')"
if [ ! -x "$tunekit" ]; then
  echo "tunekit: not built at $tunekit (pass --tunekit PATH)"; exit 0
fi
if ! "$tunekit" devices | grep -q '^  0: '; then
  echo "tunekit: no OpenCL device; nothing to compare"; exit 0
fi
"$tunekit" devices | sed -n '/^opencl:/,/^  0:/p' | tail -1

# tunekit: every candidate validated against the CPU reference; no store, no paired
# confirmation (Kernel Tuner has neither, and the confirmation is not cut by the budget).
start=$(date +%s.%N)
POCL_CACHE_DIR="$(fresh_cache tunekit)" "$tunekit" tune sgemm --backend opencl --shape "$shape" \
  --strategy "$strategy" --budget "${budget}s" --store none --confirm-pairs 0 --json -q \
  > "$out/tunekit.json"
end=$(date +%s.%N)
tk_pick=$(python3 - "$out/tunekit.json" "$start" "$end" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
ok = [c for c in r["candidates"] if c["status"] == "ok"]
best = min(ok, key=lambda c: c["score"])
total = float(sys.argv[3]) - float(sys.argv[2])
s = r["search"]
print(f"tunekit ({s['strategy']}, seed {s['seed']}): {len(ok)} of {s['evaluated']} evaluated "
      f"configurations measured, stop: {s['stop_reason']}", file=sys.stderr)
print(f"tunekit best {best['score'] * 1e3:.3f} ms median ({best['name']}); total tuning time "
      f"{total:.1f} s (compiling {r['seconds_compiling']:.1f} s, validating "
      f"{r['seconds_validating']:.1f} s, measuring {r['seconds_measuring']:.1f} s)", file=sys.stderr)
print(best["name"])
EOF
)

echo "$(uptime | sed 's/.*load average/load average/')"

kt_pick=""
if "$py" -c "import kernel_tuner, pyopencl" 2>/dev/null; then
  rm -f "$out/kernel_tuner.json"
  POCL_CACHE_DIR="$(fresh_cache kernel_tuner)" "$py" "$here/kernel_tuner_gemm.py" --m "$m" --n "$n" \
    --k "$k" --strategy "$kt_strategy" --time-limit "$budget" --json "$out/kernel_tuner.json" ||
    echo "kernel_tuner: failed (exit $?)"
  [ -f "$out/kernel_tuner.json" ] && kt_pick=$("$py" -c '
import json, sys
b = json.load(open(sys.argv[1]))["best"]
names = ["MWG","NWG","KWG","MDIMC","NDIMC","VWM","VWN","SA","SB","MDIMA","NDIMB","KWI","STRM","STRN"]
print(",".join(f"{p}={b[p]}" for p in names) if b else "")' "$out/kernel_tuner.json")
  echo "$(uptime | sed 's/.*load average/load average/')"
else
  echo "kernel_tuner: absent (pip install kernel_tuner pyopencl, or set PEER_PYTHON); skipped"
fi

# Both picks re-timed by one independent loop (needs pyopencl): 20 warm launches each,
# interleaved launch by launch so a change of load moves both alike.
if "$py" -c "import pyopencl" 2>/dev/null && [ -n "$tk_pick" ]; then
  args=(--config "$tk_pick")
  [ -n "$kt_pick" ] && args+=(--config "$kt_pick")
  POCL_CACHE_DIR="$(fresh_cache retime)" "$py" "$here/retime_sgemm_cl.py" "${args[@]}" \
    --m "$m" --n "$n" --k "$k" --runs 20 --json | tee "$out/retime.json" | "$py" -c '
import json, sys
for who, line in zip(["tunekit", "kernel_tuner"], sys.stdin):
    r = json.loads(line)
    e = r["event_ms"]
    med, lo, hi, gf, ok = e["median"], e["min"], e["p90"], r["gflops_event_median"], r["correct"]
    print(f"{who} pick re-timed: median {med:.2f} ms (min {lo:.2f}, p90 {hi:.2f}) = "
          f"{gf:.1f} GFLOP/s, correct={ok}")' || echo "re-timing: failed"
fi
echo "$(uptime | sed 's/.*load average/load average/')"

cltune="${CLTUNE_GEMM:-$(command -v sample_gemm || true)}"
if [ -n "$cltune" ] && [ -x "$cltune" ]; then
  # CLTune's sample tunes its own CLBlast-style gemm.cl (same parameter names, its own kernel
  # and ranges): a comparison of tuners on a neighbouring space, not on this exact one.
  start=$(date +%s.%N)
  POCL_CACHE_DIR="$(fresh_cache cltune)" "$cltune" | tail -5
  end=$(date +%s.%N)
  python3 -c "import sys; print(f'cltune total tuning time {float(sys.argv[2]) - float(sys.argv[1]):.1f} s')" "$start" "$end"
else
  echo "cltune: sample_gemm absent (build CLTune's samples, or set CLTUNE_GEMM); skipped"
fi
