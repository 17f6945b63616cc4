"""Demosaic against OpenCV's Bayer conversions and textbook numpy
(bilinear, Malvar-He-Cutler), and against the exact answer on linear ramps."""
import cv2
import numpy as np

from common import err_of, pattern, quantise, tname
from harness import full_scale

# Our pattern (top-left 2x2) -> OpenCV's code (named after the second row).
CV_CODE = {"rggb": cv2.COLOR_BayerBG2RGB, "bggr": cv2.COLOR_BayerRG2RGB,
           "grbg": cv2.COLOR_BayerGB2RGB, "gbrg": cv2.COLOR_BayerGR2RGB}
CV_SAME_NAME = {"rggb": cv2.COLOR_BayerRG2RGB}
SITE = {"r": 0, "g": 1, "b": 2}
SIZES = [(2, 2), (4, 6), (14, 8), (66, 102)]


def colour_map(pat, h, w):
    """Colour index (0 R, 1 G, 2 B) of every site."""
    c = np.empty((h, w), np.int64)
    for dy in range(2):
        for dx in range(2):
            c[dy::2, dx::2] = SITE[pat[2 * dy + dx]]
    return c


def mosaic(rgb, pat):
    h, w = rgb.shape[:2]
    c = colour_map(pat, h, w)
    return np.take_along_axis(rgb, c[:, :, None], axis=2)[:, :, 0]


def corr(p, k, h, w, r):
    """Correlation of the padded plane p with kernel k (size 2r+1), at the
    original h x w positions."""
    out = np.zeros((h, w))
    for dy in range(-r, r + 1):
        for dx in range(-r, r + 1):
            if k[dy + r, dx + r] != 0:
                out += k[dy + r, dx + r] * p[r + dy:r + dy + h, r + dx:r + dx + w]
    return out


def bilinear_np(raw, pat):
    """Textbook bilinear: each colour plane's known samples, convolved with the
    tent kernels; borders by reflect-101 (numpy 'reflect'), which keeps the
    pattern's parity."""
    h, w = raw.shape
    r = 1
    p = np.pad(raw, r, mode="reflect")
    c = colour_map(pat, h, w)
    ph = np.pad(np.arange(h), r, mode="reflect")
    pw = np.pad(np.arange(w), r, mode="reflect")
    cp = c[np.ix_(ph, pw)]  # the colour of each padded sample, from where it was mirrored
    krb = np.array([[1, 2, 1], [2, 4, 2], [1, 2, 1]]) / 4.0
    kg = np.array([[0, 1, 0], [1, 4, 1], [0, 1, 0]]) / 4.0
    out = np.empty((h, w, 3))
    for ch, k in ((0, krb), (1, kg), (2, krb)):
        out[:, :, ch] = corr(np.where(cp == ch, p, 0.0), k, h, w, r)
    return out


def mhc_np(raw, pat):
    """Malvar, He and Cutler (ICASSP 2004), the paper's 5x5 filters (Fig. 2),
    reflect-101 borders."""
    h, w = raw.shape
    r = 2
    p = np.pad(raw, r, mode="reflect")
    c = colour_map(pat, h, w)
    g_at_rb = np.array([[0, 0, -1, 0, 0], [0, 0, 2, 0, 0], [-1, 2, 4, 2, -1], [0, 0, 2, 0, 0], [0, 0, -1, 0, 0]]) / 8
    row = np.array([[0, 0, .5, 0, 0], [0, -1, 0, -1, 0], [-1, 4, 5, 4, -1], [0, -1, 0, -1, 0], [0, 0, .5, 0, 0]]) / 8
    col = row.T
    diag = np.array([[0, 0, -1.5, 0, 0], [0, 2, 0, 2, 0], [-1.5, 0, 6, 0, -1.5], [0, 2, 0, 2, 0], [0, 0, -1.5, 0, 0]]) / 8
    f = {name: corr(p, k, h, w, r) for name, k in (("g", g_at_rb), ("row", row), ("col", col), ("diag", diag))}
    out = np.repeat(raw[:, :, None], 3, axis=2).astype(np.float64)
    # which colour sits left/right of each site (for green sites: R or B in this row)
    cx = colour_map(pat, h, w + 1)[:, 1:]
    for ch in (0, 2):
        other = 2 - ch
        at_g = np.where(cx == ch, f["row"], f["col"])
        out[:, :, ch] = np.where(c == ch, raw, np.where(c == 1, at_g, np.where(c == other, f["diag"], raw)))
    out[:, :, 1] = np.where(c == 1, raw, f["g"])
    return out


def _rows(ctx, op, params, label, ref, res, tol, verdict=None):
    ctx.table.group(op, params, label, ctx.device, ref, res, lambda n: tol, verdict=verdict)


