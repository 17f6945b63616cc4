#!/usr/bin/env bash
# GPU sort and median timings for docs/PERFORMANCE.md, in one run on one
# device (an H100 or H200 with CUDA, numpy, cupy and torch installed).
#
#   benches/sort_gpu.sh target/release/filterctl OUT_DIR
#
# - Each sort variant's kernel time (OpenCL profiling events: the kernels
#   only, words already on the device; the host's key mapping and the
#   transfers excluded) from `filterctl bench --ops sort`, best of 3 after a
#   warm-up, at 2^20, 2^24 and 2^27 f32 keys, keys alone and with u32 values.
# - cupy.sort and torch.sort (keys alone) and torch.sort with indices
#   (the pairs' counterpart) on the same device and sizes: CUDA events
#   around the call, a warm-up, best of 3.
# - The median variants' kernel times at 8192x8192 u8 RGBA and f32 gray,
#   radius 1, 2, 3.
# - A check on the GPU first: `filterctl sort --variant sort=radix` on 2^27
#   f32 keys uniform in [-1, 1) (CuPy's input below) and on 2^27 random
#   u32 words (every digit of every pass), compared byte for byte with
#   numpy.sort; the script stops if they differ.
# Prints a Markdown table (Gkeys/s = keys / time) and keeps the JSON in OUT_DIR.
set -euo pipefail
filterctl=${1:?usage: sort_gpu.sh FILTERCTL OUT_DIR}
out=${2:?usage: sort_gpu.sh FILTERCTL OUT_DIR}
mkdir -p "$out"
export FILTERCTL_CACHE_DIR="$out/cache"

python3 - "$out" <<'PY'
import sys
import numpy as np
out, n = sys.argv[1], 1 << 27
rng = np.random.default_rng(7)
(rng.random(n, dtype=np.float32) * 2 - 1).tofile(f"{out}/check_f32.raw")
rng.integers(0, 1 << 32, n, dtype=np.uint32).tofile(f"{out}/check_u32.raw")
PY
for t in f32 u32; do
    "$filterctl" --device gpu --variant sort=radix sort --type "$t" \
        "$out/check_$t.raw" -o "$out/sorted_$t.raw"
done
python3 - "$out" <<'PY'
import sys
import numpy as np
out = sys.argv[1]
for t, dt in (("f32", np.float32), ("u32", np.uint32)):
    want = np.sort(np.fromfile(f"{out}/check_{t}.raw", dtype=dt))
    got = np.fromfile(f"{out}/sorted_{t}.raw", dtype=dt)
    if want.tobytes() != got.tobytes():
        bad = int(np.flatnonzero(want.view(np.uint32) != got.view(np.uint32))[0])
        sys.exit(f"radix {t}: differs from numpy.sort at {bad} of {want.size}")
    print(f"radix {t}: {want.size} keys equal numpy.sort")
PY
rm -f "$out"/check_*.raw "$out"/sorted_*.raw

# n keys as a WxH job (the sort's tuning case sorts w*h*c keys).
sizes=("1024x1024" "4096x4096" "16384x8192")
for s in "${sizes[@]}"; do
    "$filterctl" --device gpu bench --ops sort --size "$s" --type f32 --channels 1 \
        --iters 3 --no-cpu --json > "$out/sort_$s.json"
done
"$filterctl" --device gpu bench --ops median --size 8192x8192 --type u8 --channels 4 \
    --iters 3 --no-cpu --json > "$out/median_u8x4.json"
"$filterctl" --device gpu bench --ops median --size 8192x8192 --type f32 --channels 1 \
    --iters 3 --no-cpu --json > "$out/median_f32x1.json"
"$filterctl" devices > "$out/devices.txt"

python3 - "$out" <<'PY'
import json, sys
out = sys.argv[1]
import numpy as np

def cuda_best(f, k=3):
    import torch
    f(); torch.cuda.synchronize()
    best = float("inf")
    for _ in range(k):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record(); f(); b.record(); torch.cuda.synchronize()
        best = min(best, a.elapsed_time(b))
    return best

rows = []
for s in ("1024x1024", "4096x4096", "16384x8192"):
    w, h = map(int, s.split("x"))
    n = w * h
    exp = n.bit_length() - 1
    rep = json.load(open(f"{out}/sort_{s}.json"))
    # The bench measures each parameter set in turn (keys, then pairs),
    # every variant in table order within each.
    sort_rows = [r for r in rep["rows"] if r["op"] == "sort"]
    half = len(sort_rows) // 2
    for i, r in enumerate(sort_rows):
        kind = "keys" if i < half else "pairs"
        if r.get("error"):
            rows.append((f"2^{exp}", f"clfilter {r['variant']} ({kind})", None, r["error"]))
        else:
            rows.append((f"2^{exp}", f"clfilter {r['variant']} ({kind})", r["min_ms"], ""))
    keys = np.random.default_rng(1).random(n, dtype=np.float32) * 2 - 1
    try:
        import cupy as cp
        d = cp.asarray(keys)
        rows.append((f"2^{exp}", "cupy.sort (keys)", cuda_best(lambda: cp.sort(d)), cp.__version__))
    except Exception as e:  # noqa: BLE001 - report and go on
        rows.append((f"2^{exp}", "cupy.sort (keys)", None, repr(e)))
    try:
        import torch
        t = torch.from_numpy(keys).cuda()
        rows.append((f"2^{exp}", "torch.sort (keys)", cuda_best(lambda: torch.sort(t)[0]), torch.__version__))
        rows.append((f"2^{exp}", "torch.sort (keys + indices)", cuda_best(lambda: torch.sort(t, stable=True)), torch.__version__))
    except Exception as e:  # noqa: BLE001
        rows.append((f"2^{exp}", "torch.sort", None, repr(e)))

print("| keys | sort | best ms | Gkeys/s | note |")
print("|---|---|---|---|---|")
for size, what, ms, note in rows:
    n = 2 ** int(size[2:])
    g = f"{n / (ms * 1e-3) / 1e9:.2f}" if ms else "-"
    print(f"| {size} | {what} | {ms:.3f} | {g} | {note} |" if ms else f"| {size} | {what} | - | - | {note} |")

print()
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
