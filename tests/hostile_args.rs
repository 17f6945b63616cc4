//! Every `filterctl` subcommand with hostile arguments (huge, zero,
//! non-finite, malformed, contradictory): each run must end with a usage
//! (2) or runtime (1) error, and no output may contain "panicked".
//! Runs on the CPU backend (`--device cpu`) so it needs no OpenCL and stays
//! fast; the argument checks come before any device work.

use std::process::{Command, Stdio};

fn filterctl() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_filterctl"));
    c.env("FILTERCTL_CACHE_DIR", "disabled")
        .env_remove("FILTERCTL_VARIANT")
        .env_remove("FILTERCTL_DEVICE")
        .stdin(Stdio::null());
    c
}

/// Runs the shell command `cmd` (for limits, pipes and redirections),
/// checks that it exits 1 without a panic, and returns its stderr.
fn shell_fails(cmd: &str) -> String {
    let out = Command::new("bash")
        .args(["-c", cmd])
        .env("FILTERCTL_CACHE_DIR", "disabled")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(1), "{cmd}: {err}");
    assert!(!err.contains("panicked"), "{cmd}: {err}");
    err
}

/// Runs `args` and checks the exit code is one of `codes` and that nothing
/// panicked; returns stderr.
fn hostile(args: &[&str], codes: &[i32]) -> String {
    let out = filterctl().args(args).output().expect("filterctl runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !stdout.contains("panicked") && !stderr.contains("panicked"),
        "{args:?} panicked:\n{stderr}"
    );
    let code = out.status.code();
    assert!(
        code.is_some_and(|c| codes.contains(&c)),
        "{args:?}: exit {code:?}, expected one of {codes:?}\n{stderr}"
    );
    stderr.into_owned()
}

#[test]
fn stream_output_patterns_and_sizes_are_checked() {
    let dir = tempfile::tempdir().unwrap();
    let out = |p: &str| dir.path().join(p).to_string_lossy().into_owned();
    let base = [
        "--device",
        "cpu",
        "stream",
        "-f",
        "demosaic",
        "--format",
        "bayer_rggb8",
        "--synthetic",
        "2",
    ];
    for (size, o) in [
        ("4x4", out("%099999999999999999999d.png")),
        ("4x4", out("%0999999999d.png")),
        ("4x4", out("%21d.png")),
        ("4x4", out("%d%d.png")),
        ("4x4", out("%x.png")),
        ("0x0", out("f.raw")),
        ("3x3", out("f.raw")),
        ("99999999999x99999999999", out("f.raw")),
        ("18446744073709551615x2", out("f.raw")),
    ] {
        let mut args = base.to_vec();
        args.extend(["--size", size, "-o", &o]);
        let err = hostile(&args, &[1, 2]);
        assert!(!err.trim().is_empty(), "{args:?}: no error message");
    }
    // Nothing was created for refused arguments.
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    for extra in [
        &["--in-flight", "0"][..],
        &["--in-flight", "999999999999"],
        &["--frames", "-1"],
        &["--skip", "99999999999999999999999"],
    ] {
        let mut args = base.to_vec();
        args.extend(["--size", "4x4"]);
        args.extend_from_slice(extra);
        hostile(&args, &[1, 2]);
    }
}

