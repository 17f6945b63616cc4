#!/usr/bin/env python3
"""CPU timings of demosaic, colormap, ccm and gamma: filterctl's rayon path
(one or more builds, e.g. before and after a change) against OpenCV in one
run, best of 3 each, as a markdown table, then how the outputs compare.

    python3 benches/colour_cpu.py [--size WxH] [--ops OP,...] [--rows ROW,...]
        [--rounds N] FILTERCTL [FILTERCTL ...]

`--ops` keeps the rows and comparisons of those operations only (demosaic,
colormap, ccm, gamma; default all); `--rows` keeps the named rows of the
table only (e.g. `demosaic mhc u8`); `--rounds` times the table N times
(default 1). Each row times every build and then OpenCV, one after the
other, so a row's figures see the same machine load.

Rows (`filterctl bench`'s generated inputs; OpenCV's random ones of the
same shape, WxH default 3840x2160; every row costs the same on any data):
- demosaic of an RGGB frame (u8 and u16, 16 significant bits, so the
  levelling is the identity) into RGB of the same type. OpenCV names Bayer
  codes after the second row's second and third pixels, so RGGB is
  `COLOR_BayerBG2RGB`. bilinear against `cv2.cvtColor(.., BayerBG2RGB)`
  (bilinear too); edge (Hamilton-Adams, gradient-weighted) against the
  edge-aware `BayerBG2RGB_EA` and (u8 only) VNG, OpenCV's best (`_EA` is
  the nearer method but 5 dB below ours, docs/QUALITY.md; VNG is 1.1 dB
  below); mhc (5x5 Malvar-He-Cutler), which OpenCV lacks, against `_EA`
  and (u8 only) VNG.
- colormap u8 gray into RGB u8 through Turbo, the one map both have by
  that name: `cv2.applyColorMap(.., COLORMAP_TURBO)` (a 256-entry table
  lookup; ours maps 10%..90% of the range and interpolates between
  entries, `filterctl bench`'s case).
- ccm (3x3 matrix, the bench's camera-like one) on RGB u8 and f32:
  `cv2.transform` with the same matrix; on RGBA u8 and f32 (alpha
  copied): `cv2.transform` with the 4x4 matrix that copies alpha.
- gamma sRGB on RGB u8: `cv2.LUT` with the same 256-entry table; on RGB
  f32: `cv2.pow(x, 1/2.4)` alone (OpenCV has no sRGB curve; the power is
  the costly part, without the linear toe and the scale and offset), and
  the whole curve in numpy (`np.where` of both pieces).
filterctl's figure is the `min_ms` of `filterctl --device cpu bench
--iters 3` (the rayon path, 3 timed runs after a warm-up); OpenCV is timed
here the same way (best of 3 after a warm-up, time.perf_counter), with
cv2.setNumThreads(os.cpu_count()). Needs numpy and opencv-python-headless.

The second table runs the last build's `filterctl --device cpu apply` on
the OpenCV inputs (through PNM and TIFF files in a temporary folder) and
compares the outputs: how many samples differ and by how much, over the
interior (3 pixels from the edges left out for demosaic, whose borders
differ by design: ours mirrors the CFA, OpenCV's bilinear code replicates).
"""
import json
import os
import subprocess
import sys
import tempfile
import time

import cv2
import numpy as np

# The bench's ccm case (src/ops/ccm/tune.rs) and the sRGB curve (IEC 61966-2-1).
CCM = np.array([[1.72, -0.52, -0.2], [-0.26, 1.58, -0.32], [0.04, -0.62, 1.58]], dtype=np.float32)
CCM_SPEC = "ccm=m=" + "/".join(f"{v:g}" for v in CCM.flatten())
# The same on RGBA, alpha copied.
CCM4 = np.eye(4, dtype=np.float32)
CCM4[:3, :3] = CCM


