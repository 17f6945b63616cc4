//! `filterctl apply` with the formats, pipes and folders of docs/CLI.md:
//! JPEG and WebP outputs, `-` for stdin and stdout with `--out-format`, a
//! closed stdout, the ICC profile carried from input to output, and folder
//! inputs run in parallel where one bad file fails alone. CPU backend; no
//! OpenCL needed.

use std::io::Write;
use std::path::Path;
use std::process::Stdio;

use assert_cmd::Command;
use clfilter::image::{load, load_with_metadata, save_with, DecodeLimits, SaveOptions};
use clfilter::{DynImage, Image};
use predicates::str::contains;

/// The binary on the CPU backend.
fn filterctl() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_filterctl"));
    c.env("FILTERCTL_CACHE_DIR", "disabled")
        .env_remove("FILTERCTL_VARIANT")
        .env("FILTERCTL_DEVICE", "cpu")
        .env_remove("RUST_LOG");
    c
}

fn rgb(w: usize, h: usize) -> Image<u8> {
    Image::from_fn(w, h, 3, |x, y, c| (x * 13 + y * 7 + c * 50) as u8).unwrap()
}

fn write_png(path: &Path, img: &Image<u8>, icc: Option<Vec<u8>>) {
    let o = SaveOptions {
        icc_profile: icc,
        ..SaveOptions::default()
    };
    save_with(&DynImage::U8(img.clone()), path, &o).unwrap();
}

/// The image's transpose, as `-f transpose` makes it.
fn transposed(img: &Image<u8>) -> Image<u8> {
    Image::from_fn(img.height(), img.width(), 3, |x, y, c| img.get(y, x, c)).unwrap()
}

fn png_bytes(img: &Image<u8>) -> Vec<u8> {
    let mut out = Vec::new();
    clfilter::image::write_to(
        &DynImage::U8(img.clone()),
        &mut out,
        clfilter::image::OutputFormat::Png,
        &SaveOptions::default(),
    )
    .unwrap();
    out
}

#[test]
fn jpeg_quality_and_webp_outputs() {
    let d = tempfile::tempdir().unwrap();
    let src = rgb(40, 24);
    write_png(&d.path().join("a.png"), &src, None);
    let size = |q: &str| {
        let out = d.path().join(format!("q{q}.jpg"));
        filterctl()
            .current_dir(d.path())
            .args(["apply", "-f", "transpose", "a.png", "--quality", q, "-o"])
            .arg(&out)
            .assert()
            .success();
        assert_eq!(load(&out).unwrap().shape(), (24, 40, 3));
        std::fs::metadata(&out).unwrap().len()
    };
    assert!(size("10") < size("100"));
    for bad in ["0", "101", "x"] {
        filterctl()
            .current_dir(d.path())
            .args(["apply", "-f", "transpose", "a.png", "-o", "b.jpg"])
            .args(["--quality", bad])
            .assert()
            .code(2);
    }
    filterctl()
        .current_dir(d.path())
        .args(["apply", "-f", "transpose", "a.png", "-o", "b.webp"])
        .assert()
        .success();
    let back = load(d.path().join("b.webp")).unwrap();
    assert_eq!(back, DynImage::U8(transposed(&src)), "WebP is lossless");
    // 16-bit results are refused for JPEG before any work, with a fix.
    filterctl()
        .current_dir(d.path())
        .args(["apply", "-f", "normalize=out=u16", "a.png", "-o", "c.jpg"])
        .assert()
        .code(2)
        .stderr(contains("8-bit"));
    assert!(!d.path().join("c.jpg").exists());
}

#[test]
fn stdin_to_stdout_with_out_format() {
    let src = rgb(9, 5);
    let out = filterctl()
        .args([
            "apply",
            "-f",
            "transpose",
            "-",
            "-o",
            "-",
            "--out-format",
            "png",
        ])
        .write_stdin(png_bytes(&src))
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let (img, _) =
        clfilter::image::read_from(&out[..], "stdout", &DecodeLimits::default()).unwrap();
    assert_eq!(img, DynImage::U8(transposed(&src)));
    // minmax lines go to stderr when stdout carries the image.
    let out = filterctl()
        .args(["apply", "-f", "minmax,transpose", "-", "-o", "-"])
        .args(["--out-format", "webp"])
        .write_stdin(png_bytes(&src))
        .assert()
        .success();
    let o = out.get_output();
    assert_eq!(&o.stdout[..4], b"RIFF");
    assert!(String::from_utf8_lossy(&o.stderr).contains("min"));
}

