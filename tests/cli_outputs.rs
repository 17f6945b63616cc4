//! `filterctl` never destroys an input or leaves a partial output
//! (docs/RELIABILITY.md, "Outputs"): outputs that are inputs by any name are
//! refused, every argument is checked before an output is opened, a failed
//! or interrupted run leaves the old file or nothing, and a raw stream keeps
//! its whole frames. These drive the real binary with real files, links,
//! redirections, signals and (as root) a real full file system.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Stdio;

use assert_cmd::assert::OutputAssertExt;
use assert_cmd::Command;
use clfilter::{DynImage, Image};

mod common;

/// The binary on the CPU backend (`FILTERCTL_DEVICE=cpu`; `--device` overrides).
fn filterctl() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_filterctl"));
    c.env("FILTERCTL_CACHE_DIR", "disabled")
        .env_remove("FILTERCTL_VARIANT")
        .env("FILTERCTL_DEVICE", "cpu")
        .env_remove("RUST_LOG");
    c
}

/// Pseudo-random bytes (seeded), so every run sees the same data.
fn noise(n: usize, seed: u64) -> Vec<u8> {
    let mut rng = common::Rng::new(seed);
    (0..n).map(|_| (rng.next_u64() >> 24) as u8).collect()
}

fn write_png(path: &Path, w: usize, h: usize) {
    let img = Image::<u8>::from_vec(w, h, 3, noise(w * h * 3, w as u64)).unwrap();
    clfilter::image::save(&DynImage::U8(img), path).unwrap();
}

/// Frames of a 16x16 RGGB 8-bit stream.
const FRAME: usize = 16 * 16;
const STREAM: [&str; 6] = ["stream", "-f", "demosaic", "--size", "16x16", "--format"];

/// Every file in `dir` (not below) with its bytes: what a run must leave
/// untouched, temporary files included.
fn snapshot(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap())
        .filter(|e| e.file_type().unwrap().is_file())
        .map(|e| {
            (
                e.file_name().to_string_lossy().into_owned(),
                std::fs::read(e.path()).unwrap(),
            )
        })
        .collect()
}

fn s(p: &Path) -> String {
    p.to_string_lossy().into_owned()
}

#[cfg(unix)]
#[test]
fn outputs_that_are_inputs_by_any_name_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write_png(&d.join("a.png"), 7, 5);
    std::fs::create_dir(d.join("sub")).unwrap();
    std::os::unix::fs::symlink("a.png", d.join("sym.png")).unwrap();
    std::fs::hard_link(d.join("a.png"), d.join("hard.png")).unwrap();
    std::fs::write(d.join("in.raw"), noise(3 * FRAME, 3)).unwrap();
    std::os::unix::fs::symlink("in.raw", d.join("sym.raw")).unwrap();
    std::fs::hard_link(d.join("in.raw"), d.join("hard.raw")).unwrap();
    // A raw file whose name a frame pattern produces.
    std::fs::write(d.join("f_0.png"), noise(FRAME, 4)).unwrap();
    let before = snapshot(d);
    let a = s(&d.join("a.png"));
    for out in ["a.png", "sub/../a.png", "./a.png", "sym.png", "hard.png"] {
        filterctl()
            .current_dir(d)
            .args(["apply", "-f", "gaussian=sigma=1", &a, "-o", out])
            .assert()
            .code(2)
            .stderr(predicates::str::contains("same file as the input"));
    }
    // A histogram's chart onto its input, or with no known extension.
    for out in ["a.png", "sym.png", "hard.png", "chart.xyz"] {
        filterctl()
            .current_dir(d)
            .args(["histogram", &a, "--plot", out])
            .assert()
            .code(2);
    }
    // Folder mode: the output named after the input is the input.
    let b = d.join("sub/a.png");
    write_png(&b, 3, 3);
    filterctl()
        .args(["apply", "-f", "transpose", &s(&b), &a, "-o", &s(d)])
        .assert()
        .code(2);
    std::fs::remove_file(&b).unwrap();
    let stream = |input: &str, out: &str| {
        let mut c = filterctl();
        c.current_dir(d)
            .args(STREAM)
            .args(["bayer_rggb8", input, "-o", out]);
        c
    };
    for (input, out) in [
        ("in.raw", "in.raw"),
        ("in.raw", "sub/../in.raw"),
        ("sym.raw", "hard.raw"),
        ("hard.raw", "./in.raw"),
        ("f_0.png", "f_%d.png"),
    ] {
        stream(input, out)
            .assert()
            .code(2)
            .stderr(predicates::str::contains("same file as the input"));
    }
    // stdin redirected from the output; stdout appended to the input.
    let std_stream = |input: &str, out: &str| {
        let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_filterctl"));
        c.env("FILTERCTL_CACHE_DIR", "disabled")
            .current_dir(d)
            .args(["--device", "cpu"])
            .args(STREAM)
            .args(["bayer_rggb8", input, "-o", out]);
        c
    };
    std_stream("-", "in.raw")
        .stdin(File::open(d.join("in.raw")).unwrap())
        .assert()
        .code(2)
        .stderr(predicates::str::contains("input stdin"));
    let append = std::fs::OpenOptions::new()
        .append(true)
        .open(d.join("in.raw"))
        .unwrap();
    std_stream("in.raw", "-")
        .stdout(Stdio::from(append))
        .assert()
        .code(2)
        .stderr(predicates::str::contains(
            "stdout is redirected into the input",
        ));
    assert_eq!(snapshot(d), before, "an input changed or debris was left");
}

