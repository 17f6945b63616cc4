//! Loading and saving (`clfilter::image::{load, save}`) round trips and
//! errors, and property tests of the rayon CPU paths against the references
//! on small images. No OpenCL is needed.

mod common;

use std::path::Path;

use clfilter::image::{load, save};
use clfilter::ops::normalize::Coefficients;
use clfilter::ops::{minmax, normalize, transpose};
use clfilter::{DynImage, Error, Image};
use common::{first_difference, random_image, random_image_nan, strided_copy, Rng, TestSample};
use proptest::prelude::*;

fn dir() -> tempfile::TempDir {
    tempfile::tempdir().unwrap()
}

fn packed(d: &DynImage) -> DynImage {
    match d {
        DynImage::U8(i) => DynImage::U8(i.clone().into_packed()),
        DynImage::U16(i) => DynImage::U16(i.clone().into_packed()),
        DynImage::F32(i) => DynImage::F32(i.clone().into_packed()),
    }
}

fn same_dyn(a: &DynImage, b: &DynImage) -> Option<String> {
    match (a, b) {
        (DynImage::U8(a), DynImage::U8(b)) => first_difference(a, b, 0.0),
        (DynImage::U16(a), DynImage::U16(b)) => first_difference(a, b, 0.0),
        (DynImage::F32(a), DynImage::F32(b)) => first_difference(a, b, 0.0),
        _ => Some(format!(
            "sample type {} loaded as {}",
            b.sample_type(),
            a.sample_type()
        )),
    }
}

/// Saves `img` as `name`, loads it back and checks every sample.
fn round_trip(img: DynImage, name: &str) {
    let d = dir();
    let path = d.path().join(name);
    save(&img, &path).unwrap_or_else(|e| panic!("saving {name}: {e}"));
    let back = load(&path).unwrap_or_else(|e| panic!("loading {name}: {e}"));
    assert_eq!(back.shape(), img.shape(), "{name}");
    if let Some(diff) = same_dyn(&back, &packed(&img)) {
        panic!("{name} {:?}: {diff}", img.shape());
    }
}

/// A random image of every sample type, packed and with padded rows.
fn images<T: TestSample>(seed: u64, c: usize) -> Vec<Image<T>>
where
    DynImage: From<Image<T>>,
{
    let mut rng = Rng::new(seed);
    let a = random_image::<T>(&mut rng, 13, 7, c);
    let b = strided_copy(&random_image::<T>(&mut rng, 1, 5, c), 3);
    let c1 = random_image::<T>(&mut rng, 6, 1, c);
    vec![a, b, c1]
}

#[test]
fn png_round_trips_u8_and_u16() {
    for c in [1, 3, 4] {
        for img in images::<u8>(1, c) {
            round_trip(img.into(), "a.png");
        }
        for img in images::<u16>(2, c) {
            round_trip(img.into(), "a.png");
        }
    }
}

#[test]
fn tiff_round_trips_u8_u16_and_f32() {
    for c in [1, 3, 4] {
        for img in images::<u8>(3, c) {
            round_trip(img.into(), "a.tif");
        }
        for img in images::<u16>(4, c) {
            round_trip(img.into(), "a.tiff");
        }
        // f32: negative values, values above 1, exact integers, NaN.
        let mut rng = Rng::new(5);
        let f = random_image_nan::<f32>(&mut rng, 11, 9, c, 10);
        round_trip(f.into(), "f.tif");
        for img in images::<f32>(6, c) {
            round_trip(img.into(), "f.tiff");
        }
    }
}

#[test]
fn pnm_round_trips_u8_and_u16() {
    for (c, ext) in [(1, "pgm"), (3, "ppm")] {
        for img in images::<u8>(7, c) {
            round_trip(img.into(), &format!("a.{ext}"));
        }
        for img in images::<u16>(8, c) {
            round_trip(img.into(), &format!("a.{ext}"));
        }
    }
}

#[test]
fn gray_alpha_png_loads_as_rgba() {
    let d = dir();
    let path = d.path().join("la.png");
    let raw: Vec<u8> = (0..4 * 3 * 2).map(|i| (i * 11) as u8).collect();
    let la = image::GrayAlphaImage::from_raw(4, 3, raw.clone()).unwrap();
    la.save(&path).unwrap();
    let DynImage::U8(img) = load(&path).unwrap() else {
        panic!("8-bit gray+alpha should load as u8");
    };
    assert_eq!((img.width(), img.height(), img.channels()), (4, 3, 4));
    for (i, px) in img.packed_samples().chunks_exact(4).enumerate() {
        let (l, a) = (raw[2 * i], raw[2 * i + 1]);
        assert_eq!(px, [l, l, l, a], "pixel {i}");
    }
}

