#!/usr/bin/env python3
"""CPU comparisons for docs/PERFORMANCE.md, in one run, best of 3 each:
- the rayon median (radius 1, 2, 3) against OpenCV's cv2.medianBlur (ksize
  3, 5, 7) on 3840x2160 u8 RGB and gray random images, and radius 1, 2 on
  u16 and f32 RGB (the only ksizes medianBlur takes for them; OpenCV's
  border is replicate too; both cost the same on any data);
- the rayon Gaussian on 3840x2160 u8 RGB and gray at sigma 1, 2, 3, 4
  (replicate border) against cv2.GaussianBlur with BORDER_REPLICATE, once
  with our window (the u8 fixed point's radius, about 3.5 sigma, see
  docs/KERNELS.md: ksize 7, 15, 21, 29) and once with OpenCV's default for
  u8 (ksize (0, 0): round(6 sigma + 1) | 1);
- the rayon Gaussian on 3840x2160 f32 gray and RGBA at sigma 2, 8, 32
  (replicate border) against cv2.GaussianBlur with its default window for
  float images (ksize (0, 0): round(8 sigma + 1) | 1);
- OpenCV timed twice: into a new array each call (as ours allocates), and
  into one `dst=` array kept across calls (as ours reuses a dropped
  output's memory from the second call on, clfilter::image::recycle);
- the rayon sort against numpy.sort and Rust's par_sort_unstable at 2^20
  and 2^24 f32 keys.

Run from the project root after `cargo build --release --example cpu_compare`:
    python3 benches/cpu_compare.py [target/release/examples/cpu_compare [BEFORE [ONLY]]]
BEFORE: a second build of the example (e.g. of main) timed in the same run,
as an extra column. ONLY: `median`, `gaussian`, `gaussian_f32` or `sort` for
one group.
"""
import math, subprocess, sys, time
import numpy as np

exe = sys.argv[1] if len(sys.argv) > 1 else "target/release/examples/cpu_compare"
before = sys.argv[2] if len(sys.argv) > 2 and sys.argv[2] != "-" else None
only = sys.argv[3] if len(sys.argv) > 3 else None

def best(f, k=3):
    f()
    ts = []
    for _ in range(k):
        t = time.perf_counter(); f(); ts.append(time.perf_counter() - t)
    return min(ts) * 1e3

def rust(*args, binary=None):
    out = subprocess.run([binary or exe, *args], check=True, capture_output=True, text=True).stdout
    return {l.split()[0]: float(l.split()[1]) for l in out.splitlines()}

def both(*args):
    """Our timings, and the BEFORE build's (or None), same run."""
    return rust(*args), (rust(*args, binary=before) if before else None)

def row(what, size, key, ours, old, peer, peer_ms, kept_ms=None):
    """A table row; `kept_ms` is the peer writing into one output array
    kept across calls (`dst=`), as ours reuses a dropped output's memory
    (clfilter::image::recycle); `peer_ms` allocates a new one each call."""
    b = f"{old[key]:.1f}" if old and key in old else "-"
    ratio = peer_ms / ours[key]
    kept = f"{kept_ms:.1f} | {kept_ms / ours[key]:.2f}x" if kept_ms is not None else "- | -"
    print(f"| {what} | {size} | {b} | {ours[key]:.1f} | {peer} | {peer_ms:.1f} | {ratio:.2f}x | {kept} |")

try:
    import cv2
    cv2.setNumThreads(2)
except ImportError:
    cv2 = None

print("| what | size | before ms | clfilter rayon ms | peer | peer ms | ours/peer | peer ms, kept dst | ours/peer, kept dst |")
print("|---|---|---:|---:|---|---:|---:|---:|---:|")
if only in (None, "median"):
    r, b = both("median")
    rng = np.random.default_rng(1)
    rgb = rng.integers(0, 256, (2160, 3840, 3), dtype=np.uint8)
    gray = rng.integers(0, 256, (2160, 3840), dtype=np.uint8)
    if cv2 is not None:
        rgb16 = rng.integers(0, 65536, (2160, 3840, 3), dtype=np.uint16)
        rgbf = rng.random((2160, 3840, 3), dtype=np.float32)
        for name, img, key, radii in (("u8 RGB", rgb, "", (1, 2, 3)), ("u8 gray", gray, "_gray", (1, 2, 3)),
                                      ("u16 RGB", rgb16, "_u16", (1, 2)), ("f32 RGB", rgbf, "_f32", (1, 2))):
            for rad in radii:
                k = 2 * rad + 1
                ms = best(lambda: cv2.medianBlur(img, k))
                dst = np.empty_like(img)
                kept = best(lambda: cv2.medianBlur(img, k, dst=dst))
                row(f"median r={rad} ({k}x{k}) {name}", "3840x2160", f"clfilter_median{key}_r{rad}",
                    r, b, f"cv2.medianBlur {cv2.__version__} ksize {k}", ms, kept)