#[test]
fn every_argument_is_checked_before_an_output_is_touched() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("in.raw"), noise(2 * FRAME, 5)).unwrap();
    std::fs::write(d.join("out.raw"), b"precious").unwrap();
    std::fs::create_dir(d.join("folder")).unwrap();
    let before = snapshot(d);
    let runs: &[(&[&str], i32)] = &[
        (&["-f", "nosuchop", "--size", "16x16"], 2),
        (&["-f", "demosaic", "--size", "15x16"], 2),
        (
            &["-f", "demosaic", "--size", "16x16", "--in-flight", "0"],
            2,
        ),
        (
            &["-f", "demosaic", "--size", "16x16", "--compare-transfer"],
            2,
        ),
        (&["-f", "demosaic=pattern=bggr", "--size", "16x16"], 2),
        (&["-f", "demosaic", "--size", "16x16", "missing.raw"], 1),
        (&["-f", "demosaic", "--size", "16x16", "folder"], 2),
    ];
    for (args, code) in runs {
        let mut c = filterctl();
        c.current_dir(d)
            .args(["stream", "--format", "bayer_rggb8"])
            .args(*args);
        if !args.contains(&"missing.raw") && !args.contains(&"folder") {
            c.arg("in.raw");
        }
        c.args(["-o", "out.raw"]).assert().code(*code);
    }
    // A missing output folder is found before the first frame.
    for out in ["nodir/x.raw", "nodir/f_%d.png", "nodir/"] {
        filterctl()
            .current_dir(d)
            .args(STREAM)
            .args(["bayer_rggb8", "in.raw", "-o", out])
            .assert()
            .code(1)
            .stderr(predicates::str::contains("output folder does not exist"));
    }
    // `sort` too, before it reads and sorts: the 5-byte input would fail
    // with its own error were the keys read first.
    std::fs::write(d.join("keys5.raw"), [1u8, 2, 3, 4, 5]).unwrap();
    filterctl()
        .current_dir(d)
        .args([
            "sort",
            "--type",
            "u32",
            "keys5.raw",
            "-o",
            "nodir/sorted.raw",
        ])
        .assert()
        .code(1)
        .stderr(predicates::str::contains("output folder does not exist"));
    std::fs::remove_file(d.join("keys5.raw")).unwrap();
    assert_eq!(snapshot(d), before, "a refused run touched its output");
}

