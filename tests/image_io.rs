//! Loading and saving (`clfilter::image::{load, save}`) round trips and
//! errors, and property tests of the rayon CPU paths against the references
//! on small images. No OpenCL is needed.

mod common;

use std::path::Path;

use clfilter::image::{load, load_with, save, DecodeLimits};
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
    let rgb16: DynImage = random_image::<u16>(&mut rng, 5, 4, 3).into();
    for name in ["x.jpg", "x.jpeg", "x.webp"] {
        expect_format_error(save(&rgb16, p(name)), "8-bit", name);
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
        // A PNG cut inside its final IEND chunk, all its pixels there, is
        // truncated too.
        for keep in [8, 40, bytes.len() / 2, bytes.len() - 1] {
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

// ------------------------------------------------ integrity and limits

/// Writes `bytes` as `name` in `d` and loads it with `limits`.
fn load_bytes(
    d: &tempfile::TempDir,
    name: &str,
    bytes: &[u8],
    limits: DecodeLimits,
) -> clfilter::Result<DynImage> {
    let path = d.path().join(name);
    std::fs::write(&path, bytes).unwrap();
    load_with(&path, &limits)
}

/// The message of an `Error::Format` about `name`, else a panic.
fn format_error(r: clfilter::Result<DynImage>, name: &str) -> String {
    match r {
        Err(Error::Format { path, message }) => {
            assert!(path.ends_with(name), "{name}: the error names {path:?}");
            message
        }
        other => panic!(
            "{name}: expected Error::Format, got {:?}",
            other.map(|i| i.shape())
        ),
    }
}

#[test]
fn png_with_corrupt_image_data_but_valid_crcs_is_an_error() {
    use common::files::{fix_png_crcs, png_chunk_data, stored_gray_png};
    let d = dir();
    let pixels: Vec<u8> = (0..64 * 16).map(|i| (i * 7) as u8).collect();
    let good = stored_gray_png(64, 16, &pixels);
    let img = load_bytes(&d, "good.png", &good, DecodeLimits::default()).unwrap();
    assert_eq!(
        img,
        DynImage::U8(Image::from_vec(64, 16, 1, pixels.clone()).unwrap())
    );

    // One pixel byte changed inside the stored zlib stream, every chunk CRC
    // recomputed: the data still inflates and unfilters, to a wrong image;
    // only the stream's Adler-32 tells (the png crate skips it by default).
    let idat = png_chunk_data(&good, b"IDAT");
    let mut bad = good.clone();
    bad[idat.start + 2 + 5 + 300] ^= 0x10;
    fix_png_crcs(&mut bad);
    let m = format_error(
        load_bytes(&d, "flip.png", &bad, DecodeLimits::default()),
        "flip.png",
    );
    assert!(m.contains("corrupt PNG") && m.contains("Checksum"), "{m}");

    // Compressed data flipped in a deflate-compressed file, CRCs valid.
    let mut rng = Rng::new(17);
    let src: DynImage = random_image::<u8>(&mut rng, 48, 32, 3).into();
    let path = d.path().join("deflate.png");
    save(&src, &path).unwrap();
    let good = std::fs::read(&path).unwrap();
    let idat = png_chunk_data(&good, b"IDAT");
    for at in [
        idat.start + 2,
        idat.start + idat.len() / 2,
        idat.end - 5,
        idat.end - 1,
    ] {
        let mut bad = good.clone();
        bad[at] ^= 0x21;
        fix_png_crcs(&mut bad);
        let name = format!("deflate-{at}.png");
        format_error(load_bytes(&d, &name, &bad, DecodeLimits::default()), &name);
    }
}

#[test]
fn png_cut_short_padded_or_followed_by_bytes_is_an_error() {
    use common::files::{png_chunk_data, set_png_size, stored_gray_png};
    let d = dir();
    let pixels = vec![9u8; 32 * 8];
    let good = stored_gray_png(32, 8, &pixels);
    // The header promises more rows than the data holds.
    let mut tall = good.clone();
    set_png_size(&mut tall, 32, 9);
    let m = format_error(
        load_bytes(&d, "tall.png", &tall, DecodeLimits::default()),
        "tall.png",
    );
    assert!(m.contains("not have enough data"), "{m}");
    // Cut inside IDAT, before IEND, inside IEND.
    let idat = png_chunk_data(&good, b"IDAT");
    for keep in [
        idat.start + 40,
        idat.end + 4,
        good.len() - 12,
        good.len() - 2,
    ] {
        let m = format_error(
            load_bytes(&d, "cut.png", &good[..keep], DecodeLimits::default()),
            "cut.png",
        );
        assert!(m.contains("truncated"), "{keep}: {m}");
    }
    // Bytes after IEND: the rest of a longer file written over.
    let mut long = good.clone();
    long.extend_from_slice(&good[8..40]);
    let m = format_error(
        load_bytes(&d, "long.png", &long, DecodeLimits::default()),
        "long.png",
    );
    assert!(m.contains("32 bytes follow the IEND chunk"), "{m}");
}

#[test]
fn jpeg_cut_short_is_an_error_and_bytes_after_its_end_are_not() {
    use common::files::encode;
    let d = dir();
    let src = image::DynamicImage::ImageRgb8(image::RgbImage::from_fn(96, 64, |x, y| {
        image::Rgb([(x * 3) as u8, ((y * 5) ^ x) as u8, (x * y) as u8])
    }));
    let jpeg = encode(&src, image::ImageFormat::Jpeg);
    let img = load_bytes(&d, "a.jpg", &jpeg, DecodeLimits::default()).unwrap();
    assert_eq!(img.shape(), (96, 64, 3));
    // The `image` crate's lenient JPEG decoding returned these, the
    // missing part gray.
    for pct in [30, 60, 90, 98] {
        let keep = jpeg.len() * pct / 100;
        let m = format_error(
            load_bytes(&d, "cut.jpg", &jpeg[..keep], DecodeLimits::default()),
            "cut.jpg",
        );
        assert!(m.contains("truncated"), "{pct}%: {m}");
    }
    // Multi-picture JPEGs keep a second image after the first's EOI.
    let mut two = jpeg.clone();
    two.extend_from_slice(&jpeg);
    assert_eq!(
        load_bytes(&d, "two.jpg", &two, DecodeLimits::default()).unwrap(),
        img
    );
}

#[test]
fn a_decompression_bomb_hits_the_limit_at_once() {
    use common::files::{set_png_size, stored_gray_png};
    let d = dir();
    // 30000 x 30000 8-bit gray: 900 MB declared by a 200-byte file.
    let mut bomb = stored_gray_png(8, 8, &[0; 64]);
    set_png_size(&mut bomb, 30000, 30000);
    let path = d.path().join("bomb.png");
    std::fs::write(&path, &bomb).unwrap();
    let t = std::time::Instant::now();
    let e = load_with(&path, &DecodeLimits::default()).unwrap_err();
    assert!(t.elapsed().as_secs_f64() < 1.0, "{:?}", t.elapsed());
    match &e {
        Error::DecodeLimit {
            path: p,
            need,
            limit,
            what,
        } => {
            assert_eq!(p, &path);
            assert_eq!(*limit, DecodeLimits::DEFAULT_MAX_BYTES);
            assert!(need.is_some_and(|n| n >= 900_000_000), "{need:?}");
            assert!(what.contains("30000x30000"), "{what}");
        }
        other => panic!("expected Error::DecodeLimit, got {other:?}"),
    }
    let m = e.to_string();
    assert!(
        m.contains("FILTERCTL_DECODE_LIMIT=") && m.contains("DecodeLimits"),
        "{m}"
    );
    // Past the engine's 2^31 samples no limit helps: a format error.
    for side in [60000, i32::MAX as u32] {
        set_png_size(&mut bomb, side, side);
        let m = format_error(
            load_bytes(&d, "huge.png", &bomb, DecodeLimits::unlimited()),
            "huge.png",
        );
        assert!(m.contains("2^31"), "{side}: {m}");
    }
}

#[test]
fn the_limit_can_be_raised_through_the_api() {
    let d = dir();
    let mut rng = Rng::new(23);
    // 64 x 64 x 3 x 2 bytes = 24 KiB of pixels, in every format.
    let img: DynImage = random_image::<u16>(&mut rng, 64, 64, 3).into();
    let f: DynImage = random_image::<f32>(&mut rng, 64, 64, 1).into();
    let small = DecodeLimits::new(8 << 10);
    for (src, name) in [
        (&img, "a.png"),
        (&img, "a.tif"),
        (&img, "a.ppm"),
        (&f, "f.tif"),
    ] {
        let path = d.path().join(name);
        save(src, &path).unwrap();
        match load_with(&path, &small) {
            Err(Error::DecodeLimit {
                limit,
                need: Some(n),
                ..
            }) => {
                assert_eq!(limit, 8 << 10, "{name}");
                assert!(n > limit, "{name}: {n}");
            }
            other => panic!(
                "{name}: expected Error::DecodeLimit, got {:?}",
                other.map(|i| i.shape())
            ),
        }
        for limits in [DecodeLimits::new(1 << 20), DecodeLimits::unlimited()] {
            let back = load_with(&path, &limits).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert!(same_dyn(&back, &packed(src)).is_none(), "{name}");
        }
    }
}

#[test]
fn the_limit_can_be_raised_through_the_environment() {
    let d = dir();
    let img: DynImage = random_image::<u8>(&mut Rng::new(29), 64, 64, 3).into();
    let input = d.path().join("in.png");
    save(&img, &input).unwrap();
    let run = |limit: &str| {
        std::process::Command::new(env!("CARGO_BIN_EXE_filterctl"))
            .env("FILTERCTL_CACHE_DIR", "disabled")
            .env("FILTERCTL_DECODE_LIMIT", limit)
            .args(["--device", "cpu", "apply", "-f", "transpose"])
            .arg(&input)
            .arg("-o")
            .arg(d.path().join("out.png"))
            .output()
            .unwrap()
    };
    let out = run("4K");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("decode limit of 4 KiB") && stderr.contains("FILTERCTL_DECODE_LIMIT=14K"),
        "{stderr}"
    );
    for ok in ["14K", "1M", "none", ""] {
        let out = run(ok);
        assert!(
            out.status.success(),
            "{ok}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    // filterctl reads the variable as --decode-limit's default: a bad
    // value is a usage error.
    let out = run("lots");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("--decode-limit") && stderr.contains("'lots' is not a decode limit"),
        "{stderr}"
    );
}

#[test]
fn a_folder_is_an_error_naming_it() {
    let d = dir();
    match load(d.path()) {
        Err(e @ Error::Io { .. }) => {
            let m = e.to_string();
            assert!(m.starts_with(&d.path().display().to_string()), "{m}");
            assert!(m.contains("is a folder"), "{m}");
            let Error::Io { source, .. } = e else {
                unreachable!()
            };
            assert_eq!(source.kind(), std::io::ErrorKind::IsADirectory);
        }
        other => panic!("expected Error::Io, got {:?}", other.map(|i| i.shape())),
    }
}

#[test]
fn empty_and_unsupported_files_say_what_they_are() {
    let d = dir();
    let m = format_error(
        load_bytes(&d, "e.png", b"", DecodeLimits::default()),
        "e.png",
    );
    assert!(m.contains("empty"), "{m}");
    let gif = b"GIF89a\x01\x00\x01\x00\x00\x00\x00;";
    let m = format_error(
        load_bytes(&d, "a.gif", gif, DecodeLimits::default()),
        "a.gif",
    );
    assert!(m.contains("Gif files are not supported"), "{m}");
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

/// Interlaced (Adam7) and plain PNGs of many sizes load to their pixels:
/// the check that the image data is exactly as long as the header says
/// counts the seven passes right, empty ones included. A header edited to
/// another size is an error.
#[test]
fn interlaced_pngs_load_and_their_data_length_is_checked() {
    let d = dir();
    let mut rng = Rng::new(77);
    for (w, h) in [(1, 1), (1, 9), (9, 1), (3, 2), (8, 8), (9, 7), (17, 33)] {
        for (color, c) in [(0u8, 1usize), (2, 3), (6, 4)] {
            let px: Vec<u8> = (0..w * h * c).map(|_| rng.below(256) as u8).collect();
            for interlaced in [false, true] {
                let path = d.path().join(format!("i{w}x{h}c{c}{interlaced}.png"));
                let png = common::files::stored_png(w as u32, h as u32, color, c, interlaced, &px);
                std::fs::write(&path, &png).unwrap();
                let img = load(&path).unwrap();
                assert_eq!(
                    img,
                    DynImage::U8(Image::from_vec(w, h, c, px.clone()).unwrap()),
                    "{path:?}"
                );
                let mut edited = png.clone();
                common::files::set_png_size(
                    &mut edited,
                    w as u32,
                    (h as u32).saturating_sub(1).max(1) + u32::from(h == 1),
                );
                std::fs::write(&path, &edited).unwrap();
                assert!(load(&path).is_err(), "{path:?} with another height loaded");
            }
        }
    }
}
