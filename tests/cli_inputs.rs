//! Inputs across the subcommands (docs/CLI.md, "Exit codes" and "Inputs
//! a stage cannot take"): an input whose shape (channels, sample type,
//! width and height) a stage cannot take is a usage error, exit 2, that
//! names the input and writes nothing, in `apply`, `stream` and `bench`
//! alike, on the CPU backend and on an OpenCL device; and `-` reads stdin
//! wherever one image or stream is read.

use std::path::Path;

use assert_cmd::Command;
use clfilter::{DynImage, Image};
use predicates::prelude::PredicateBooleanExt;
use predicates::str::contains;

mod common;

fn filterctl(dir: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_filterctl"));
    c.current_dir(dir)
        .env("FILTERCTL_CACHE_DIR", dir.join("cache"))
        .env_remove("FILTERCTL_VARIANT")
        .env_remove("FILTERCTL_DECODE_LIMIT")
        .env("FILTERCTL_DEVICE", "cpu")
        .env_remove("RUST_LOG");
    c
}

fn noise(n: usize, seed: u64) -> Vec<u8> {
    let mut rng = common::Rng::new(seed);
    (0..n).map(|_| rng.next_u64() as u8).collect()
}

/// A folder of inputs: `gray.png` (9x7, odd), `even.png` (10x8 gray),
/// `rgb.png`, `rgba.png` (10x8), `f32.tif` (10x8 gray f32) and `in.raw`
/// (two 8x8 frames of 8-bit samples).
fn inputs() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let save = |name: &str, w: usize, h: usize, c: usize, seed: u64| {
        let img = Image::<u8>::from_vec(w, h, c, noise(w * h * c, seed)).unwrap();
        clfilter::image::save(&DynImage::U8(img), d.join(name)).unwrap();
    };
    save("gray.png", 9, 7, 1, 1);
    save("even.png", 10, 8, 1, 2);
    save("rgb.png", 10, 8, 3, 3);
    save("rgba.png", 10, 8, 4, 4);
    let f = Image::<f32>::from_fn(10, 8, 1, |x, y, _| (x + y) as f32 / 18.0).unwrap();
    clfilter::image::save(&DynImage::F32(f), d.join("f32.tif")).unwrap();
    std::fs::write(d.join("in.raw"), noise(128, 5)).unwrap();
    dir
}

/// `(spec, input, what the message says)`: every stage that takes only
/// some shapes, given one it does not take.
const MISFITS: &[(&str, &str, &str)] = &[
    ("wb", "gray.png", "wb balances RGB or RGBA images"),
    ("wb=auto", "gray.png", "wb balances RGB or RGBA images"),
    ("ccm=1/0/0/0/1/0/0/0/1", "gray.png", "ccm transforms RGB"),
    ("deband=space=ycc", "even.png", "space=ycc needs an RGB"),
    ("deband", "f32.tif", "deband reads u8 and u16 images"),
    ("colormap", "rgb.png", "colormap reads 1-channel images"),
    ("colormap", "rgba.png", "colormap reads 1-channel images"),
    ("demosaic", "rgb.png", "a Bayer frame has 1 channel, got 3"),
    ("demosaic", "gray.png", "even width and height"),
    ("demosaic", "f32.tif", "not f32 images"),
    // A shape that an earlier stage made.
    (
        "demosaic,colormap",
        "even.png",
        "colormap reads 1-channel images",
    ),
    (
        "transpose,demosaic",
        "rgb.png",
        "a Bayer frame has 1 channel",
    ),
];

/// The same stages on inputs they take: exit 0.
const FITS: &[(&str, &str)] = &[
    ("wb", "rgb.png"),
    ("ccm=1/0/0/0/1/0/0/0/1", "rgba.png"),
    ("deband=space=ycc", "rgb.png"),
    ("colormap", "gray.png"),
    ("colormap", "f32.tif"),
    ("demosaic", "even.png"),
    ("demosaic,wb=auto,ccm=1/0/0/0/1/0/0/0/1", "even.png"),
];

