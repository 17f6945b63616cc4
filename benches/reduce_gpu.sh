#!/usr/bin/env bash
# Kernel-only timings of every variant of reduce (both axes, every
# reduction), stats and histogram (256 and 4096 bins) through
# `filterctl bench`, on f32 gray and u8 RGBA images, with GB/s against the
# copy kernel's bandwidth that the same run measures.
#
#   benches/reduce_gpu.sh RELEASE_FILTERCTL OUT_DIR
#
# Environment: SIZE (default 8192x8192), ITERS (default 20), DEVICE
# (default gpu; `auto` on a machine whose only OpenCL device is PoCL).
# Writes OUT_DIR/<type>x<channels>.json (the BenchReports) and prints one
# table per configuration; rows a variant declines (the other axis, a
# missing extension) are left out of the table and kept in the JSON.
set -euo pipefail
if [ $# -ne 2 ]; then
    echo "usage: $0 RELEASE_FILTERCTL OUT_DIR   (env: SIZE=8192x8192 ITERS=20 DEVICE=gpu)" >&2
    exit 2
fi
bin=$1
out=$2
size=${SIZE:-8192x8192}
iters=${ITERS:-20}
device=${DEVICE:-gpu}
mkdir -p "$out"
for cfg in "f32 1" "u8 4"; do
    set -- $cfg
    json="$out/$1x$2.json"
    "$bin" --device "$device" bench --ops reduce,stats,histogram --size "$size" \
        --type "$1" --channels "$2" --iters "$iters" --no-cpu --json >"$json"
    python3 - "$json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
print(f"\n{r['device']}  {r['width']}x{r['height']}x{r['channels']} {r['sample']}  "
      f"copy kernel {r['copy_gb_per_s']:.1f} GB/s (read + write)")
print(f"{'op':10} {'variant':12} {'params':13} {'median ms':>10} {'GB/s':>8} {'% copy':>7}")
for row in r["rows"]:
    if row["error"]:
        continue
    pct = row["pct_of_copy"]
    print(f"{row['op']:10} {row['variant']:12} {row['params'] or '':13} {row['median_ms']:10.3f} "
          f"{row['gb_per_s']:8.1f} {pct:6.0f}%")
PY
done
