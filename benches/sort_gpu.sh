#!/usr/bin/env bash
# GPU sort and median timings for the docs, in one run on one device (an
# H100 or H200 with CUDA, numpy, cupy and torch installed).
#
#   benches/sort_gpu.sh target/release/filterctl OUT_DIR [--no-median]
#
# - The sort table (benches/sort_gpu.py): filterctl's default choice and
#   its bitonic and radix variants, cupy.sort and torch.sort, all on the
#   same key files (uniform f32 in [-1, 1), and random bit patterns read as
#   f32) at 2^20, 2^24 and 2^27 keys; every filterctl output checked word
#   for word against a reference sort. See that script's docstring.
# - Unless --no-median: the median variants' kernel times at 8192x8192 u8
#   RGBA and f32 gray, radius 1, 2, 3.
# Prints Markdown tables and keeps the files in OUT_DIR.
set -euo pipefail
filterctl=${1:?usage: sort_gpu.sh FILTERCTL OUT_DIR [--no-median]}
out=${2:?usage: sort_gpu.sh FILTERCTL OUT_DIR [--no-median]}
mkdir -p "$out"
export FILTERCTL_CACHE_DIR="$out/cache"

python3 "$(dirname "$0")/sort_gpu.py" "$filterctl" "$out"
[ "${3:-}" = --no-median ] && exit 0

"$filterctl" --device gpu bench --ops median --size 8192x8192 --type u8 --channels 4 \
    --iters 3 --no-cpu --json > "$out/median_u8x4.json"
"$filterctl" --device gpu bench --ops median --size 8192x8192 --type f32 --channels 1 \
    --iters 3 --no-cpu --json > "$out/median_f32x1.json"
"$filterctl" devices > "$out/devices.txt"

python3 - "$out" <<'PY'
import json, sys
out = sys.argv[1]

print("| median 8192x8192 | radius | variant | best kernel ms | GB/s (read + write) |")
print("|---|---|---|---|---|")
for name, label in (("median_u8x4", "u8 RGBA"), ("median_f32x1", "f32 gray")):
    rep = json.load(open(f"{out}/{name}.json"))
    med = [r for r in rep["rows"] if r["op"] == "median"]
    per = len(med) // 3
    for i, r in enumerate(med):
        ms = r["min_ms"] if not r.get("error") else None
        gb = f"{r['gb_per_s']:.0f}" if ms else r.get("error", "")
        print(f"| {label} | {i // per + 1 if per else '?'} | {r['variant']} | {ms if ms is None else f'{ms:.3f}'} | {gb} |")
PY