#[test]
fn a_failed_run_leaves_the_old_output_or_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write_png(&d.join("a.png"), 9, 4);
    std::fs::write(d.join("old.png"), b"old").unwrap();
    let before = snapshot(d);
    // An OpenCL variant forced on the CPU backend fails after the input is read.
    for out in ["old.png", "new.png"] {
        filterctl()
            .current_dir(d)
            .args([
                "--variant",
                "gaussian=iir_tiles",
                "apply",
                "-f",
                "gaussian=sigma=2",
            ])
            .args(["a.png", "-o", out])
            .assert()
            .code(1);
    }
    // A truncated last frame: the whole frames before it are kept.
    std::fs::write(d.join("cut.raw"), noise(2 * FRAME + 7, 6)).unwrap();
    filterctl()
        .current_dir(d)
        .args(STREAM)
        .args(["bayer_rggb8", "cut.raw", "-o", "frames.raw"])
        .assert()
        .code(1)
        .stderr(predicates::str::contains("kept 2 whole frames"));
    assert_eq!(
        std::fs::metadata(d.join("frames.raw")).unwrap().len(),
        2 * 3 * FRAME as u64
    );
    // A stream holding no frame fails and keeps the old file as it was.
    std::fs::write(d.join("empty.raw"), b"").unwrap();
    filterctl()
        .current_dir(d)
        .args(STREAM)
        .args(["bayer_rggb8", "empty.raw", "-o", "frames.raw"])
        .assert()
        .code(1)
        .stderr(predicates::str::contains("holds no frame"));
    assert_eq!(
        std::fs::metadata(d.join("frames.raw")).unwrap().len(),
        2 * 3 * FRAME as u64
    );
    std::fs::remove_file(d.join("empty.raw")).unwrap();
    std::fs::remove_file(d.join("cut.raw")).unwrap();
    std::fs::remove_file(d.join("frames.raw")).unwrap();
    assert_eq!(snapshot(d), before);
    // A legal name near the 255-byte limit: the temporary file beside it
    // must not go over.
    let long = format!("{}.png", "a".repeat(245));
    filterctl()
        .current_dir(d)
        .args(["apply", "-f", "transpose", "a.png", "-o", &long])
        .assert()
        .success();
    assert!(d.join(&long).exists());
}

/// Write errors name the file written, not "stdout", and a sink's failure
/// is not reported as a device fault.
#[cfg(target_os = "linux")]
#[test]
fn write_errors_name_the_file() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("in.raw"), noise(4 * FRAME, 7)).unwrap();
    let mut devices = vec!["cpu"];
    if std::env::var("FILTERCTL_REQUIRE_OPENCL").is_ok_and(|v| v == "1") {
        devices.push("opencl");
    }
    for device in devices {
        let out = filterctl()
            .current_dir(dir.path())
            .args(["--device", device])
            .args(STREAM)
            .args(["bayer_rggb8", "in.raw", "-o", "/dev/full"])
            .assert()
            .code(1)
            .get_output()
            .clone();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("/dev/full: No space left"), "{device}: {err}");
        assert!(
            !err.contains("stdout") && !err.contains("host path"),
            "{err}"
        );
    }
}

/// Mounts a small tmpfs for the full-disk tests; `None` (with the reason
/// printed) where that is not allowed.
struct SmallDisk(tempfile::TempDir);

impl SmallDisk {
    fn mount(kib: usize) -> Option<SmallDisk> {
        let dir = tempfile::tempdir().ok()?;
        let ok = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={kib}k"), "tmpfs"])
            .arg(dir.path())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if !ok {
            eprintln!("skipped: mounting a small tmpfs needs root (mount -t tmpfs failed)");
            return None;
        }
        Some(SmallDisk(dir))
    }

    fn path(&self) -> &Path {
        self.0.path()
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount")
            .arg(self.0.path())
            .status();
    }
}

