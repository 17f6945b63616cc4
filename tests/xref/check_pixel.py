"""Per-pixel operations against numpy formulas and OpenCV: normalize,
transpose, minmax, colormap, gamma, ccm, wb, black."""
import cv2
import numpy as np

from common import err_of, image_set, rint_sat, step
from harness import full_scale


def _colour(a):
    """(colour channels, alpha or None) of an image as H x W x C."""
    a3 = a.reshape(a.shape[0], a.shape[1], -1)
    return (a3[:, :, :3], a3[:, :, 3:]) if a3.shape[2] == 4 else (a3, None)


def _run(ctx, op, spec, imgs, ref_fn, tol_fn, params, ref_name, verdict=None, unit="full"):
    for label, var in ctx.variants(op):
        outs = ctx.runner.apply(spec, imgs, var)
        res = {}
        for n, a in imgs.items():
            o = outs[n]
            if isinstance(o, str):
                res[n] = o
                continue
            ref, scale = ref_fn(a)
            res[n] = err_of(o.reshape(ref.shape), ref, scale)
        ctx.table.group(op, params, label, ctx.device, ref_name, res, lambda n: tol_fn(imgs[n], label), verdict=verdict,
                        unit=unit)


def check_normalize(ctx, rng):
    imgs = image_set(rng)
    for sub, factor, out in ((10.0, 0.5, "u8"), (0.25, 300.0, "u16"), (-3.0, 0.01, "f32")):
        dt = {"u8": np.uint8, "u16": np.uint16, "f32": np.float32}[out]

        def ref(a, sub=sub, factor=factor, dt=dt):
            v = (a.astype(np.float32) - np.float32(sub)) * np.float32(factor)
            return rint_sat(v, dt).astype(np.float64), 1.0
        _run(ctx, "normalize", f"normalize=sub={sub}:factor={factor}:out={out}", imgs, ref, lambda a, v: 0.0,
             f"sub {sub} factor {factor} out {out}", "numpy f32 (x - sub) * factor, rint, saturate", unit="sample")
    rgb = {n: a for n, a in imgs.items() if "_rgba_" not in n and a.size > 1}

    def cv_ref(a):
        full = full_scale(a.dtype)
        return cv2.normalize(a, None, 0, full, cv2.NORM_MINMAX).astype(np.float64), full
    _run(ctx, "normalize", "normalize", rgb, cv_ref, lambda a, v: 1.0 / full_scale(a.dtype) if a.dtype != np.float32 else 2e-7,
         "auto (min..max)", "cv2.normalize NORM_MINMAX")
    rgba = {n: a for n, a in imgs.items() if "_rgba_" in n and a.size > 4}

    def rgba_ref(a):
        full = full_scale(a.dtype)
        col, alpha = _colour(a)
        v = col.astype(np.float64)
        lo, hi = v.min(), v.max()
        y = (v - lo) * (full / (hi - lo)) if hi > lo else np.zeros_like(v)
        return np.concatenate([y, alpha.astype(np.float64)], axis=2), full
    _run(ctx, "normalize", "normalize", rgba, rgba_ref, lambda a, v: 1.0 / full_scale(a.dtype) if a.dtype != np.float32 else 2e-7,
         "auto (min..max), RGBA", "numpy f64: colour min..max to full, alpha kept")


def check_percentiles(ctx, rng):
    """normalize=low=P%:high=Q% against numpy's percentile with method
    'inverted_cdf' (Hyndman and Fan's definition 1: the smallest sample whose
    empirical CDF reaches P), pooled over the colour channels."""
    every = {n: a for n, a in image_set(rng).items() if a.size >= 4}
    for lo_p, hi_p in ((1, 99), (0, 100), (5, 50)):
        # Images whose two percentiles coincide (a 0/1 checker at 5%..50%) have no
        # reference stretch; docs/results lists what each type does with them.
        def distinct(a):
            v = _colour(a)[0].astype(np.float64)
            return np.percentile(v, lo_p, method="inverted_cdf") < np.percentile(v, hi_p, method="inverted_cdf")
        imgs = {n: a for n, a in every.items() if distinct(a)}
        for out in ("u8", "f32"):
            dt = np.uint8 if out == "u8" else np.float32
            full = full_scale(dt)
            tols = {}

            def ref(a, lo_p=lo_p, hi_p=hi_p, dt=dt, full=full):
                col, alpha = _colour(a)
                v = col.astype(np.float64)
                lo = np.percentile(v, lo_p, method="inverted_cdf")
                hi = np.percentile(v, hi_p, method="inverted_cdf")
                y = (v - lo) * (full / (hi - lo)) if hi > lo else np.zeros_like(v)
                if a.dtype == np.float32:
                    # each end within one of 4096 bins between min and max, w: y moves by at most
                    # w (1 + 2 |y| / full) / (hi - lo - 2 w) of full scale
                    w = (v.max() - v.min()) / 4096
                    ymax = float(np.abs(y).max()) / full if y.size else 0.0
                    tols[id(a)] = w * (1 + 2 * ymax) / max(hi - lo - 2 * w, 1e-12) + (0 if dt == np.float32 else 1 / full)
                y = rint_sat(y, dt).astype(np.float64) if dt != np.float32 else y
                if alpha is not None:
                    y = np.concatenate([y, alpha.astype(np.float64) * (full / full_scale(a.dtype))], axis=2)
                return y.reshape(a.shape), full

            def tol(a, v, dt=dt, full=full):
                if id(a) in tols:
                    return tols[id(a)]
                return 1.0 / full if dt != np.float32 else 1e-6

            _run(ctx, "normalize", f"normalize=low={lo_p}%:high={hi_p}%:out={out}", imgs, ref, tol,
                 f"low={lo_p}% high={hi_p}% out={out}", "np.percentile(method='inverted_cdf'), stretched")


