#!/usr/bin/env python3
"""CPU comparisons for docs/PERFORMANCE.md, in one run, best of 3 each:
- the rayon median (radius 1, 2, 3) against OpenCV's cv2.medianBlur (ksize
  3, 5, 7) on 3840x2160 u8 RGB random images (OpenCV's border is
  replicate too; both cost the same on any data);
- the rayon sort against numpy.sort and Rust's par_sort_unstable at 2^20
  and 2^24 f32 keys.

Run from the project root after `cargo build --release --example cpu_compare`:
    python3 benches/cpu_compare.py [target/release/examples/cpu_compare]
"""
import subprocess, sys, time
import numpy as np

exe = sys.argv[1] if len(sys.argv) > 1 else "target/release/examples/cpu_compare"

def best(f, k=3):
    f()
    ts = []
    for _ in range(k):
        t = time.perf_counter(); f(); ts.append(time.perf_counter() - t)
    return min(ts) * 1e3

def rust(*args):
    out = subprocess.run([exe, *args], check=True, capture_output=True, text=True).stdout
    return {l.split()[0]: float(l.split()[1]) for l in out.splitlines()}

try:
    import cv2
    cv2.setNumThreads(2)
except ImportError:
    cv2 = None

print("| what | size | clfilter rayon ms | other | other ms |")
print("|---|---|---|---|---|")
r = rust("median")
if cv2 is not None:
    img = np.random.default_rng(1).integers(0, 256, (2160, 3840, 3), dtype=np.uint8)
    for rad in (1, 2, 3):
        k = 2 * rad + 1
        ms = best(lambda: cv2.medianBlur(img, k))
        print(f"| median r={rad} ({k}x{k}) u8 RGB | 3840x2160 | {r[f'clfilter_median_r{rad}']:.1f} | cv2.medianBlur {cv2.__version__} | {ms:.1f} |")
for n in (1 << 20, 1 << 24):
    r = rust("sort", str(n))
    keys = np.random.default_rng(2).random(n, dtype=np.float32) * 2 - 1
    ms = best(lambda: np.sort(keys))
    exp = n.bit_length() - 1
    print(f"| sort f32 (clfilter cpu) | 2^{exp} | {r['clfilter_cpu']:.1f} | numpy.sort {np.__version__} | {ms:.1f} |")
    print(f"| sort f32 | 2^{exp} | | par_sort_unstable_by(total_cmp) | {r['par_sort_unstable_by_total_cmp']:.1f} |")
    print(f"| sort f32 | 2^{exp} | | par_sort_unstable (u32 words) | {r['par_sort_unstable_u32_words']:.1f} |")