fn expect_format_error(r: clfilter::Result<()>, needle: &str, ctx: &str) {
    match r {
        Err(e @ Error::Format { .. }) => {
            let msg = e.to_string();
            assert!(
                msg.contains(needle),
                "{ctx}: '{msg}' should mention {needle}"
            );
        }
        other => panic!("{ctx}: expected Error::Format, got {other:?}"),
    }
}

#[test]
fn unsupported_saves_are_errors() {
    let d = dir();
    let p = |n: &str| d.path().join(n);
    let mut rng = Rng::new(9);
    for c in [1, 3, 4] {
        let f: DynImage = random_image::<f32>(&mut rng, 5, 4, c).into();
        for name in ["f.png", "f.pgm", "f.ppm"] {
            let r = save(&f, p(name));
            match r {
                // 4 channels in PNM may be refused for that reason first.
                Err(Error::Format { ref message, .. }) if c == 4 && !name.ends_with("png") => {
                    assert!(
                        message.contains("PNM") || message.contains("TIFF"),
                        "{message}"
                    );
                }
                r => expect_format_error(r, "TIFF", &format!("f32 {c}ch as {name}")),
            }
            assert!(!p(name).exists(), "{name} written despite the error");
        }
    }
    let rgba8: DynImage = random_image::<u8>(&mut rng, 5, 4, 4).into();
    let rgba16: DynImage = random_image::<u16>(&mut rng, 5, 4, 4).into();
    for img in [&rgba8, &rgba16] {
        for name in ["x.ppm", "x.pgm"] {
            expect_format_error(save(img, p(name)), "PNM", &format!("4 channels as {name}"));
            assert!(!p(name).exists());
        }
    }
    let rgb8: DynImage = random_image::<u8>(&mut rng, 5, 4, 3).into();
    for name in ["x.jpg", "x.jpeg"] {
        expect_format_error(save(&rgb8, p(name)), "JPEG", name);
        assert!(!p(name).exists());
    }
    for name in ["x.xyz", "noextension"] {
        expect_format_error(save(&rgb8, p(name)), "extension", name);
    }
    // A folder that does not exist: an I/O error naming the file.
    let missing = p("no/such/folder/x.png");
    match save(&rgb8, &missing) {
        Err(Error::Io { path, .. }) => assert_eq!(path, missing),
        other => panic!("saving into a missing folder: expected Error::Io, got {other:?}"),
    }
}

fn expect_load_error(path: &Path, ctx: &str) {
    match std::panic::catch_unwind(|| load(path)) {
        Ok(Err(Error::Format { path: p, .. } | Error::Io { path: p, .. })) => {
            assert_eq!(p, path, "{ctx}: the error names the file");
        }
        Ok(other) => panic!("{ctx}: expected Error::Format or Error::Io, got {other:?}"),
        Err(_) => panic!("{ctx}: load panicked"),
    }
}

#[test]
fn corrupt_truncated_and_missing_files_are_errors() {
    let d = dir();
    let mut rng = Rng::new(10);
    let garbage: Vec<u8> = (0..3000).map(|_| rng.next_u64() as u8).collect();
    for name in ["x.png", "x.tif", "x.pgm", "x.jpg", "x.bin"] {
        let path = d.path().join(name);
        std::fs::write(&path, &garbage).unwrap();
        expect_load_error(&path, &format!("random bytes as {name}"));
    }
    let empty = d.path().join("empty.png");
    std::fs::write(&empty, b"").unwrap();
    expect_load_error(&empty, "empty file");

    // Valid files cut short, at several lengths.
    let img: DynImage = random_image::<u16>(&mut rng, 40, 30, 3).into();
    let f: DynImage = random_image::<f32>(&mut rng, 40, 30, 1).into();
    for (src, name) in [
        (&img, "full.png"),
        (&img, "full.tif"),
        (&img, "full.ppm"),
        (&f, "fullf.tif"),
    ] {
        let full = d.path().join(name);
        save(src, &full).unwrap();
        let bytes = std::fs::read(&full).unwrap();
        // A PNG cut inside its final IEND chunk still decodes (the pixels
        // are all there), so cut PNGs inside their image data.
        let last = if name.ends_with("png") {
            bytes.len() * 3 / 4
        } else {
            bytes.len() - 1
        };
        for keep in [8, 40, bytes.len() / 2, last] {
            let cut = d.path().join(format!("cut{keep}-{name}"));
            std::fs::write(&cut, &bytes[..keep]).unwrap();
            expect_load_error(&cut, &format!("{name} truncated to {keep} bytes"));
        }
    }

    for name in ["missing.png", "missing.tif"] {
        let path = d.path().join(name);
        match load(&path) {
            Err(Error::Io { path: p, source }) => {
                assert_eq!(p, path);
                assert_eq!(source.kind(), std::io::ErrorKind::NotFound);
            }
            other => panic!("{name}: expected Error::Io, got {other:?}"),
        }
    }
}