# The u8 fixed point's radius at each sigma (src/ops/gaussian/cpu/fixed.rs,
# whose tests pin these values).
FIXED_RADIUS = {1.0: 3, 2.0: 7, 3.0: 10, 4.0: 14}
if only in (None, "gaussian") and cv2 is not None:
    r, b = both("gaussian")
    rng = np.random.default_rng(3)
    for name, img, key in (("u8 RGB", rng.integers(0, 256, (2160, 3840, 3), dtype=np.uint8), ""),
                           ("u8 gray", rng.integers(0, 256, (2160, 3840), dtype=np.uint8), "_gray")):
        for sigma in (1.0, 2.0, 3.0, 4.0):
            for k in (2 * FIXED_RADIUS[sigma] + 1, 0):
                ms = best(lambda: cv2.GaussianBlur(img, (k, k), sigma, borderType=cv2.BORDER_REPLICATE))
                dst = np.empty_like(img)
                kept = best(lambda: cv2.GaussianBlur(img, (k, k), sigma, dst=dst, borderType=cv2.BORDER_REPLICATE))
                ksize = f"ksize {k} (our window)" if k else f"ksize (0,0) = {round(6 * sigma + 1) | 1}"
                row(f"Gaussian {name} sigma {sigma:g}", "3840x2160", f"clfilter_gaussian{key}_s{sigma:g}",
                    r, b, f"cv2.GaussianBlur {cv2.__version__} {ksize}", ms, kept)
if only in (None, "gaussian_f32") and cv2 is not None:
    # f32: ours is the FIR up to sigma 3 (radius about 5 sigma), the
    # recursion above (every sigma costs the same); OpenCV's default window
    # for float images is round(8 sigma + 1) | 1.
    r, b = both("gaussian_f32")
    rng = np.random.default_rng(4)
    for name, img, key in (("f32 gray", rng.random((2160, 3840), dtype=np.float32), "_gray"),
                           ("f32 RGBA", rng.random((2160, 3840, 4), dtype=np.float32), "_rgba")):
        for sigma in (2.0, 8.0, 32.0):
            ms = best(lambda: cv2.GaussianBlur(img, (0, 0), sigma, borderType=cv2.BORDER_REPLICATE))
            dst = np.empty_like(img)
            kept = best(lambda: cv2.GaussianBlur(img, (0, 0), sigma, dst=dst, borderType=cv2.BORDER_REPLICATE))
            row(f"Gaussian {name} sigma {sigma:g}", "3840x2160", f"clfilter_gaussian_f32{key}_s{sigma:g}",
                r, b, f"cv2.GaussianBlur {cv2.__version__} ksize (0,0) = {round(8 * sigma + 1) | 1}", ms, kept)
if only in (None, "sort"):
    for n in (1 << 20, 1 << 24):
        r, b = both("sort", str(n))
        keys = np.random.default_rng(2).random(n, dtype=np.float32) * 2 - 1
        ms = best(lambda: np.sort(keys))
        exp = n.bit_length() - 1
        row("sort f32 (clfilter cpu)", f"2^{exp}", "clfilter_cpu", r, b, f"numpy.sort {np.__version__}", ms)
        ms = best(lambda: np.argsort(keys, kind="stable"))
        row("sort_pairs f32 + u32 indices (clfilter cpu)", f"2^{exp}", "clfilter_cpu_pairs", r, b,
            "numpy.argsort(kind='stable')", ms)
        for key, peer in (("par_sort_unstable_by_total_cmp", "par_sort_unstable_by(total_cmp)"),
                          ("par_sort_unstable_u32_words", "par_sort_unstable (u32 words)")):
            row("sort f32", f"2^{exp}", "clfilter_cpu", r, b, peer, r[key])
