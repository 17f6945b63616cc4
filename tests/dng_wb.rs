//! `wb=camera`: `filterctl apply` on a DNG fills in the white balance the
//! file recorded (AsShotNeutral); a DNG without one, and any other input,
//! refuse it with a usage error (exit 2).
#![cfg(feature = "formats")]

mod dng_files;

use std::process::Command;

use dng_files::{noise, pack, Order, Raw, Val};

/// An uncompressed 12-bit RGGB DNG of w x h, black 256 and white 4000,
/// with the given IFD0 tags.
fn dng(w: usize, h: usize, ifd0: &[(u16, Val)]) -> Vec<u8> {
    let s = noise(w * h, 12, 3);
    let o = Order(false);
    let raw = Raw {
        width: w as u32,
        height: h as u32,
        bits: 12,
        compression: 1,
        tile: None,
        rows_per_strip: h as u32,
        chunks: vec![pack(o, &s, w, 12)],
        tags: vec![
            (33421, Val::Short(vec![2, 2])),
            (33422, Val::Byte(vec![0, 1, 1, 2])),
            (50714, Val::Short(vec![256])),
            (50717, Val::Short(vec![4000])),
        ],
    };
    dng_files::dng(o, &raw, false, ifd0)
}

fn filterctl(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_filterctl"))
        .env("FILTERCTL_CACHE_DIR", "disabled")
        .env_remove("FILTERCTL_VARIANT")
        .env_remove("FILTERCTL_DEVICE")
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn wb_camera_takes_the_as_shot_neutral() {
    let dir = tempfile::tempdir().unwrap();
    let p = |n: &str| dir.path().join(n).to_str().unwrap().to_string();
    // AsShotNeutral 1/2, 1, 1/4: gains r = 2, g = 1, b = 4 (exact in f32).
    let neutral = Val::Rational(vec![(1, 2), (1, 1), (1, 4)]);
    std::fs::write(p("in.dng"), dng(23, 14, &[(50728, neutral)])).unwrap();
    for (spec, out) in [
        ("demosaic,wb=camera,convert=u8", "a.png"),
        ("demosaic,wb=mode=camera,convert=u8", "b.png"),
        ("demosaic,wb=r=2:g=1:b=4,convert=u8", "c.png"),
    ] {
        let o = filterctl(&[
            "--device",
            "cpu",
            "apply",
            "-f",
            spec,
            &p("in.dng"),
            "-o",
            &p(out),
        ]);
        assert!(
            o.status.success(),
            "{spec}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
    let c = clfilter::image::load(p("c.png")).unwrap();
    for out in ["a.png", "b.png"] {
        assert_eq!(clfilter::image::load(p(out)).unwrap(), c, "{out}");
    }
}

#[test]
fn wb_camera_with_gains_no_wb_takes_names_the_dng_not_a_spec() {
    let dir = tempfile::tempdir().unwrap();
    let p = |n: &str| dir.path().join(n).to_str().unwrap().to_string();
    // AsShotNeutral 1e-9, 1, 1: a red gain of 1e9, past wb's 64.
    let neutral = Val::Rational(vec![(1, 1_000_000_000), (1, 1), (1, 1)]);
    std::fs::write(p("far.dng"), dng(8, 6, &[(50728, neutral)])).unwrap();
    let o = filterctl(&[
        "apply",
        "-f",
        "demosaic,wb=camera",
        &p("far.dng"),
        "-o",
        &p("x.png"),
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("far.dng"), "{err}");
    assert!(
        err.contains("AsShotNeutral gives the gains r=1000000000"),
        "{err}"
    );
    assert!(!err.contains("filter spec"), "{err}");
    assert!(!dir.path().join("x.png").exists());
}

#[test]
fn wb_camera_without_a_recorded_white_balance_is_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    let p = |n: &str| dir.path().join(n).to_str().unwrap().to_string();
    std::fs::write(p("none.dng"), dng(8, 6, &[])).unwrap();
    let o = filterctl(&[
        "apply",
        "-f",
        "demosaic,wb=camera",
        &p("none.dng"),
        "-o",
        &p("x.png"),
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("no as-shot white balance"), "{err}");
    assert!(!dir.path().join("x.png").exists());
    // A PNG has no recorded white balance either.
    let img = clfilter::Image::<u8>::from_vec(4, 3, 3, (0..36).collect()).unwrap();
    clfilter::image::save(&clfilter::DynImage::U8(img), p("rgb.png")).unwrap();
    let o = filterctl(&["apply", "-f", "wb=camera", &p("rgb.png"), "-o", &p("y.png")]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("not a DNG"), "{err}");
    assert!(!dir.path().join("y.png").exists());
    // A DNG cut inside its first directory is not recognised as a DNG, and
    // says that it is cut (exit 1), as it does without `wb=camera`.
    let whole = dng(8, 6, &[]);
    std::fs::write(p("cut.dng"), &whole[..12]).unwrap();
    for spec in ["demosaic,wb=camera", "demosaic"] {
        let o = filterctl(&["apply", "-f", spec, &p("cut.dng"), "-o", &p("z.png")]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{spec}: {err}");
        assert!(err.contains("truncated"), "{spec}: {err}");
        assert!(!dir.path().join("z.png").exists());
    }
}