/// Runs `apply -f SPEC IN -o out.tif` on `device` and checks each row.
fn apply_misfits(dir: &Path, device: &str) {
    for &(spec, input, says) in MISFITS {
        let out = filterctl(dir)
            .args([
                "--device", device, "apply", "-f", spec, input, "-o", "out.tif",
            ])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        let ctx = format!("{device}: {spec} on {input}");
        assert_eq!(out.status.code(), Some(2), "{ctx}:\n{err}");
        assert!(
            err.contains(&format!("filterctl: error: {input}: ")),
            "{ctx}:\n{err}"
        );
        assert!(err.contains(says), "{ctx}:\n{err}");
        assert!(!err.contains("panicked"), "{ctx}:\n{err}");
        assert!(!dir.join("out.tif").exists(), "{ctx}: wrote an output");
    }
}

#[test]
fn apply_refuses_an_input_a_stage_cannot_take_with_exit_2() {
    let dir = inputs();
    let d = dir.path();
    apply_misfits(d, "cpu");
    for &(spec, input) in FITS {
        filterctl(d)
            .args(["apply", "-f", spec, input, "-o", "fit.tif"])
            .assert()
            .success();
    }
    // `tune --for` runs the pipeline once on its input first.
    filterctl(d)
        .args(["tune", "--for", "gray.png", "-f", "wb", "--budget", "1"])
        .assert()
        .code(2)
        .stderr(contains("filterctl: error: gray.png: pipeline 'wb"))
        .stderr(contains("wb balances RGB or RGBA images"));
    // Raw frames: an image file that --format does not describe.
    for (format, input, says) in [
        ("bayer_rggb8", "rgb.png", "describes 1-channel frames"),
        ("bayer_rggb8", "gray.png", "even width and height"),
        ("bayer_rggb12", "even.png", "but the file has u8 samples"),
    ] {
        filterctl(d)
            .args(["apply", "-f", "demosaic", "--format", format, input])
            .args(["-o", "out.png"])
            .assert()
            .code(2)
            .stderr(contains(format!("filterctl: error: {input}: ")))
            .stderr(contains(says));
    }
}

/// The device-resident chains and the overlapped stream check the same
/// shapes (skipped without an OpenCL device).
#[test]
fn apply_on_an_opencl_device_gives_the_same_exit_code() {
    if common::opencl_engine().is_none() {
        common::skip_no_opencl("apply on an OpenCL device");
        return;
    }
    let dir = inputs();
    apply_misfits(dir.path(), "opencl");
    // The overlapped stream path too.
    filterctl(dir.path())
        .args(["--device", "opencl", "stream", "-f", "demosaic,colormap"])
        .args([
            "--size",
            "8x8",
            "--format",
            "bayer_rggb8",
            "in.raw",
            "-o",
            "o.raw",
        ])
        .assert()
        .code(2)
        .stderr(contains("filterctl: error: stream in.raw: "))
        .stderr(contains("colormap reads 1-channel images"));
    assert!(!dir.path().join("o.raw").exists());
}

/// With several inputs each failing input is reported and the run ends
/// with exit 1 (docs/CLI.md, "Several inputs and folders"); the others
/// are written.
#[test]
fn several_inputs_report_the_misfit_and_write_the_others() {
    let dir = inputs();
    let d = dir.path();
    filterctl(d)
        .args(["apply", "-f", "wb", "gray.png", "rgb.png", "-o", "out"])
        .assert()
        .code(1)
        .stderr(contains("gray.png"))
        .stderr(contains("wb balances RGB or RGBA images"))
        .stderr(contains("1 of 2 inputs failed"));
    assert!(d.join("out/rgb.png").exists());
    assert!(!d.join("out/gray.png").exists());
}

#[test]
fn stream_refuses_frames_a_stage_cannot_take_and_keeps_the_output() {
    let dir = inputs();
    let d = dir.path();
    std::fs::write(d.join("old.raw"), b"old").unwrap();
    for (spec, format, says) in [
        ("wb", "mono8", "wb balances RGB or RGBA images"),
        ("deband=space=ycc", "mono8", "space=ycc needs an RGB"),
        (
            "demosaic,colormap",
            "bayer_rggb8",
            "colormap reads 1-channel",
        ),
        (
            "demosaic,transpose,demosaic",
            "bayer_rggb8",
            "a Bayer frame has 1 channel",
        ),
    ] {
        filterctl(d)
            .args(["stream", "-f", spec, "--size", "8x8", "--format", format])
            .args(["in.raw", "-o", "old.raw"])
            .assert()
            .code(2)
            .stderr(contains("filterctl: error: stream in.raw: "))
            .stderr(contains(says));
        assert_eq!(std::fs::read(d.join("old.raw")).unwrap(), b"old", "{spec}");
    }
    filterctl(d)
        .args(["stream", "-f", "demosaic,wb", "--size", "8x8"])
        .args(["--format", "bayer_rggb8", "in.raw", "-o", "fit.raw"])
        .assert()
        .success();
    // Two frames of 8x8 RGB u8.
    assert_eq!(
        std::fs::read(d.join("fit.raw")).unwrap().len(),
        2 * 8 * 8 * 3
    );
}

