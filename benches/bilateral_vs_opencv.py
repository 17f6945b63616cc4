#!/usr/bin/env python3
"""The CPU bilateral filter against OpenCV's, on the same window, in one run.

    python3 benches/bilateral_vs_opencv.py [--filterctl target/release/filterctl]
        [--size 3840x2160] [--sigma-s 3 ...] [--rounds 3]

For each sigma_s (radius ceil(2 sigma_s), sigma_r 0.2 of full scale: the
bench case's, `ops::bilateral::tune::CASE_SIGMA_R`), it alternates
`rounds` times between

  * `filterctl --device cpu bench --ops bilateral --type u8 --channels 3
    --sigma S --iters 3 --json`: the rayon CPU path on a random RGB8 image,
    its fastest of 3 timed runs (after a warm-up run), and
  * `cv2.bilateralFilter(img, d=2 radius + 1, sigmaColor=0.2 * 255,
    sigmaSpace=S)` on a random RGB8 image of the same size, its fastest of 3,

and keeps each side's best. OpenCV's window is the disk of radius d // 2
(`sqrt(dx² + dy²) <= radius`), ours is dx² + dy² <= radius²: the same taps.
OpenCV measures colour distance as the L1 sum |dr| + |dg| + |db| with a
table, ours is Euclidean with exp(); their work per tap is alike. Both use
all cores (OpenCV's `getNumThreads()` and rayon's pool are printed).

Prints one line per sigma: both times, MP/s, and OpenCV's time over ours.
"""

import argparse
import json
import math
import os
import subprocess
import sys
import time

import cv2
import numpy as np

SIGMA_R = 0.2


def filterctl_best(exe, w, h, sigma):
    out = subprocess.run(
        [exe, "--device", "cpu", "-q", "bench", "--ops", "bilateral", "--type", "u8",
         "--channels", "3", "--size", f"{w}x{h}", "--sigma", str(sigma), "--iters", "3",
         "--json"],
        check=True, capture_output=True, text=True).stdout
    rows = [r for r in json.loads(out)["rows"] if r["variant"] == "cpu" and not r["error"]]
    if not rows:
        sys.exit(f"filterctl bench returned no CPU row: {out}")
    return min(r["min_ms"] for r in rows) / 1e3


def opencv_best(img, d, sigma):
    best = math.inf
    for _ in range(3):
        t = time.perf_counter()
        cv2.bilateralFilter(img, d, SIGMA_R * 255.0, sigma)
        best = min(best, time.perf_counter() - t)
    return best


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--filterctl", default="target/release/filterctl")
    ap.add_argument("--size", default="3840x2160")
    ap.add_argument("--sigma-s", type=float, nargs="+", default=[2.0, 3.0])
    ap.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args()
    w, h = (int(v) for v in a.size.split("x"))
    img = np.random.default_rng(1).integers(0, 256, (h, w, 3), dtype=np.uint8)
    print(f"size {w}x{h} RGB u8, sigma_r {SIGMA_R} of full scale; "
          f"OpenCV {cv2.__version__} with {cv2.getNumThreads()} threads; "
          f"{os.cpu_count()} CPUs; best of 3, {a.rounds} alternating rounds")
    for sigma in a.sigma_s:
        radius = math.ceil(2 * sigma)
        d = 2 * radius + 1
        ours = theirs = math.inf
        for _ in range(a.rounds):
            ours = min(ours, filterctl_best(a.filterctl, w, h, sigma))
            theirs = min(theirs, opencv_best(img, d, sigma))
        mp = w * h / 1e6
        print(f"sigma_s {sigma} radius {radius} (OpenCV d={d}): "
              f"filterctl cpu {ours * 1e3:.1f} ms ({mp / ours:.1f} MP/s), "
              f"OpenCV {theirs * 1e3:.1f} ms ({mp / theirs:.1f} MP/s), "
              f"ratio {theirs / ours:.2f}x")


if __name__ == "__main__":
    main()