#[test]
fn a_full_disk_keeps_old_files_and_whole_frames() {
    let Some(disk) = SmallDisk::mount(64) else {
        return;
    };
    let d = disk.path();
    let src = tempfile::tempdir().unwrap();
    let png = src.path().join("big.png");
    write_png(&png, 256, 256);
    std::fs::write(d.join("old.png"), b"old").unwrap();
    filterctl()
        .args([
            "apply",
            "-f",
            "transpose",
            &s(&png),
            "-o",
            &s(&d.join("old.png")),
        ])
        .assert()
        .code(1)
        .stderr(predicates::str::contains("old.png: No space left"));
    assert_eq!(
        snapshot(d).into_iter().collect::<Vec<_>>(),
        [("old.png".to_string(), b"old".to_vec())]
    );
    // A raw stream: the frames that fit, whole, and a message saying so.
    std::fs::remove_file(d.join("old.png")).unwrap();
    let input = src.path().join("in.raw");
    std::fs::write(&input, noise(200 * FRAME, 8)).unwrap();
    let expected = src.path().join("all.raw");
    filterctl()
        .args(STREAM)
        .args(["bayer_rggb8", &s(&input), "-o", &s(&expected)])
        .assert()
        .success();
    let out = d.join("frames.raw");
    let run = filterctl()
        .args(STREAM)
        .args(["bayer_rggb8", &s(&input), "-o", &s(&out)])
        .assert()
        .code(1)
        .get_output()
        .clone();
    let err = String::from_utf8_lossy(&run.stderr);
    let got = std::fs::read(&out).unwrap();
    let frames = got.len() / (3 * FRAME);
    assert!(
        frames > 0 && got.len() % (3 * FRAME) == 0,
        "{} bytes",
        got.len()
    );
    assert!(
        err.contains(&format!("kept {frames} whole frames")),
        "{err}"
    );
    assert_eq!(got, std::fs::read(&expected).unwrap()[..got.len()]);
    assert_eq!(snapshot(d).len(), 1, "debris on the full disk");
    // One image per frame: the files written are whole, the failed one absent.
    std::fs::remove_file(&out).unwrap();
    filterctl()
        .args(STREAM)
        .args(["bayer_rggb8", &s(&input), "-o", &s(&d.join("f_%03d.pam"))])
        .assert()
        .code(1);
    for (name, _) in snapshot(d) {
        let img = clfilter::image::load(d.join(&name)).unwrap();
        assert_eq!(img.shape(), (16, 16, 3), "{name}");
    }
}

