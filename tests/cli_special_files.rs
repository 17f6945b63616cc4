//! `filterctl` with inputs and outputs that are not plain files given by
//! distinct names: an input the run would overwrite, FIFOs and process
//! substitutions as inputs, `/dev/stdout` and friends as outputs, and stop
//! signals while stdin is idle (docs/RELIABILITY.md).

use std::path::Path;

use assert_cmd::assert::OutputAssertExt;
use assert_cmd::Command;
use clfilter::{DynImage, Image};

mod common;

/// The arguments of `filterctl stream` transposing 8x8 mono8 frames.
const MONO8: [&str; 7] = [
    "stream",
    "-f",
    "transpose",
    "--size",
    "8x8",
    "--format",
    "mono8",
];

/// `filterctl stream` transposing 8x8 mono8 frames.
fn stream_mono8() -> Command {
    let mut c = filterctl();
    c.args(MONO8);
    c
}

/// The binary on the CPU backend.
fn filterctl() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_filterctl"));
    c.env("FILTERCTL_CACHE_DIR", "disabled")
        .env_remove("FILTERCTL_VARIANT")
        .env("FILTERCTL_DEVICE", "cpu")
        .env_remove("RUST_LOG");
    c
}

/// A seeded random 8-bit RGB image.
fn rgb(w: usize, h: usize, seed: u64) -> DynImage {
    let mut rng = common::Rng::new(seed);
    let data = (0..w * h * 3)
        .map(|_| (rng.next_u64() >> 24) as u8)
        .collect();
    DynImage::U8(Image::from_vec(w, h, 3, data).unwrap())
}

fn s(p: &Path) -> String {
    p.to_string_lossy().into_owned()
}

/// `demo --input d/X -o d`, where the demo writes `d/X`: refused before
/// anything is written, the input kept byte for byte.
#[test]
fn demo_refuses_to_overwrite_its_input() {
    for name in ["blurred.png", "input.png", "histogram.png", "median.png"] {
        let dir = tempfile::tempdir().unwrap();
        let input = dir.path().join(name);
        clfilter::image::save(&rgb(24, 22, 1), &input).unwrap();
        let before = std::fs::read(&input).unwrap();
        filterctl()
            .args(["demo", "--input", &s(&input), "-o", &s(dir.path())])
            .assert()
            .code(2)
            .stderr(predicates::str::contains("is the same file as the input"));
        assert_eq!(std::fs::read(&input).unwrap(), before, "{name} changed");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1, "{name}");
    }
}

/// The image `transpose` makes of `img`, as the engine's CPU path does it.
fn transposed(img: &DynImage) -> DynImage {
    let DynImage::U8(i) = img else { unreachable!() };
    let (w, h, c) = (i.width(), i.height(), i.channels());
    let mut out = vec![0u8; w * h * c];
    for y in 0..h {
        for x in 0..w {
            let from = &i.row(y)[x * c..x * c + c];
            out[(x * h + y) * c..(x * h + y) * c + c].copy_from_slice(from);
        }
    }
    DynImage::U8(Image::from_vec(h, w, c, out).unwrap())
}

/// Makes a FIFO at `path` and writes `bytes` into it from a thread (the
/// open blocks until the reader opens it).
#[cfg(unix)]
fn fifo_with(path: &Path, bytes: Vec<u8>) -> std::thread::JoinHandle<()> {
    let made = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .unwrap();
    assert!(made.success());
    let path = path.to_path_buf();
    std::thread::spawn(move || {
        use std::io::Write;
        let mut f = std::fs::OpenOptions::new().write(true).open(path).unwrap();
        // The reader may stop early after an error: that is the test's to say.
        let _ = f.write_all(&bytes);
    })
}

