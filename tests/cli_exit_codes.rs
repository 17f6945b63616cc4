//! The exit-code table of docs/CLI.md, subcommand by subcommand: 0
//! success, 1 runtime error, 2 usage error, 128 + N after stop signal N
//! (tests/cli_outputs.rs); and a closed stdout or stderr on every
//! subcommand ends it with its documented code and never a panic.

use std::path::Path;
use std::process::Stdio;

use assert_cmd::Command;
use clfilter::{DynImage, Image};

fn filterctl(dir: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_filterctl"));
    c.current_dir(dir)
        .env("FILTERCTL_CACHE_DIR", dir.join("cache"))
        .env_remove("FILTERCTL_VARIANT")
        .env("FILTERCTL_DEVICE", "cpu")
        .env_remove("RUST_LOG");
    c
}

/// A 9x7 RGB PNG `a.png`, a 2-frame 8x8 RGGB stream `in.raw`, a cut
/// one `cut.raw` and 7 bytes `odd.raw` in a new folder.
fn inputs() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let img =
        Image::<u8>::from_vec(9, 7, 3, (0..189).map(|i| (i * 37 % 251) as u8).collect()).unwrap();
    clfilter::image::save(&DynImage::U8(img), dir.path().join("a.png")).unwrap();
    let frames: Vec<u8> = (0..128).map(|i| (i * 11 % 256) as u8).collect();
    std::fs::write(dir.path().join("in.raw"), &frames).unwrap();
    std::fs::write(dir.path().join("cut.raw"), &frames[..100]).unwrap();
    std::fs::write(dir.path().join("odd.raw"), &frames[..7]).unwrap();
    dir
}

const STREAM: &[&str] = &["stream", "-f", "demosaic", "--format", "bayer_rggb8"];

