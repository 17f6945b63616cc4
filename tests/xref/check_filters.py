"""Neighbourhood operations against scipy, OpenCV and textbook numpy:
Gaussian blur, median, bilateral."""
import math

import cv2
import numpy as np
import scipy.ndimage as ndi

from common import err_of, image_set, large_set, step
from harness import full_scale

SCIPY_MODE = {"replicate": "nearest", "mirror": "reflect"}  # our mirror is half-sample (abc|cba)
CV_BORDER = {"replicate": cv2.BORDER_REPLICATE, "mirror": cv2.BORDER_REFLECT}
CV_BORDER_NAME = {"replicate": "BORDER_REPLICATE", "mirror": "BORDER_REFLECT"}


def _sig(a, sy, sx):
    return (sy, sx) if a.ndim == 2 else (sy, sx, 0)


def scipy_gauss(a, sx, sy, mode, radius6=True):
    f = a.astype(np.float64)
    if radius6:
        rad = _sig(a, math.ceil(6 * sy), math.ceil(6 * sx))
        return ndi.gaussian_filter(f, _sig(a, sy, sx), mode=mode, radius=rad)
    return ndi.gaussian_filter(f, _sig(a, sy, sx), mode=mode)


def taps(sigma, r):
    k = np.arange(-r, r + 1)
    w = np.exp(-k * k / (2.0 * sigma * sigma))
    return w / w.sum()


def truncate4_allowance(sx, sy):
    """How far scipy's default kernel (radius int(4 sigma + 0.5)) may move an
    output from the radius-ceil(6 sigma) one on data in 0..1: half the L1
    distance of the two kernels, per filtered axis."""
    total = 0.0
    for s in (sx, sy):
        if s == 0:
            continue
        r6, r4 = math.ceil(6 * s), int(4 * s + 0.5)
        a, b = taps(s, r6), np.zeros(2 * r6 + 1)
        b[r6 - r4:r6 + r4 + 1] = taps(s, r4)
        total += 0.5 * np.abs(a - b).sum()
    return total


def gauss_bound(label, dtype, sx, sy):
    if label == "cpu" and np.dtype(dtype) == np.uint8 and max(sx, sy) <= 4:
        return 1.0 / 255  # the u8 fixed point: the exact value rounded down or up
    base = 1e-5 if label.startswith("fir") else 1e-3
    return base + step(dtype)


GAUSS_SIGMAS = [(0.8, 0.8), (1, 1), (2, 2), (5, 5), (20, 20), (4, 1), (0, 3)]


def scale_of(a):
    """Full scale for integers; max |input| (at least 1) for f32, as QUALITY.md measures."""
    return full_scale(a.dtype) if a.dtype != np.float32 else max(1.0, float(np.nanmax(np.abs(a))))


def check_gaussian(ctx, rng):
    imgs = {**image_set(rng), **large_set(rng)}
    for (sx, sy) in GAUSS_SIGMAS:
        for border in ("replicate", "mirror"):
            spec = f"gaussian=sigma_x={sx}:sigma_y={sy}:border={border}"
            params = f"sigma {sx}/{sy} {border}"
            refs = {n: scipy_gauss(a, sx, sy, SCIPY_MODE[border]) for n, a in imgs.items()}
            for label, var in ctx.variants("gaussian"):
                outs = ctx.runner.apply(spec, imgs, var)
                res, res4, rescv, cv_self = {}, {}, {}, {}
                for n, a in imgs.items():
                    o = outs[n]
                    if isinstance(o, str):
                        res[n] = o
                        continue
                    full = scale_of(a)
                    res[n] = err_of(o, refs[n], full)
                    if (sx, sy) == (2, 2):
                        res4[n] = err_of(o, scipy_gauss(a, sx, sy, SCIPY_MODE[border], False), full)
                    if a.dtype != np.uint16 and sx > 0 and sy > 0 and a.ndim == 3 and a.shape[2] == 3:
                        # u8: OpenCV's default window and fixed point; f32: the full ceil(6 sigma) window
                        ks = (0, 0) if a.dtype == np.uint8 else (2 * math.ceil(6 * sx) + 1, 2 * math.ceil(6 * sy) + 1)
                        try:
                            cv = cv2.GaussianBlur(a, ks, sigmaX=sx, sigmaY=sy, borderType=CV_BORDER[border])
                        except cv2.error as e:
                            rescv[n] = str(e).splitlines()[-1]
                            continue
                        cv_self[n] = err_of(cv, refs[n], full)[0]
                        rescv[n] = err_of(o, cv, full)
                def tol(n, label=label):
                    return gauss_bound(label, imgs[n].dtype, sx, sy)
                ref = f"scipy gaussian_filter mode='{SCIPY_MODE[border]}' radius=ceil(6s)"
                ctx.table.group("gaussian", params, label, ctx.device, ref, res, tol)
                if res4:
                    ctx.table.group("gaussian", params, label, ctx.device, "scipy gaussian_filter truncate=4 (default)",
                                    res4, lambda n: tol(n) + truncate4_allowance(sx, sy))
                if rescv:
                    ctx.table.group("gaussian", params, label, ctx.device,
                                    f"cv2.GaussianBlur (u8: ksize=(0,0); f32: ksize=2ceil(6s)+1) {CV_BORDER_NAME[border]}; "
                                    "tolerance + cv2's own error vs exact", rescv, lambda n: tol(n) + cv_self[n])
    # The mapping of our mirror: scipy 'reflect' (above) matches; 'mirror' (reflect-101) does not.
    a = {n: v for n, v in imgs.items() if n.startswith("f32_gray")}
    outs = ctx.runner.apply("gaussian=sigma=2:border=mirror", a, None if ctx.device == "cpu" else "gaussian=fir_local")
    res = {n: err_of(outs[n], scipy_gauss(v, 2, 2, "mirror"), scale_of(v)) for n, v in a.items()
           if not isinstance(outs[n], str)}
    ctx.table.group("gaussian", "sigma 2/2 mirror", "cpu" if ctx.device == "cpu" else "fir_local", ctx.device,
                    "scipy mode='mirror' (reflect-101, dcb|abcd): not our mirror", res, lambda n: 1e-5, verdict="convention")


