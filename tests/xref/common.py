"""Inputs, error measures and the result table shared by the checks."""
import numpy as np

from harness import full_scale

# (height, width): 1x1, 1xN, Nx1, 7x13 and 101x67 (W x H), none a multiple of 16.
SIZES = [(1, 1), (1, 23), (23, 1), (13, 7), (67, 101)]
TYPES = [np.uint8, np.uint16, np.float32]
CHANNELS = [1, 3, 4]
TNAME = {np.dtype(np.uint8): "u8", np.dtype(np.uint16): "u16", np.dtype(np.float32): "f32"}
CNAME = {1: "gray", 3: "rgb", 4: "rgba"}


def tname(dtype):
    return TNAME[np.dtype(dtype)]


def pattern(kind, h, w, c, rng):
    """A float64 image in 0..1 of `kind`: noise, gradient (smooth ramps, one
    direction per channel) or checker (0/1 squares of 3 pixels: sharp edges)."""
    y, x = np.mgrid[0:h, 0:w].astype(np.float64)
    if kind == "noise":
        f = rng.random((h, w, c))
    elif kind == "gradient":
        planes = []
        for k in range(c):
            a = (x / max(w - 1, 1) + k * y / max(h - 1, 1)) / (1 + k)
            planes.append(a if k % 2 == 0 else 1 - a)
        f = np.stack(planes, axis=2)
    elif kind == "checker":
        b = ((x // 3 + y // 3) % 2)
        f = np.stack([b if k % 2 == 0 else 1 - b for k in range(c)], axis=2)
    else:
        raise ValueError(kind)
    return f[:, :, 0] if c == 1 else f


def quantise(f, dtype):
    if np.dtype(dtype) == np.float32:
        return f.astype(np.float32)
    return np.rint(f * full_scale(dtype)).astype(dtype)


def image_set(rng, types=TYPES, channels=CHANNELS, sizes=SIZES, kinds_big=("noise", "gradient", "checker")):
    """name -> image: noise at every size; the other patterns at the largest."""
    out = {}
    for t in types:
        for c in channels:
            for (h, w) in sizes:
                kinds = kinds_big if (h, w) == sizes[-1] else ("noise",)
                for k in kinds:
                    out[f"{tname(t)}_{CNAME[c]}_{w}x{h}_{k}"] = quantise(pattern(k, h, w, c, rng), t)
    return out


def photo(h, w, c, rng):
    """A photo-like float64 image in 0..1: a smooth random field, a few sharp
    steps and a little noise."""
    from scipy.ndimage import gaussian_filter
    f = gaussian_filter(rng.random((h, w, c)), (4, 4, 0))
    f = (f - f.min()) / max(np.ptp(f), 1e-12)
    y, x = np.mgrid[0:h, 0:w]
    f = 0.7 * f + 0.25 * ((x > w // 3) ^ (y > h // 2))[:, :, None] + 0.05 * rng.random((h, w, c))
    return f[:, :, 0] if c == 1 else f


def large_set(rng):
    """Larger inputs past the paths' strips and tiles (2048-sample rows, 64-sample
    blocks, 16/32 tiles), and f32 beyond 0..1."""
    out = {
        "u8_rgb_1283x261_photo": quantise(photo(261, 1283, 3, rng), np.uint8),
        "u16_gray_1283x261_photo": quantise(photo(261, 1283, 1, rng), np.uint16),
        "f32_rgba_1283x261_photo": quantise(photo(261, 1283, 4, rng), np.float32),
        "u8_gray_2100x5_noise": quantise(pattern("noise", 5, 2100, 1, rng), np.uint8),
        "f32_gray_101x67_offset": (1000 + rng.random((67, 101))).astype(np.float32),
        "f32_gray_101x67_signed": (rng.random((67, 101)) * 200 - 100).astype(np.float32),
    }
    return out


def describe(name):
    """Input class of an image name (type and channels), for grouping rows."""
    t, c = name.split("_")[:2]
    return f"{t} {c}"


class Table:
    """Rows: op, params, variant, device, input, reference, max err, mean err,
    tolerance, verdict. Verdicts: ok, FAIL, convention (a documented difference
    of the reference's definition, expected to exceed the tolerance), info
    (measured, no verdict), n/a (the variant declined every input)."""

    def __init__(self):
        self.rows = []
        self.declined = {}  # (op, variant) -> {reason: number of input classes}

    def add(self, op, params, variant, device, inp, ref, maxerr, meanerr, tol, verdict=None, worst="", unit="full"):
        if verdict is None:
            verdict = "ok" if maxerr <= tol else "FAIL"
        self.rows.append(dict(op=op, params=params, variant=variant, device=device, input=inp, ref=ref,
                              max=maxerr, mean=meanerr, tol=tol, verdict=verdict, worst=worst, unit=unit))

    def group(self, op, params, variant, device, ref, results, tol_of, verdict=None, unit="full"):
        """Adds one row per input class from results: name -> (max, mean) or
        name -> error text. tol_of(name) gives each input's tolerance."""
        classes = {}
        for name, r in results.items():
            classes.setdefault(describe(name), []).append((name, r))
        for cls, items in sorted(classes.items()):
            errs = [(n, r) for n, r in items if isinstance(r, str)]
            good = [(n, r) for n, r in items if not isinstance(r, str)]
            if not good:
                reason = errs[0][1].split("cannot run this request: ")[-1][-110:]
                d = self.declined.setdefault((op, variant), {})
                d[reason] = d.get(reason, 0) + 1
                continue
            fails = [(n, r) for n, r in good if r[0] > tol_of(n)]
            worst = max(good, key=lambda nr: nr[1][0] - tol_of(nr[0]))
            v = (verdict or "FAIL") if fails else "ok"  # a convention row that agrees is ok
            note = worst[0] + (f"; {len(errs)} declined" if errs else "")
            self.add(op, params, variant, device, cls, ref, worst[1][0], float(np.mean([r[1] for _, r in good])),
                     tol_of(worst[0]), v, worst=note, unit=unit)

    def markdown(self):
        head = ("| op | params | variant | device | input | reference | max err | mean err | tolerance | verdict "
                "| worst input / note |\n|---|---|---|---|---|---|---:|---:|---:|---|---|\n")
        lines = []
        for r in self.rows:
            lines.append(f"| {r['op']} | {cell(r['params'])} | {r['variant']} | {r['device']} | {r['input']} "
                         f"| {cell(r['ref'])} | {fmt(r['max'])} | {fmt(r['mean'])} | {fmt(r['tol'])} | {r['verdict']} "
                         f"| {cell(r['worst'])} |")
        return head + "\n".join(lines) + "\n"

    def condensed(self):
        """One row per (op, variant, device, reference): the row closest to (or
        furthest past) its tolerance, and how many rows it stands for."""
        best = {}
        for r in self.rows:
            key = (r["op"], r["variant"], r["device"], r["ref"])
            ratio = r["max"] / r["tol"] if r["tol"] else (0.0 if r["max"] == 0 else float("inf"))
            cur = best.get(key)
            rank = (r["verdict"] == "FAIL", r["verdict"] == "convention", ratio)
            if cur is None or rank > cur[0]:
                best[key] = (rank, r, (cur[2] if cur else 0) + 1)
            else:
                best[key] = (cur[0], cur[1], cur[2] + 1)
        head = ("| op | variant | device | reference | rows | worst params | worst input | max err | tolerance | verdict |\n"
                "|---|---|---|---|---:|---|---|---:|---:|---|\n")
        lines = [f"| {r['op']} | {r['variant']} | {r['device']} | {cell(r['ref'])} | {n} | {cell(r['params'])} | {cell(r['worst'])} "
                 f"| {fmt(r['max'])} | {fmt(r['tol'])} | {r['verdict']} |" for _, r, n in best.values()]
        return head + "\n".join(lines) + "\n"

    def declined_markdown(self):
        """The variants that declined whole input classes (rows left out of the table)."""
        lines = [f"- {op} `{v}`: " + "; ".join(f"{r} ({n} classes)" for r, n in rs.items())
                 for (op, v), rs in sorted(self.declined.items())]
        return "\n".join(lines) + ("\n" if lines else "")

    def summary(self):
        counts = {}
        for r in self.rows:
            counts[r["verdict"]] = counts.get(r["verdict"], 0) + 1
        return ", ".join(f"{k}: {v}" for k, v in sorted(counts.items()))


def cell(text):
    """Text for a markdown table cell ('|' escaped)."""
    return str(text).replace("|", "\\|")


def fmt(v):
    if isinstance(v, str):
        return v
    if v != v:
        return "-"
    if v == 0:
        return "0"
    return f"{v:.3g}"


def err_of(out, ref, scale):
    """(max, mean) of |out - ref| / scale over every sample."""
    d = np.abs(out.astype(np.float64) - ref.astype(np.float64)) / scale
    if d.size == 0:
        return (0.0, 0.0)
    return (float(np.nanmax(d)), float(np.nanmean(d)))


def step(dtype):
    """Half an output step in full-scale units (0 for f32)."""
    return 0.0 if np.dtype(dtype) == np.float32 else 0.5 / full_scale(dtype)


def rint_sat(v, dtype):
    """Round half to even and saturate, NaN -> 0 (the project's integer conversion)."""
    if np.dtype(dtype) == np.float32:
        return v.astype(np.float32)
    v = np.nan_to_num(np.asarray(v, dtype=np.float64), nan=0.0)
    return np.clip(np.rint(v), 0, full_scale(dtype)).astype(dtype)
