#!/usr/bin/env python3
"""CPU timings of reduce, stats and histogram: filterctl's rayon path
against numpy and OpenCV in one run, best of 3 each, as a markdown table.

    python3 benches/reduce_cpu.py RELEASE_FILTERCTL [WxH]

reduce and stats time an f32 gray image, histogram a u8 gray image, all
of WxH (default 3840x2160) with random samples. filterctl's rows are its
`bench --device cpu` rows (the rayon path, `min_ms` of 3 timed runs after
a warm-up); numpy and OpenCV are timed here the same way (time.perf_counter).
Needs numpy and opencv-python-headless.
"""
import json
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


def filterctl(binary, size, sample, ops):
    out = subprocess.run(
        [binary, "--device", "cpu", "bench", "--ops", ops, "--size", size,
         "--type", sample, "--iters", "3", "--json"],
        check=True, capture_output=True, text=True).stdout
    # a row without parameters (stats) has "params": null in the JSON
    return {(r["op"], r["params"] or ""): r["min_ms"]
            for r in json.loads(out)["rows"] if not r["error"]}


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    binary = sys.argv[1]
    size = sys.argv[2] if len(sys.argv) == 3 else "3840x2160"
    w, h = (int(v) for v in size.split("x"))
    rng = np.random.default_rng(20)
    f = rng.random((h, w), dtype=np.float32)
    u = rng.integers(0, 256, (h, w), dtype=np.uint8)
    fc = filterctl(binary, size, "f32", "reduce,stats")
    fc.update({(k[0] + " u8", k[1]): v for k, v in filterctl(binary, size, "u8", "histogram").items()})

    rows = []
    for axis, np_axis, cv_dim in (("x", 1, 1), ("y", 0, 0)):
        for op, npf, cvop in (("sum", np.sum, cv2.REDUCE_SUM), ("mean", np.mean, cv2.REDUCE_AVG),
                              ("min", np.min, cv2.REDUCE_MIN), ("max", np.max, cv2.REDUCE_MAX)):
            rows.append((f"reduce axis={axis} op={op} (f32)", fc[("reduce", f"{axis} {op}")],
                         best(lambda: npf(f, axis=np_axis)), f"numpy.{npf.__name__}(axis={np_axis})",
                         best(lambda: cv2.reduce(f, cv_dim, cvop, dtype=cv2.CV_32F)),
                         f"cv2.reduce(dim={cv_dim})"))
    rows.append(("stats: sum, mean, std, min, max (f32)", fc[("stats", "")],
                 best(lambda: (f.sum(dtype=np.float64), f.mean(), f.std(), f.min(), f.max())),
                 "sum, mean, std, min, max (5 passes)",
                 best(lambda: (cv2.meanStdDev(f), cv2.minMaxLoc(f))),
                 "cv2.meanStdDev + cv2.minMaxLoc"))
    rows.append(("histogram 256 bins (u8)", fc[("histogram u8", "bins<=256")],
                 best(lambda: np.bincount(u.ravel(), minlength=256)), "numpy.bincount",
                 best(lambda: cv2.calcHist([u], [0], None, [256], [0, 256])), "cv2.calcHist"))
    rows.append(("histogram 4096 bins (u8)", fc[("histogram u8", "bins<=4096")],
                 best(lambda: np.histogram(u, 4096, (0, 255))), "numpy.histogram",
                 best(lambda: cv2.calcHist([u], [0], None, [4096], [0, 255.0001])), "cv2.calcHist"))

    print(f"{size}, best of 3 ms; numpy {np.__version__}, OpenCV {cv2.__version__} "
          f"({cv2.getNumThreads()} threads)\n")
    print("| operation | filterctl cpu | numpy | (numpy call) | OpenCV | (OpenCV call) |")
    print("|---|---:|---:|---|---:|---|")
    for name, ours, npt, npc, cvt, cvc in rows:
        print(f"| {name} | {ours:.2f} | {npt:.2f} | `{npc}` | {cvt:.2f} | `{cvc}` |")


if __name__ == "__main__":
    main()