#[test]
fn stdio_mistakes_are_usage_errors() {
    let d = tempfile::tempdir().unwrap();
    write_png(&d.path().join("a.png"), &rgb(3, 3), None);
    for (args, says) in [
        (&["a.png", "-o", "-"][..], "--out-format"),
        (&["a.png", "a.png", "-o", "-"], "stdout holds one image"),
        (&["-", "a.png", "-o", "x"], "only input"),
        (
            &["a.png", "-o", "-", "--out-format", "png", "--json"],
            "--json",
        ),
        (
            &["a.png", "-o", "b", "--out-format", "gif"],
            "unknown image format",
        ),
    ] {
        filterctl()
            .current_dir(d.path())
            .args(["apply", "-f", "transpose"])
            .args(args)
            .assert()
            .code(2)
            .stderr(contains(says));
    }
    // A file without an extension takes --out-format.
    filterctl()
        .current_dir(d.path())
        .args(["apply", "-f", "transpose", "a.png", "-o", "noext"])
        .args(["--out-format", "tif"])
        .assert()
        .success();
    assert_eq!(load(d.path().join("noext")).unwrap().shape(), (3, 3, 3));
    // Garbage on stdin is a format error naming stdin.
    filterctl()
        .args([
            "apply",
            "-f",
            "transpose",
            "-",
            "-o",
            "-",
            "--out-format",
            "png",
        ])
        .write_stdin("not an image")
        .assert()
        .code(1)
        .stderr(contains("<stdin>"));
}

/// A reader that is gone before the image is written: a clear error and
/// exit 1, not a panic and not a quiet success.
#[cfg(unix)]
#[test]
fn a_closed_stdout_is_a_clear_error() {
    let d = tempfile::tempdir().unwrap();
    let input = d.path().join("a.png");
    write_png(&input, &rgb(300, 200), None);
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_filterctl"))
        .env("FILTERCTL_CACHE_DIR", "disabled")
        .env("FILTERCTL_DEVICE", "cpu")
        .args(["apply", "-f", "transpose", "-o", "-", "--out-format", "ppm"])
        .arg(&input)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take()); // close the pipe's reading end
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("broken pipe"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn the_icc_profile_goes_from_input_to_output() {
    let d = tempfile::tempdir().unwrap();
    let icc: Vec<u8> = (0..200u8).collect();
    write_png(&d.path().join("a.png"), &rgb(8, 6), Some(icc.clone()));
    for out in ["b.jpg", "b.png", "b.tif", "b.webp"] {
        filterctl()
            .current_dir(d.path())
            .args(["apply", "-f", "transpose", "a.png", "-o", out])
            .assert()
            .success();
        let (_, meta) = load_with_metadata(d.path().join(out), &DecodeLimits::default()).unwrap();
        assert_eq!(meta.icc_profile.as_ref(), Some(&icc), "{out}");
    }
}

#[test]
fn folders_run_in_parallel_and_a_bad_file_fails_alone() {
    let d = tempfile::tempdir().unwrap();
    let input = d.path().join("in");
    std::fs::create_dir(&input).unwrap();
    let mut sources = Vec::new();
    for i in 0..7 {
        let img = rgb(5 + i, 3 + i);
        write_png(&input.join(format!("{i}.png")), &img, None);
        sources.push(img);
    }
    std::fs::File::create(input.join("bad.png"))
        .unwrap()
        .write_all(b"not a png")
        .unwrap();
    std::fs::write(input.join("notes.txt"), "skipped: not an image name").unwrap();
    let out = d.path().join("out");
    filterctl()
        .args([
            "apply",
            "-f",
            "transpose",
            "-j",
            "3",
            "--out-format",
            "webp",
        ])
        .arg(&input)
        .arg("-o")
        .arg(&out)
        .assert()
        .code(1)
        .stderr(contains("bad.png"))
        .stderr(contains("1 of 8 inputs failed"));
    for (i, src) in sources.iter().enumerate() {
        let got = load(out.join(format!("{i}.webp"))).unwrap();
        assert_eq!(got, DynImage::U8(transposed(src)), "{i}.webp");
    }
    assert!(!out.join("bad.webp").exists());
    assert!(!out.join("notes.webp").exists());
    // Without the bad file the run succeeds; minmax lines come in name order.
    std::fs::remove_file(input.join("bad.png")).unwrap();
    let stdout = filterctl()
        .args(["apply", "-f", "minmax"])
        .arg(&input)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(stdout).unwrap();
    let names: Vec<usize> = (0..7)
        .map(|i| text.find(&format!("{i}.png")).unwrap())
        .collect();
    assert!(names.windows(2).all(|w| w[0] < w[1]), "{text}");
}

#[test]
fn a_folder_of_one_image_creates_the_output_folder() {
    let d = tempfile::tempdir().unwrap();
    let input = d.path().join("in");
    std::fs::create_dir(&input).unwrap();
    let img = rgb(7, 5);
    write_png(&input.join("only.png"), &img, None);
    let out = d.path().join("new").join("out");
    filterctl()
        .args(["apply", "-f", "transpose"])
        .arg(&input)
        .arg("-o")
        .arg(&out)
        .assert()
        .success();
    let got = load(out.join("only.png")).unwrap();
    assert_eq!(got, DynImage::U8(transposed(&img)));
}
