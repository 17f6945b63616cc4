"""Histogram, stats, reduce and sort against numpy."""
import numpy as np

from common import SIZES, image_set

U = 2.0 ** -24


def f32_specials(rng, h, w, c):
    """f32 in 0..1 with NaN, values on and next to bin edges, the top edge."""
    a = rng.random((h, w, c)).astype(np.float32)
    flat = a.reshape(-1)
    edges = np.arange(0, 101, dtype=np.float64) / 100
    picks = np.concatenate([edges, np.nextafter(edges.astype(np.float32), np.float32(2)),
                            np.nextafter(edges.astype(np.float32), np.float32(-1))]).astype(np.float32)
    n = min(flat.size, picks.size)
    idx = rng.choice(flat.size, n, replace=False)
    flat[idx] = picks[:n]
    if flat.size > 4:
        flat[rng.choice(flat.size, 2, replace=False)] = np.nan
    return a[:, :, 0] if c == 1 else a


def f32_hist_emulated(v, bins, lo, hi):
    """Our documented rule in f32: min(floor((v - lo) * (N / (hi - lo))), N - 1)."""
    v = v[~np.isnan(v)]
    v = v[(v >= np.float32(lo)) & (v <= np.float32(hi))]
    k = np.float32(bins / (hi - lo))
    i = np.minimum(np.floor((v - np.float32(lo)) * k), bins - 1).astype(np.int64)
    return np.bincount(i, minlength=bins)


def check_histogram(ctx, rng):
    imgs = image_set(rng, types=[np.uint8, np.uint16], kinds_big=("noise", "gradient"))
    for (h, w) in SIZES:
        for c in (1, 3, 4):
            imgs[f"f32_{ {1: 'gray', 3: 'rgb', 4: 'rgba'}[c] }_{w}x{h}_edges"] = f32_specials(rng, h, w, c)
    levels = {"u16_gray_256x256_levels": np.arange(65536, dtype=np.uint16).reshape(256, 256),
              "u8_gray_16x16_levels": np.arange(256, dtype=np.uint8).reshape(16, 16)}
    imgs.update(levels)
    cases = [("default", []), ("bins 100 range 0:1", ["--bins", "100", "--range", "0:1"]),
             ("bins 7 range -0.25:0.8", ["--bins", "7", "--range", "-0.25:0.8"]),
             ("bins 65536 range 0:65535", ["--bins", "65536", "--range", "0:65535"]),
             ("bins 65536 range 0:65536", ["--bins", "65536", "--range", "0:65536"])]
    for params, args in cases:
        for label, var in ctx.variants("histogram"):
            res, emu, r32 = {}, {}, {}
            for n, a in imgs.items():
                if params.startswith("bins 65536") != n.startswith("u16_gray_256x256") and params != "default":
                    continue
                if params.startswith("bins") and not params.startswith("bins 65536") and a.dtype != np.float32:
                    continue
                got = ctx.runner.tool_json("histogram", a, args, var)
                if isinstance(got, str):
                    res[n] = got
                    continue
                bins, (lo, hi) = got["bins"], got["range"]
                a3 = a.reshape(a.shape[0], a.shape[1], -1)
                diff, diff_emu, diff32 = 0, 0, 0
                for ch in range(a3.shape[2]):
                    v = a3[:, :, ch].reshape(-1)
                    ref, _ = np.histogram(v[~np.isnan(v)].astype(np.float64), bins=bins, range=(lo, hi))
                    mine = np.array(got["counts"][ch])
                    diff += int(np.abs(mine - ref).sum())
                    if a.dtype == np.float32:  # numpy 2 bins f32 data with f32 edges
                        ref32, _ = np.histogram(v[~np.isnan(v)], bins=bins, range=(lo, hi))
                        diff32 += int(np.abs(mine - ref32).sum())
                    diff_emu += int(np.abs(mine - f32_hist_emulated(v.astype(np.float32), bins, lo, hi)).sum())
                res[n] = (float(diff), float(diff))
                emu[n] = (float(diff_emu), float(diff_emu))
                if a.dtype == np.float32:
                    r32[n] = (float(diff32), float(diff32))
            ints = {n: r for n, r in res.items() if not n.startswith("f32")}
            flts = {n: r for n, r in res.items() if n.startswith("f32")}
            ctx.table.group("histogram", params, label, ctx.device, "np.histogram(range=(lo, hi)) [sum of |count differences|]",
                            ints, lambda n: 0, unit="count", verdict="convention" if params.endswith("0:65535") else None)
            ctx.table.group("histogram", params, label, ctx.device,
                            "np.histogram of the samples as f64 [sum of |count differences|]; samples on and next to edges planted", flts,
                            lambda n: 0, verdict="convention", unit="count")
            ctx.table.group("histogram", params, label, ctx.device,
                            "np.histogram on the f32 array (f32 edges) [sum of |count differences|]", r32,
                            lambda n: 0, verdict="convention", unit="count")
            ctx.table.group("histogram", params, label, ctx.device, "numpy f32 emulation of the documented rule",
                            emu, lambda n: 0, unit="count")