// ------------------------------------------------ CPU paths vs references

/// (width, height): mostly any size up to 40, often a single row or column.
fn dims() -> impl Strategy<Value = (usize, usize)> {
    prop_oneof![
        (1usize..=40, 1usize..=40),
        (1usize..=40).prop_map(|w| (w, 1)),
        (1usize..=40).prop_map(|h| (1, h)),
    ]
}

fn channels() -> impl Strategy<Value = usize> {
    prop_oneof![Just(1usize), Just(3), Just(4)]
}

/// The image for a case: packed, or with padded rows when `pad > 0`.
fn case_image<T: TestSample>(w: usize, h: usize, c: usize, seed: u64, pad: usize) -> Image<T> {
    let img = random_image_nan::<T>(&mut Rng::new(seed), w, h, c, 8);
    if pad == 0 {
        img
    } else {
        strided_copy(&img, pad)
    }
}

fn check_cpu_paths<T: TestSample>(
    w: usize,
    h: usize,
    c: usize,
    seed: u64,
    pad: usize,
    sub: f32,
    factor: f32,
) -> Result<(), TestCaseError> {
    let img = case_image::<T>(w, h, c, seed, pad);
    let t = transpose::cpu::transpose(&img).unwrap();
    let want = transpose::reference::transpose(&img).unwrap();
    if let Some(d) = first_difference(&t, &want, 0.0) {
        return Err(TestCaseError::fail(format!("transpose: {d}")));
    }
    let m = minmax::cpu::minmax(&img);
    prop_assert_eq!(m, minmax::reference::minmax(&img));

    let scale = T::TYPE.full_scale();
    let k = Coefficients::explicit(&clfilter::NormalizeParams {
        sub: Some(sub * scale),
        factor: Some(factor / scale),
    })
    .unwrap();
    normalize_both::<T, u8>(&img, &k)?;
    normalize_both::<T, u16>(&img, &k)?;
    normalize_both::<T, f32>(&img, &k)?;
    if let Ok(k) = Coefficients::stretch(&m, T::TYPE, clfilter::SampleType::U8) {
        normalize_both::<T, u8>(&img, &k)?;
    }
    Ok(())
}

fn normalize_both<T: TestSample, U: TestSample>(
    img: &Image<T>,
    k: &Coefficients,
) -> Result<(), TestCaseError> {
    let got = normalize::cpu::normalize::<T, U>(img, k).unwrap();
    let want = normalize::reference::normalize::<T, U>(img, k).unwrap();
    match first_difference(&got, &want, 0.0) {
        Some(d) => Err(TestCaseError::fail(format!(
            "normalize {}->{} {k:?}: {d}",
            T::TYPE,
            U::TYPE
        ))),
        None => Ok(()),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn cpu_paths_match_references_u8(
        (w, h) in dims(), c in channels(), seed in any::<u64>(), pad in 0usize..3,
        sub in -0.5f32..1.5, factor in -300.0f32..300.0,
    ) {
        check_cpu_paths::<u8>(w, h, c, seed, pad, sub, factor)?;
    }

    #[test]
    fn cpu_paths_match_references_u16(
        (w, h) in dims(), c in channels(), seed in any::<u64>(), pad in 0usize..3,
        sub in -0.5f32..1.5, factor in -70000.0f32..70000.0,
    ) {
        check_cpu_paths::<u16>(w, h, c, seed, pad, sub, factor)?;
    }

    #[test]
    fn cpu_paths_match_references_f32(
        (w, h) in dims(), c in channels(), seed in any::<u64>(), pad in 0usize..3,
        sub in -2.0f32..3.0, factor in -300.0f32..300.0,
    ) {
        check_cpu_paths::<f32>(w, h, c, seed, pad, sub, factor)?;
    }
}
