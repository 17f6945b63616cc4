# Counts of `filterctl histogram` on an OpenCL device (local_private forced) against
# `--device cpu`, exactly, on random and smooth u8 and u16 images in coarse, fine and
# odd binnings; every case must name local_private on stderr (no fallback).
# Usage: python3 benches/histogram_check.py FILTERCTL WORKDIR   (CHECK_DEV=opencl for PoCL)
import json, os, subprocess, sys
import numpy as np, cv2
B = sys.argv[1]; W = sys.argv[2]
rng = np.random.default_rng(47)
imgs = {
  "u8rgb": rng.integers(0, 256, (997, 1031, 3), dtype=np.uint8),
  "u8gray_big": rng.integers(0, 256, (4099, 4097), dtype=np.uint8),
  "u8rgba_smooth": np.dstack([np.tile(((np.arange(2053) // 7 + k * 40) % 256).astype(np.uint8), (2051, 1)) for k in range(4)]),
  "u16gray": rng.integers(0, 65536, (1201, 1601), dtype=np.uint16),
  "u16rgb_12bit": rng.integers(0, 4096, (997, 1031, 3), dtype=np.uint16),
}
binnings = [["--bins", "1"], ["--bins", "7", "--range", "10:200"], ["--bins", "16"], ["--bins", "100", "--range", "0.5:256.5"],
            ["--bins", "256"], ["--bins", "4096"], ["--bins", "4096", "--range", "0:4096"], ["--bins", "12288", "--range", "0:65535"], ["--bins", "3"]]
bad = 0; n = 0
for name, a in imgs.items():
    path = os.path.join(W, f"{name}.png")
    cv2.imwrite(path, a if a.ndim == 2 else (cv2.cvtColor(a, cv2.COLOR_RGB2BGR) if a.shape[2] == 3 else cv2.cvtColor(a, cv2.COLOR_RGBA2BGRA)))
    for bz in binnings:
        outs = []
        for dev in (["--device", os.environ.get("CHECK_DEV", "gpu"), "--variant", "histogram=local_private"], ["--device", "cpu"]):
            r = subprocess.run([B] + dev + ["histogram", "--json"] + bz + [path], capture_output=True, text=True)
            outs.append((r.returncode, r.stdout, r.stderr[-600:]))
        n += 1
        err = outs[0][2]
        ran = "local_private" in err and "WARN" not in err and "fall" not in err.lower()
        if not ran:
            print("NOT ON THE DEVICE?", name, bz, err)
        ok = ran and outs[0][0] == 0 and outs[1][0] == 0 and json.loads(outs[0][1])["counts"] == json.loads(outs[1][1])["counts"]
        if not ok:
            bad += 1
            print("MISMATCH", name, bz, outs[0][0], outs[1][0], outs[0][2], outs[1][2])
print(f"{n} cases, {bad} mismatches")
