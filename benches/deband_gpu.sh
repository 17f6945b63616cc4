#!/usr/bin/env bash
# Kernel-only time of every deband variant, and the seed's layout
# experiment: the YCbCr16 filter kernel reading packed short3 (6 bytes a
# pixel), short4 padded to 8 bytes (aligned vector loads) and SoA planes.
#
#   benches/deband_gpu.sh FILTERCTL OUT_DIR
#
# FILTERCTL is a release build; DEVICE (default gpu) picks the device and
# ITERS (default 20) the timed runs per variant. For each size (3840x2160,
# 8192x8192) it runs `filterctl bench --ops deband` on u8 RGB (the ycc_*
# variants; the kernel-only time of a ycc variant is its filter kernel alone,
# on data converted once, as the seed's AviUtl filter got YCbCr frames) and
# on u8 RGBA (direct and rgba8), writes the JSON to OUT_DIR, and prints each
# variant's median and the short4 and SoA times relative to short3.
set -euo pipefail
BIN=${1:?FILTERCTL}; OUT=${2:?OUT_DIR}
DEV=${DEVICE:-gpu}; ITERS=${ITERS:-20}
mkdir -p "$OUT"
"$BIN" --device "$DEV" devices > "$OUT/devices.txt" 2>&1 || true
for size in 3840x2160 8192x8192; do
  for ch in 3 4; do
    "$BIN" --device "$DEV" bench --ops deband --type u8 --channels "$ch" --size "$size" \
      --iters "$ITERS" --no-cpu --json > "$OUT/deband-$size-u8x$ch.json" 2> "$OUT/stderr-$size-u8x$ch.txt"
  done
done
python3 - "$OUT" <<'PY'
import glob, json, os, sys
out = sys.argv[1]
for size in ("3840x2160", "8192x8192"):
    t = {}
    for ch in (3, 4):
        r = json.load(open(os.path.join(out, f"deband-{size}-u8x{ch}.json")))
        for row in r["rows"]:
            if row["error"] is None:
                t[(row["variant"], ch)] = row["median_ms"]
    print(f"{r['device']}  {size}  u8  range=15 threshold=4 grain=1 samples=4")
    for (v, ch), ms in sorted(t.items(), key=lambda kv: (kv[0][1], kv[0][0])):
        print(f"  {v:11s} u8x{ch}  {ms:9.3f} ms  {r['width'] * r['height'] / ms / 1e3:8.1f} MP/s")
    s3 = t.get(("ycc_short3", 3))
    for v in ("ycc_short4", "ycc_soa"):
        if s3 and (v, 3) in t:
            ms = t[(v, 3)]
            print(f"  {v} vs ycc_short3: time x{ms / s3:.3f} ({(s3 / ms - 1) * 100:+.1f}% speed)")
PY