def check_stats(ctx, rng):
    imgs = image_set(rng)
    big = rng.random((301, 257)).astype(np.float32) * np.float32(1e4) - np.float32(3e3)
    imgs["f32_gray_257x301_wide"] = big
    nan = rng.random((13, 7, 3)).astype(np.float32)
    nan[3, 2, 1] = np.nan
    imgs["f32_rgb_7x13_nan"] = nan
    for label, var in ctx.variants("stats"):
        res = {}
        k = 2 if label == "cpu" else 24
        for n, a in imgs.items():
            got = ctx.runner.tool_json("stats", a, (), var)
            if isinstance(got, str):
                res[n] = got
                continue
            a3 = a.reshape(a.shape[0], a.shape[1], -1).astype(np.float64)
            worst = 0.0
            for ch in range(a3.shape[2]):
                v = a3[:, :, ch].reshape(-1)
                cnt = v.size
                s, mn = v.sum(), v.mean()
                sd = v.std()
                g = {key: got[key][ch] for key in ("sum", "mean", "std", "min", "max")}
                if np.isnan(v).any():
                    ok = g["sum"] is None and g["mean"] is None and g["std"] is None \
                        and g["min"] == np.nanmin(v) and g["max"] == np.nanmax(v)
                    worst = max(worst, 0.0 if ok else np.inf)
                    continue
                if a.dtype != np.float32:
                    exact = [abs(g[key] - r) for key, r in (("sum", s), ("mean", s / cnt), ("min", v.min()), ("max", v.max()))]
                    ratio = abs(g["std"] - sd) / (1e-12 * max(sd, 1.0))
                    worst = max(worst, ratio if max(exact) == 0 else np.inf)
                    continue
                sabs = np.abs(v).sum()
                bsum = k * U * sabs
                dm = (k + 1) * U * sabs / cnt
                q = ((v - mn) ** 2).sum()
                e_bound = (k + 4) * U * q / cnt + (2 * np.abs(v - mn).max() + dm) * dm
                bstd = min(np.sqrt(e_bound), e_bound / sd) if sd > 0 else np.sqrt(e_bound)
                ratios = [abs(g["sum"] - s) / bsum if bsum else abs(g["sum"] - s),
                          abs(g["mean"] - mn) / dm if dm else abs(g["mean"] - mn),
                          abs(g["std"] - sd) / bstd if bstd else abs(g["std"] - sd),
                          0.0 if (g["min"] == v.min() and g["max"] == v.max()) else np.inf]
                worst = max(worst, max(ratios))
            res[n] = (worst, worst)
        ctx.table.group("stats", "sum mean std min max", label, ctx.device,
                        "numpy f64 (ints: exact; f32: error / documented bound)", res, lambda n: 1.0, unit="ratio")