def check_transpose_minmax(ctx, rng):
    imgs = image_set(rng)
    _run(ctx, "transpose", "transpose", imgs, lambda a: (np.swapaxes(a, 0, 1).astype(np.float64), 1.0),
         lambda a, v: 0.0, "", "np.swapaxes", unit="sample")
    nan = rng.random((13, 7, 3)).astype(np.float32)
    nan[2, 3, 0] = np.nan
    imgs["f32_rgb_7x13_nan"] = nan
    for label, var in ctx.variants("minmax"):
        res = {}
        for n, a in imgs.items():
            doc = ctx.runner.apply_json("minmax", a, var)
            if isinstance(doc, str):
                res[n] = doc
                continue
            mm = doc["files"][0]["stages"][0]["minmax"]
            a3 = a.reshape(a.shape[0], a.shape[1], -1).astype(np.float64)
            # the JSON holds the f32 values' shortest decimals: compare as f32
            e = max(max(abs(float(np.float32(mm["min"][c])) - np.nanmin(a3[:, :, c])),
                        abs(float(np.float32(mm["max"][c])) - np.nanmax(a3[:, :, c]))) for c in range(a3.shape[2]))
            res[n] = (e, e)
        ctx.table.group("minmax", "", label, ctx.device, "np.nanmin / np.nanmax", res, lambda n: 0.0, unit="sample")


def _cv_table(code):
    lut = cv2.applyColorMap(np.arange(256, dtype=np.uint8).reshape(1, 256), code)[0, :, ::-1]
    return lut.astype(np.float64)


def _interp(table, t):
    pos = np.clip(t, 0, 1) * 255
    i = np.minimum(np.floor(pos).astype(np.int64), 254)
    f = (pos - i)[..., None]
    return table[i] * (1 - f) + table[i + 1] * f


def _rainbow(t):
    """Gnuplot rgbformulae 33,13,10 (matplotlib's 'rainbow')."""
    return np.clip(np.stack([np.abs(2 * t - 0.5), np.sin(np.pi * t), np.cos(np.pi * t / 2)], axis=-1), 0, 1) * 255


def check_colormap(ctx, rng):
    u8 = {n: a for n, a in image_set(rng, types=[np.uint8], channels=[1]).items()}
    u8["u8_gray_256x1_levels"] = np.arange(256, dtype=np.uint8).reshape(1, 256)
    turbo = _cv_table(cv2.COLORMAP_TURBO)
    _run(ctx, "colormap", "colormap=map=turbo:min=0:max=255", u8, lambda a: (turbo[a.astype(np.int64)], 255.0),
         lambda a, v: 1.0 / 255, "turbo, u8, min=0 max=255", "cv2.applyColorMap COLORMAP_TURBO")
    rest = image_set(rng, types=[np.uint16, np.float32], channels=[1])

    def auto(a):
        f = a.astype(np.float64)
        lo, hi = f.min(), f.max()
        t = (f - lo) / (hi - lo) if hi > lo else np.zeros_like(f)
        return _interp(turbo, t), 255.0
    rest = {n: a for n, a in rest.items() if a.size > 1}
    _run(ctx, "colormap", "colormap=map=turbo", rest, auto, lambda a, v: 1.0 / 255, "turbo, automatic range",
         "cv2 COLORMAP_TURBO table, interpolated in numpy")
    _run(ctx, "colormap", "colormap=map=rainbow:min=0:max=255", u8, lambda a: (_rainbow(a / 255.0), 255.0),
         lambda a, v: 1.0 / 255, "rainbow, u8", "gnuplot 33,13,10 formulas (matplotlib 'rainbow')")
    cvr = _cv_table(cv2.COLORMAP_RAINBOW)
    _run(ctx, "colormap", "colormap=map=rainbow:min=0:max=255", u8, lambda a: (cvr[a.astype(np.int64)], 255.0),
         lambda a, v: 1.0 / 255, "rainbow, u8", "cv2 COLORMAP_RAINBOW (another map)", verdict="convention")
    _run(ctx, "colormap", "colormap=map=gray:min=0:max=255:channels=4", u8,
         lambda a: (np.stack([a, a, a, np.full_like(a, 255)], axis=-1).astype(np.float64), 255.0),
         lambda a, v: 0.0, "gray, u8, RGBA", "identity, alpha 255")