#[test]
fn apply_bench_tune_and_demo_refuse_hostile_arguments() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir
        .path()
        .join("missing.png")
        .to_string_lossy()
        .into_owned();
    let outp = dir.path().join("o.png").to_string_lossy().into_owned();
    for args in [
        vec!["--device", "cpu", "apply", "-f", "", &missing, "-o", &outp],
        vec![
            "--device",
            "cpu",
            "apply",
            "-f",
            "gaussian=sigma=1e39",
            &missing,
            "-o",
            &outp,
        ],
        vec![
            "--device",
            "cpu",
            "apply",
            "-f",
            "gaussian=sigma=nan",
            &missing,
            "-o",
            &outp,
        ],
        vec![
            "--device",
            "cpu",
            "apply",
            "-f",
            "normalize=factor=inf",
            &missing,
            "-o",
            &outp,
        ],
        vec![
            "--device",
            "cpu",
            "apply",
            "-f",
            "transpose",
            "--size",
            "99999999999x99999999999",
            "--format",
            "mono8",
            &missing,
            "-o",
            &outp,
        ],
        vec![
            "--device",
            "cpu",
            "apply",
            "-f",
            "transpose",
            &missing,
            "-o",
            &outp,
        ],
        vec!["--device", "cpu", "bench", "--size", "0x0"],
        vec![
            "--device",
            "cpu",
            "bench",
            "--size",
            "99999999999x99999999999",
        ],
        vec!["--device", "cpu", "bench", "--iters", "0", "--size", "8x8"],
        vec![
            "--device", "cpu", "bench", "--sigma", "nan", "--size", "8x8", "--ops", "gaussian",
        ],
        vec![
            "--device", "cpu", "bench", "--ops", "nosuchop", "--size", "8x8",
        ],
        vec!["--device", "cpu", "tune", "--sizes", "0x0"],
        vec!["--device", "cpu", "tune", "--budget", "nan"],
        vec!["--device", "cpu", "tune", "--budget", "-1"],
        vec!["--device", "cpu", "demo", "--out", "/dev/null/x"],
        vec!["--device", "nosuchdevice", "devices"],
        vec![
            "--variant",
            "transpose=a,transpose=b",
            "--device",
            "cpu",
            "variants",
        ],
    ] {
        hostile(&args, &[0, 1, 2]);
    }
}

/// A reader that goes away (`| true`, `| head`) ends the run quietly with
/// exit 0; nothing panics.
#[test]
fn closed_stdout_ends_quietly() {
    for extra in [&["--json"][..], &["-o", "-"]] {
        let mut args = vec![
            "--device",
            "cpu",
            "stream",
            "-f",
            "demosaic",
            "--size",
            "64x64",
            "--format",
            "bayer_rggb8",
            "--synthetic",
            "40",
        ];
        args.extend_from_slice(extra);
        let mut child = filterctl()
            .args(&args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // Close the reading end before the child writes its output.
        drop(child.stdout.take());
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!stderr.contains("panicked"), "{args:?}:\n{stderr}");
        assert_eq!(out.status.code(), Some(0), "{args:?}:\n{stderr}");
    }
}

/// Arguments found wrong by a review of the CLI (2026-11-27): each is a
/// usage error (exit 2) that names the problem, before any output exists.
#[test]
fn audit_findings_are_usage_errors() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for name in ["a.png", "b.png"] {
        image::GrayImage::from_fn(5, 4, |x, y| image::Luma([(x * 40 + y) as u8]))
            .save(d.join(name))
            .unwrap();
    }
    let s = |n: &str| d.join(n).to_string_lossy().into_owned();
    let (a, b, out) = (s("a.png"), s("b.png"), s("out"));
    // An extension with a path separator (set_extension would panic).
    for ext in ["../x", "x/y", "/", ""] {
        let err = hostile(
            &[
                "--device",
                "cpu",
                "apply",
                "-f",
                "transpose",
                &a,
                &b,
                "-o",
                &out,
                "--ext",
                ext,
            ],
            &[2],
        );
        assert!(err.contains("--ext"), "--ext {ext:?}: {err}");
    }
    // Bench sigmas are checked as the spec's are.
    for sigma in ["nan", "inf", "-1", "1e30"] {
        let arg = format!("--sigma={sigma}");
        let err = hostile(
            &[
                "--device", "cpu", "bench", &arg, "--size", "8x8", "--ops", "gaussian",
            ],
            &[2],
        );
        assert!(err.contains("sigma"), "--sigma {sigma}: {err}");
    }
    // The demo needs 8-bit RGB, and says so before writing anything.
    let demo_out = s("demo");
    let err = hostile(
        &["--device", "cpu", "demo", "--input", &a, "--out", &demo_out],
        &[2],
    );
    assert!(err.contains("8-bit RGB"), "{err}");
    let written = std::fs::read_dir(&demo_out).map(|r| r.count()).unwrap_or(0);
    assert_eq!(written, 0, "the demo wrote {written} files before refusing");
    // --frames 0 processes nothing.
    hostile(
        &[
            "--device",
            "cpu",
            "stream",
            "-f",
            "gaussian=1",
            "--size",
            "8x8",
            "--format",
            "mono8",
            "--frames",
            "0",
            &a,
        ],
        &[2],
    );
    assert!(!std::path::Path::new(&out).exists());
}

