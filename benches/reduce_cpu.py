#!/usr/bin/env python3
"""CPU timings of reduce, stats and histogram: filterctl's rayon path
against numpy and OpenCV in one run, best of 3 each, as a markdown table.

    python3 benches/reduce_cpu.py RELEASE_FILTERCTL [WxH [stats]]

Images of WxH (default 3840x2160) with random samples: f32 gray (reduce,
stats), u8 gray and RGBA (reduce, histogram), u8 and u16 gray, RGB and
RGBA (stats; `stats` as the third argument: these rows only).
filterctl's rows are its `bench --device cpu` rows (the rayon path,
`min_ms` of 3 timed runs after a warm-up; its generated image is random
too); numpy and OpenCV are timed here the same way
(time.perf_counter). Needs numpy and opencv-python-headless.
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


def filterctl(binary, size, sample, channels, ops):
    out = subprocess.run(
        [binary, "--device", "cpu", "bench", "--ops", ops, "--size", size,
         "--type", sample, "--channels", str(channels), "--iters", "3", "--json"],
        check=True, capture_output=True, text=True).stdout
    # a row without parameters (stats) has "params": null in the JSON
    return {(r["op"], r["params"] or ""): r["min_ms"]
            for r in json.loads(out)["rows"] if not r["error"]}


REDUCE_OPS = (("sum", np.sum, cv2.REDUCE_SUM), ("mean", np.mean, cv2.REDUCE_AVG),
              ("min", np.min, cv2.REDUCE_MIN), ("max", np.max, cv2.REDUCE_MAX))


def reduce_rows(fc, img, label, ops=REDUCE_OPS):
    rows = []
    for axis, np_axis, cv_dim in (("x", 1, 1), ("y", 0, 0)):
        for op, npf, cvop in ops:
            rows.append((f"reduce axis={axis} op={op} ({label})", fc[("reduce", f"{axis} {op}")],
                         best(lambda: npf(img, axis=np_axis)), f"numpy.{npf.__name__}(axis={np_axis})",
                         best(lambda: cv2.reduce(img, cv_dim, cvop, dtype=cv2.CV_32F)),
                         f"cv2.reduce(dim={cv_dim})"))
    return rows


def stats_row(fc, img, label):
    if img.ndim == 2:
        cv_ms = best(lambda: (cv2.meanStdDev(img), cv2.minMaxLoc(img)))
        cv_call = "cv2.meanStdDev + cv2.minMaxLoc"
    else:
        # minMaxLoc takes one channel: OpenCV's faster of two ways to get
        # each channel's extremes, after meanStdDev (which does channels).
        h, w, c = img.shape
        flat = img.reshape(h, w * c)
        split = best(lambda: (cv2.meanStdDev(img), [cv2.minMaxLoc(p) for p in cv2.split(img)]))
        reduce = best(lambda: (cv2.meanStdDev(img), cv2.reduce(flat, 0, cv2.REDUCE_MIN),
                               cv2.reduce(flat, 0, cv2.REDUCE_MAX)))
        cv_ms, cv_call = min((split, "cv2.meanStdDev + cv2.split + cv2.minMaxLoc per channel"),
                             (reduce, "cv2.meanStdDev + cv2.reduce MIN, MAX over rows"))
    return (f"stats: sum, mean, std, min, max ({label})", fc[("stats", "")],
            best(lambda: (img.sum(dtype=np.float64), img.mean(), img.std(), img.min(), img.max())),
            "sum, mean, std, min, max (5 passes)", cv_ms, cv_call)


def hist_rows(fc, img, label):
    ch = 1 if img.ndim == 2 else img.shape[2]

    def calc(bins, hi):
        return [cv2.calcHist([img], [c], None, [bins], [0, hi]) for c in range(ch)]

    def npcount(bins):
        planes = [img] if ch == 1 else [img[:, :, c] for c in range(ch)]
        if bins == 256:
            return [np.bincount(p.ravel(), minlength=256) for p in planes]
        return [np.histogram(p, bins, (0, 255)) for p in planes]

    calls = "cv2.calcHist" + ("" if ch == 1 else f" x{ch} channels")
    return [(f"histogram 256 bins ({label})", fc[("histogram", "bins<=256")],
             best(lambda: npcount(256)), "numpy.bincount",
             best(lambda: calc(256, 256)), calls),
            (f"histogram 4096 bins ({label})", fc[("histogram", "bins<=4096")],
             best(lambda: npcount(4096)), "numpy.histogram",
             best(lambda: calc(4096, 255.0001)), calls)]


def stats_rows(binary, size, rng, w, h):
    """Integer stats rows: u8 gray, RGB, RGBA and u16 gray, RGB, RGBA."""
    rows = []
    for sample, hi, dtype in (("u8", 256, np.uint8), ("u16", 65536, np.uint16)):
        for c, name in ((1, "gray"), (3, "RGB"), (4, "RGBA")):
            img = rng.integers(0, hi, (h, w, c) if c > 1 else (h, w), dtype=dtype)
            rows.append(stats_row(filterctl(binary, size, sample, c, "stats"), img, f"{sample} {name}"))
    return rows


def main():
    if len(sys.argv) not in (2, 3, 4):
        sys.exit(__doc__)
    binary = sys.argv[1]
    size = sys.argv[2] if len(sys.argv) >= 3 else "3840x2160"
    w, h = (int(v) for v in size.split("x"))
    rng = np.random.default_rng(20)
    if sys.argv[3:] == ["stats"]:
        rows = stats_rows(binary, size, rng, w, h)
    else:
        f = rng.random((h, w), dtype=np.float32)
        u = rng.integers(0, 256, (h, w), dtype=np.uint8)
        u4 = rng.integers(0, 256, (h, w, 4), dtype=np.uint8)
        rows = reduce_rows(filterctl(binary, size, "f32", 1, "reduce"), f, "f32")
        rows.append(stats_row(filterctl(binary, size, "f32", 1, "stats"), f, "f32"))
        fc = filterctl(binary, size, "u8", 1, "reduce,histogram")
        rows += reduce_rows(fc, u, "u8 gray", REDUCE_OPS[:2])
        rows += hist_rows(fc, u, "u8 gray")
        fc = filterctl(binary, size, "u8", 4, "reduce,histogram")
        rows += reduce_rows(fc, u4, "u8 RGBA", REDUCE_OPS[:2])
        rows += hist_rows(fc, u4, "u8 RGBA")
        rows += stats_rows(binary, size, rng, w, h)

    print(f"{size}, best of 3 ms; numpy {np.__version__}, OpenCV {cv2.__version__} "
          f"({cv2.getNumThreads()} threads)\n")
    print("| operation | filterctl cpu | numpy | (numpy call) | OpenCV | (OpenCV call) | ours/OpenCV |")
    print("|---|---:|---:|---|---:|---|---:|")
    for name, ours, npt, npc, cvt, cvc in rows:
        print(f"| {name} | {ours:.2f} | {npt:.2f} | `{npc}` | {cvt:.2f} | `{cvc}` | {cvt / ours:.2f}x |")


if __name__ == "__main__":
    main()
