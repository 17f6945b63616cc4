#!/usr/bin/env bash
# Bilateral kernel times on a GPU, for docs/PERFORMANCE.md ("Bilateral").
#
#   benches/bilateral_gpu.sh FILTERCTL OUT_DIR [SIZE]
#
# FILTERCTL is a release `filterctl` binary, OUT_DIR receives the raw JSON
# and results.txt, SIZE defaults to 3840x2160. For RGBA8 at radius 4
# (--sigma 2: radius ceil(2 sigma_s)) and radius 8 (--sigma 4), it runs
# `filterctl --device gpu bench --ops bilateral`, which times every variant
# with OpenCL profiling events (kernel only, data on the device) for both
# parameter sets, precision=exact and precision=fast (sigma_r 0.2 of full
# scale); the fast variants decline exact requests. It prints one line per
# variant and precision: median ms, GP/s, and taps per second.
#
# With python3 and cupy, it also measures the GPU's FP32 FMA rate (a
# kernel of independent fmaf chains) and prints each row's FMA budget per
# tap: FMA/s divided by taps/s. A tap costs about 10 FP32 operations (3
# differences, 3 FMAs of the distance, the exponent's multiply, one ex2,
# 4 accumulations), so a budget near 10 means the kernel runs at the
# arithmetic limit.
set -euo pipefail
BIN=${1:?usage: bilateral_gpu.sh FILTERCTL OUT_DIR [SIZE]}
OUT=${2:?usage: bilateral_gpu.sh FILTERCTL OUT_DIR [SIZE]}
SIZE=${3:-3840x2160}
mkdir -p "$OUT"
export FILTERCTL_CACHE_DIR="${FILTERCTL_CACHE_DIR:-$(mktemp -d)}"
log="$OUT/results.txt"
{
  echo "## date"; date -u
  command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv
  echo "## devices"; "$BIN" devices
} >"$log" 2>&1

FMA=""
if python3 -c "import cupy" 2>/dev/null; then
  FMA=$(python3 - <<'EOF'
import cupy as cp
src = r'''
extern "C" __global__ void fma_chains(float* out, int iters) {
    float b = 1.0000001f, c = -1e-7f;
    float v[8];
    for (int k = 0; k < 8; k++) v[k] = threadIdx.x * 1e-6f + k;
    for (int i = 0; i < iters; i++)
        for (int k = 0; k < 8; k++) v[k] = fmaf(v[k], b, c);
    float s = 0.0f;
    for (int k = 0; k < 8; k++) s += v[k];
    out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}'''
k = cp.RawKernel(src, "fma_chains")
blocks, threads, iters = 132 * 32, 256, 4096
out = cp.empty(blocks * threads, cp.float32)
k((blocks,), (threads,), (out, cp.int32(iters)))
start, end = cp.cuda.Event(), cp.cuda.Event()
best = float("inf")
for _ in range(5):
    start.record(); k((blocks,), (threads,), (out, cp.int32(iters))); end.record(); end.synchronize()
    best = min(best, cp.cuda.get_elapsed_time(start, end) / 1e3)
print(f"{blocks * threads * iters * 8 / best:.4e}")
EOF
) || FMA=""
  echo "## FP32 FMA rate (cupy, fmaf chains): ${FMA:-failed} FMA/s" >>"$log"
fi

for sigma in 2 4; do
  r=$((sigma * 2))
  json="$OUT/bilateral-rgba8-r$r.json"
  "$BIN" --device gpu -q bench --ops bilateral --type u8 --channels 4 --size "$SIZE" \
    --sigma "$sigma" --iters 30 --no-cpu --json >"$json"
  echo "## bilateral RGBA8 $SIZE radius $r" >>"$log"
  FMA="$FMA" R="$r" python3 - "$json" >>"$log" <<'EOF'
import json, math, os, sys
rep = json.load(open(sys.argv[1]))
r = int(os.environ["R"])
taps = sum(1 for dy in range(-r, r + 1) for dx in range(-r, r + 1) if dx * dx + dy * dy <= r * r)
fma = float(os.environ["FMA"]) if os.environ.get("FMA") else None
print(f"device: {rep['device']}; {rep['width']}x{rep['height']} RGBA8; {taps} taps")
print(f"{'variant':12} {'precision':9} {'median ms':>10} {'GP/s':>7} {'Gtaps/s':>8} {'FMA/tap':>8}")
for row in rep["rows"]:
    precision = row["params"].split()[-1]
    if row["error"]:
        if "declines" not in row["error"]:
            print(f"{row['variant']:12} {precision:9} error: {row['error']}")
        continue
    gps = row["mp_per_s"] / 1e3
    budget = f"{fma / (gps * 1e9 * taps):8.1f}" if fma else "       -"
    print(f"{row['variant']:12} {precision:9} {row['median_ms']:10.3f} {gps:7.3f} {gps * taps:8.2f} {budget}")
EOF
done
cat "$log"
