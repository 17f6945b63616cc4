"""Running `filterctl` on numpy images and reading the results back.

Images are numpy arrays in RGB(A) channel order (H x W, or H x W x C). They go
to disk as PNG (u8, u16) or TIFF (f32) through OpenCV, which stores BGR(A)
arrays, so channels are swapped on the way out and back. Results are read as
TIFF (`--ext tif` holds every type and channel count).
"""
import json
import os
import shutil
import subprocess
import tempfile

os.environ.setdefault("OPENCV_LOG_LEVEL", "ERROR")
import cv2  # noqa: E402
import numpy as np  # noqa: E402

cv2.utils.logging.setLogLevel(cv2.utils.logging.LOG_LEVEL_ERROR)  # libtiff's notes on unknown tags

FULL = {np.dtype(np.uint8): 255.0, np.dtype(np.uint16): 65535.0, np.dtype(np.float32): 1.0}


def full_scale(dtype):
    return FULL[np.dtype(dtype)]


def _swap(a):
    if a.ndim == 3 and a.shape[2] == 3:
        return a[:, :, ::-1]
    if a.ndim == 3 and a.shape[2] == 4:
        return a[:, :, [2, 1, 0, 3]]
    return a


def write_image(path, a):
    ok = cv2.imwrite(path, np.ascontiguousarray(_swap(a)))
    if not ok:
        raise RuntimeError(f"cv2 could not write {path}")


def read_image(path):
    a = cv2.imread(path, cv2.IMREAD_UNCHANGED)
    if a is None:
        raise RuntimeError(f"cv2 could not read {path}")
    return np.ascontiguousarray(_swap(a))


def ext_for(a):
    return "tif" if a.dtype == np.float32 else "png"


class Runner:
    """Calls one `filterctl` binary with one device, and keeps its kernel cache."""

    def __init__(self, exe, device, workdir):
        self.exe = exe
        self.device = device
        self.workdir = workdir
        self.env = dict(os.environ)
        self.env["FILTERCTL_CACHE_DIR"] = os.path.join(workdir, "cache")
        self.env.pop("FILTERCTL_VARIANT", None)
        self.env.pop("FILTERCTL_DEVICE", None)
        self.calls = 0

    def _cmd(self, variant):
        cmd = [self.exe, "-q", "--device", self.device]
        if variant:
            cmd += ["--variant", variant]
        return cmd

    def apply(self, spec, images, variant=None):
        """Runs `apply -f spec` on every image of `images` (name -> array) in one
        process. Returns name -> array, or name -> error text for inputs that
        failed (a forced variant that cannot run the request, for example)."""
        d = tempfile.mkdtemp(dir=self.workdir)
        try:
            src, dst = os.path.join(d, "in"), os.path.join(d, "out")
            os.makedirs(src)
            os.makedirs(dst)
            paths = []
            for name, a in images.items():
                p = os.path.join(src, f"{name}.{ext_for(a)}")
                write_image(p, a)
                paths.append(p)
            cmd = self._cmd(variant) + ["apply", "-f", spec] + paths + ["-o", dst, "--ext", "tif"]
            r = subprocess.run(cmd, capture_output=True, text=True, env=self.env)
            self.calls += 1
            out = {}
            for name in images:
                p = os.path.join(dst, f"{name}.tif")
                if os.path.exists(p):
                    out[name] = read_image(p)
                else:
                    lines = [l for l in r.stderr.splitlines() if f"/{name}." in l]
                    out[name] = (lines[0] if lines else r.stderr.strip()[:300]) or f"exit {r.returncode}"
            return out
        finally:
            shutil.rmtree(d, ignore_errors=True)

    def apply_json(self, spec, a, variant=None):
        """`apply -f spec --json` on one image without an output (for `minmax`)."""
        d = tempfile.mkdtemp(dir=self.workdir)
        try:
            p = os.path.join(d, f"img.{ext_for(a)}")
            write_image(p, a)
            r = subprocess.run(self._cmd(variant) + ["apply", "-f", spec, p, "--json"],
                               capture_output=True, text=True, env=self.env)
            self.calls += 1
            return json.loads(r.stdout) if r.returncode == 0 else r.stderr.strip()
        finally:
            shutil.rmtree(d, ignore_errors=True)

    def tool_json(self, sub, a, args=(), variant=None):
        """`filterctl stats|histogram IN ... --json` on one image."""
        d = tempfile.mkdtemp(dir=self.workdir)
        try:
            p = os.path.join(d, f"img.{ext_for(a)}")
            write_image(p, a)
            r = subprocess.run(self._cmd(variant) + [sub, p, *args, "--json"],
                               capture_output=True, text=True, env=self.env)
            self.calls += 1
            return json.loads(r.stdout) if r.returncode == 0 else r.stderr.strip()
        finally:
            shutil.rmtree(d, ignore_errors=True)

    def sort(self, keys, typ, variant=None):
        d = tempfile.mkdtemp(dir=self.workdir)
        try:
            src, dst = os.path.join(d, "k.raw"), os.path.join(d, "s.raw")
            keys.astype(keys.dtype.newbyteorder("<")).tofile(src)
            r = subprocess.run(self._cmd(variant) + ["sort", "--type", typ, src, "-o", dst],
                               capture_output=True, text=True, env=self.env)
            self.calls += 1
            if r.returncode != 0:
                return r.stderr.strip()
            return np.fromfile(dst, dtype=keys.dtype)
        finally:
            shutil.rmtree(d, ignore_errors=True)

    def variants(self):
        """op -> list of variant names (the `cpu` path included)."""
        r = subprocess.run([self.exe, "variants", "--json"], capture_output=True, text=True, env=self.env)
        return {op["op"]: [v["name"] for v in op["variants"]] for op in json.loads(r.stdout)}