def check_demosaic(ctx, rng):
    frames = {}
    for t in (np.uint8, np.uint16):
        for (h, w) in SIZES:
            kinds = ("noise", "gradient", "checker") if (h, w) == SIZES[-1] else ("noise",)
            for k in kinds:
                frames[f"{tname(t)}_bayer_{w}x{h}_{k}"] = quantise(pattern(k, h, w, 1, rng), t)
    margin = {"bilinear": 1, "mhc": 2, "edge": 3}
    for pat in ("rggb", "bggr", "grbg", "gbrg"):
        for method in ("bilinear", "mhc", "edge"):
            spec = f"demosaic=pattern={pat}:method={method}"
            for label, var in ctx.variants("demosaic"):
                outs_f = ctx.runner.apply(spec + ":out=f32", frames, var)
                outs_i = ctx.runner.apply(spec, frames, var) if method == "bilinear" else {}
                inner, border, cvin, cvb, same = {}, {}, {}, {}, {}
                for n, raw in frames.items():
                    o = outs_f[n]
                    if isinstance(o, str):
                        inner[n] = o
                        continue
                    full = full_scale(raw.dtype)
                    m = margin[method]
                    h, w = raw.shape
                    interior = np.zeros((h, w), bool)
                    interior[m:h - m, m:w - m] = True
                    if method != "edge":
                        ref = (bilinear_np if method == "bilinear" else mhc_np)(raw.astype(np.float64) / full, pat)
                        d = np.abs(o.astype(np.float64) - ref).max(axis=2)
                        if interior.any():
                            inner[n] = (float(d[interior].max()), float(d[interior].mean()))
                        if (~interior).any():
                            border[n] = (float(d[~interior].max()), float(d[~interior].mean()))
                    if method == "bilinear" and not isinstance(outs_i.get(n), str):
                        cv = cv2.cvtColor(raw, CV_CODE[pat])
                        d = np.abs(outs_i[n].astype(np.float64) - cv).max(axis=2) / full
                        if interior.any():
                            cvin[n] = (float(d[interior].max()), float(d[interior].mean()))
                        cvb[n] = (float(d[~interior].max()), float(d[~interior].mean())) if (~interior).any() else (0.0, 0.0)
                        if pat in CV_SAME_NAME and interior.any():
                            d2 = np.abs(outs_i[n].astype(np.float64) - cv2.cvtColor(raw, CV_SAME_NAME[pat])) / full
                            same[n] = (float(d2.max(axis=2)[interior].max()), float(d2.mean()))
                params = f"{pat} {method}"
                if method != "edge":
                    book = f"numpy textbook {method}, reflect-101"
                    _rows(ctx, "demosaic", params, label, book + ", interior", inner, 1e-5)
                    _rows(ctx, "demosaic", params, label, book + ", border", border, 1e-5)
                if method == "bilinear":
                    names = sorted(k for k, v in vars(cv2).items()
                                   if k.startswith("COLOR_Bayer") and k.endswith("2RGB") and v == CV_CODE[pat])
                    cvname = f"cv2.cvtColor {' = '.join(names)} (u8/u16 out)"
                    ctx.table.group("demosaic", params, label, ctx.device, cvname + ", interior", cvin,
                                    lambda n: 1.0 / full_scale(frames[n].dtype))
                    ctx.table.group("demosaic", params, label, ctx.device, cvname + ", border", cvb,
                                    lambda n: 1.0 / full_scale(frames[n].dtype), verdict="convention")
                    if same:
                        ctx.table.group("demosaic", params, label, ctx.device,
                                        "cv2 COLOR_BayerRG2RGB (same name, other pattern), interior", same,
                                        lambda n: 1.0 / full_scale(frames[n].dtype), verdict="convention")
    check_ramps(ctx)
    check_levels(ctx, rng)


def check_levels(ctx, rng):
    """bits, black level and gains: the textbook bilinear and MHC of
    (raw - black) * gain / (white - black), 12-bit data in 16-bit containers
    (some samples below black and above white)."""
    frames = {f"u16_bayer12_{w}x{h}_noise": rng.integers(0, 4200, (h, w)).astype(np.uint16) for (h, w) in SIZES}
    gains = {"r": 1.9, "g": 1.0, "b": 1.5}
    for pat in ("rggb", "gbrg"):
        c = None
        for method, fn in (("bilinear", bilinear_np), ("mhc", mhc_np)):
            for out, dt in (("f32", np.float32), ("u16", np.uint16)):
                spec = f"demosaic=pattern={pat}:method={method}:bits=12:black=64:wb_r=1.9:wb_b=1.5:out={out}"
                for label, var in ctx.variants("demosaic"):
                    outs = ctx.runner.apply(spec, frames, var)
                    res = {}
                    for n, raw in frames.items():
                        if isinstance(outs[n], str):
                            res[n] = outs[n]
                            continue
                        c = colour_map(pat, *raw.shape)
                        g = np.choose(c, [gains["r"], gains["g"], gains["b"]])
                        ref = fn((raw.astype(np.float64) - 64) * g / (4095 - 64), pat)
                        if dt == np.uint16:
                            ref = np.clip(np.rint(ref * 65535), 0, 65535) / 65535
                        res[n] = err_of(outs[n] / full_scale(dt), ref, 1.0)
                    tol = 1e-5 + (0 if dt == np.float32 else 1 / 65535)
                    _rows(ctx, "demosaic", f"{pat} {method} bits=12 black=64 wb 1.9/1/1.5 out={out}", label,
                          f"numpy textbook {method} of the levelled frame", res, tol)


def check_ramps(ctx):
    """Linear ramps, exact in u16: every method reproduces a linear image
    away from the border (bilinear, MHC's Laplacian terms and the edge
    method's second differences vanish on it)."""
    h, w = 40, 64
    y, x = np.mgrid[0:h, 0:w]
    rgb = np.stack([100 * x + 50 * y + 1000, 30 * x + 70 * y + 2000, 20 * x + 90 * y + 500], axis=2).astype(np.float64)
    for pat in ("rggb", "bggr", "grbg", "gbrg"):
        frames = {f"u16_ramp_{w}x{h}": mosaic(rgb, pat).astype(np.uint16)}
        for method in ("bilinear", "mhc", "edge"):
            for label, var in ctx.variants("demosaic"):
                o = ctx.runner.apply(f"demosaic=pattern={pat}:method={method}:out=f32", frames, var)
                res = {}
                for n in frames:
                    if isinstance(o[n], str):
                        res[n] = o[n]
                        continue
                    m = 3
                    res[n] = err_of(o[n][m:-m, m:-m], rgb[m:-m, m:-m] / 65535.0, 1.0)
                _rows(ctx, "demosaic", f"{pat} {method}", label, "exact linear ramp (interior, 3 px)", res, 1e-5)