def srgb(x):
    return np.where(x <= 0.0031308, 12.92 * x, 1.055 * np.power(x, 1 / 2.4) - 0.055)


def best(f, runs=3):
    f()  # warm-up
    t = []
    for _ in range(runs):
        s = time.perf_counter()
        f()
        t.append(time.perf_counter() - s)
    return min(t) * 1e3


def filterctl(binary, size, sample, channels, ops, method=None):
    cmd = [binary, "--device", "cpu", "bench", "--ops", ops, "--size", size,
           "--type", sample, "--channels", str(channels), "--iters", "3", "--json"]
    if method:
        cmd += ["--method", method]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return {r["op"]: r["min_ms"] for r in json.loads(out)["rows"] if not r["error"]}


def ours(binary, size, row):
    """filterctl's min_ms for one table row (e.g. `demosaic mhc u8`)."""
    words = row.split()
    if words[0] == "demosaic":
        return filterctl(binary, size, words[2], 3, "demosaic", words[1])["demosaic"]
    if words[0] == "colormap":
        return filterctl(binary, size, "u8", 3, "colormap")["colormap"]
    t = words[1] if words[0] == "ccm" else words[2]
    channels = 4 if words[-1] == "RGBA" else 3
    return filterctl(binary, size, t, channels, words[0])[words[0]]


def write_pnm(path, a):
    """Binary P5 (gray) or P6 (RGB), u8 or u16 (big-endian)."""
    maxval = 255 if a.dtype == np.uint8 else 65535
    magic = b"P5" if a.ndim == 2 else b"P6"
    with open(path, "wb") as f:
        f.write(magic + f"\n{a.shape[1]} {a.shape[0]}\n{maxval}\n".encode())
        f.write(a.astype(">u2").tobytes() if maxval > 255 else a.tobytes())


def read_pnm(path):
    data = open(path, "rb").read()
    fields, pos = [], 0
    while len(fields) < 4:
        while data[pos:pos + 1].isspace():
            pos += 1
        end = pos
        while not data[end:end + 1].isspace():
            end += 1
        fields.append(data[pos:end])
        pos = end
    pos += 1
    w, h, maxval = int(fields[1]), int(fields[2]), int(fields[3])
    c = 1 if fields[0] == b"P5" else 3
    dt = np.uint8 if maxval < 256 else np.dtype(">u2")
    return np.frombuffer(data, dt, w * h * c, pos).reshape(h, w, c).squeeze().astype(
        np.uint8 if maxval < 256 else np.uint16)


def apply(binary, spec, img, tmp, ext, out_ext=None):
    out_ext = out_ext or ext
    src, dst = os.path.join(tmp, "in" + ext), os.path.join(tmp, "out" + out_ext)
    if ext == ".tif":
        cv2.imwrite(src, img[..., ::-1] if img.ndim == 3 else img)
    else:
        write_pnm(src, img)
    subprocess.run([binary, "--device", "cpu", "apply", "-f", spec, src, "-o", dst], check=True,
                   capture_output=True)
    if out_ext == ".tif":
        out = cv2.imread(dst, cv2.IMREAD_UNCHANGED)
        return out[..., ::-1] if out.ndim == 3 else out
    return read_pnm(dst)


def bilinear_rggb(raw):
    """Exact (f64) bilinear demosaic of an RGGB frame, RGB, edges
    mirrored (only the interior is compared)."""
    f = np.pad(raw.astype(np.float64), 1, mode="reflect")
    c = lambda dy, dx: f[1 + dy:f.shape[0] - 1 + dy, 1 + dx:f.shape[1] - 1 + dx]
    cross = (c(0, -1) + c(0, 1) + c(-1, 0) + c(1, 0)) / 4
    diag = (c(-1, -1) + c(-1, 1) + c(1, -1) + c(1, 1)) / 4
    horiz, vert = (c(0, -1) + c(0, 1)) / 2, (c(-1, 0) + c(1, 0)) / 2
    y, x = np.indices(raw.shape)
    r_site, b_site = (y % 2 == 0) & (x % 2 == 0), (y % 2 == 1) & (x % 2 == 1)
    g_row_r, g_row_b = (y % 2 == 0) & (x % 2 == 1), (y % 2 == 1) & (x % 2 == 0)
    v = c(0, 0)
    red = np.select([r_site, b_site, g_row_r], [v, diag, horiz], vert)
    green = np.where(r_site | b_site, cross, v)
    blue = np.select([b_site, r_site, g_row_b], [v, diag, horiz], vert)
    return np.stack([red, green, blue], axis=-1)


