#!/usr/bin/env bash
# Runs on the GPU machine, from the repo root, after `node tools/device/pack.mjs` filled .device/
# here (carry .device with the run). Unpacks node into a temp dir, runs the GPU test bundles (one
# node process per spec file, so a sticky CUDA error stays in its file), optionally the
# compute-sanitizer plan (run-sanitize.mjs), then each bench named on the command line; logs and
# JSON go to $OUT (default .device/out).
# The bundles share their code through .device/chunks/ and carry no source maps: back on the dev
# machine, `node tools/device/symbolize.mjs <log>` maps their stack traces to the .ts sources.
#
#   tools/device/run-on-gpu.sh [--sanitize[=families] | --sanitize-only[=families] | --benches-only] [bench-name ...]
#
# --benches-only runs neither the GPU tests nor the sanitizer, only the benches named.
# --sanitize runs compute-sanitizer over the plan's families (all, or the comma-separated ones
# given) after the GPU tests; --sanitize-only runs it instead of them. It writes $OUT/sanitize.json,
# $OUT/sanitize.log and $OUT/sanitize/<tool>-<family>.log; TILEKIT_SANITIZE_ARGS adds options of
# run-sanitize.mjs (e.g. "--tools memcheck,racecheck --budget 480").
# TILEKIT_GPU_FILE_TIMEOUT (seconds, default 900) stops a spec file whose process runs longer.
# .device/kernel-cache.tar.xz (pack.mjs --kernel-cache) is extracted into the kernel cache first, so
# its kernels are not compiled again; TILEKIT_EXPORT_CACHE=1 writes the cache at the end to
# $OUT/kernel-cache.tar.xz for the next pack.
set -uo pipefail
OUT="${OUT:-$PWD/.device/out}"
sanitize=""  # "", after or only
families=""
benches=()
for arg in "$@"; do
  case "$arg" in
    --sanitize) sanitize=after ;;
    --sanitize=*) sanitize=after; families="${arg#*=}" ;;
    --sanitize-only) sanitize=only ;;
    --sanitize-only=*) sanitize=only; families="${arg#*=}" ;;
    --benches-only) sanitize=none ;;
    -*) echo "run-on-gpu: unknown option $arg (--sanitize[=families], --sanitize-only[=families], --benches-only, then bench names)" >&2; exit 2 ;;
    *) benches+=("$arg") ;;
  esac
done
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
mkdir -p "$TILEKIT_CACHE_DIR"
if [ -f .device/kernel-cache.tar.xz ]; then
  if xz -dc .device/kernel-cache.tar.xz | tar -x -C "$TILEKIT_CACHE_DIR"; then
    echo "run-on-gpu: kernel cache: $(find "$TILEKIT_CACHE_DIR" -name meta.json | wc -l) entries from .device/kernel-cache.tar.xz"
  else
    echo "run-on-gpu: .device/kernel-cache.tar.xz did not extract; compiling every kernel" >&2
  fi
fi
{
  echo "== $(date -u +%FT%TZ) $(uname -a)"
  echo "== node $("$work/node" --version)"
  nvidia-smi --query-gpu=name,driver_version,memory.total,compute_cap --format=csv 2>&1 || true
  command -v nvcc && nvcc --version | tail -2
  command -v compute-sanitizer && compute-sanitizer --version | tail -1
  ldconfig -p 2>/dev/null | grep -E 'libcuda\.so|libnvrtc\.so' || true
  ls -l /usr/local/cuda/lib64/libnvrtc.so* 2>/dev/null || true
} > "$OUT/environment.txt" 2>&1
cat "$OUT/environment.txt"

status=0
if [ "$sanitize" != only ] && [ "$sanitize" != none ]; then
  "$work/node" tools/device/run-gpu-tests.mjs --bundles .device/gpu-tests --addon .device/tilekit_runtime.node \
    --file-timeout "${TILEKIT_GPU_FILE_TIMEOUT:-900}" --out "$OUT" 2>&1 | tee "$OUT/gpu-tests.log"
  [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
fi

if [ -n "$sanitize" ] && [ "$sanitize" != none ]; then
  # Word splitting of TILEKIT_SANITIZE_ARGS is intended: it holds options.
  # shellcheck disable=SC2086
  "$work/node" tools/device/run-sanitize.mjs --bundles .device/gpu-tests --addon .device/tilekit_runtime.node --out "$OUT" \
    ${families:+--families "$families"} ${TILEKIT_SANITIZE_ARGS:-} 2>&1 | tee "$OUT/sanitize.log"
  [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
fi

# ${a[@]+"${a[@]}"}: an empty array under set -u (bash before 4.4 calls "${a[@]}" unbound).
for bench in ${benches[@]+"${benches[@]}"}; do
  entry=".device/bench-$bench.mjs"
  if [ ! -f "$entry" ]; then echo "run-on-gpu: no bench bundle $entry" | tee -a "$OUT/bench-$bench.log"; status=1; continue; fi
  # Case files (inputs, outputs) live under $work, never under $OUT. TILEKIT_BENCH_ARGS adds options
  # of the bench entries (e.g. "--only s8192_d128").
  # shellcheck disable=SC2086
  "$work/node" "$entry" --out "$OUT" --work "$work/bench-$bench" ${TILEKIT_BENCH_ARGS:-} 2>&1 | tee "$OUT/bench-$bench.log"
  if [ "${PIPESTATUS[0]}" -ne 0 ]; then
    status=1
    echo "run-on-gpu: bench $bench failed; map its stack traces to the sources on the dev machine with: node tools/device/symbolize.mjs .device/out/bench-$bench.log" | tee -a "$OUT/bench-$bench.log"
  fi
done

if [ "${TILEKIT_EXPORT_CACHE:-0}" = 1 ]; then
  if tar -C "$TILEKIT_CACHE_DIR" -cf - . | xz -T0 -6 > "$OUT/kernel-cache.tar.xz"; then
    echo "run-on-gpu: wrote $OUT/kernel-cache.tar.xz ($(du -h "$OUT/kernel-cache.tar.xz" | cut -f1)," \
      "$(find "$TILEKIT_CACHE_DIR" -name meta.json | wc -l) entries): carry it with pack.mjs --kernel-cache"
  else
    echo "run-on-gpu: could not write $OUT/kernel-cache.tar.xz" >&2
    status=1
  fi
fi
exit $status
