#!/usr/bin/env bash
# Runs on the GPU machine, from the repo root, after `node tools/device/pack.mjs` filled .device/
# here (carry .device with the run). Unpacks node into a temp dir, runs the GPU test bundles (one
# node process per spec file, so a sticky CUDA error stays in its file) and
# then each bench named on the command line; logs and JSON go to $OUT (default .device/out).
# The bundles share their code through .device/chunks/ and carry no source maps: back on the dev
# machine, `node tools/device/symbolize.mjs <log>` maps their stack traces to the .ts sources.
#
#   tools/device/run-on-gpu.sh [bench-name ...]
#
# TILEKIT_GPU_FILE_TIMEOUT (seconds, default 900) stops a spec file whose process runs longer.
set -uo pipefail
OUT="${OUT:-$PWD/.device/out}"
mkdir -p "$OUT"
[ -f .device/node.xz ] || { echo "run-on-gpu: .device/node.xz missing: run node tools/device/pack.mjs and carry .device" >&2; exit 2; }
[ -d .device/chunks ] || { echo "run-on-gpu: .device/chunks missing (a pack from before code splitting?): run node tools/device/pack.mjs again" >&2; exit 2; }
# The runtime's code sits in .device/chunks/, not beside the entry bundles: name the addon for
# every process (the tests and the benches) instead of relying on where a module lives.
export TILEKIT_ADDON_PATH="$PWD/.device/tilekit_runtime.node"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
xz -dc .device/node.xz > "$work/node" && chmod +x "$work/node" || { echo "run-on-gpu: cannot unpack node" >&2; exit 2; }
export PATH="$work:$PATH:/usr/local/cuda/bin"
export TILEKIT_CACHE_DIR="$work/kernel-cache"
{
  echo "== $(date -u +%FT%TZ) $(uname -a)"
  echo "== node $("$work/node" --version)"
  nvidia-smi --query-gpu=name,driver_version,memory.total,compute_cap --format=csv 2>&1 || true
  command -v nvcc && nvcc --version | tail -2
  ldconfig -p 2>/dev/null | grep -E 'libcuda\.so|libnvrtc\.so' || true
  ls -l /usr/local/cuda/lib64/libnvrtc.so* 2>/dev/null || true
} > "$OUT/environment.txt" 2>&1
cat "$OUT/environment.txt"

status=0
"$work/node" tools/device/run-gpu-tests.mjs --bundles .device/gpu-tests --addon .device/tilekit_runtime.node --file-timeout "${TILEKIT_GPU_FILE_TIMEOUT:-900}" --out "$OUT" 2>&1 | tee "$OUT/gpu-tests.log"
[ "${PIPESTATUS[0]}" -eq 0 ] || status=1

for bench in "$@"; do
  entry=".device/bench-$bench.mjs"
  if [ ! -f "$entry" ]; then echo "run-on-gpu: no bench bundle $entry" | tee -a "$OUT/bench-$bench.log"; status=1; continue; fi
  "$work/node" "$entry" --out "$OUT" 2>&1 | tee "$OUT/bench-$bench.log"
  if [ "${PIPESTATUS[0]}" -ne 0 ]; then
    status=1
    echo "run-on-gpu: bench $bench failed; map its stack traces to the sources on the dev machine with: node tools/device/symbolize.mjs .device/out/bench-$bench.log" | tee -a "$OUT/bench-$bench.log"
  fi
done
exit $status