/// FIFOs and process substitutions (`<(cmd)`) as inputs: read once, whole,
/// as stdin is, for images and raw frames, in every subcommand that loads
/// an image file.
#[cfg(unix)]
#[test]
fn pipes_as_inputs_are_read_once() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let img = rgb(13, 6, 2);
    let png = d.join("p.png");
    clfilter::image::save(&img, &png).unwrap();
    let bytes = std::fs::read(&png).unwrap();
    let fifo = d.join("f");
    let writer = fifo_with(&fifo, bytes.clone());
    let out = d.join("o.png");
    filterctl()
        .args(["apply", "-f", "transpose", &s(&fifo), "-o", &s(&out)])
        .timeout(std::time::Duration::from_secs(60))
        .assert()
        .success();
    writer.join().unwrap();
    assert_eq!(clfilter::image::load(&out).unwrap(), transposed(&img));
    // Raw frames through a FIFO: one 8x8 mono8 frame.
    std::fs::remove_file(&fifo).unwrap();
    let writer = fifo_with(&fifo, (0..64).collect());
    filterctl()
        .args([
            "apply", "-f", "minmax", "--size", "8x8", "--format", "mono8",
        ])
        .arg(&fifo)
        .timeout(std::time::Duration::from_secs(60))
        .assert()
        .success()
        .stdout(predicates::str::contains("minmax: 0..63"));
    writer.join().unwrap();
    clfilter::image::save(&rgb(27, 24, 3), d.join("q.png")).unwrap();
    // Process substitution: /dev/fd/N, a pipe.
    let f = format!(
        "timeout 120 {} --device cpu",
        env!("CARGO_BIN_EXE_filterctl")
    );
    for cmd in [
        format!("{f} apply -f transpose <(cat p.png) -o o2.png"),
        format!("{f} stats <(cat p.png)"),
        format!("{f} histogram <(cat p.png)"),
        format!("{f} apply -f minmax --size 8x8 --format mono8 <(head -c 64 p.png)"),
        // The demo's photo is at least 22x22; an odd side is cropped.
        format!("{f} demo --input <(cat q.png) -o demo && test -f demo/blurred.png"),
    ] {
        std::process::Command::new("bash")
            .current_dir(d)
            .env("FILTERCTL_CACHE_DIR", "disabled")
            .args(["-c", &cmd])
            .assert()
            .success();
    }
    assert_eq!(
        clfilter::image::load(d.join("o2.png")).unwrap(),
        transposed(&img)
    );
}

/// Starts `filterctl --device cpu ARGS` with a pipe on stdin that stays
/// open and idle after `bytes`.
#[cfg(unix)]
fn idle_stdin(args: &[&str], bytes: &[u8]) -> (std::process::Child, std::process::ChildStdin) {
    use std::io::Write;
    use std::process::Stdio;
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_filterctl"))
        .env("FILTERCTL_CACHE_DIR", "disabled")
        .args(["--device", "cpu"])
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(bytes).unwrap();
    stdin.flush().unwrap();
    (child, stdin)
}

/// Sends `sig` twice at once, as `timeout -s INT` does (to the command,
/// then its process group): one stop request.
#[cfg(unix)]
fn signal_twice(pid: u32, sig: &str) {
    let pid = pid.to_string();
    let sent = std::process::Command::new("sh")
        .args(["-c", &format!("kill -{sig} {pid}; kill -{sig} {pid}")])
        .status()
        .unwrap();
    assert!(sent.success());
}