/// `bench --ops NAME` with images that NAME cannot take is refused before
/// anything is timed; the same operation on images it takes runs.
#[test]
fn bench_refuses_an_operation_it_cannot_time_on_those_images() {
    let dir = inputs();
    let d = dir.path();
    for (args, says) in [
        (&["wb", "--channels", "1"][..], "wb balances RGB"),
        (&["ccm", "--channels", "1"], "ccm transforms RGB"),
        (&["demosaic", "--type", "f32"], "demosaic reads u8 or u16"),
        (&["demosaic", "--type", "u8", "--size", "7x8"], "even width"),
        (&["deband", "--type", "f32"], "deband reads u8 and u16"),
        (&["transpose,sort", "--type", "u8"], "f32 keys"),
    ] {
        let size = if args.contains(&"--size") {
            &[][..]
        } else {
            &["--size", "8x8"]
        };
        filterctl(d)
            .args(["bench", "--iters", "1", "--ops"])
            .args(args)
            .args(size)
            .assert()
            .code(2)
            .stdout("")
            .stderr(contains(format!(
                "bench --ops {}",
                args[0].split(',').next_back().unwrap()
            )))
            .stderr(contains(says));
    }
    filterctl(d)
        .args([
            "bench",
            "--iters",
            "1",
            "--size",
            "8x8",
            "--ops",
            "wb,demosaic",
        ])
        .args(["--type", "u16", "--channels", "3"])
        .assert()
        .success()
        .stdout(contains("wb "))
        .stdout(contains("demosaic "))
        .stdout(contains("error").not());
}

/// `histogram` and `stats` take every shape an image loads as (1, 3 or 4
/// channels of u8, u16 or f32): there is no input for them to refuse.
#[test]
fn histogram_and_stats_take_every_image_shape() {
    let dir = inputs();
    let d = dir.path();
    for input in ["gray.png", "rgb.png", "rgba.png", "f32.tif"] {
        for cmd in ["histogram", "stats"] {
            filterctl(d)
                .args([cmd, input, "--json"])
                .assert()
                .success()
                .stdout(contains("counts").or(contains("mean")));
        }
    }
}

/// `-` is stdin for `histogram` and `stats`, as for `apply`, `stream` and
/// `sort`: the same results as from the file, the decode limit applied,
/// and the input named `stdin` (`<stdin>` in decoder errors).
#[test]
fn histogram_and_stats_read_stdin() {
    let dir = inputs();
    let d = dir.path();
    let png = std::fs::read(d.join("rgb.png")).unwrap();
    for cmd in [
        &["histogram"][..],
        &["histogram", "--bins", "7"],
        &["stats"],
    ] {
        let run = |input: &str, stdin: &[u8]| {
            let out = filterctl(d)
                .args(cmd)
                .args([input, "--json"])
                .write_stdin(stdin)
                .output()
                .unwrap();
            assert!(out.status.success(), "{cmd:?} {input}");
            out.stdout
        };
        assert_eq!(run("-", &png), run("rgb.png", b""), "{cmd:?}");
    }
    // `tune --for -` reads its image from stdin too (the decode limit
    // checks it before any measuring); raw frames need a file.
    filterctl(d)
        .env("FILTERCTL_DECODE_LIMIT", "100")
        .args(["tune", "--for", "-", "-f", "transpose"])
        .write_stdin(png.clone())
        .assert()
        .code(1)
        .stderr(contains("<stdin>"))
        .stderr(contains("decode limit"));
    filterctl(d)
        .args(["tune", "--for", "-", "-f", "demosaic", "--size", "8x8"])
        .args(["--format", "bayer_rggb8"])
        .write_stdin(std::fs::read(d.join("in.raw")).unwrap())
        .assert()
        .code(2)
        .stderr(contains("give a raw frame as a file"));
    filterctl(d)
        .args(["stats", "-"])
        .write_stdin(png.clone())
        .assert()
        .success()
        .stdout(contains("stats of stdin: 80 samples per channel"));
    filterctl(d)
        .args(["histogram", "-"])
        .write_stdin(png.clone())
        .assert()
        .success()
        .stdout(contains("histogram of stdin: 256 bins"));
    for cmd in ["histogram", "stats"] {
        filterctl(d)
            .args([cmd, "-"])
            .write_stdin("not an image")
            .assert()
            .code(1)
            .stderr(contains("filterctl: error: <stdin>: not an image file"));
        filterctl(d)
            .env("FILTERCTL_DECODE_LIMIT", "100")
            .args([cmd, "-"])
            .write_stdin(png.clone())
            .assert()
            .code(1)
            .stderr(contains("decode limit"));
    }
    // The chart is a file: stdout carries the table or the JSON.
    filterctl(d)
        .args(["histogram", "rgb.png", "--plot", "-"])
        .assert()
        .code(2)
        .stderr(contains("--plot -"));
}