/// `(args, code)` for every subcommand: a success, a usage error and,
/// where one can be provoked without a device, a runtime error.
fn table() -> Vec<(Vec<&'static str>, i32)> {
    let v = |a: &[&'static str]| a.to_vec();
    let stream = |a: &[&'static str]| [STREAM, a].concat();
    let mut table = vec![
        (v(&["--help"]), 0),
        (v(&["--version"]), 0),
        (v(&[]), 2),
        (v(&["nosuchcommand"]), 2),
        (v(&["--nosuchflag", "variants"]), 2),
        (v(&["devices"]), 0),
        (v(&["devices", "--json"]), 0),
        (v(&["--device", "nosuchdevice", "devices"]), 2),
        (v(&["variants"]), 0),
        (v(&["variants", "--json"]), 0),
        (v(&["apply", "-f", "transpose", "a.png", "-o", "t.png"]), 0),
        (v(&["apply", "-f", "minmax", "a.png"]), 0),
        (v(&["apply", "-f", "nosuchop", "a.png", "-o", "t.png"]), 2),
        (
            v(&["apply", "-f", "gaussian=sigma=-1", "a.png", "-o", "t.png"]),
            2,
        ),
        (v(&["apply", "-f", "transpose", "a.png"]), 2),
        (v(&["apply", "-f", "transpose", "a.png", "-o", "t.gif"]), 2),
        (v(&["apply", "-f", "transpose", "a.png", "-o", "-"]), 2),
        (
            v(&[
                "apply",
                "-f",
                "transpose",
                "a.png",
                "-o",
                "t.jpg",
                "--quality",
                "0",
            ]),
            2,
        ),
        (
            v(&["apply", "-f", "transpose", "missing.png", "-o", "t.png"]),
            1,
        ),
        (v(&["apply", "-f", "transpose", "in.raw", "-o", "t.png"]), 1),
        // An input whose shape a stage cannot take (docs/CLI.md, "Inputs a
        // stage cannot take"; tests/cli_inputs.rs has every stage).
        (v(&["apply", "-f", "colormap", "a.png", "-o", "t.png"]), 2),
        (v(&["apply", "-f", "demosaic", "a.png", "-o", "t.png"]), 2),
        (
            v(&[
                "--variant",
                "gaussian=iir_tiles",
                "apply",
                "-f",
                "gaussian=sigma=2",
            ])
            .into_iter()
            .chain(["a.png", "-o", "t.png"])
            .collect(),
            1,
        ),
        (
            v(&[
                "--variant",
                "gaussian=cpu,gaussian=fir",
                "apply",
                "-f",
                "gaussian",
            ])
            .into_iter()
            .chain(["a.png", "-o", "t.png"])
            .collect(),
            2,
        ),
        (stream(&["--size", "8x8", "in.raw", "-o", "o.raw"]), 0),
        (stream(&["--size", "8x8", "in.raw", "--json"]), 0),
        (stream(&["--size", "7x8", "in.raw"]), 2),
        (stream(&["--size", "8x8", "--in-flight", "9", "in.raw"]), 2),
        (stream(&["--size", "8x8", "--batch", "0", "in.raw"]), 2),
        (stream(&["--size", "8x8", "--batch", "65", "in.raw"]), 2),
        (
            stream(&["--size", "8x8", "--batch", "3", "in.raw", "-o", "o.raw"]),
            0,
        ),
        (
            stream(&["--size", "8x8", "--compare-transfer", "in.raw"]),
            2,
        ),
        (stream(&["--size", "8x8", "cut.raw", "-o", "o.raw"]), 1),
        (stream(&["--size", "8x8", "missing.raw"]), 1),
        (
            v(&["stream", "-f", "demosaic,colormap", "--size", "8x8"])
                .into_iter()
                .chain(["--format", "bayer_rggb8", "in.raw"])
                .collect(),
            2,
        ),
        (
            v(&[
                "bench",
                "--size",
                "8x8",
                "--iters",
                "1",
                "--ops",
                "transpose",
            ]),
            0,
        ),
        (v(&["bench", "--size", "0x8"]), 2),
        (v(&["bench", "--ops", "nosuchop", "--size", "8x8"]), 2),
        (
            v(&["bench", "--ops", "wb", "--size", "8x8", "--channels", "1"]),
            2,
        ),
        (v(&["histogram", "a.png"]), 0),
        (v(&["histogram", "a.png", "--json", "--bins", "4"]), 0),
        (v(&["histogram", "a.png", "--bins", "0"]), 2),
        (v(&["histogram", "a.png", "--range", "1:0"]), 2),
        (v(&["histogram", "a.png", "--plot", "-"]), 2),
        (v(&["histogram", "a.png", "--plot", "a.png"]), 2),
        (v(&["histogram", "missing.png"]), 1),
        (v(&["histogram", "in.raw"]), 1),
        (v(&["stats", "a.png"]), 0),
        (v(&["stats", "a.png", "--json"]), 0),
        (v(&["stats", "missing.png"]), 1),
        (v(&["stats", "in.raw"]), 1),
        (v(&["sort", "--type", "u32", "in.raw", "-o", "s.raw"]), 0),
        (v(&["sort", "--type", "u64", "in.raw", "-o", "s.raw"]), 2),
        (v(&["sort", "--type", "u32", "in.raw", "-o", "in.raw"]), 2),
        (v(&["sort", "--type", "u32", "odd.raw", "-o", "s.raw"]), 1),
        (
            v(&["sort", "--type", "u32", "missing.raw", "-o", "s.raw"]),
            1,
        ),
        (v(&["tune", "--show"]), 0),
        (v(&["tune", "--budget", "nan"]), 2),
        (v(&["demo", "--out", "demo"]), 0),
        (v(&["demo", "--out", "a.png"]), 2),
        // The spec is checked first, with or without the `gl` feature.
        (v(&["view", "-f", "nosuchop", "a.png"]), 2),
    ];
    if !cfg!(feature = "gl") {
        // A build without the window says how to get one.
        table.push((v(&["view", "a.png"]), 2));
    }
    table
}

#[test]
fn every_subcommand_follows_the_exit_code_table() {
    let dir = inputs();
    for (args, code) in table() {
        let out = filterctl(dir.path()).args(&args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(code), "{args:?}:\n{err}");
        assert!(!err.contains("panicked"), "{args:?}:\n{err}");
        match code {
            0 => {}
            // clap's own usage errors start with `error:`; ours with `filterctl: error:`.
            2 => assert!(err.contains("error:"), "{args:?}: no message:\n{err}"),
            _ => assert!(err.contains("filterctl: error:"), "{args:?}:\n{err}"),
        }
    }
}

/// A closed stdout (`| head` that has gone) and a closed stderr (`2>&-`)
/// on every row of the table: the same exit code (0 for a closed stdout:
/// the reader left), and no panic.
#[cfg(unix)]
#[test]
fn closed_stdout_and_stderr_never_panic() {
    let dir = inputs();
    let bin = env!("CARGO_BIN_EXE_filterctl");
    for (args, code) in table() {
        let quoted: Vec<String> = args.iter().map(|a| format!("'{a}'")).collect();
        for (redirect, want) in [("2>&-", code), (">&-", code), ("| true", 0)] {
            let line = format!("'{bin}' {} {redirect}", quoted.join(" "));
            let out = std::process::Command::new("sh")
                .arg("-c")
                .arg(&line)
                .current_dir(dir.path())
                .env("FILTERCTL_CACHE_DIR", dir.path().join("cache"))
                .env("FILTERCTL_DEVICE", "cpu")
                .stdin(Stdio::null())
                .output()
                .unwrap();
            let text = format!(
                "{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
            assert!(!text.contains("panicked"), "{line}:\n{text}");
            // `| true` reports true's status; a panic would still print.
            if redirect != "| true" {
                let got = out.status.code();
                let ok = got == Some(want) || (redirect == ">&-" && got == Some(0));
                assert!(ok, "{line}: exit {got:?}, want {want}\n{text}");
            }
        }
    }
}