/// Starts `stream` on the CPU backend from a pipe into `out`, and writes
/// `frames` frames of noise (seed `seed`) into the pipe, which stays open.
#[cfg(unix)]
fn stream_from_stdin(
    out: &Path,
    frames: usize,
    seed: u64,
) -> (std::process::Child, std::process::ChildStdin) {
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_filterctl"))
        .env("FILTERCTL_CACHE_DIR", "disabled")
        .args(["--device", "cpu"])
        .args(STREAM)
        .args(["bayer_rggb8", "-", "-o", &s(out)])
        .stdin(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(&noise(frames * FRAME, seed)).unwrap();
    stdin.flush().unwrap();
    (child, stdin)
}

/// Waits (up to a minute, for a loaded machine) until a hidden temporary
/// output file in `dir` holds `bytes`.
#[cfg(unix)]
fn wait_for_temp_bytes(dir: &Path, bytes: u64) {
    let start = std::time::Instant::now();
    loop {
        let len = std::fs::read_dir(dir)
            .unwrap()
            .filter_map(|e| e.ok())
            .filter(|e| e.file_name().to_string_lossy().ends_with(".clfilter-tmp"))
            .filter_map(|e| e.metadata().ok())
            .map(|m| m.len())
            .max();
        if len == Some(bytes) {
            return;
        }
        assert!(
            start.elapsed().as_secs() < 60,
            "the stream did not write {bytes} bytes (has {len:?})"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// The first SIGINT stops a raw stream at the next frame; the file keeps
/// the frames written whole and the exit code is 130.
#[cfg(unix)]
#[test]
fn a_stop_signal_keeps_whole_frames() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.raw");
    let (child, mut stdin) = stream_from_stdin(&out, 3, 9);
    // The three frames are in the hidden temporary file: the handler is set.
    wait_for_temp_bytes(dir.path(), 3 * 3 * FRAME as u64);
    let killed = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    std::thread::sleep(std::time::Duration::from_millis(200));
    // The next frame finds the flag set.
    let _ = stdin.write_all(&noise(FRAME, 10));
    drop(stdin);
    let result = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&result.stderr);
    assert_eq!(result.status.code(), Some(130), "{err}");
    assert!(err.contains("kept 3 whole frames"), "{err}");
    assert_eq!(std::fs::metadata(&out).unwrap().len(), 3 * 3 * FRAME as u64);
}

/// `-o PATH` through a symbolic link replaces the file it points to and
/// keeps the link; the new file keeps the old one's permissions.
#[cfg(unix)]
#[test]
fn outputs_through_links_keep_the_link() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write_png(&d.join("a.png"), 5, 5);
    std::fs::write(d.join("target.png"), b"old").unwrap();
    std::fs::set_permissions(d.join("target.png"), std::fs::Permissions::from_mode(0o600)).unwrap();
    std::os::unix::fs::symlink("target.png", d.join("link.png")).unwrap();
    filterctl()
        .current_dir(d)
        .args(["apply", "-f", "transpose", "a.png", "-o", "link.png"])
        .assert()
        .success();
    assert!(std::fs::symlink_metadata(d.join("link.png"))
        .unwrap()
        .file_type()
        .is_symlink());
    let out = clfilter::image::load(d.join("target.png")).unwrap();
    assert_eq!(out.shape(), (5, 5, 3));
    let mode = std::fs::metadata(d.join("target.png"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600);
    let names: Vec<PathBuf> = snapshot(d).keys().map(PathBuf::from).collect();
    assert_eq!(names.len(), 2, "{names:?}");
}

/// `kill -9` in the middle of a raw stream: the old output stays as it was
/// (the hidden temporary file is all that is left).
#[cfg(unix)]
#[test]
fn kill_9_leaves_the_old_output() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.raw");
    std::fs::write(&out, b"old frames").unwrap();
    let (mut child, _stdin) = stream_from_stdin(&out, 5, 11);
    wait_for_temp_bytes(dir.path(), 5 * 3 * FRAME as u64);
    child.kill().unwrap();
    child.wait().unwrap();
    assert_eq!(std::fs::read(&out).unwrap(), b"old frames");
}

/// Concurrent runs writing one output: it ends up as one run's whole
/// result, never a mix.
#[test]
fn concurrent_writers_leave_one_whole_output() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write_png(&d.join("a.png"), 64, 48);
    let specs = [
        "transpose",
        "gaussian=sigma=1",
        "gaussian=sigma=4",
        "normalize=out=u8",
    ];
    let mut expected = Vec::new();
    for (i, spec) in specs.iter().enumerate() {
        let want = d.join(format!("want{i}.png"));
        filterctl()
            .args(["apply", "-f", spec, &s(&d.join("a.png")), "-o", &s(&want)])
            .assert()
            .success();
        expected.push(clfilter::image::load(&want).unwrap());
    }
    for _ in 0..3 {
        let children: Vec<_> = specs
            .iter()
            .map(|spec| {
                std::process::Command::new(env!("CARGO_BIN_EXE_filterctl"))
                    .env("FILTERCTL_CACHE_DIR", "disabled")
                    .args(["--device", "cpu", "apply", "-f", spec])
                    .arg(d.join("a.png"))
                    .arg("-o")
                    .arg(d.join("shared.png"))
                    .spawn()
                    .unwrap()
            })
            .collect();
        for mut c in children {
            assert!(c.wait().unwrap().success());
        }
        let got = clfilter::image::load(d.join("shared.png")).unwrap();
        assert!(expected.contains(&got), "a mixed output");
    }
    assert_eq!(snapshot(d).len(), 2 + specs.len(), "debris left");
}

/// A read-only output file is not replaced (a rename would not ask for
/// write permission on it): exit 1, the file as it was, no debris.
#[test]
fn read_only_outputs_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write_png(&d.join("a.png"), 6, 4);
    std::fs::write(d.join("locked.png"), b"keep me").unwrap();
    let mut perms = std::fs::metadata(d.join("locked.png"))
        .unwrap()
        .permissions();
    perms.set_readonly(true);
    std::fs::set_permissions(d.join("locked.png"), perms).unwrap();
    let before = snapshot(d);
    filterctl()
        .current_dir(d)
        .args(["apply", "-f", "transpose", "a.png", "-o", "locked.png"])
        .assert()
        .code(1)
        .stderr(predicates::str::contains(
            "locked.png: the file is read-only",
        ));
    assert_eq!(snapshot(d), before);
}