/// The same thing has the same name in every subcommand: the input is `IN`,
/// the output `-o, --output`, and every subcommand with a result to report
/// has `--json`.
#[test]
fn subcommands_name_the_same_options_alike() {
    let dir = inputs();
    let help = |cmd: &str| {
        let out = filterctl(dir.path())
            .env("COLUMNS", "200")
            .args([cmd, "--help"])
            .output()
            .unwrap();
        assert!(out.status.success(), "{cmd} --help");
        String::from_utf8(out.stdout).unwrap()
    };
    for cmd in ["apply", "stream", "histogram", "stats", "sort", "view"] {
        let h = help(cmd);
        let usage = h.lines().find(|l| l.starts_with("Usage:")).unwrap();
        assert!(
            usage.contains("[IN]") || usage.contains("<IN>"),
            "{cmd}: {usage}"
        );
        assert!(
            h.contains("`-`") || h.contains("'-'"),
            "{cmd}: no word of stdin"
        );
    }
    for cmd in ["apply", "stream", "sort"] {
        assert!(help(cmd).contains("-o, --output <OUT>"), "{cmd}");
    }
    assert!(help("demo").contains("-o, --output <DIR>"), "demo");
    let cmds = [
        "devices",
        "apply",
        "variants",
        "histogram",
        "stats",
        "stream",
        "sort",
        "bench",
        "tune",
    ];
    for cmd in cmds {
        assert!(help(cmd).contains("--json"), "{cmd} has no --json");
    }
}