def off_by_more_than_half(name, a, exact, border):
    s = (slice(border, -border),) * 2
    n = np.count_nonzero(np.abs(a[s].astype(np.float64) - exact[s]) > 0.5)
    print(f"| {name} vs the exact f64 bilinear | {n} more than 0.5 away | - |")


def compare(name, a, b, border=0):
    if border:
        a, b = a[border:-border, border:-border], b[border:-border, border:-border]
    d = np.abs(a.astype(np.float64) - b.astype(np.float64))
    where = " interior" if border else ""
    print(f"| {name} | {np.count_nonzero(d)} of {d.size}{where} | {d.max():.3g} |")


def main():
    args = sys.argv[1:]
    size = "3840x2160"
    ops = {"demosaic", "colormap", "ccm", "gamma"}
    rows, rounds = None, 1
    while args[:1] in (["--size"], ["--ops"], ["--rows"], ["--rounds"]) and len(args) > 1:
        if args[0] == "--size":
            size = args[1]
        elif args[0] == "--ops":
            ops = set(args[1].split(","))
        elif args[0] == "--rows":
            rows = set(args[1].split(","))
        else:
            rounds = int(args[1])
        args = args[2:]
    if not args:
        sys.exit(__doc__)
    w, h = (int(v) for v in size.split("x"))
    cv2.setNumThreads(os.cpu_count())
    cv2.utils.logging.setLogLevel(cv2.utils.logging.LOG_LEVEL_ERROR)
    rng = np.random.default_rng(27)
    bayer = {"u8": rng.integers(0, 256, (h, w), dtype=np.uint8),
             "u16": rng.integers(0, 65536, (h, w), dtype=np.uint16)}
    gray = rng.integers(0, 256, (h, w), dtype=np.uint8)
    rgb = {"u8": rng.integers(0, 256, (h, w, 3), dtype=np.uint8),
           "f32": rng.random((h, w, 3), dtype=np.float32)}
    rgba = {"u8": rng.integers(0, 256, (h, w, 4), dtype=np.uint8),
            "f32": rng.random((h, w, 4), dtype=np.float32)}
    table = np.round(srgb(np.arange(256) / 255.0) * 255).astype(np.uint8)
    cvt = cv2.cvtColor
    peers = {}
    for t in ("u8", "u16"):
        raw = bayer[t]
        peers[f"demosaic bilinear {t}"] = [("cvtColor BayerBG2RGB", lambda r=raw: cvt(r, cv2.COLOR_BayerBG2RGB))]
        ea = ("cvtColor BayerBG2RGB_EA", lambda r=raw: cvt(r, cv2.COLOR_BayerBG2RGB_EA))
        peers[f"demosaic edge {t}"] = [ea]
        peers[f"demosaic mhc {t}"] = [ea]
        if t == "u8":
            vng = ("cvtColor BayerBG2RGB_VNG", lambda r=raw: cvt(r, cv2.COLOR_BayerBG2RGB_VNG))
            peers[f"demosaic mhc {t}"].append(vng)
            peers[f"demosaic edge {t}"].append(vng)
    peers["colormap turbo u8"] = [("applyColorMap TURBO", lambda: cv2.applyColorMap(gray, cv2.COLORMAP_TURBO))]
    for t in ("u8", "f32"):
        peers[f"ccm {t} RGB"] = [("transform", lambda i=rgb[t]: cv2.transform(i, CCM))]
        peers[f"ccm {t} RGBA"] = [("transform 4x4", lambda i=rgba[t]: cv2.transform(i, CCM4))]
    peers["gamma srgb u8 RGB"] = [("LUT", lambda: cv2.LUT(rgb["u8"], table))]
    f = rgb["f32"]
    peers["gamma srgb f32 RGB"] = [("pow(x, 1/2.4) only", lambda: cv2.pow(f, 1 / 2.4)),
                                   ("numpy where(12.92x, 1.055 power - 0.055)", lambda: srgb(f))]

    peers = {k: v for k, v in peers.items()
             if k.split()[0] in ops and (rows is None or k in rows)}
    cols = " | ".join(f"`{b}` ms" for b in args)
    print(f"OpenCV {cv2.__version__}, {cv2.getNumThreads()} threads, numpy {np.__version__}, {size}; "
          "ratio: OpenCV ms / last build's ms (above 1: ours is faster)")
    print()
    print(f"| round | operation | {cols} | OpenCV call | OpenCV ms | OpenCV/last |")
    print("|---:|---|" + "---:|" * len(args) + "---|---:|---:|")
    for k in range(rounds):
        for op, calls in peers.items():
            # Each row's runs follow each other, so they see the same load.
            mine = [ours(b, size, op) for b in args]
            cells = " | ".join(f"{m:.2f}" for m in mine)
            for name, call in calls:
                ms = best(call)
                print(f"| {k + 1} | {op} | {cells} | `{name}` | {ms:.2f} | {ms / mine[-1]:.2f}x |",
                      flush=True)

    print()
    print(f"Outputs of `{args[-1]}` (apply) against OpenCV's on the same input:")
    print()
    print("| comparison | samples that differ | largest difference |")
    print("|---|---:|---:|")
    with tempfile.TemporaryDirectory() as tmp:
        b = args[-1]
        for t in ("u8", "u16") if "demosaic" in ops else ():
            got = apply(b, "demosaic=pattern=rggb:method=bilinear", bayer[t], tmp, ".pgm", ".ppm")
            # The output file is RGB: compare against OpenCV's RGB code.
            want = cvt(bayer[t], cv2.COLOR_BayerBG2RGB)
            compare(f"demosaic bilinear {t} vs BayerBG2RGB", got, want, 3)
            # Both within half a step of the exact average: they differ at ties only.
            exact = bilinear_rggb(bayer[t])
            off_by_more_than_half(f"ours, {t}", got, exact, 3)
            off_by_more_than_half(f"BayerBG2RGB, {t}", want, exact, 3)
        if "colormap" in ops:
            got = apply(b, "colormap=map=turbo:min=0:max=255", gray, tmp, ".pgm", ".ppm")
            compare("colormap turbo 0..255 vs applyColorMap TURBO (BGR->RGB)", got,
                    cv2.applyColorMap(gray, cv2.COLORMAP_TURBO)[..., ::-1])
        if "ccm" in ops:
            u8 = rgb["u8"]
            compare("ccm u8 vs transform", apply(b, CCM_SPEC, u8, tmp, ".ppm"), cv2.transform(u8, CCM))
            compare("ccm f32 vs transform", apply(b, CCM_SPEC, f, tmp, ".tif"), cv2.transform(f, CCM))
        if "gamma" in ops:
            compare("gamma srgb u8 vs LUT", apply(b, "gamma=srgb", rgb["u8"], tmp, ".ppm"),
                    cv2.LUT(rgb["u8"], table))
            compare("gamma srgb f32 vs numpy f64 curve", apply(b, "gamma=srgb", f, tmp, ".tif"),
                    srgb(f.astype(np.float64)))

if __name__ == "__main__":
    main()