/// `histogram --plot NAME`: a name without extension gets a PNG; an
/// extension no writer knows (`.bmp`) or a format that cannot hold an RGB
/// chart (`.pgm`) is exit 2 before the input is read, and the message
/// names no option histogram lacks (`--out-format`).
#[test]
fn histogram_plot_names_follow_the_docs() {
    let dir = tempfile::tempdir().unwrap();
    let d = |p: &str| dir.path().join(p).to_string_lossy().into_owned();
    let img = clfilter::Image::<u8>::from_vec(3, 2, 1, vec![0, 9, 9, 200, 255, 1]).unwrap();
    clfilter::image::save(&clfilter::DynImage::U8(img), d("g.png")).unwrap();
    let out = filterctl()
        .args([
            "--device",
            "cpu",
            "histogram",
            &d("g.png"),
            "--plot",
            &d("chart"),
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let chart = clfilter::image::load(d("chart")).unwrap();
    assert_eq!(chart.shape(), (960, 540, 3));
    for name in ["chart.bmp", "chart.pgm"] {
        let err = hostile(
            &[
                "--device",
                "cpu",
                "histogram",
                &d("g.png"),
                "--plot",
                &d(name),
            ],
            &[2],
        );
        assert!(!err.contains("--out-format"), "{name}: {err}");
        assert!(!dir.path().join(name).exists());
    }
}

/// Environment values that are not text (invalid UTF-8) are treated as the
/// bad values they are: `FILTERCTL_MAX_DISPATCH_MS` a usage error, as
/// `abc` is; `FILTERCTL_SIMD` ignored with its warning.
#[cfg(unix)]
#[test]
fn env_values_that_are_not_text() {
    use std::os::unix::ffi::OsStrExt;
    let dir = tempfile::tempdir().unwrap();
    let png = dir.path().join("g.png");
    let img = clfilter::Image::<u8>::from_vec(2, 2, 1, vec![1, 2, 3, 4]).unwrap();
    clfilter::image::save(&clfilter::DynImage::U8(img), &png).unwrap();
    let bad = std::ffi::OsStr::from_bytes(b"1\xff");
    let run = |var: &str| {
        filterctl()
            .env_remove("RUST_LOG")
            .env(var, bad)
            .args(["--device", "cpu", "apply", "-f", "transpose"])
            .arg(&png)
            .arg("-o")
            .arg(dir.path().join("t.png"))
            .output()
            .unwrap()
    };
    let out = run("FILTERCTL_MAX_DISPATCH_MS");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("FILTERCTL_MAX_DISPATCH_MS"), "{err}");
    let out = run("FILTERCTL_SIMD");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(err.contains("FILTERCTL_SIMD=\"1\\xFF\" is not"), "{err}");
}

/// The s43 audit's findings: `stream -o NAME.png` (no frame number) would
/// write raw bytes under an image name; a frame pattern without an
/// extension was told to use `--out-format`, which `stream` lacks; a
/// WebP or JPEG output too large for the format failed only after the work,
/// with the encoder's words; a `FILTERCTL_DEVICE` or `FILTERCTL_VARIANT`
/// that is not UTF-8 was "one or more arguments"; a tune that measures no
/// key exited 0; `-o missing/` for one input said "no extension".
#[test]
fn s43_audit_findings() {
    use std::os::unix::ffi::OsStrExt;
    let dir = tempfile::tempdir().unwrap();
    let s = |p: &str| dir.path().join(p).to_string_lossy().into_owned();
    std::fs::write(dir.path().join("s.raw"), vec![7u8; 64 * 48 * 2]).unwrap();
    let stream = |o: &str| {
        hostile(
            &[
                "--device",
                "cpu",
                "stream",
                "-f",
                "transpose",
                "--size",
                "64x48",
                "--format",
                "mono8",
                &s("s.raw"),
                "-o",
                o,
            ],
            &[2],
        )
    };
    let err = stream(&s("out.png"));
    assert!(err.contains("names an image file (png)"), "{err}");
    assert!(err.contains("out_%05d.png"), "{err}");
    let err = stream(&s("x%d"));
    assert!(err.contains("no extension after its frame number"), "{err}");
    assert!(!err.contains("--out-format"), "{err}");
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        1,
        "only the input"
    );

    // `apply` or `stream` of `spec` on w.raw (mono8 frames of `size`) into `o`.
    let too_big = |cmd: &str, spec: &str, size: &str, o: &str| {
        let (raw, out) = (s("w.raw"), s(o));
        let args = [
            "--device", "cpu", cmd, "-f", spec, "--size", size, "--format", "mono8", &raw, "-o",
            &out,
        ];
        hostile(&args, &[2])
    };
    for (o, size) in [("y.webp", "16384"), ("y.jpg", "65535")] {
        let wide = if o.ends_with("jpg") {
            "70000x1"
        } else {
            "20000x1"
        };
        let bytes = if o.ends_with("jpg") { 70000 } else { 20000 };
        std::fs::write(dir.path().join("w.raw"), vec![9u8; bytes]).unwrap();
        let err = too_big("apply", "gaussian=sigma=1", wide, o);
        assert!(
            err.contains(&format!("at most {size} pixels a side")),
            "{err}"
        );
        assert!(!dir.path().join(o).exists());
        // The size after the pipeline: a transpose turns the row into a
        // column, which the format holds no better.
        let err = too_big("apply", "transpose", wide, o);
        assert!(
            err.contains(&format!("is 1x{}", &wide[..wide.len() - 2])),
            "{err}"
        );
    }
    let err = too_big("stream", "gaussian=sigma=1", "20000x1", "f%d.webp");
    assert!(err.contains("at most 16384 pixels a side"), "{err}");

    let png = dir.path().join("g.png");
    let img = clfilter::Image::<u8>::from_vec(3, 2, 1, vec![1, 2, 3, 4, 5, 6]).unwrap();
    clfilter::image::save(&clfilter::DynImage::U8(img), &png).unwrap();
    for var in ["FILTERCTL_DEVICE", "FILTERCTL_VARIANT"] {
        let out = filterctl()
            .env(var, std::ffi::OsStr::from_bytes(b"\xff"))
            .args(["--device", "cpu", "stats"])
            .arg(&png)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(
            err.contains(&format!("environment variable {var} is not valid UTF-8")),
            "{err}"
        );
    }

    let out = filterctl()
        .env("FILTERCTL_CACHE_DIR", dir.path().join("cache"))
        .args([
            "-q", "tune", "--ops", "demosaic", "--sizes", "3x5", "--budget", "0.2",
        ])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    // Without an OpenCL device tune is refused before measuring (exit 2 too).
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("nothing was tuned") || err.contains("needs an OpenCL device"),
        "{err}"
    );

    hostile(
        &[
            "--device",
            "cpu",
            "apply",
            "-f",
            "transpose",
            png.to_str().unwrap(),
            "-o",
            &s("new/"),
        ],
        &[0],
    );
    let t = clfilter::image::load(dir.path().join("new/g.png")).unwrap();
    assert_eq!(t.shape(), (2, 3, 1));
}

