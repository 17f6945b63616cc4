#!/usr/bin/env python3
"""deband against ffmpeg's `deband` filter on the CPU, same input, one run.

    python3 benches/deband_vs_ffmpeg.py FILTERCTL PHOTO OUT_DIR [ROUNDS]

PHOTO is resized to 3840x2160 u8 RGB (ffmpeg, bicubic). Both filters run
ROUNDS times in alternation (default 5) and keep their fastest time:
  - filterctl: `--device cpu apply --json`, the deband stage's own time
    (the rayon path; decoding and encoding the PNG are not counted);
  - ffmpeg: `-benchmark` user+wall time of raw RGB in, raw RGB out with
    `format=gbrp,deband=...,format=rgb24`, minus the same command without
    deband (so only the filter is counted; ffmpeg's deband runs planar).
Then it prints PSNR of each output against the input, PSNR between the two
outputs, and the largest column-mean jump each leaves on a banded ramp
(64-pixel bands one level apart). Parameters: ours range=15 threshold=4
grain=1; ffmpeg's range=15 and thresholds 4/255 per plane (its default
blur=1 compares the pixel with the references' average).
"""
import json, os, re, subprocess, sys, time

BIN, PHOTO, OUT = sys.argv[1:4]
ROUNDS = int(sys.argv[4]) if len(sys.argv) > 4 else 5
W, H = 3840, 2160
os.makedirs(OUT, exist_ok=True)
OURS = "deband=range=15:threshold=4:grain=1:seed=1"
THR = 4 / 255
FF = f"deband=1thr={THR:.5f}:2thr={THR:.5f}:3thr={THR:.5f}:range=15"


def run(cmd, **kw):
    return subprocess.run(cmd, check=True, capture_output=True, **kw)


def ff_time(vf, src, dst):
    """Wall seconds of ffmpeg filtering raw RGB to raw RGB (its -benchmark rtime)."""
    r = run(["ffmpeg", "-hide_banner", "-benchmark", "-f", "rawvideo", "-pix_fmt", "rgb24",
             "-s", f"{W}x{H}", "-i", src, "-vf", vf, "-f", "rawvideo", "-pix_fmt", "rgb24",
             "-y", dst])
    m = re.search(r"rtime=([0-9.]+)s", r.stderr.decode())
    return float(m.group(1))


def ours_ms(src_png, dst_png):
    r = run([BIN, "--device", "cpu", "apply", "--json", "-f", OURS, src_png, "-o", dst_png])
    return json.loads(r.stdout)["files"][0]["stages"][0]["ms"]


def read_rgb(path):
    return open(path, "rb").read()


def psnr(a, b):
    se = sum((x - y) ** 2 for x, y in zip(a, b))
    return float("inf") if se == 0 else 10 * __import__("math").log10(255 ** 2 * len(a) / se)


def max_jump(rgb, w, h):
    """Largest jump of the column means of channel 0."""
    means = [sum(rgb[(y * w + x) * 3] for y in range(h)) / h for x in range(w)]
    return max(abs(means[x] - means[x - 1]) for x in range(1, w))


src_png = os.path.join(OUT, "input.png")
run(["ffmpeg", "-hide_banner", "-y", "-i", PHOTO, "-vf", f"scale={W}:{H}:flags=bicubic",
     "-pix_fmt", "rgb24", src_png])
src_rgb = os.path.join(OUT, "input.rgb")
run(["ffmpeg", "-hide_banner", "-y", "-i", src_png, "-f", "rawvideo", "-pix_fmt", "rgb24", src_rgb])

ours, ff, base = [], [], []
for _ in range(ROUNDS):
    ours.append(ours_ms(src_png, os.path.join(OUT, "ours.png")))
    ff.append(ff_time(f"format=gbrp,{FF},format=rgb24", src_rgb, os.path.join(OUT, "ff.rgb")))
    base.append(ff_time("format=gbrp,format=rgb24", src_rgb, os.path.join(OUT, "copy.rgb")))
ff_ms = (min(ff) - min(base)) * 1e3
print(f"input: {PHOTO} resized to {W}x{H} u8 RGB; {ROUNDS} alternating rounds, fastest kept")
print(f"filterctl {OURS} (cpu path, {os.cpu_count()} cores): {min(ours):.1f} ms")
print(f"ffmpeg {FF}: {ff_ms:.1f} ms (total {min(ff) * 1e3:.1f} ms minus the "
      f"gbrp round trip alone {min(base) * 1e3:.1f} ms)")
print(f"ffmpeg / filterctl time: {ff_ms / min(ours):.2f}")

ours_rgb = os.path.join(OUT, "ours.rgb")
run(["ffmpeg", "-hide_banner", "-y", "-i", os.path.join(OUT, "ours.png"), "-f", "rawvideo",
     "-pix_fmt", "rgb24", ours_rgb])
a, o, f = read_rgb(src_rgb), read_rgb(ours_rgb), read_rgb(os.path.join(OUT, "ff.rgb"))
step = 97  # a subsample keeps pure-Python PSNR quick
a, o, f = a[::step], o[::step], f[::step]
print(f"PSNR vs input: filterctl {psnr(a, o):.2f} dB, ffmpeg {psnr(a, f):.2f} dB; "
      f"between them {psnr(o, f):.2f} dB")

# A banded ramp: 64-pixel bands one level apart, 640x256 gray as RGB.
rw, rh = 640, 256
ramp = bytes(v for y in range(rh) for x in range(rw) for v in [100 + x // 64] * 3)
ramp_rgb = os.path.join(OUT, "ramp.rgb")
open(ramp_rgb, "wb").write(ramp)
ramp_png = os.path.join(OUT, "ramp.png")
run(["ffmpeg", "-hide_banner", "-y", "-f", "rawvideo", "-pix_fmt", "rgb24", "-s", f"{rw}x{rh}",
     "-i", ramp_rgb, ramp_png])
run([BIN, "--device", "cpu", "apply", "-f", OURS, ramp_png, "-o", os.path.join(OUT, "ramp-ours.png")])
ramp_ours = os.path.join(OUT, "ramp-ours.rgb")
run(["ffmpeg", "-hide_banner", "-y", "-i", os.path.join(OUT, "ramp-ours.png"), "-f", "rawvideo",
     "-pix_fmt", "rgb24", ramp_ours])
ramp_ff = os.path.join(OUT, "ramp-ff.rgb")
run(["ffmpeg", "-hide_banner", "-y", "-f", "rawvideo", "-pix_fmt", "rgb24", "-s", f"{rw}x{rh}",
     "-i", ramp_rgb, "-vf", f"format=gbrp,{FF},format=rgb24", "-f", "rawvideo", "-pix_fmt",
     "rgb24", ramp_ff])
print(f"banded ramp, largest column-mean jump (input 1.0): filterctl "
      f"{max_jump(read_rgb(ramp_ours), rw, rh):.3f}, ffmpeg {max_jump(read_rgb(ramp_ff), rw, rh):.3f}")
print(f"date {time.strftime('%Y-%m-%d')}")
