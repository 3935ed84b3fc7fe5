#!/usr/bin/env bash
# Peer comparison on OpenCL (PoCL in CI): tunes the same GEMM space with tunekit and, when they
# are present, with Kernel Tuner (+ pyopencl) and CLTune's GEMM sample; prints for each the best
# configuration's time and the total tuning time. The peers are not dependencies: an absent
# peer is reported and skipped, and the script exits 0.
#
#   bench/peer/gemm_peer.sh [--tunekit PATH] [--shape m=256,n=256,k=256]
#   env: PEER_PYTHON (python with kernel_tuner + pyopencl; default python3),
#        CLTUNE_GEMM (path to CLTune's sample_gemm binary; default: found on PATH)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
tunekit="${TUNEKIT:-$root/build/bin/tunekit}"
shape="m=256,n=256,k=256"
while [ $# -gt 0 ]; do
  case "$1" in
    --tunekit) tunekit="$2"; shift 2 ;;
    --shape) shape="$2"; shift 2 ;;
    -h|--help) sed -n '2,10p' "$0"; exit 0 ;;
    *) echo "gemm_peer.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
py="${PEER_PYTHON:-python3}"
# Each tuner starts with an empty PoCL kernel cache of its own, so neither is handed the other's
# (or an earlier run's) compiled programs: total tuning time includes every compilation.
# POCL_CACHE_DIR is PoCL's; other runtimes ignore it.
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
fresh_cache() { local d="$scratch/pocl-$1"; mkdir -p "$d"; echo "$d"; }
m=$(sed -n 's/.*m=\([0-9]*\).*/\1/p' <<<"$shape"); n=$(sed -n 's/.*n=\([0-9]*\).*/\1/p' <<<"$shape")
k=$(sed -n 's/.*k=\([0-9]*\).*/\1/p' <<<"$shape")

echo "== GEMM space of kernels/opencl/sgemm.cl at $shape (48 configurations)"
if [ ! -x "$tunekit" ]; then
  echo "tunekit: not built at $tunekit (pass --tunekit PATH)"; exit 0
fi
if ! "$tunekit" devices | grep -q '^  0: '; then
  echo "tunekit: no OpenCL device; nothing to compare"; exit 0
fi
"$tunekit" devices | sed -n '/^opencl:/,/^  0:/p' | tail -1

# tunekit: exhaustive, every candidate validated against the CPU reference; no store, no
# paired confirmation (the peers have neither).
start=$(date +%s.%N)
json=$(POCL_CACHE_DIR="$(fresh_cache tunekit)" "$tunekit" tune sgemm --backend opencl --shape "$shape" --store none --confirm-pairs 0 \
       --json -q)
end=$(date +%s.%N)
printf '%s' "$json" | python3 -c '
import json, sys
r = json.load(sys.stdin)
best = min((c for c in r["candidates"] if c["status"] == "ok"), key=lambda c: c["score"])
ms, name = best["score"] * 1e3, best["name"]
total = float(sys.argv[2]) - float(sys.argv[1])
v, t = r["seconds_validating"], r["seconds_measuring"]
print(f"tunekit best {ms:.3f} ms median ({name}); total tuning time {total:.1f} s "
      f"(validating and compiling {v:.1f} s, measuring {t:.1f} s)")
' "$start" "$end"

if "$py" -c "import kernel_tuner, pyopencl" 2>/dev/null; then
  POCL_CACHE_DIR="$(fresh_cache kernel_tuner)" "$py" "$here/kernel_tuner_gemm.py" --m "$m" --n "$n" --k "$k"
else
  echo "kernel_tuner: absent (pip install kernel_tuner pyopencl, or set PEER_PYTHON); skipped"
fi

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