/// Waits up to `secs` for `child` to end; its exit code and stderr.
#[cfg(unix)]
fn ends_within(mut child: std::process::Child, secs: u64) -> (Option<i32>, String) {
    use std::io::Read;
    let start = std::time::Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            let mut err = String::new();
            child
                .stderr
                .take()
                .unwrap()
                .read_to_string(&mut err)
                .unwrap();
            return (status.code(), err);
        }
        if start.elapsed().as_secs() >= secs {
            let _ = child.kill();
            panic!("still running {secs} s after the stop signal");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// A stop signal ends `stream -` and `apply -` while they wait on an idle
/// stdin, with 128 + N; the stream keeps the whole frames it wrote.
#[cfg(unix)]
#[test]
fn a_stop_signal_ends_a_wait_on_idle_stdin() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("s.raw");
    let frames: Vec<u8> = (0..128).map(|i| i as u8).collect();
    let (child, _stdin) = idle_stdin(&[&MONO8[..], &["-", "-o", &s(&out)]].concat(), &frames);
    // Both frames are in the temporary file: the handler is set.
    let start = std::time::Instant::now();
    while !std::fs::read_dir(dir.path())
        .unwrap()
        .any(|e| e.unwrap().metadata().unwrap().len() == 128)
    {
        assert!(
            start.elapsed().as_secs() < 60,
            "the frames were not written"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    signal_twice(child.id(), "INT");
    let (code, err) = ends_within(child, 10);
    assert_eq!(code, Some(130), "{err}");
    assert!(err.contains("kept 2 whole frames"), "{err}");
    let mut want = frames.clone();
    for f in want.chunks_mut(64) {
        let t: Vec<u8> = (0..64).map(|i| f[(i % 8) * 8 + i / 8]).collect();
        f.copy_from_slice(&t);
    }
    assert_eq!(std::fs::read(&out).unwrap(), want);
    // apply -: the image never comes; SIGTERM ends the wait.
    let png = dir.path().join("a.png");
    let (child, _stdin) = idle_stdin(&["apply", "-f", "transpose", "-", "-o", &s(&png)], &[]);
    // Time to start and set the handler (a loaded machine is slow).
    std::thread::sleep(std::time::Duration::from_millis(1500));
    signal_twice(child.id(), "TERM");
    let (code, err) = ends_within(child, 10);
    assert_eq!(code, Some(143), "{err}");
    assert!(!png.exists());
}

/// A second stop signal, 200 ms or more after the first, while the run is
/// blocked where the first cannot end it (a read from a FIFO whose writer
/// stays silent restarts after a signal): it exits at once with 128 + N,
/// and the hidden temporary file of the output goes with it; the old
/// output keeps its bytes.
#[cfg(unix)]
#[test]
fn a_second_stop_signal_removes_the_temporary_files() {
    use std::io::Write;
    let dir = tempfile::tempdir().unwrap();
    let (fifo, out) = (dir.path().join("in.raw"), dir.path().join("s.raw"));
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    std::fs::write(&out, b"old").unwrap();
    // Read and write: the open does not wait for a reader, and the FIFO
    // never reaches its end while this stays open.
    let mut writer = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(&fifo)
        .unwrap();
    writer.write_all(&[7u8; 128]).unwrap();
    let args = ["stream", "-f", "transpose", "--size", "8x8", "--format"];
    let (child, _stdin) = idle_stdin(
        &[&args[..], &["mono8", &s(&fifo), "-o", &s(&out)]].concat(),
        &[],
    );
    let temp_len = || {
        std::fs::read_dir(dir.path())
            .unwrap()
            .filter_map(|e| e.ok())
            .filter(|e| e.file_name().to_string_lossy().ends_with(".clfilter-tmp"))
            .filter_map(|e| e.metadata().ok().map(|m| m.len()))
            .max()
    };
    // Both frames are in the temporary file: the handler is set.
    let start = std::time::Instant::now();
    while temp_len() != Some(128) {
        assert!(
            start.elapsed().as_secs() < 60,
            "the frames were not written"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let kill = |sig: &str| {
        let sent = std::process::Command::new("kill")
            .args([sig, &child.id().to_string()])
            .status()
            .unwrap();
        assert!(sent.success());
    };
    kill("-INT");
    std::thread::sleep(std::time::Duration::from_millis(600));
    assert_eq!(
        temp_len(),
        Some(128),
        "the first signal waits for the next frame"
    );
    kill("-TERM");
    let (code, err) = ends_within(child, 10);
    assert_eq!(code, Some(143), "{err}");
    let mut names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort_unstable();
    assert_eq!(names, ["in.raw", "s.raw"]);
    assert_eq!(std::fs::read(&out).unwrap(), b"old");
    drop(writer);
}

/// A subcommand that does not stop cooperatively (`sort`, waiting on an
/// idle stdin) still dies by the signal itself, as with the default
/// action (a shell loop sees the kill), after the signal thread's clean-up.
#[cfg(unix)]
#[test]
fn other_subcommands_die_by_the_stop_signal() {
    use std::os::unix::process::ExitStatusExt;
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("k.bin");
    let (mut child, _stdin) = idle_stdin(
        &["sort", "--type", "u32", "-", "-o", &s(&out)],
        &[1, 0, 0, 0],
    );
    // Time to start and set the handler (a loaded machine is slow).
    std::thread::sleep(std::time::Duration::from_millis(1500));
    let sent = std::process::Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
    let start = std::time::Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        assert!(
            start.elapsed().as_secs() < 10,
            "still running after SIGTERM"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    assert_eq!(status.signal(), Some(15), "{status:?}");
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

/// `-o /dev/stdout` and its other names, with stdout a pipe (as
/// assert_cmd captures it): written in place, as `-o -` would.
#[cfg(target_os = "linux")]
#[test]
fn dev_stdout_into_a_pipe_is_written_in_place() {
    let dir = tempfile::tempdir().unwrap();
    let keys: Vec<u8> = [5u32, 1, 4, 2]
        .iter()
        .flat_map(|k| k.to_le_bytes())
        .collect();
    let kf = dir.path().join("keys.bin");
    std::fs::write(&kf, &keys).unwrap();
    let sorted: Vec<u8> = [1u32, 2, 4, 5]
        .iter()
        .flat_map(|k| k.to_le_bytes())
        .collect();
    for name in ["/dev/stdout", "/dev/fd/1", "/proc/self/fd/1"] {
        let out = filterctl()
            .args(["sort", "--type", "u32", &s(&kf), "-o", name])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{name}");
        assert_eq!(out.stdout, sorted, "{name}");
    }
    let img = rgb(5, 3, 3);
    let png = dir.path().join("p.png");
    clfilter::image::save(&img, &png).unwrap();
    let out = filterctl()
        .args(["apply", "-f", "transpose", &s(&png), "-o", "/dev/stdout"])
        .args(["--out-format", "png"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let (back, _) = clfilter::image::read_from(&out.stdout[..], "<stdout>", &Default::default())
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(back, transposed(&img));
    let frames = dir.path().join("f.raw");
    std::fs::write(&frames, (0..128).collect::<Vec<u8>>()).unwrap();
    let out = stream_mono8()
        .args([&s(&frames), "-o", "/proc/self/fd/1"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(out.stdout.len(), 128);
    assert!(std::fs::read_dir(dir.path()).unwrap().count() == 3);
}

/// `-o /dev/stdout` with stdout redirected to a file (`>> file`) appends
/// to that file, as the shell opened it; a rename would replace it.
#[cfg(target_os = "linux")]
#[test]
fn dev_stdout_into_a_file_appends_to_it() {
    let dir = tempfile::tempdir().unwrap();
    let kf = dir.path().join("keys.bin");
    std::fs::write(
        &kf,
        [3u32, 1]
            .iter()
            .flat_map(|k| k.to_le_bytes())
            .collect::<Vec<u8>>(),
    )
    .unwrap();
    let log = dir.path().join("log.bin");
    std::fs::write(&log, b"HEAD").unwrap();
    for name in ["/dev/stdout", "/proc/self/fd/1"] {
        let out = std::fs::OpenOptions::new().append(true).open(&log).unwrap();
        std::process::Command::new(env!("CARGO_BIN_EXE_filterctl"))
            .env("FILTERCTL_CACHE_DIR", "disabled")
            .args([
                "--device",
                "cpu",
                "sort",
                "--type",
                "u32",
                &s(&kf),
                "-o",
                name,
            ])
            .stdout(out)
            .assert()
            .code(0);
    }
    let mut want = b"HEAD".to_vec();
    for _ in 0..2 {
        want.extend([1u32, 3].iter().flat_map(|k| k.to_le_bytes()));
    }
    assert_eq!(std::fs::read(&log).unwrap(), want);
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 2);
}

/// `apply --json` with several inputs, one bad: the report of the inputs
/// that ran, and exit 1.
#[test]
fn json_reports_the_inputs_that_ran() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    clfilter::image::save(&rgb(4, 3, 4), d.join("a.png")).unwrap();
    clfilter::image::save(&rgb(3, 5, 5), d.join("c.png")).unwrap();
    let whole = std::fs::read(d.join("a.png")).unwrap();
    std::fs::write(d.join("b.png"), &whole[..whole.len() / 2]).unwrap();
    let out = filterctl()
        .args(["apply", "-f", "minmax", "--json", "-j", "1"])
        .args([d.join("a.png"), d.join("b.png"), d.join("c.png")])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("1 of 3 inputs failed"), "{err}");
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let files = j["files"].as_array().unwrap();
    let widths: Vec<_> = files.iter().map(|f| f["width"].as_u64()).collect();
    assert_eq!(widths, [Some(4), Some(3)]);
    // One input that fails: a report with no files, the input's own error.
    let out = filterctl()
        .args(["apply", "-f", "minmax", "--json"])
        .arg(d.join("b.png"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(j["files"].as_array().map(Vec::len), Some(0));
    assert!(!String::from_utf8_lossy(&out.stderr).contains("signal"));
}

/// `stream --compare-transfer` reads its input twice: a device or pipe
/// input is refused before anything is read.
#[cfg(unix)]
#[test]
fn compare_transfer_needs_a_regular_file() {
    stream_mono8()
        .args(["--compare-transfer", "/dev/null"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("needs a regular file"));
}

/// A write error on stdout names it `stdout` (docs/CLI.md, "Exit codes").
#[cfg(target_os = "linux")]
#[test]
fn a_full_stdout_is_named_stdout() {
    let dir = tempfile::tempdir().unwrap();
    let png = dir.path().join("p.png");
    clfilter::image::save(&rgb(5, 3, 6), &png).unwrap();
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .unwrap();
    std::process::Command::new(env!("CARGO_BIN_EXE_filterctl"))
        .env("FILTERCTL_CACHE_DIR", "disabled")
        .args(["--device", "cpu", "apply", "-f", "transpose", &s(&png)])
        .args(["-o", "-", "--out-format", "png"])
        .stdout(full)
        .assert()
        .code(1)
        .stderr(predicates::str::contains("stdout: No space left"));
}

/// `sort` holds its input whole, so it reads at most the decode limit
/// (`FILTERCTL_DECODE_LIMIT`): an endless device is refused once past it
/// (it used to be read until the system killed the process), a regular
/// file over it before it is read, stdin once past it; the old output
/// stays, and a file within the limit sorts.
#[test]
fn sort_reads_at_most_the_decode_limit() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("k.bin");
    std::fs::write(&out, b"old").unwrap();
    let big = dir.path().join("big.bin");
    std::fs::write(&big, vec![3u8; 8192]).unwrap();
    let sort = |input: &str| {
        let mut c = filterctl();
        c.env("FILTERCTL_DECODE_LIMIT", "4K").args([
            "sort",
            "--type",
            "u32",
            input,
            "-o",
            &s(&out),
        ]);
        c
    };
    let refused = |a: assert_cmd::assert::Assert, what: &str| {
        let err = String::from_utf8(a.get_output().stderr.clone()).unwrap();
        a.code(1);
        assert!(err.contains(what), "{err}");
        assert!(
            err.contains("over the decode limit of 4 KiB (4096 bytes)"),
            "{err}"
        );
        assert!(err.contains("FILTERCTL_DECODE_LIMIT="), "{err}");
    };
    refused(
        sort("/dev/zero").assert(),
        "/dev/zero: decoding the keys needs more",
    );
    refused(
        sort(&s(&big)).assert(),
        "decoding the keys needs 8 KiB (8192 bytes)",
    );
    refused(
        sort("-").write_stdin(vec![0u8; 8192]).assert(),
        "decoding the keys needs more",
    );
    assert_eq!(std::fs::read(&out).unwrap(), b"old");
    let a = sort(&s(dir.path())).assert().code(1);
    let err = String::from_utf8(a.get_output().stderr.clone()).unwrap();
    assert!(err.contains("is a folder, not a file of keys"), "{err}");
    std::fs::write(&big, [9u8, 0, 0, 0, 2, 0, 0, 0]).unwrap();
    sort(&s(&big)).assert().success();
    assert_eq!(std::fs::read(&out).unwrap(), [2u8, 0, 0, 0, 9, 0, 0, 0]);
}
