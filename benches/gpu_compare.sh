#!/usr/bin/env bash
# Before/after timing of every OpenCL variant on one GPU, in one run: both
# `filterctl` binaries time the same cases in alternating rounds
# (A B A B A B), and each variant keeps its best median. Used to show that a
# change kept every variant's speed (issue 16: within 3%).
#
#   benches/gpu_compare.sh BEFORE_BIN AFTER_BIN OUT_DIR [ROUNDS]
#
# Writes OUT_DIR/compare.txt (one line per case and variant: before ms,
# after ms, after/before) and OUT_DIR/stderr.txt; the raw JSON of every
# round goes to $RAW (default OUT_DIR/raw).
set -u
A=${1:?BEFORE_BIN}; B=${2:?AFTER_BIN}; OUT=${3:?OUT_DIR}; ROUNDS=${4:-3}
RAW=${RAW:-$OUT/raw}
mkdir -p "$OUT" "$RAW"
CA=$(mktemp -d); CB=$(mktemp -d)
DEV=${DEVICE:-gpu}
# name | bench arguments
CASES=(
  "all-f32x1|--size 8192x8192 --type f32 --channels 1"
  "all-f32x4|--size 8192x8192 --type f32 --channels 4"
  "all-u8x1|--size 8192x8192 --type u8 --channels 1"
  "all-u8x4|--size 8192x8192 --type u8 --channels 4"
  "gauss-s8-f32x1|--ops gaussian --sigma 8 --size 8192x8192 --type f32 --channels 1"
  "gauss-s100-f32x1|--ops gaussian --sigma 100 --size 8192x8192 --type f32 --channels 1"
  "gauss-s8-f32x4|--ops gaussian --sigma 8 --size 8192x8192 --type f32 --channels 4"
  "gauss-s8-4k-f32x1|--ops gaussian --sigma 8 --size 3840x2160 --type f32 --channels 1"
  "gauss-s8-4k-f32x4|--ops gaussian --sigma 8 --size 3840x2160 --type f32 --channels 4"
  "gauss-s2-4k-f32x1|--ops gaussian --sigma 2 --size 3840x2160 --type f32 --channels 1"
  "gauss-s8-fhd-f32x1|--ops gaussian --sigma 8 --size 1920x1080 --type f32 --channels 1"
  "demosaic-bilinear-u8x3|--ops demosaic --method bilinear --size 8192x8192 --type u8 --channels 3"
  "demosaic-mhc-u16x4|--ops demosaic --method mhc --size 8192x8192 --type u16 --channels 4"
  "demosaic-edge-u8x3|--ops demosaic --method edge --size 8192x8192 --type u8 --channels 3"
)
# ONLY=REGEX keeps the cases whose name matches.
if [ -n "${ONLY:-}" ]; then
  kept=()
  for c in "${CASES[@]}"; do
    [[ ${c%%|*} =~ $ONLY ]] && kept+=("$c")
  done
  CASES=("${kept[@]}")
fi
# QUICK=1 shrinks every case, to try the script on a slow device.
if [ "${QUICK:-0}" = 1 ]; then
  for i in "${!CASES[@]}"; do
    CASES[$i]=$(echo "${CASES[$i]}" | sed 's/8192x8192/256x192/; s/3840x2160/300x200/')
  done
fi
for r in $(seq 1 "$ROUNDS"); do
  for c in "${CASES[@]}"; do
    name=${c%%|*}; args=${c#*|}
    # shellcheck disable=SC2086
    FILTERCTL_CACHE_DIR=$CA "$A" --device "$DEV" -q bench $args --iters 20 --no-cpu --json >"$RAW/$name-before-$r.json" 2>>"$OUT/stderr.txt"
    # shellcheck disable=SC2086
    FILTERCTL_CACHE_DIR=$CB "$B" --device "$DEV" -q bench $args --iters 20 --no-cpu --json >"$RAW/$name-after-$r.json" 2>>"$OUT/stderr.txt"
  done
done
python3 - "$RAW" "$ROUNDS" <<'PY' | tee "$OUT/compare.txt"
import json, sys, glob, os
out, rounds = sys.argv[1], int(sys.argv[2])
names = sorted({os.path.basename(p).rsplit('-', 2)[0] for p in glob.glob(f"{out}/*-before-1.json")})
worst = 0.0
for n in names:
    best = {}
    for side in ("before", "after"):
        for r in range(1, rounds + 1):
            try:
                rep = json.load(open(f"{out}/{n}-{side}-{r}.json"))
            except Exception as e:
                print(f"{n} {side} round {r}: no report ({e})"); continue
            for row in rep["rows"]:
                if row.get("error") or row["variant"] == "cpu":
                    continue
                k = (row["op"], row["variant"])
                best.setdefault(k, {}).setdefault(side, []).append(row["median_ms"])
    for (op, v), d in sorted(best.items()):
        if "before" in d and "after" in d:
            b, a = min(d["before"]), min(d["after"])
            ratio = a / b
            worst = max(worst, ratio)
            print(f"{n:24} {op:10} {v:18} before {b:8.3f} ms  after {a:8.3f} ms  after/before {ratio:.3f}")
        else:
            print(f"{n:24} {op:10} {v:18} only {sorted(d)}")
print(f"worst after/before: {worst:.3f}")
PY
