#!/usr/bin/env python3
"""CPU timings of transpose, normalize and minmax: filterctl's rayon path
(one or more builds, e.g. before and after a change) against OpenCV in one
run, best of 3 each, as a markdown table.

    python3 benches/ops_cpu.py [--size WxH] FILTERCTL [FILTERCTL ...]

Rows (random samples, WxH default 3840x2160):
- transpose f32 gray, u8 RGBA, and u8, u16 and f32 RGB (3-byte, 6-byte
  and 12-byte pixels, which have no square tiles): `cv2.transpose`;
- normalize u8 RGBA into u8 with sub 1, factor 0.5 (`bench`'s CPU
  coefficients): `cv2.convertScaleAbs(alpha=0.5, beta=-0.5)`, which is
  the same map on u8, and `cv2.LUT` with its 256-entry table;
- minmax u8 RGBA (per channel): `cv2.split` then `cv2.minMaxLoc` on each
  channel (OpenCV's minMaxLoc takes one channel).
filterctl's figure is the `min_ms` of `filterctl --device cpu bench
--iters 3` (the rayon path, 3 timed runs after a warm-up); OpenCV is timed
here the same way (best of 3 after a warm-up, time.perf_counter), with
cv2.setNumThreads(os.cpu_count()). Needs numpy and opencv-python-headless.
"""
import json
import os
import subprocess
import sys
import time

import cv2
import numpy as np


def best(f, runs=3):
    f()  # warm-up
    t = []
    for _ in range(runs):
        s = time.perf_counter()
        f()
        t.append(time.perf_counter() - s)
    return min(t) * 1e3


def filterctl(binary, size, sample, channels, ops):
    out = subprocess.run(
        [binary, "--device", "cpu", "bench", "--ops", ops, "--size", size,
         "--type", sample, "--channels", str(channels), "--iters", "3", "--json"],
        check=True, capture_output=True, text=True).stdout
    return {r["op"]: r["min_ms"] for r in json.loads(out)["rows"] if not r["error"]}


def main():
    args = sys.argv[1:]
    size = "3840x2160"
    if args[:1] == ["--size"]:
        size, args = args[1], args[2:]
    if not args:
        sys.exit(__doc__)
    w, h = (int(v) for v in size.split("x"))
    cv2.setNumThreads(os.cpu_count())
    rng = np.random.default_rng(21)
    f_gray = rng.random((h, w), dtype=np.float32)
    u_rgba = rng.integers(0, 256, (h, w, 4), dtype=np.uint8)
    rgb = {
        "u8": rng.integers(0, 256, (h, w, 3), dtype=np.uint8),
        "u16": rng.integers(0, 65536, (h, w, 3), dtype=np.uint16),
        "f32": rng.random((h, w, 3), dtype=np.float32),
    }
    table = np.clip(np.round((np.arange(256) - 1.0) * 0.5), 0, 255).astype(np.uint8)
    assert np.array_equal(cv2.convertScaleAbs(u_rgba, alpha=0.5, beta=-0.5), cv2.LUT(u_rgba, table))

    def split_minmax():
        return [cv2.minMaxLoc(c)[:2] for c in cv2.split(u_rgba)]

    peers = {
        "transpose f32 gray": [("cv2.transpose", lambda: cv2.transpose(f_gray))],
        "transpose u8 RGBA": [("cv2.transpose", lambda: cv2.transpose(u_rgba))],
        **{f"transpose {t} RGB": [("cv2.transpose", lambda a=a: cv2.transpose(a))]
           for t, a in rgb.items()},
        "normalize u8 RGBA": [
            ("cv2.convertScaleAbs", lambda: cv2.convertScaleAbs(u_rgba, alpha=0.5, beta=-0.5)),
            ("cv2.LUT", lambda: cv2.LUT(u_rgba, table)),
        ],
        "minmax u8 RGBA": [("cv2.split + 4x cv2.minMaxLoc", split_minmax)],
    }
    ours = []
    for b in args:
        r = {}
        r["transpose f32 gray"] = filterctl(b, size, "f32", 1, "transpose")["transpose"]
        u = filterctl(b, size, "u8", 4, "transpose,normalize,minmax")
        r["transpose u8 RGBA"] = u["transpose"]
        r["normalize u8 RGBA"] = u["normalize"]
        r["minmax u8 RGBA"] = u["minmax"]
        for t in rgb:
            r[f"transpose {t} RGB"] = filterctl(b, size, t, 3, "transpose")["transpose"]
        ours.append(r)

    cols = " | ".join(f"`{b}` ms" for b in args)
    print(f"OpenCV {cv2.__version__}, {cv2.getNumThreads()} threads, {size}; ratio: peer ms / last build's ms")
    print()
    print(f"| operation | {cols} | OpenCV call | OpenCV ms | last/OpenCV |")
    print("|---|" + "---:|" * len(args) + "---|---:|---:|")
    for op, calls in peers.items():
        mine = " | ".join(f"{r[op]:.2f}" for r in ours)
        for name, call in calls:
            ms = best(call)
            print(f"| {op} | {mine} | `{name}` | {ms:.2f} | {ms / ours[-1][op]:.2f}x |")


if __name__ == "__main__":
    main()
