//! `filterctl` with inputs and outputs that are not plain files given by
//! distinct names: an input the run would overwrite, FIFOs and process
//! substitutions as inputs, `/dev/stdout` and friends as outputs, and stop
//! signals while stdin is idle (docs/RELIABILITY.md).

use std::path::Path;

use assert_cmd::Command;
use clfilter::{DynImage, Image};

mod common;

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
        clfilter::image::save(&rgb(9, 7, 1), &input).unwrap();
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
