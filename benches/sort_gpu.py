#!/usr/bin/env python3
"""GPU sort on the same keys: filterctl's variants, cupy.sort and torch.sort.

    python3 benches/sort_gpu.py FILTERCTL OUT_DIR [--sizes 20,24,27] [--reps 3]

For each n = 2^20, 2^24, 2^27, numpy (seed 7) writes two files of n
little-endian f32 keys to a scratch folder outside OUT_DIR:
- uniform: uniform in [-1, 1) (``rng.random(n, float32) * 2 - 1``);
- bits: random u32 bit patterns read as f32 (every class: NaNs of both
  signs with payloads, infinities, subnormals, +-0).
Each file is sorted by
- ``filterctl --device gpu sort --type f32 FILE``: the default choice (the
  tuning, or the device's order where FILTERCTL_CACHE_DIR holds none; the
  line on stderr names the variant), then ``--variant sort=bitonic`` and
  ``--variant sort=radix``. The time is the kernel time that line prints
  (OpenCL profiling events of the sort's kernels; the host's key mapping
  and the transfers are left out). Each is a new process; best of --reps.
  Every output is checked word for word against cupy.sort of the keys
  mapped to IEEE-754 totalOrder (as u32) and mapped back.
- cupy.sort and torch.sort (values only) of the same keys on the same
  device: CUDA events around the call after one warm-up, best of --reps.
  Both order NaNs by their own rule; only their times are used.
Writes OUT_DIR/sort_table.md (Gkeys/s = n / best time) and prints it.
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile

import numpy as np


def cuda_best(f, reps):
    import torch

    f()
    torch.cuda.synchronize()
    best = float("inf")
    for _ in range(reps):
        a = torch.cuda.Event(enable_timing=True)
        b = torch.cuda.Event(enable_timing=True)
        a.record()
        f()
        b.record()
        torch.cuda.synchronize()
        best = min(best, a.elapsed_time(b))
    return best


def total_order_sorted(bits):
    """The u32 words of f32 keys `bits` sorted by totalOrder, on the GPU."""
    import cupy as cp

    d = cp.asarray(bits)
    neg = (d >> 31) == 1
    mapped = cp.where(neg, ~d, d | cp.uint32(0x8000_0000))
    s = cp.sort(mapped)
    back = cp.where((s >> 31) == 1, s & cp.uint32(0x7FFF_FFFF), ~s)
    return cp.asnumpy(back)


# "sort variant=radix on NVIDIA H100 80GB HBM3 [NVIDIA CUDA]: 18.8 ms (kernel 0.26 ms)"
LINE = re.compile(r"variant=(\S+) on .*\(kernel ([0-9.]+) (ms|s|us|µs)\)")
UNIT = {"ms": 1.0, "s": 1e3, "us": 1e-3, "µs": 1e-3}


def run_filterctl(filterctl, variant, src, dst, env):
    cmd = [filterctl, "--device", "gpu"]
    if variant:
        cmd += ["--variant", f"sort={variant}"]
    cmd += ["sort", "--type", "f32", src, "-o", dst]
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
    m = LINE.search(p.stderr)
    if p.returncode != 0 or not m:
        raise RuntimeError(f"{' '.join(cmd)}: exit {p.returncode}: {p.stderr.strip()}")
    return m.group(1), float(m.group(2)) * UNIT[m.group(3)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("filterctl")
    ap.add_argument("out")
    ap.add_argument("--sizes", default="20,24,27")
    ap.add_argument("--reps", type=int, default=3)
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    env = dict(os.environ, FILTERCTL_CACHE_DIR=os.path.join(a.out, "cache"))
    import cupy as cp
    import torch

    rows = []
    table = os.path.join(a.out, "sort_table.md")

    def emit():
        with open(table, "w") as f:
            f.write(f"cupy {cp.__version__}, torch {torch.__version__}, "
                    f"{torch.cuda.get_device_name()}\n\n")
            f.write("| keys | input | sort | best ms | Gkeys/s |\n|---|---|---|---:|---:|\n")
            for exp, inp, what, ms in rows:
                g = (1 << exp) / (ms * 1e-3) / 1e9
                f.write(f"| 2^{exp} | {inp} | {what} | {ms:.3f} | {g:.2f} |\n")

    with tempfile.TemporaryDirectory() as scratch:
        rng = np.random.default_rng(7)
        for exp in map(int, a.sizes.split(",")):
            n = 1 << exp
            inputs = {
                "uniform": (rng.random(n, dtype=np.float32) * 2 - 1).view(np.uint32),
                "bits": rng.integers(0, 1 << 32, n, dtype=np.uint32),
            }
            for name, bits in inputs.items():
                src = os.path.join(scratch, f"{name}.raw")
                dst = os.path.join(scratch, "sorted.raw")
                bits.tofile(src)
                want = total_order_sorted(bits)
                for variant in (None, "bitonic", "radix"):
                    best, ran = float("inf"), None
                    for _ in range(a.reps):
                        ran, ms = run_filterctl(a.filterctl, variant, src, dst, env)
                        best = min(best, ms)
                    got = np.fromfile(dst, dtype=np.uint32)
                    if got.tobytes() != want.tobytes():
                        sys.exit(f"2^{exp} {name} {ran}: differs from the reference sort")
                    label = f"filterctl {ran}" + (" (default)" if variant is None else "")
                    rows.append((exp, name, label, best))
                keys = bits.view(np.float32)
                d = cp.asarray(keys)
                rows.append((exp, name, "cupy.sort", cuda_best(lambda: cp.sort(d), a.reps)))
                t = torch.from_numpy(keys).cuda()
                rows.append((exp, name, "torch.sort", cuda_best(lambda: torch.sort(t)[0], a.reps)))
                del d, t
                emit()
                print(f"2^{exp} {name}: every filterctl output equals the reference", flush=True)
    print(open(table).read())


if __name__ == "__main__":
    main()