/// The s41 audit's findings: a tune whose sigmas no key takes, and an
/// `--ops` that names nothing, are refused before any work; a stream does
/// not take a reporting stage; a buffer the system refuses is an error,
/// not an abort; the demo takes odd-sized photos and refuses tiny ones
/// before writing anything.
#[test]
fn s41_audit_findings_end_with_errors_before_any_work() {
    let dir = tempfile::tempdir().unwrap();
    let s = |n: &str| dir.path().join(n).to_string_lossy().into_owned();
    for sigma in ["nan", "1e30", "0", "-1"] {
        let arg = format!("--sigma={sigma}");
        let err = hostile(
            &[
                "--device", "cpu", "tune", "--ops", "gaussian", "--sizes", "16x16", &arg,
            ],
            &[2],
        );
        assert!(err.contains("sigma"), "tune --sigma {sigma}: {err}");
    }
    for (cmd, size) in [("tune", "--sizes"), ("bench", "--size")] {
        let err = hostile(&["--device", "cpu", cmd, "--ops", " , ", size, "8x8"], &[2]);
        assert!(err.contains("--ops names no operation"), "{cmd}: {err}");
    }
    for stage in ["stats", "minmax", "gaussian=2,stats"] {
        let err = hostile(
            &[
                "--device",
                "cpu",
                "stream",
                "-f",
                stage,
                "--size",
                "8x8",
                "--format",
                "mono8",
                "--synthetic",
                "2",
                "-o",
                &s("frames.raw"),
            ],
            &[2],
        );
        assert!(err.contains("keeps no per-frame reports"), "{stage}: {err}");
    }
    assert!(!dir.path().join("frames.raw").exists());
    // 30000x30000 f32 (3.6 GB) under a 2 GB address-space limit: the
    // allocation fails, and that is an error with exit 1.
    let cmd = format!(
        "ulimit -v 2000000 && exec '{}' --device cpu bench --ops transpose --size 30000x30000 --iters 1",
        env!("CARGO_BIN_EXE_filterctl")
    );
    let err = shell_fails(&cmd);
    assert!(err.contains("out of memory"), "{err}");
    // The demo on an odd-sized RGB photo crops it to even sides and runs
    // every step; on one too small for its steps it refuses up front.
    let photo = |w: u32, h: u32, name: &str| {
        image::RgbImage::from_fn(w, h, |x, y| {
            image::Rgb([(x * 7) as u8, (y * 5) as u8, ((x ^ y) * 3) as u8])
        })
        .save(dir.path().join(name))
        .unwrap();
        s(name)
    };
    let odd = photo(45, 33, "odd.png");
    let out = filterctl()
        .args([
            "--device",
            "cpu",
            "demo",
            "--input",
            &odd,
            "--out",
            &s("demo-odd"),
        ])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("45x33 cropped to 44x32"), "{text}");
    let input = image::open(dir.path().join("demo-odd/input.png")).unwrap();
    assert_eq!((input.width(), input.height()), (44, 32));
    // A spec that ends with stats needs no output, and --json carries the
    // numbers that the text report prints.
    let out = filterctl()
        .args([
            "--device",
            "cpu",
            "apply",
            "-f",
            "gaussian=1,stats",
            &odd,
            "--json",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let stats = &json["files"][0]["stages"][1]["stats"];
    assert_eq!(stats["count"], 45 * 33, "{json}");
    for key in ["sum", "mean", "std", "min", "max"] {
        assert_eq!(
            stats[key].as_array().map(Vec::len),
            Some(3),
            "{key}: {json}"
        );
    }
    let mean_r = stats["mean"][0].as_f64().unwrap();
    assert!(mean_r > 0.0 && mean_r < 255.0, "{json}");
    let tiny = photo(21, 40, "tiny.png");
    let err = hostile(
        &[
            "--device",
            "cpu",
            "demo",
            "--input",
            &tiny,
            "--out",
            &s("demo-tiny"),
        ],
        &[2],
    );
    assert!(err.contains("at least 22x22"), "{err}");
    assert!(!dir.path().join("demo-tiny").exists());
}

/// The s41 audit's smaller findings: outputs that cannot be written are
/// refused before the work, `-q` leaves out status lines, a closed pipe
/// behind `-o /dev/stdout` says so, a range f32 cannot bin is the data's
/// fault (exit 1), and huge numbers print in exponent form.
#[test]
fn s41_outputs_quiet_runs_and_messages() {
    let dir = tempfile::tempdir().unwrap();
    let s = |n: &str| dir.path().join(n).to_string_lossy().into_owned();
    std::fs::write(s("k.raw"), [1u8, 0, 0, 0, 0, 0, 0, 0]).unwrap();
    let err = hostile(
        &[
            "--device",
            "cpu",
            "sort",
            "--type",
            "u32",
            &s("k.raw"),
            "-o",
            &s(""),
        ],
        &[2],
    );
    assert!(err.contains("this is a folder"), "{err}");
    image::RgbImage::from_fn(9, 7, |x, y| image::Rgb([x as u8 * 20, y as u8 * 30, 7]))
        .save(dir.path().join("p.png"))
        .unwrap();
    let err = hostile(
        &[
            "--device",
            "cpu",
            "histogram",
            &s("p.png"),
            "--plot",
            &s("p.png/h.png"),
        ],
        &[1],
    );
    assert!(err.contains("is a file, not a folder"), "{err}");
    assert!(
        !err.contains("histogram: cpu"),
        "the histogram ran first: {err}"
    );
    for args in [
        &["-q", "--device", "cpu", "stats", &s("p.png")][..],
        &["-q", "--device", "cpu", "histogram", &s("p.png")],
        &[
            "-q",
            "--device",
            "cpu",
            "sort",
            "--type",
            "u32",
            &s("k.raw"),
            "-o",
            &s("o.raw"),
        ],
    ] {
        let err = hostile(args, &[0]);
        assert!(err.is_empty(), "{args:?} printed on stderr with -q: {err}");
    }
    let cmd = format!(
        "'{}' --device cpu apply -f transpose '{}' -o /dev/stdout --out-format pam | head -c 1 > /dev/null; exit ${{PIPESTATUS[0]}}",
        env!("CARGO_BIN_EXE_filterctl"),
        s("big.png")
    );
    image::RgbImage::from_fn(700, 500, |x, y| {
        image::Rgb([(x * y) as u8, x as u8, y as u8])
    })
    .save(dir.path().join("big.png"))
    .unwrap();
    let err = shell_fails(&cmd);
    assert!(err.contains("the reading end of the pipe closed"), "{err}");
    // Sorted keys cut short by a closed pipe did not get through either
    // (4 MiB: more than a pipe holds).
    std::fs::write(
        dir.path().join("keys.raw"),
        (0..1u32 << 20)
            .flat_map(|i| i.wrapping_mul(2654435761).to_le_bytes())
            .collect::<Vec<u8>>(),
    )
    .unwrap();
    let cmd = format!(
        "'{}' -q --device cpu sort --type u32 '{}' -o - | head -c 1 > /dev/null; exit ${{PIPESTATUS[0]}}",
        env!("CARGO_BIN_EXE_filterctl"),
        s("keys.raw")
    );
    let err = shell_fails(&cmd);
    assert!(
        err.contains("sorted keys to stdout: the reading end of the pipe closed"),
        "{err}"
    );
    // f32 samples of +-3e38: percentiles of a range wider than f32 holds.
    let wide =
        clfilter::Image::<f32>::from_fn(
            4,
            4,
            1,
            |x, y, _| if (x + y) % 2 == 0 { 3e38 } else { -3e38 },
        )
        .unwrap();
    clfilter::image::save(&clfilter::DynImage::F32(wide), dir.path().join("wide.tif")).unwrap();
    let err = hostile(
        &[
            "--device",
            "cpu",
            "apply",
            "-f",
            "normalize=low=1%:high=99%",
            &s("wide.tif"),
            "-o",
            &s("n.tif"),
        ],
        &[1],
    );
    assert!(err.contains("-3e38..3e38"), "{err}");
    let err = hostile(
        &[
            "--device",
            "cpu",
            "apply",
            "-f",
            "gaussian=sigma=1e30",
            &s("p.png"),
            "-o",
            &s("g.png"),
        ],
        &[2],
    );
    assert!(err.contains("= 1e30 exceeds"), "{err}");
    // Help that cannot be written is a failure, not a silent success.
    let cmd = format!("'{}' --help > /dev/full", env!("CARGO_BIN_EXE_filterctl"));
    let err = shell_fails(&cmd);
    assert!(err.contains("writing to stdout"), "{err}");
}
