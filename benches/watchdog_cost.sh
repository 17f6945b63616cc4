#!/usr/bin/env bash
# What watchdog-safe chunked dispatch costs (issue 20, item 5): the same
# device work unsplit (FILTERCTL_MAX_DISPATCH_MS=0) and split under limits
# of 2, 0.5 and 0.1 ms, two rounds each, on the NVIDIA GPU. Run on the GPU
# machine after registering NVIDIA's ICD:
#
#   benches/watchdog_cost.sh target/release/filterctl OUT_DIR
#
# Writes into OUT_DIR:
# - bench-LIMIT-ROUND.json: `filterctl bench` kernel times (every chunk's
#   event time summed) of the Gaussian at sigma 2 and 8, the median and the
#   histogram on 8192x8192 f32 gray;
# - apply-LIMIT-ROUND.json: `apply --json` of a 8192x8192 12-bit Bayer
#   frame through demosaic, a sigma 8 Gaussian and convert=u8 (wall time
#   per stage, and its dispatch count);
# - stream-LIMIT-ROUND.json: a 4096x3000 12p camera stream through the
#   same pipeline at sigma 2 (frames per second, wall clock);
# - summary.txt: one line per run.
set -u
B=${1:?usage: watchdog_cost.sh FILTERCTL OUT_DIR}
OUT=${2:?usage: watchdog_cost.sh FILTERCTL OUT_DIR}
mkdir -p "$OUT"
export FILTERCTL_CACHE_DIR
FILTERCTL_CACHE_DIR=$(mktemp -d)
frame=$(mktemp)
python3 -c "
import numpy as np, sys
np.random.default_rng(1).integers(0, 4096, 8192 * 8192, dtype=np.uint16).tofile(sys.argv[1])
" "$frame"
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; } >"$OUT/summary.txt"
for round in 1 2; do
  for lim in 0 2 0.5 0.1; do
    export FILTERCTL_MAX_DISPATCH_MS=$lim
    for sg in 2 8; do
      "$B" --device gpu -q bench --ops gaussian --sigma "$sg" --size 8192x8192 --type f32 \
        --channels 1 --iters 10 --no-cpu --json >"$OUT/bench-g$sg-$lim-$round.json" 2>>"$OUT/summary.txt"
    done
    "$B" --device gpu -q bench --ops median,histogram --size 8192x8192 --type f32 \
      --channels 1 --iters 10 --no-cpu --json >"$OUT/bench-mh-$lim-$round.json" 2>>"$OUT/summary.txt"
    "$B" --device gpu -q apply -f demosaic,gaussian=sigma=8,convert=u8 --size 8192x8192 \
      --format bayer_rggb12 "$frame" -o /dev/null --out-format ppm --json \
      >"$OUT/apply-$lim-$round.json" 2>>"$OUT/summary.txt"
    "$B" --device gpu -q stream -f demosaic,gaussian=2,convert=u8 --size 4096x3000 \
      --format bayer_rggb12p --synthetic 300 --json >"$OUT/stream-$lim-$round.json" 2>>"$OUT/summary.txt"
    echo "round $round limit $lim done $(date -u +%T)" >>"$OUT/summary.txt"
  done
done
rm -f "$frame"