def _per_colour(fn):
    """ref_fn applying fn(colour f64, full) to the colour channels, alpha copied,
    rounded for integer types (the reference stays unrounded)."""
    def ref(a):
        full = full_scale(a.dtype)
        col, alpha = _colour(a)
        c = fn(col.astype(np.float64), full)
        if a.dtype != np.float32:
            c = np.clip(np.nan_to_num(c), 0, full)
        out = c if alpha is None else np.concatenate([c, alpha.astype(np.float64)], axis=2)
        return out.reshape(a.shape).astype(np.float64), full
    return ref


def _curve(name):
    def f(x, full):
        L = np.maximum(x / full, 0)
        if name == "srgb":
            y = np.where(L <= 0.0031308, 12.92 * L, 1.055 * L ** (1 / 2.4) - 0.055)
        elif name == "rec709":
            y = np.where(L < 0.018, 4.5 * L, 1.099 * L ** 0.45 - 0.099)
        else:
            y = L ** (1 / float(name))
        return y * full
    return f


def check_camera(ctx, rng):
    imgs = image_set(rng)
    colour = {n: a for n, a in imgs.items() if "_gray_" not in n}
    for curve in ("srgb", "rec709", "2.2", "0.4545"):
        _run(ctx, "gamma", f"gamma=curve={curve}", imgs, _per_colour(_curve(curve)),
             # integers: the table (lut, cpu) rounds the f64 curve; the f32 formula (pixel) is within 2e-6
             lambda a, v: (2e-6 if a.dtype == np.float32 or v == "pixel" else 1e-7) + step(a.dtype), f"curve={curve}",
             "numpy f64 formula (IEC 61966-2-1 / BT.709 / L^(1/N))")
    hdr = {"f32_rgb_101x67_hdr": (rng.random((67, 101, 3)) * 3.5 - 0.5).astype(np.float32)}
    for curve in ("srgb", "rec709", "2.2"):
        ref = _per_colour(_curve(curve))
        _run(ctx, "gamma", f"gamma=curve={curve}", hdr, ref, lambda a, v: 3e-6 * 3.5 ** (1 / 2.2) * 1.1,
             f"curve={curve}, f32 -0.5..3", "numpy f64 formula (negative to 0, above 1 by the formula)")
    m = [1.72, -0.52, -0.2, -0.26, 1.58, -0.32, 0.04, -0.62, 1.58]
    M = np.array(m).reshape(3, 3)
    _run(ctx, "ccm", "ccm=m=" + "/".join(map(str, m)), colour, _per_colour(lambda c, full: c @ M.T),
         # u8 RGB on the CPU may take 16-bit fixed point: coefficients rounded
         # to 2^-14 here, so up to (r + g + b) 2^-15 more (docs/QUALITY.md)
         lambda a, v: 1e-6 + step(a.dtype) + (3 / 2**15 if a.dtype == np.uint8 and a.shape[-1] == 3 else 0),
         "camera matrix", "numpy f64 M @ rgb")
    _run(ctx, "wb", "wb=r=1.9:b=1.4", colour, _per_colour(lambda c, full: c * np.array([1.9, 1.0, 1.4])),
         lambda a, v: 1e-6 + step(a.dtype), "r 1.9 b 1.4", "numpy f64 x * gain")

    def gray_world(c, full):
        mean = c.reshape(-1, 3).mean(axis=0)
        g = np.array([mean[1] / mean[0] if mean[0] > 0 else 1.0, 1.0, mean[1] / mean[2] if mean[2] > 0 else 1.0])
        return c * np.minimum(g, 64)
    _run(ctx, "wb", "wb=auto", colour, _per_colour(gray_world),
         lambda a, v: (1e-6 if ctx.device == "cpu" else 1e-4) + step(a.dtype), "auto (gray world)",
         "numpy f64 gray-world gains")
    for b, w in ((0.1, None), (0.1, 0.9)):
        def blk(c, full, b=b, w=w):
            v = np.maximum(np.nan_to_num(c, nan=-np.inf) - b * full, 0)
            return v if w is None else v * full / ((w - b) * full)
        spec_b = {n: f"black={b * full_scale(a.dtype):g}" + ("" if w is None else f":white={w * full_scale(a.dtype):g}")
                  for n, a in imgs.items()}
        for spec in sorted(set(spec_b.values())):
            sel = {n: a for n, a in imgs.items() if spec_b[n] == spec}
            _run(ctx, "black", spec, sel, _per_colour(blk), lambda a, v: 1e-6 + step(a.dtype), spec,
                 "numpy f64 max(x - black, 0) * full / (white - black)")
