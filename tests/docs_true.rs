//! The docs say what the code does: the README's operation table and
//! `filterctl` commands, docs/CLI.md's stage table and demo transcript, and
//! the `apply --help` snapshot are checked against the registry and the
//! binary, so that adding an operation, a stage or a demo step without the
//! docs fails here (trycmd snapshots in tests/cmd/ check the exact outputs).

use std::path::Path;
use std::process::Command;

use clfilter::image::save;
use clfilter::{DynImage, Image};

fn read(path: &str) -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(path)).unwrap()
}

fn filterctl(dir: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_filterctl"));
    c.current_dir(dir)
        .env("FILTERCTL_DEVICE", "cpu")
        .env("FILTERCTL_CACHE_DIR", dir.join("cache"))
        .env_remove("FILTERCTL_VARIANT")
        .env_remove("RUST_LOG");
    c
}

#[test]
fn readme_lists_every_operation() {
    let readme = read("README.md");
    for op in clfilter::ops::OPS {
        assert!(
            readme.contains(&format!("| `{}` |", op.name)),
            "README.md's operation table has no row for '{}'",
            op.name
        );
    }
}

#[test]
fn cli_md_and_apply_help_list_every_stage() {
    let cli = read("docs/CLI.md");
    let help = read("tests/cmd/help.md");
    for stage in clfilter::pipeline::STAGES.iter() {
        assert!(
            cli.contains(&format!("| `{}` |", stage.name)),
            "docs/CLI.md's stage table has no row for '{}'",
            stage.name
        );
        assert!(
            help.lines()
                .any(|l| l.starts_with(&format!("  {} ", stage.name))),
            "the apply --help snapshot (tests/cmd/help.md) has no '{}' \
             (TRYCMD=overwrite cargo test --test cli_docs)",
            stage.name
        );
    }
}

/// `[i/n] name` of every step line in `text`.
fn step_lines(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|l| {
            let rest = l.strip_prefix('[')?;
            let (count, rest) = rest.split_once("] ")?;
            let (name, _) = rest.split_once(':')?;
            count
                .split_once('/')
                .filter(|(i, n)| i.parse::<u32>().is_ok() && n.parse::<u32>().is_ok())?;
            Some(format!("[{count}] {name}"))
        })
        .collect()
}

/// The demo transcript in docs/CLI.md lists the demo's steps, in order,
/// with their count: a new demo step needs a new transcript.
#[test]
fn cli_md_demo_transcript_lists_the_demos_steps() {
    let dir = tempfile::tempdir().unwrap();
    let out = filterctl(dir.path())
        .args(["demo", "--out", "demo"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let ran = step_lines(&String::from_utf8_lossy(&out.stdout));
    assert!(ran.len() > 1, "no step lines in the demo's output");
    let cli = read("docs/CLI.md");
    let start = cli
        .find("$ filterctl --device opencl demo\n")
        .expect("docs/CLI.md has a demo transcript");
    let end = start + cli[start..].find("```").unwrap();
    assert_eq!(
        step_lines(&cli[start..end]),
        ran,
        "docs/CLI.md's demo transcript (left) is not what `filterctl demo` runs (right)"
    );
}

/// Why a README command is not run here, or `None` to run it.
fn not_run(words: &[&str]) -> Option<&'static str> {
    let has = |w: &str| words.contains(&w);
    if words
        .iter()
        .any(|w| w.starts_with("4096x") || w.starts_with("1920x"))
    {
        return Some("megapixel raw frames (raw frames: tests/raw_frames.rs)");
    }
    if has("gpu") || has("0:0") {
        return Some("names a device this machine may not have");
    }
    if has("stream") || has("bench") {
        return Some("timed runs over many frames or variants");
    }
    if has("tune") && !has("--show") {
        return Some("measures every variant (tests/tune.rs)");
    }
    None
}

/// Every `filterctl` command in the README's command block runs and exits
/// 0 on small generated inputs of the names it uses, or is on the list of
/// commands other tests cover ([`not_run`]).
#[test]
fn readme_commands_run() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let rgb = Image::<u8>::from_fn(12, 8, 3, |x, y, c| (x * 20 + y * 9 + c * 50) as u8).unwrap();
    let gray16 = Image::<u16>::from_fn(12, 8, 1, |x, y, _| (x * 3000 + y * 700) as u16).unwrap();
    let rgb16 = Image::<u16>::from_fn(12, 8, 3, |x, y, c| (x * 999 + y * 77 + c) as u16).unwrap();
    for (name, img) in [
        ("in.png", DynImage::from(rgb.clone())),
        ("photo.png", rgb.into()),
        ("raw16.tif", gray16.clone().into()),
        ("mono16.pgm", gray16.into()),
        ("in.tif", rgb16.into()),
    ] {
        save(&img, d.join(name)).unwrap();
    }
    // The JPEG and the folder the README's format and batch examples read.
    let photo = Image::<u8>::from_fn(12, 8, 3, |x, y, c| (x * 11 + y * 5 + c * 60) as u8).unwrap();
    save(&DynImage::from(photo.clone()), d.join("photo.jpg")).unwrap();
    std::fs::create_dir(d.join("photos")).unwrap();
    for name in ["a.png", "b.png"] {
        save(&DynImage::from(photo.clone()), d.join("photos").join(name)).unwrap();
    }
    let readme = read("README.md");
    let block = readme.split("## filterctl\n").nth(1).unwrap();
    let block = &block[block.find("```sh\n").unwrap() + 6..];
    let block = &block[..block.find("```").unwrap()];
    let mut ran = 0;
    for line in block.lines() {
        let cmd = line.split(" #").next().unwrap().trim();
        let words: Vec<&str> = cmd
            .split_whitespace()
            .map(|w| w.trim_matches(['"', '\'']))
            .collect();
        if words.first() != Some(&"filterctl") || cmd.contains('|') || not_run(&words).is_some() {
            continue;
        }
        let out = filterctl(d).args(&words[1..]).output().unwrap();
        assert!(
            out.status.success(),
            "README command `{cmd}` failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        if let Some(i) = words.iter().position(|w| *w == "-o") {
            assert!(
                d.join(words[i + 1]).exists(),
                "`{cmd}` wrote no {}",
                words[i + 1]
            );
        }
        ran += 1;
    }
    assert!(ran >= 6, "only {ran} README commands ran");
}