def check_reduce(ctx, rng):
    imgs = image_set(rng, kinds_big=("noise",))
    wide = (rng.random((37, 1031)) * 2 - 1) * 10.0 ** rng.integers(-3, 4, (37, 1031))
    imgs["f32_gray_1031x37_mixed"] = wide.astype(np.float32)
    ks = {"x_row": 4, "y_column": 4, "x_tree": 16, "x_shfl": 16, "y_split": 16, "x_subgroup": 80, "cpu": 2}
    for axis in ("x", "y"):
        for op in ("sum", "mean", "min", "max"):
            for label, var in ctx.variants("reduce"):
                outs = ctx.runner.apply(f"reduce=axis={axis}:op={op}", imgs, var)
                res = {}
                k = ks.get(label, 80)
                for n, a in imgs.items():
                    o = outs[n]
                    if isinstance(o, str):
                        res[n] = o
                        continue
                    f = a.astype(np.float64)
                    ax = 1 if axis == "x" else 0
                    ref = {"sum": f.sum, "mean": f.mean, "min": f.min, "max": f.max}[op](axis=ax, keepdims=True)
                    o = o.astype(np.float64).reshape(ref.shape)
                    if op in ("min", "max"):
                        e = float(np.abs(o - ref).max())
                        res[n] = (e, e)
                        continue
                    cnt = f.shape[ax]
                    b = np.abs(f).sum(axis=ax, keepdims=True) * U * (k if op == "sum" else (k + 3) / cnt)
                    r = np.abs(o - ref) / np.maximum(b, 1e-300)
                    res[n] = (float(r.max()), float(r.mean()))
                tol = 0.0 if op in ("min", "max") else 1.0
                unit = "sample" if tol == 0 else "ratio"
                ctx.table.group("reduce", f"axis={axis} op={op}", label, ctx.device,
                                "numpy f64" + ("" if tol == 0 else " (error / documented bound)"), res,
                                lambda n: tol, unit=unit)


def total_order_sort(keys):
    """An independent IEEE-754 totalOrder sort: the bits as a signed integer,
    negative numbers' magnitude bits flipped."""
    b = keys.view(np.int32)
    key = np.where(b < 0, b ^ np.int32(0x7FFFFFFF), b)
    return keys[np.argsort(key, kind="stable")]


def check_sort(ctx, rng):
    lengths = [0, 1, 2, 3, 511, 513, 4097, 10007]
    specials = np.array([np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-45, -1e-45, 3.4e38], np.float32)
    for typ in ("f32", "u32", "i32"):
        for label, var in ctx.variants("sort"):
            res_np, res_to = {}, {}
            for n in lengths:
                if typ == "f32":
                    k = (rng.standard_normal(n) * 10).astype(np.float32)
                    if n >= 9:
                        k[rng.choice(n, 9, replace=False)] = specials
                        k[:: max(n // 50, 1)] = np.float32(1.5)  # duplicates
                elif typ == "u32":
                    k = rng.integers(0, 2 ** 32, n, dtype=np.uint64).astype(np.uint32)
                else:
                    k = rng.integers(-2 ** 31, 2 ** 31, n, dtype=np.int64).astype(np.int32)
                got = ctx.runner.sort(k, typ, var)
                name = f"{typ}_keys_{n}"
                if isinstance(got, str):
                    res_np[name] = got
                    continue
                if typ == "f32":
                    to = total_order_sort(k)
                    bad = int((got.view(np.uint32) != to.view(np.uint32)).sum())
                    res_to[name] = (float(bad), float(bad))
                    ref = np.sort(k)
                    # numpy: every NaN last, -0 and +0 as equals (in input order)
                    bad_np = int((got.view(np.uint32) != ref.view(np.uint32)).sum())
                else:
                    bad_np = int((got != np.sort(k)).sum())
                res_np[name] = (float(bad_np), float(bad_np))
            if typ == "f32":
                ctx.table.group("sort", typ, label, ctx.device, "numpy stable argsort of totalOrder keys [keys differing]",
                                res_to, lambda n: 0, unit="count")
                ctx.table.group("sort", typ, label, ctx.device, "np.sort (NaN last, -0 == +0) [keys differing by bits]",
                                res_np, lambda n: 0, verdict="convention", unit="count")
            else:
                ctx.table.group("sort", typ, label, ctx.device, "np.sort [keys differing]", res_np, lambda n: 0,
                                unit="count")
