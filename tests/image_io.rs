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
    for (c, ext) in [
        (1, "pgm"),
        (3, "ppm"),
        (1, "pnm"),
        (3, "pnm"),
        (1, "pam"),
        (3, "pam"),
        (4, "pam"),
        (1, "PGM"),
        (3, "Ppm"),
    ] {
        for img in images::<u8>(7, c) {
            round_trip(img.into(), &format!("a.{ext}"));
        }
        for img in images::<u16>(8, c) {
            round_trip(img.into(), &format!("a.{ext}"));
        }
    }
}

/// The header and pixel bytes of a binary P5/P6 file:
/// (magic, width, height, maxval, body).
fn parse_p5_p6(bytes: &[u8]) -> (String, usize, usize, u32, &[u8]) {
    // "P6\nW H MAXVAL\n" then the samples: exactly 4 whitespace-separated
    // tokens, the last followed by one whitespace byte.
    let mut tokens = Vec::new();
    let mut i = 0;
    while tokens.len() < 4 {
        while bytes[i].is_ascii_whitespace() {
            i += 1;
        }
        let start = i;
        while !bytes[i].is_ascii_whitespace() {
            i += 1;
        }
        tokens.push(std::str::from_utf8(&bytes[start..i]).unwrap().to_string());
    }
    let body = &bytes[i + 1..];
    (
        tokens[0].clone(),
        tokens[1].parse().unwrap(),
        tokens[2].parse().unwrap(),
        tokens[3].parse().unwrap(),
        body,
    )
}

#[test]
fn pnm_outputs_have_the_right_magic_and_maxval() {
    let d = dir();
    let mut rng = Rng::new(11);
    for (c, ext, magic) in [
        (1, "pgm", "P5"),
        (3, "ppm", "P6"),
        (1, "pnm", "P5"),
        (3, "pnm", "P6"),
    ] {
        let u8img = random_image::<u8>(&mut rng, 5, 3, c);
        let path = d.path().join(format!("a8.{ext}"));
        save(&u8img.clone().into(), &path).unwrap();
        let bytes = std::fs::read(&path).unwrap();
        let (m, w, h, maxval, body) = parse_p5_p6(&bytes);
        assert_eq!((m.as_str(), w, h, maxval), (magic, 5, 3, 255), "u8 {ext}");
        assert_eq!(body, &u8img.packed_samples()[..], "u8 {ext}: the samples");

        // 16-bit: maxval 65535, two bytes per sample, most significant first.
        let mut u16img = random_image::<u16>(&mut rng, 5, 3, c);
        u16img.row_mut(0)[0] = 0x0102;
        let path = d.path().join(format!("a16.{ext}"));
        save(&u16img.clone().into(), &path).unwrap();
        let bytes = std::fs::read(&path).unwrap();
        let (m, w, h, maxval, body) = parse_p5_p6(&bytes);
        assert_eq!(
            (m.as_str(), w, h, maxval),
            (magic, 5, 3, 65535),
            "u16 {ext}"
        );
        let want: Vec<u8> = u16img
            .packed_samples()
            .iter()
            .flat_map(|v| v.to_be_bytes())
            .collect();
        assert_eq!(&body[..2], [1, 2], "u16 {ext}: big-endian");
        assert_eq!(body, &want[..], "u16 {ext}: the samples");
        let back = load(&path).unwrap();
        assert!(matches!(back, DynImage::U16(_)), "u16 {ext} loads as u16");
    }
    for c in [1, 3, 4] {
        for (bits, img) in [
            (255, DynImage::from(random_image::<u8>(&mut rng, 4, 2, c))),
            (
                65535,
                DynImage::from(random_image::<u16>(&mut rng, 4, 2, c)),
            ),
        ] {
            let path = d.path().join(format!("a{c}-{bits}.pam"));
            save(&img, &path).unwrap();
            let bytes = std::fs::read(&path).unwrap();
            let text = String::from_utf8_lossy(&bytes[..bytes.len().min(80)]).into_owned();
            assert!(
                text.starts_with("P7\n"),
                "{c} channels, maxval {bits}: {text:?}"
            );
            assert!(text.contains(&format!("DEPTH {c}\n")), "{text:?}");
            assert!(text.contains(&format!("MAXVAL {bits}\n")), "{text:?}");
        }
    }
}

#[test]
fn pnm_channel_mismatches_name_a_format_that_fits() {
    let d = dir();
    let p = |n: &str| d.path().join(n);
    let mut rng = Rng::new(12);
    let gray: DynImage = random_image::<u8>(&mut rng, 5, 4, 1).into();
    let rgb: DynImage = random_image::<u16>(&mut rng, 5, 4, 3).into();
    let rgba8: DynImage = random_image::<u8>(&mut rng, 5, 4, 4).into();
    let rgba16: DynImage = random_image::<u16>(&mut rng, 5, 4, 4).into();
    let cases: [(&DynImage, &str, &str, &str); 7] = [
        (&rgb, "x.pgm", "PGM", ".ppm"),
        (&gray, "x.ppm", "PPM", ".pgm"),
        (&rgba8, "x.pgm", "PGM", ".pam"),
        (&rgba16, "x.ppm", "PPM", ".pam"),
        (&rgba8, "x.pnm", "PNM", ".pam"),
        (&rgba16, "x.PNM", "PNM", ".pam"),
        (&gray, "x.PPM", "PPM", ".pgm"),
    ];
    for (img, name, format, fits) in cases {
        let ctx = format!("{} channels as {name}", img.shape().2);
        let msg = format_message(save(img, p(name)), &ctx);
        assert!(msg.contains(format), "{ctx}: '{msg}' should name {format}");
        assert!(msg.contains(fits), "{ctx}: '{msg}' should suggest {fits}");
        assert!(!p(name).exists(), "{name} written despite the error");
    }
    // PBM (1-bit) is not written, whatever the image.
    for img in [&gray, &rgb] {
        let msg = format_message(save(img, p("x.pbm")), "x.pbm");
        assert!(msg.contains("PBM") && msg.contains(".pgm"), "{msg}");
        assert!(!p("x.pbm").exists());
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

/// The message of the `Error::Format` that `r` should be.
fn format_message(r: clfilter::Result<()>, ctx: &str) -> String {
    match r {
        Err(e @ Error::Format { .. }) => e.to_string(),
        other => panic!("{ctx}: expected Error::Format, got {other:?}"),
    }
}

fn expect_format_error(r: clfilter::Result<()>, needle: &str, ctx: &str) {
    let msg = format_message(r, ctx);
    assert!(
        msg.contains(needle),
        "{ctx}: '{msg}' should mention {needle}"
    );
}

#[test]
fn unsupported_saves_are_errors() {
    let d = dir();
    let p = |n: &str| d.path().join(n);
    let mut rng = Rng::new(9);
    for c in [1, 3, 4] {
        let f: DynImage = random_image::<f32>(&mut rng, 5, 4, c).into();
        // The sample type is checked before the channel count, so even a
        // 4-channel f32 image to .ppm is told about TIFF (which holds both).
        for name in ["f.png", "f.pgm", "f.ppm", "f.pnm", "f.pam"] {
            expect_format_error(save(&f, p(name)), "TIFF", &format!("f32 {c}ch as {name}"));
            assert!(!p(name).exists(), "{name} written despite the error");
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