/// `sort --json` reports the keys and the run; it cannot share stdout with
/// `-o -`. `demo -o DIR` is `demo --out DIR`.
#[test]
fn sort_json_and_demo_output() {
    let dir = inputs();
    let d = dir.path();
    let out = filterctl(d)
        .args(["sort", "--type", "u32", "in.raw", "-o", "s.raw", "--json"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(j["keys"], 32);
    assert_eq!(j["type"], "u32");
    assert_eq!(j["report"]["op"], "sort");
    assert_eq!(j["report"]["variant"], "cpu");
    let mut keys: Vec<u32> = std::fs::read(d.join("in.raw"))
        .unwrap()
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    keys.sort_unstable();
    let want: Vec<u8> = keys.iter().flat_map(|k| k.to_le_bytes()).collect();
    assert_eq!(std::fs::read(d.join("s.raw")).unwrap(), want);
    filterctl(d)
        .args(["sort", "--type", "u32", "in.raw", "-o", "-", "--json"])
        .assert()
        .code(2)
        .stdout("")
        .stderr(contains(
            "--json prints to stdout, where -o - writes the keys",
        ));
    filterctl(d)
        .args(["demo", "-o", "rgb.png"])
        .assert()
        .code(2)
        .stderr(contains("rgb.png"));
    // The demo's photo is 8-bit RGB; another shape is refused up front.
    filterctl(d)
        .args(["demo", "--input", "gray.png", "-o", "demo"])
        .assert()
        .code(2)
        .stderr(contains(
            "--input gray.png: the demo runs on 8-bit RGB images",
        ));
    assert!(!d.join("demo").exists());
}

/// `FILTERCTL_DECODE_LIMIT` holds for every image input: `histogram`,
/// `stats` and `tune --for` as for `apply`; a value that does not parse is
/// a usage error.
#[test]
fn the_decode_limit_holds_for_every_image_input() {
    let dir = inputs();
    let d = dir.path();
    for args in [
        &["histogram", "rgb.png"][..],
        &["stats", "rgb.png"],
        &["apply", "-f", "minmax", "rgb.png"],
        &["tune", "--for", "rgb.png", "-f", "transpose"],
    ] {
        filterctl(d)
            .env("FILTERCTL_DECODE_LIMIT", "100")
            .args(args)
            .assert()
            .code(1)
            .stderr(contains("rgb.png"))
            .stderr(contains("decode limit"));
        filterctl(d)
            .env("FILTERCTL_DECODE_LIMIT", "lots")
            .args(args)
            .assert()
            .code(2)
            .stderr(contains("'lots' is not a decode limit"));
    }
}

/// `view` runs the pipeline on the first frame before it opens a window:
/// an input a stage cannot take is exit 2, and `-` reads an image from
/// stdin (which then fails only for want of a display).
#[cfg(feature = "gl")]
#[test]
fn view_checks_the_input_before_the_window() {
    let dir = inputs();
    let d = dir.path();
    let view = |input: &str| {
        let mut c = filterctl(d);
        c.env_remove("DISPLAY")
            .env_remove("WAYLAND_DISPLAY")
            .args(["view", "-f", "wb", input, "--frames", "1"]);
        c
    };
    view("gray.png")
        .assert()
        .code(2)
        .stderr(contains("filterctl: error: gray.png: pipeline 'wb"))
        .stderr(contains("wb balances RGB or RGBA images"));
    view("-")
        .write_stdin(std::fs::read(d.join("gray.png")).unwrap())
        .assert()
        .code(2)
        .stderr(contains("filterctl: error: stdin: pipeline 'wb"));
    view("-")
        .write_stdin(std::fs::read(d.join("rgb.png")).unwrap())
        .assert()
        .code(1)
        .stderr(contains("cannot open a window"));
}

/// A trailer (`--skip`) longer than the rest of the input ends the stream
/// after the first frame with a warning, and where it swallowed whole
/// frames' worth of bytes the warning asks whether its length is right; a
/// trailer cut short within a frame's length does not say so.
#[test]
fn a_trailer_that_swallows_frames_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // Ten frames of 8x4 mono8 (32 bytes each).
    std::fs::write(
        d.join("in.raw"),
        (0..320).map(|i| i as u8).collect::<Vec<u8>>(),
    )
    .unwrap();
    let stream = |skip: &str| {
        let mut c = filterctl(d);
        c.args(["--device", "cpu", "stream", "-f", "gaussian=sigma=1"])
            .args(["--size", "8x4", "--format", "mono8", "--skip", skip])
            .args(["in.raw", "-o", "out.raw"]);
        c
    };
    stream("1000000")
        .assert()
        .success()
        .stderr(contains(
            "288 bytes into the 1000000-byte trailer after frame 0",
        ))
        .stderr(contains(
            "as many bytes as 9 more frame(s): is its length right?",
        ));
    assert_eq!(std::fs::read(d.join("out.raw")).unwrap().len(), 32);
    // 3 frames of 32 bytes with 70-byte trailers: the third trailer is cut
    // to 10 bytes, less than a frame.
    std::fs::write(d.join("in.raw"), vec![7u8; 3 * 32 + 2 * 70 + 10]).unwrap();
    stream("70")
        .assert()
        .success()
        .stderr(contains("10 bytes into the 70-byte trailer after frame 2"))
        .stderr(contains("is its length right").not());
    assert_eq!(std::fs::read(d.join("out.raw")).unwrap().len(), 3 * 32);
}

/// `stream`'s stage list names each stage's variants; a stage that runs no
/// operation (a conversion to the type it already has) is named alone, not
/// with an empty `()`.
#[test]
fn stream_stages_name_their_variants() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("in.raw"), noise(2 * 16 * 8, 7)).unwrap();
    let out = filterctl(d)
        .args(["--device", "cpu", "stream", "-f", "demosaic,convert=u8"])
        .args([
            "--size",
            "16x8",
            "--format",
            "bayer_rggb8",
            "in.raw",
            "-o",
            "out.raw",
        ])
        .output()
        .unwrap();
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains("stages: demosaic=pattern=rggb:method=mhc (cpu) -> convert=u8\n"),
        "{err}"
    );
}
