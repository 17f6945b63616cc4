//! `filterctl view` in a real window: under `$DISPLAY`, or an Xvfb the test
//! starts itself (Mesa's software GL; PoCL as the OpenCL device proves the
//! copy interop). `--frames N --screenshot PATH` must write what `filterctl
//! apply` computes from the same input and spec, within 1 LSB in RGBA8.
//!
//! Without a display and without Xvfb the tests print why they skip; with
//! `FILTERCTL_REQUIRE_GL=1` (CI) they fail instead.
#![cfg(feature = "gl")]

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};

/// An X server for the test: `$DISPLAY`, or an Xvfb killed on drop.
struct Display {
    name: String,
    xvfb: Option<Child>,
}

impl Drop for Display {
    fn drop(&mut self) {
        if let Some(x) = &mut self.xvfb {
            let _ = x.kill();
            let _ = x.wait();
        }
    }
}

/// `$DISPLAY` if set, else a new Xvfb (which picks a free display number and
/// writes it to stdout), else `None` after saying why, unless
/// `FILTERCTL_REQUIRE_GL=1`.
fn display() -> Option<Display> {
    if let Some(name) = std::env::var("DISPLAY").ok().filter(|d| !d.is_empty()) {
        return Some(Display { name, xvfb: None });
    }
    let started = Command::new("Xvfb")
        .args([
            "-displayfd",
            "1",
            "-screen",
            "0",
            "1280x1024x24",
            "-nolisten",
            "tcp",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn();
    let mut xvfb = match started {
        Ok(x) => x,
        Err(e) => {
            let why = format!("no DISPLAY and no Xvfb ({e}); apt-get install xvfb libgl1-mesa-dri");
            assert!(
                std::env::var("FILTERCTL_REQUIRE_GL").as_deref() != Ok("1"),
                "FILTERCTL_REQUIRE_GL=1: {why}"
            );
            eprintln!("skipped: {why}");
            return None;
        }
    };
    let mut line = String::new();
    let out = xvfb.stdout.take().expect("Xvfb's stdout");
    BufReader::new(out)
        .read_line(&mut line)
        .expect("Xvfb's display number");
    let number = line.trim();
    assert!(!number.is_empty(), "Xvfb did not start");
    Some(Display {
        name: format!(":{number}"),
        xvfb: Some(xvfb),
    })
}

fn filterctl(display: &Display, dir: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_filterctl"));
    c.current_dir(dir)
        .env("DISPLAY", &display.name)
        .env_remove("WAYLAND_DISPLAY")
        .env("FILTERCTL_CACHE_DIR", dir.join("cache"));
    c
}

fn check(out: &Output, what: &str) {
    assert!(
        out.status.success(),
        "{what}: {:?}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The largest difference between two images in RGBA8, after checking
/// their sizes agree.
fn max_diff(a: &Path, b: &Path) -> u8 {
    let a = image::open(a).unwrap().to_rgba8();
    let b = image::open(b).unwrap().to_rgba8();
    assert_eq!(a.dimensions(), b.dimensions(), "sizes differ");
    a.as_raw()
        .iter()
        .zip(b.as_raw())
        .map(|(x, y)| x.abs_diff(*y))
        .max()
        .unwrap_or(0)
}

#[test]
fn screenshot_of_the_window_matches_apply() {
    let Some(display) = display() else { return };
    let dir = tempfile::tempdir().unwrap();
    let input = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/data/coffee.png");
    let spec = "gaussian=sigma=4";
    let view = filterctl(&display, dir.path())
        .args([
            "view",
            "-f",
            spec,
            "--frames",
            "3",
            "--screenshot",
            "shot.png",
        ])
        .arg(&input)
        .output()
        .unwrap();
    check(&view, "view");
    let apply = filterctl(&display, dir.path())
        .args(["apply", "-f", spec, "-o", "apply.png"])
        .arg(&input)
        .output()
        .unwrap();
    check(&apply, "apply");
    let diff = max_diff(&dir.path().join("shot.png"), &dir.path().join("apply.png"));
    assert!(diff <= 1, "screenshot and apply differ by {diff} LSB");
}

#[test]
fn raw_frames_from_stdin_show_the_last_frame() {
    let Some(display) = display() else { return };
    let dir = tempfile::tempdir().unwrap();
    let (w, h) = (64usize, 48usize);
    let frame = |k: usize| -> Vec<u8> {
        (0..w * h)
            .map(|i| ((i % w) * 3 + (i / w) * 5 + k * 40) as u8)
            .collect()
    };
    std::fs::write(dir.path().join("last.raw"), frame(1)).unwrap();
    let spec = "demosaic=method=bilinear,gaussian=sigma=1.5";
    let raw = ["--size", "64x48", "--format", "bayer_rggb8"];
    let mut view = filterctl(&display, dir.path())
        .args([
            "view",
            "-",
            "-f",
            spec,
            "--frames",
            "2",
            "--screenshot",
            "shot.png",
        ])
        .args(raw)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = view.stdin.take().unwrap();
    stdin.write_all(&[frame(0), frame(1)].concat()).unwrap();
    drop(stdin);
    check(&view.wait_with_output().unwrap(), "view");
    let apply = filterctl(&display, dir.path())
        .args(["apply", "-f", spec, "-o", "apply.png", "last.raw"])
        .args(raw)
        .output()
        .unwrap();
    check(&apply, "apply");
    let diff = max_diff(&dir.path().join("shot.png"), &dir.path().join("apply.png"));
    assert!(diff <= 1, "screenshot and apply differ by {diff} LSB");
}

#[test]
fn without_a_display_view_fails_with_a_hint() {
    let dir = tempfile::tempdir().unwrap();
    let input = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/data/coffee.png");
    let out = Command::new(env!("CARGO_BIN_EXE_filterctl"))
        .env_remove("DISPLAY")
        .env_remove("WAYLAND_DISPLAY")
        .env("FILTERCTL_CACHE_DIR", dir.path())
        .args(["view", "--frames", "1"])
        .arg(&input)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("cannot open a window"), "{err}");
}
