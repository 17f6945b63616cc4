#!/usr/bin/env python3
"""Cross-checks `filterctl` against references nobody here wrote: scipy,
OpenCV, numpy (and textbook formulas written in numpy).

    python3 tests/xref/xref.py [--filterctl PATH] [--device cpu|opencl]
                               [--ops gaussian,median,...] [--out table.md]

`--device cpu` runs the rayon path; `--device opencl` forces every OpenCL
variant of each operation in turn (`--variant op=NAME`). Each row gives the
worst and mean error of one input class (type and channels, over the sizes
1x1, 1x23, 23x1, 7x13, 101x67 and noise/gradient/checker content), the
tolerance that applies (docs/QUALITY.md, plus the reference's own rounding
where it rounds) and a verdict. Exit status 1 when any row FAILs.
"""
import argparse
import datetime
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import Runner  # noqa: E402  (first: it quiets OpenCV's log)
from check_demosaic import check_demosaic  # noqa: E402
from check_filters import check_bilateral, check_gaussian, check_median  # noqa: E402
from check_pixel import (check_camera, check_colormap, check_normalize, check_percentiles,  # noqa: E402
                         check_transpose_minmax)
from check_reductions import check_histogram, check_reduce, check_sort, check_stats  # noqa: E402
from common import Table  # noqa: E402

CHECKS = {
    "gaussian": check_gaussian, "median": check_median, "bilateral": check_bilateral,
    "demosaic": check_demosaic, "histogram": check_histogram, "stats": check_stats,
    "reduce": check_reduce, "sort": check_sort, "normalize": check_normalize, "percentiles": check_percentiles,
    "transpose": check_transpose_minmax, "colormap": check_colormap, "camera": check_camera,
}


class Ctx:
    def __init__(self, runner, device, table, only_variants):
        self.runner, self.device, self.table = runner, device, table
        self.table_of = runner.variants()
        self.only = only_variants

    def variants(self, op):
        """(label, --variant value) pairs to run: the rayon path on the CPU
        backend, every OpenCL variant forced on an OpenCL device."""
        if self.device == "cpu":
            return [("cpu", None)]
        names = [v for v in self.table_of.get(op, []) if v != "cpu"]
        if self.only:
            names = [v for v in names if v in self.only]
        return [(v, f"{op}={v}") for v in names]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--filterctl", default="/work/main/target/release/filterctl")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--ops", default=",".join(CHECKS), help="checks to run: " + ",".join(CHECKS))
    ap.add_argument("--variants", default="", help="on OpenCL, only these variant names")
    ap.add_argument("--out", help="write the markdown table here")
    ap.add_argument("--seed", type=int, default=20261127)
    args = ap.parse_args()
    work = tempfile.mkdtemp(prefix="xref-")
    runner = Runner(args.filterctl, args.device, work)
    table = Table()
    ctx = Ctx(runner, args.device, table, set(filter(None, args.variants.split(","))))
    for name in args.ops.split(","):
        rng = np.random.default_rng(args.seed)
        t0 = datetime.datetime.now()
        CHECKS[name](ctx, rng)
        print(f"{name}: done in {(datetime.datetime.now() - t0).total_seconds():.1f} s, {runner.calls} calls so far",
              file=sys.stderr)
    version = subprocess.run([args.filterctl, "--version"], capture_output=True, text=True).stdout.strip()
    head = (f"`{' '.join(sys.argv)}` ({version}, {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC, "
            f"{runner.calls} filterctl runs): {table.summary()}\n\n")
    text = head + "Worst row of each (op, variant, reference):\n\n" + table.condensed() + "\nEvery row:\n\n" + table.markdown()
    if table.declined:
        text += "\nDeclined (a forced variant that cannot run the request; no row above):\n\n" + table.declined_markdown()
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)
    else:
        print(text)
    print(table.summary(), file=sys.stderr)
    shutil.rmtree(work, ignore_errors=True)
    return 1 if any(r["verdict"] == "FAIL" for r in table.rows) else 0


if __name__ == "__main__":
    sys.exit(main())