def check_median(ctx, rng):
    imgs = {**image_set(rng), **large_set(rng)}
    for radius in (1, 2, 3):
        k = 2 * radius + 1
        spec = f"median=radius={radius}"
        for label, var in ctx.variants("median"):
            outs = ctx.runner.apply(spec, imgs, var)
            res, rescv = {}, {}
            for n, a in imgs.items():
                o = outs[n]
                if isinstance(o, str):
                    res[n] = o
                    continue
                size = (k, k) if a.ndim == 2 else (k, k, 1)
                ref = ndi.median_filter(a, size=size, mode="nearest")
                if a.ndim == 3 and a.shape[2] == 4:
                    ref[:, :, 3] = a[:, :, 3]  # alpha is copied, not filtered
                res[n] = err_of(o, ref, 1.0)
                if a.dtype == np.uint8 or k <= 5:
                    try:
                        cv = cv2.medianBlur(a, k)
                    except cv2.error as e:
                        rescv[n] = str(e).splitlines()[-1][-100:]
                        continue
                    if a.ndim == 3 and a.shape[2] == 4:
                        cv[:, :, 3] = a[:, :, 3]
                    rescv[n] = err_of(o, cv, 1.0)
            ctx.table.group("median", f"{k}x{k}", label, ctx.device, "scipy median_filter mode='nearest'", res,
                            lambda n: 0.0, unit="sample")
            ctx.table.group("median", f"{k}x{k}", label, ctx.device, "cv2.medianBlur (alpha excluded)", rescv,
                            lambda n: 0.0, unit="sample")


def bilateral_np(a, ss, sr, r, border):
    """The bilateral filter written from its definition, in f64, in full-scale units:
    disk dx^2 + dy^2 <= r^2, Euclidean colour distance, alpha passed through."""
    full = full_scale(a.dtype)
    f = a.astype(np.float64) / full
    f3 = f[:, :, None] if f.ndim == 2 else f
    col = f3[:, :, :3]
    mode = "edge" if border == "replicate" else "symmetric"
    p = np.pad(col, ((r, r), (r, r), (0, 0)), mode=mode)
    h, w = col.shape[:2]
    num, den = np.zeros_like(col), np.zeros((h, w, 1))
    for dy in range(-r, r + 1):
        for dx in range(-r, r + 1):
            if dx * dx + dy * dy > r * r:
                continue
            q = p[r + dy:r + dy + h, r + dx:r + dx + w]
            d2 = ((q - col) ** 2).sum(axis=2, keepdims=True)
            wgt = math.exp(-(dx * dx + dy * dy) / (2 * ss * ss)) * np.exp(-d2 / (2 * sr * sr))
            num += wgt * q
            den += wgt
    out = num / den
    if f3.shape[2] == 4:
        out = np.concatenate([out, f3[:, :, 3:]], axis=2)
    return (out[:, :, 0] if f.ndim == 2 else out) * full


BILATERAL = [(2, 0.1, None, "replicate"), (2, 0.1, None, "mirror"), (1, 0.3, 3, "replicate")]


def check_bilateral(ctx, rng):
    imgs = {**image_set(rng), **large_set(rng)}
    for ss, sr, rad, border in BILATERAL:
        r = rad if rad is not None else math.ceil(2 * ss)
        refs = {n: bilateral_np(a, ss, sr, r, border) for n, a in imgs.items()}
        for label, var in ctx.variants("bilateral"):
            fast = label.startswith("fast")
            prec = "fast" if fast else "exact"
            spec = f"bilateral=sigma_s={ss}:sigma_r={sr}:border={border}:precision={prec}" + (f":radius={rad}" if rad else "")
            params = f"s_s {ss} s_r {sr} r {r} {border} {prec}"
            outs = ctx.runner.apply(spec, imgs, var)
            res, rescv, self_err = {}, {}, {}
            for n, a in imgs.items():
                o = outs[n]
                if isinstance(o, str):
                    res[n] = o
                    continue
                full = full_scale(a.dtype)
                res[n] = err_of(o, refs[n], scale_of(a))
                if a.dtype != np.uint16 and (a.ndim == 2 or a.shape[2] == 3):
                    cv = cv2.bilateralFilter(a, 2 * r + 1, sr * full, ss, borderType=CV_BORDER[border])
                    rescv[n] = err_of(o, cv, scale_of(a))
                    self_err[n] = err_of(cv, refs[n], scale_of(a))[0]
            bound = 2e-3 if fast else 1e-4
            ctx.table.group("bilateral", params, label, ctx.device, "numpy f64 from the definition", res,
                            lambda n: bound + step(imgs[n].dtype))
            gray = {n: v for n, v in rescv.items() if "_gray_" in n}
            rgb = {n: v for n, v in rescv.items() if "_rgb_" in n}
            ref = f"cv2.bilateralFilter(d=2r+1, sigmaColor=s_r*full, sigmaSpace=s_s, {CV_BORDER_NAME[border]})"
            ctx.table.group("bilateral", params, label, ctx.device, ref + "; tolerance + cv2's own error vs f64", gray,
                            lambda n: bound + step(imgs[n].dtype) + self_err[n])
            ctx.table.group("bilateral", params, label, ctx.device, ref + ": L1 colour distance", rgb,
                            lambda n: bound + 2 * step(imgs[n].dtype), verdict="convention")
