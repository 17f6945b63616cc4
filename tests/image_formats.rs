//! JPEG and WebP round trips, ICC profiles kept on every format that holds
//! one, EXIF orientation applied on input (PNG `eXIf`, JPEG `APP1`), and
//! images read from and written to streams. The files with metadata are
//! built byte by byte here. No OpenCL is needed.

mod common;

use std::path::Path;

use clfilter::image::{
    load, load_with_metadata, read_from, save, save_with, write_to, DecodeLimits, Metadata,
    OutputFormat, SaveOptions,
};
use clfilter::{DynImage, Error, Image};
use common::files::{png_chunk, PNG_SIGNATURE};
use common::{random_image, Rng};
use image::metadata::Orientation;

fn dir() -> tempfile::TempDir {
    tempfile::tempdir().unwrap()
}

/// A smooth RGB or gray image (JPEG's error on it is small and predictable).
fn smooth(w: usize, h: usize, c: usize) -> Image<u8> {
    Image::from_fn(w, h, c, |x, y, k| (x * 5 + y * 3 + k * 40) as u8).unwrap()
}

/// The largest difference between two same-shaped u8 images.
fn max_diff(a: &Image<u8>, b: &Image<u8>) -> u8 {
    assert_eq!(
        (a.width(), a.height(), a.channels()),
        (b.width(), b.height(), b.channels())
    );
    a.rows()
        .flatten()
        .zip(b.rows().flatten())
        .map(|(x, y)| x.abs_diff(*y))
        .max()
        .unwrap()
}

fn u8_of(img: DynImage) -> Image<u8> {
    match img {
        DynImage::U8(i) => i,
        other => panic!("expected u8, got {:?}", other.sample_type()),
    }
}

/// A made-up ICC profile: the bytes go through untouched, whatever they are.
fn profile() -> Vec<u8> {
    let mut p: Vec<u8> = (0..300u32).map(|i| (i * 7 + 3) as u8).collect();
    p[36..40].copy_from_slice(b"acsp");
    p
}

#[test]
fn jpeg_round_trips_within_its_quality() {
    let d = dir();
    for (w, h, c) in [(1, 1, 3), (17, 9, 3), (16, 16, 1), (33, 7, 1)] {
        let src = smooth(w, h, c);
        let path = d.path().join(format!("a{w}x{h}x{c}.jpg"));
        save(&DynImage::U8(src.clone()), &path).unwrap();
        let back = u8_of(load(&path).unwrap());
        let err = max_diff(&src, &back);
        assert!(err <= 12, "{w}x{h}x{c}: max error {err} at quality 90");
    }
    // Lower quality, smaller file.
    let src = DynImage::U8(smooth(64, 48, 3));
    let size = |q: u8| {
        let mut out = Vec::new();
        let o = SaveOptions {
            jpeg_quality: q,
            ..SaveOptions::default()
        };
        write_to(&src, &mut out, OutputFormat::Jpeg, &o).unwrap();
        out.len()
    };
    assert!(size(10) < size(95), "{} vs {}", size(10), size(95));
    // Quality outside 1..=100 is an argument error, and nothing is written.
    for q in [0, 101] {
        let o = SaveOptions {
            jpeg_quality: q,
            ..SaveOptions::default()
        };
        let p = d.path().join("q.jpg");
        assert!(matches!(
            save_with(&src, &p, &o),
            Err(Error::InvalidArgument(_))
        ));
        assert!(!p.exists());
    }
}

#[test]
fn jpeg_refuses_alpha_and_webp_and_jpeg_refuse_16_bit() {
    let d = dir();
    let mut rng = Rng::new(4);
    let rgba: DynImage = random_image::<u8>(&mut rng, 3, 3, 4).into();
    let e = save(&rgba, d.path().join("a.jpg")).unwrap_err().to_string();
    assert!(e.contains("no alpha") && e.contains(".png"), "{e}");
    let rgb16: DynImage = random_image::<u16>(&mut rng, 3, 3, 3).into();
    for name in ["a.jpg", "a.webp"] {
        let e = save(&rgb16, d.path().join(name)).unwrap_err().to_string();
        assert!(e.contains("8-bit"), "{name}: {e}");
    }
}

#[test]
fn webp_is_lossless_for_every_channel_count() {
    let d = dir();
    let mut rng = Rng::new(5);
    for (w, h) in [(1, 1), (1, 7), (5, 1), (13, 11)] {
        for c in [1, 3, 4] {
            let src = random_image::<u8>(&mut rng, w, h, c);
            let path = d.path().join(format!("x{w}x{h}x{c}.WebP"));
            save(&DynImage::U8(src.clone()), &path).unwrap();
            let back = u8_of(load(&path).unwrap());
            // WebP stores gray as RGB: it loads with three equal channels.
            let want = if c == 1 {
                Image::from_fn(w, h, 3, |x, y, _| src.get(x, y, 0)).unwrap()
            } else {
                src
            };
            assert_eq!(back, want, "{w}x{h}x{c}");
        }
    }
}

#[test]
fn lossy_webp_from_elsewhere_loads() {
    // A lossy WebP with alpha (VP8X, ALPH, VP8), which the `image` crate
    // cannot write: the 16x16 Python logo of CPython's test data.
    let webp = include_bytes!("data/lossy_alpha.webp");
    let (img, _) = read_from(&webp[..], "python.webp", &DecodeLimits::default()).unwrap();
    assert_eq!(img.shape(), (16, 16, 4));
    let img = u8_of(img);
    let alphas: Vec<u8> = img.rows().flatten().skip(3).step_by(4).copied().collect();
    assert!(
        alphas.contains(&0) && alphas.contains(&255),
        "transparent corners, opaque logo"
    );
}

/// Every format that holds a profile gives it back; PNM drops it.
#[test]
fn icc_profiles_survive_a_round_trip() {
    let d = dir();
    let icc = profile();
    let options = SaveOptions {
        icc_profile: Some(icc.clone()),
        ..SaveOptions::default()
    };
    let rgb = DynImage::U8(smooth(9, 5, 3));
    let gray16 = DynImage::U16(Image::from_fn(4, 3, 1, |x, y, _| (x * 999 + y) as u16).unwrap());
    let gray_f32 = DynImage::F32(Image::from_fn(4, 3, 1, |x, y, _| (x + y) as f32).unwrap());
    for (img, name) in [
        (&rgb, "a.png"),
        (&rgb, "a.jpg"),
        (&rgb, "a.tif"),
        (&rgb, "a.webp"),
        (&gray16, "g.png"),
        (&gray16, "g.tif"),
        (&gray_f32, "f.tif"),
    ] {
        let path = d.path().join(name);
        save_with(img, &path, &options).unwrap();
        let (back, meta) = load_with_metadata(&path, &DecodeLimits::default()).unwrap();
        assert_eq!(meta.icc_profile.as_ref(), Some(&icc), "{name}");
        assert_eq!(meta.orientation, None, "{name}");
        assert_eq!(back.shape(), img.shape(), "{name}");
    }
    let path = d.path().join("a.ppm");
    save_with(&rgb, &path, &options).unwrap();
    let (_, meta) = load_with_metadata(&path, &DecodeLimits::default()).unwrap();
    assert_eq!(meta, Metadata::default());
}

/// A big-endian EXIF block (TIFF header, one IFD) with only an orientation.
fn exif_orientation(value: u16) -> Vec<u8> {
    let mut e = b"MM\0\x2a\0\0\0\x08".to_vec();
    e.extend_from_slice(&1u16.to_be_bytes()); // one entry
    e.extend_from_slice(&0x0112u16.to_be_bytes()); // Orientation
    e.extend_from_slice(&3u16.to_be_bytes()); // SHORT
    e.extend_from_slice(&1u32.to_be_bytes()); // one value
    e.extend_from_slice(&value.to_be_bytes());
    e.extend_from_slice(&[0, 0]); // the value's padding
    e.extend_from_slice(&0u32.to_be_bytes()); // no next IFD
    e
}

/// `png` with an `eXIf` chunk (and a real CRC) after `IHDR`.
fn with_exif_chunk(png: &[u8], exif: &[u8]) -> Vec<u8> {
    let ihdr_end = PNG_SIGNATURE.len() + 8 + 13 + 4;
    let mut out = png[..ihdr_end].to_vec();
    out.extend(png_chunk(b"eXIf", exif));
    out.extend_from_slice(&png[ihdr_end..]);
    out
}

/// `jpeg` with an `APP1` Exif segment right after `SOI`.
fn with_exif_segment(jpeg: &[u8], exif: &[u8]) -> Vec<u8> {
    let mut seg = vec![0xFF, 0xE1];
    seg.extend_from_slice(&((exif.len() + 8) as u16).to_be_bytes());
    seg.extend_from_slice(b"Exif\0\0");
    seg.extend_from_slice(exif);
    let mut out = jpeg[..2].to_vec();
    out.extend(seg);
    out.extend_from_slice(&jpeg[2..]);
    out
}

#[test]
fn exif_orientation_is_applied_on_input() {
    let src = Image::<u8>::from_fn(5, 3, 3, |x, y, c| (x * 50 + y * 9 + c) as u8).unwrap();
    let mut png = Vec::new();
    write_to(
        &DynImage::U8(src.clone()),
        &mut png,
        OutputFormat::Png,
        &SaveOptions::default(),
    )
    .unwrap();
    for (value, o) in [
        (3, Orientation::Rotate180),
        (6, Orientation::Rotate90),
        (8, Orientation::Rotate270),
        (5, Orientation::Rotate90FlipH),
    ] {
        let file = with_exif_chunk(&png, &exif_orientation(value));
        let (img, meta) = read_from(&file[..], "o.png", &DecodeLimits::default()).unwrap();
        assert_eq!(meta.orientation, Some(o), "EXIF {value}");
        let mut want = image::DynamicImage::try_from(DynImage::U8(src.clone())).unwrap();
        want.apply_orientation(o);
        assert_eq!(img, DynImage::try_from(want).unwrap(), "EXIF {value}");
    }
    // 1 is "as stored": nothing to apply, none reported.
    let file = with_exif_chunk(&png, &exif_orientation(1));
    let (img, meta) = read_from(&file[..], "o.png", &DecodeLimits::default()).unwrap();
    assert_eq!((meta.orientation, img), (None, DynImage::U8(src.clone())));

    // JPEG: the 90-degree turn swaps the sides.
    let mut jpeg = Vec::new();
    write_to(
        &DynImage::U8(smooth(16, 8, 3)),
        &mut jpeg,
        OutputFormat::Jpeg,
        &SaveOptions::default(),
    )
    .unwrap();
    let file = with_exif_segment(&jpeg, &exif_orientation(6));
    let (img, meta) = read_from(&file[..], "o.jpg", &DecodeLimits::default()).unwrap();
    assert_eq!(meta.orientation, Some(Orientation::Rotate90));
    assert_eq!(img.shape(), (8, 16, 3));
}

#[test]
fn streams_round_trip_every_format() {
    let mut rng = Rng::new(8);
    let rgb = DynImage::from(random_image::<u8>(&mut rng, 6, 5, 3));
    let limits = DecodeLimits::default();
    for format in [
        OutputFormat::Png,
        OutputFormat::Tiff,
        OutputFormat::WebP,
        OutputFormat::Ppm,
        OutputFormat::Pnm,
        OutputFormat::Pam,
    ] {
        let mut bytes = Vec::new();
        write_to(&rgb, &mut bytes, format, &SaveOptions::default()).unwrap();
        let (back, _) = read_from(&bytes[..], "<memory>", &limits).unwrap();
        assert_eq!(back, rgb, "{format}");
    }
    // A stream longer than the limit stops at the limit.
    let mut bytes = Vec::new();
    write_to(&rgb, &mut bytes, OutputFormat::Ppm, &SaveOptions::default()).unwrap();
    let small = DecodeLimits::new(10);
    assert!(matches!(
        read_from(&bytes[..], "<stdin>", &small),
        Err(Error::DecodeLimit { .. })
    ));
    // Errors name the stream.
    let e = read_from(&b"not an image"[..], "<stdin>", &limits).unwrap_err();
    assert!(e.to_string().contains("<stdin>"), "{e}");
    // A cut PNG from a stream is truncated, as a cut file is.
    let mut png = Vec::new();
    write_to(&rgb, &mut png, OutputFormat::Png, &SaveOptions::default()).unwrap();
    let e = read_from(&png[..png.len() - 20], "<stdin>", &limits).unwrap_err();
    assert!(matches!(e, Error::Format { .. }), "{e}");
}

#[test]
fn formats_parse_from_names_and_paths() {
    for (name, f) in [
        ("png", OutputFormat::Png),
        ("TIFF", OutputFormat::Tiff),
        (".jpeg", OutputFormat::Jpeg),
        ("webp", OutputFormat::WebP),
        ("pam", OutputFormat::Pam),
    ] {
        assert_eq!(name.parse::<OutputFormat>().unwrap(), f);
        assert_eq!(OutputFormat::from_extension(f.extension()), Some(f));
    }
    assert!(matches!(
        "gif".parse::<OutputFormat>(),
        Err(Error::InvalidArgument(_))
    ));
    assert!(OutputFormat::from_path(Path::new("a.pbm"))
        .unwrap_err()
        .to_string()
        .contains(".pgm"));
}

/// A TIFF with an Orientation tag, through the `tiff` crate: RGB (decoded
/// by `image`) and gray f32 (decoded by `tiff` itself).
#[test]
fn tiff_orientation_is_applied_for_every_sample_type() {
    use tiff::encoder::{colortype, TiffEncoder};
    use tiff::tags::Tag;
    let (w, h) = (5u32, 3u32);
    let rgb: Vec<u8> = (0..w * h * 3).map(|i| (i * 5) as u8).collect();
    let gray: Vec<f32> = (0..w * h).map(|i| i as f32 / 16.0).collect();
    let mut rgb_file = std::io::Cursor::new(Vec::new());
    let mut enc = TiffEncoder::new(&mut rgb_file).unwrap();
    let mut img = enc.new_image::<colortype::RGB8>(w, h).unwrap();
    img.encoder().write_tag(Tag::Orientation, 8u16).unwrap();
    img.write_data(&rgb).unwrap();
    let mut gray_file = std::io::Cursor::new(Vec::new());
    let mut enc = TiffEncoder::new(&mut gray_file).unwrap();
    let mut img = enc.new_image::<colortype::Gray32Float>(w, h).unwrap();
    img.encoder().write_tag(Tag::Orientation, 8u16).unwrap();
    img.write_data(&gray).unwrap();

    let limits = DecodeLimits::default();
    let (got, meta) = read_from(rgb_file.get_ref().as_slice(), "rgb.tif", &limits).unwrap();
    assert_eq!(meta.orientation, Some(Orientation::Rotate270));
    let mut want = image::DynamicImage::ImageRgb8(image::RgbImage::from_raw(w, h, rgb).unwrap());
    want.apply_orientation(Orientation::Rotate270);
    assert_eq!(got, DynImage::try_from(want).unwrap());

    let (got, meta) = read_from(gray_file.get_ref().as_slice(), "gray.tif", &limits).unwrap();
    assert_eq!(meta.orientation, Some(Orientation::Rotate270));
    let src = Image::from_vec(w as usize, h as usize, 1, gray).unwrap();
    // Rotate270: the result's (x, y) is the source's (w - 1 - y, x).
    let want = Image::from_fn(h as usize, w as usize, 1, |x, y, _| {
        src.get(w as usize - 1 - y, x, 0)
    })
    .unwrap();
    assert_eq!(got, DynImage::F32(want));
}

/// An indexed PNG of `w` x `h` pixels at `depth` bits with a palette of
/// `entries` colours (entry i is (i, 2i, 3i)); pixel (x, y) has index
/// `index(x, y)`.
fn indexed_png(
    w: u32,
    h: u32,
    depth: u8,
    entries: usize,
    index: impl Fn(u32, u32) -> u8,
) -> Vec<u8> {
    let mut out = Vec::new();
    let mut enc = png::Encoder::new(&mut out, w, h);
    enc.set_color(png::ColorType::Indexed);
    enc.set_depth(match depth {
        1 => png::BitDepth::One,
        2 => png::BitDepth::Two,
        4 => png::BitDepth::Four,
        _ => png::BitDepth::Eight,
    });
    enc.set_palette(
        (0..entries)
            .flat_map(|i| [i as u8, (2 * i) as u8, (3 * i) as u8])
            .collect::<Vec<u8>>(),
    );
    let line = (w as usize * depth as usize).div_ceil(8);
    let mut data = vec![0u8; line * h as usize];
    for y in 0..h {
        for x in 0..w {
            let bit = x as usize * depth as usize;
            data[y as usize * line + bit / 8] |= index(x, y) << (8 - depth as usize - bit % 8);
        }
    }
    let mut writer = enc.write_header().unwrap();
    writer.write_image_data(&data).unwrap();
    writer.finish().unwrap();
    out
}

/// A palette index past the `PLTE` entries is a format error naming the
/// pixel (the `png` crate would make it black); every index inside a short
/// palette loads as its colour, at every bit depth and odd widths.
#[test]
fn palette_indices_past_the_palette_are_errors() {
    for (depth, w, h) in [(1u8, 1u32, 1u32), (2, 7, 3), (4, 13, 5), (8, 3, 17)] {
        let entries = (1usize << depth) - 1;
        let max = entries as u32;
        let good = indexed_png(w, h, depth, entries, |x, y| ((x + y) % max) as u8);
        let (img, _) = read_from(&good[..], "good.png", &DecodeLimits::default()).unwrap();
        let want = Image::from_fn(w as usize, h as usize, 3, |x, y, k| {
            (((x + y) % entries) * (k + 1)) as u8
        })
        .unwrap();
        assert_eq!(img, DynImage::U8(want), "depth {depth}");
        let (bx, by) = (w - 1, h / 2);
        let bad = indexed_png(w, h, depth, entries, |x, y| match (x, y) == (bx, by) {
            true => entries as u8,
            false => 0,
        });
        let e = read_from(&bad[..], "bad.png", &DecodeLimits::default()).unwrap_err();
        let m = e.to_string();
        assert!(matches!(e, Error::Format { .. }), "depth {depth}: {e:?}");
        assert!(
            m.contains(&format!("pixel ({bx}, {by}) has palette index {entries}")),
            "{m}"
        );
    }
}

/// A PNM file of `w` x `h` x `channels` samples from `value`, with the
/// given maxval: P5/P6 (binary: one byte per sample up to 255, else two,
/// big-endian), P2/P3 (`ascii`) or P7 (`pam`).
fn pnm(
    w: usize,
    h: usize,
    channels: usize,
    maxval: u32,
    kind: &str,
    value: impl Fn(usize) -> u32,
) -> Vec<u8> {
    let n = w * h * channels;
    let mut out = match (kind, channels) {
        ("pam", _) => {
            let tuple = ["GRAYSCALE", "", "RGB", "RGB_ALPHA"][channels - 1];
            format!("P7\nWIDTH {w}\nHEIGHT {h}\nDEPTH {channels}\nMAXVAL {maxval}\nTUPLTYPE {tuple}\nENDHDR\n")
        }
        ("ascii", 1) => format!("P2\n# a comment\n{w} {h}\n{maxval}\n"),
        ("ascii", _) => format!("P3\n{w} {h}\n{maxval}\n"),
        (_, 1) => format!("P5\n{w} {h}\n# a comment\n{maxval}\n"),
        _ => format!("P6 {w} {h} {maxval}\n"),
    }
    .into_bytes();
    for i in 0..n {
        let v = value(i);
        match kind {
            "ascii" => out.extend_from_slice(
                format!("{v}{}", if i % 7 == 6 { "\n" } else { " " }).as_bytes(),
            ),
            _ if maxval > 255 => out.extend_from_slice(&(v as u16).to_be_bytes()),
            _ => out.push(v as u8),
        }
    }
    out
}

/// A PNM sample above the header's maxval is a format error naming the
/// pixel (the `image` decoder would scale it and clip it to white); every
/// sample up to the maxval loads, scaled to the full range, for binary,
/// ASCII and PAM files, 8- and 16-bit, at odd sizes.
#[test]
fn pnm_samples_above_the_maxval_are_errors() {
    let mut rng = Rng::new(0x504e4d);
    for (w, h, channels) in [(1, 1, 1), (1, 9, 3), (13, 1, 1), (7, 5, 3), (3, 4, 4)] {
        for maxval in [1u32, 100, 254, 256, 1000, 65534] {
            for kind in ["binary", "ascii", "pam"] {
                if channels == 4 && kind != "pam" {
                    continue;
                }
                let n = w * h * channels;
                let values: Vec<u32> = (0..n)
                    .map(|_| rng.below(maxval as u64 + 1) as u32)
                    .collect();
                let good = pnm(w, h, channels, maxval, kind, |i| values[i]);
                let what = format!("{w}x{h}x{channels} maxval {maxval} {kind}");
                let (img, _) = read_from(&good[..], "good.pnm", &DecodeLimits::default())
                    .unwrap_or_else(|e| panic!("{what}: {e}"));
                let full = if maxval > 255 { 65535.0 } else { 255.0 };
                let got: Vec<f64> = match img {
                    DynImage::U8(i) => i.rows().flatten().map(|&v| f64::from(v)).collect(),
                    DynImage::U16(i) => i.rows().flatten().map(|&v| f64::from(v)).collect(),
                    other => panic!("{what}: {:?}", other.sample_type()),
                };
                for (i, (&g, &v)) in got.iter().zip(&values).enumerate() {
                    let want = (f64::from(v) * full / f64::from(maxval)).round();
                    assert!(
                        (g - want).abs() <= 1.0,
                        "{what}: sample {i}: {g} against {want}"
                    );
                }
                let at = rng.below(n as u64) as usize;
                let over = maxval + 1 + rng.below(3) as u32;
                let over = if maxval > 255 {
                    over.min(65535)
                } else {
                    over.min(255)
                };
                let bad = pnm(w, h, channels, maxval, kind, |i| {
                    if i == at {
                        over
                    } else {
                        values[i]
                    }
                });
                let e = read_from(&bad[..], "bad.pnm", &DecodeLimits::default()).unwrap_err();
                let m = e.to_string();
                assert!(matches!(e, Error::Format { .. }), "{what}: {e:?}");
                let pixel = at / channels;
                let name = format!(
                    "sample {over} of pixel ({}, {}) is above the header's maxval {maxval}",
                    pixel % w,
                    pixel / w
                );
                assert!(m.contains(&name), "{what}: {m}");
            }
        }
    }
    // The check reads samples as wide as the decoder does, which its tuple
    // type decides: a PAM without TUPLTYPE is read as bytes whatever its
    // maxval, a GRAYSCALE one of depth 0 as 16-bit words.
    let bytes = b"P7\nWIDTH 2\nHEIGHT 1\nDEPTH 1\nMAXVAL 1000\nENDHDR\n\x00\x10";
    assert!(read_from(&bytes[..], "no-tupltype.pam", &DecodeLimits::default()).is_ok());
    let bytes =
        b"P7\nWIDTH 2\nHEIGHT 1\nDEPTH 0\nMAXVAL 100\nTUPLTYPE GRAYSCALE\nENDHDR\n\x01\x01\x00\x05";
    let e = read_from(&bytes[..], "depth0.pam", &DecodeLimits::default()).unwrap_err();
    assert!(e.to_string().contains("sample 257 of pixel (0, 0)"), "{e}");
}

/// A lossless WebP header declaring 16384 pixels a side, one past what the
/// decoder takes, is reported as an unreadable size (the decoder gives
/// 0x0), not as an empty image.
#[test]
fn a_webp_size_the_decoder_does_not_take_is_named() {
    let payload = [&[0x2f, 0xff, 0xff, 0xff, 0x0f][..], &[0u8; 100]].concat();
    let chunk = [
        b"VP8L".as_slice(),
        &(payload.len() as u32).to_le_bytes(),
        &payload,
    ]
    .concat();
    let len = (4 + chunk.len()) as u32;
    let riff = [b"RIFF".as_slice(), &len.to_le_bytes(), b"WEBP", &chunk].concat();
    let d = dir();
    let path = d.path().join("big.webp");
    std::fs::write(&path, riff).unwrap();
    let err = clfilter::image::load(&path).unwrap_err().to_string();
    assert!(
        err.contains("the decoder read an image size of 0x0"),
        "{err}"
    );
    assert!(!err.contains("is empty"), "{err}");
}

/// Halves the first value of a little-endian TIFF's StripByteCounts (tag
/// 279, SHORT or LONG, inline or at its offset); false if not found.
fn halve_first_strip(tiff: &mut [u8]) -> bool {
    let u32_at = |t: &[u8], at: usize| u32::from_le_bytes(t[at..at + 4].try_into().unwrap());
    let ifd = u32_at(tiff, 4) as usize;
    let n = usize::from(u16::from_le_bytes([tiff[ifd], tiff[ifd + 1]]));
    for k in 0..n {
        let e = ifd + 2 + 12 * k;
        if u16::from_le_bytes([tiff[e], tiff[e + 1]]) != 279 {
            continue;
        }
        let kind = u16::from_le_bytes([tiff[e + 2], tiff[e + 3]]);
        let count = u32_at(tiff, e + 4);
        let size = if kind == 3 { 2 } else { 4 };
        let at = if count as usize * size <= 4 {
            e + 8
        } else {
            u32_at(tiff, e + 8) as usize
        };
        if kind == 3 {
            let v = u16::from_le_bytes([tiff[at], tiff[at + 1]]) / 2;
            tiff[at..at + 2].copy_from_slice(&v.to_le_bytes());
        } else {
            let v = u32_at(tiff, at) / 2;
            tiff[at..at + 4].copy_from_slice(&v.to_le_bytes());
        }
        return true;
    }
    false
}

/// A TIFF whose first strip's byte count is halved (its LZW data then ends
/// before its pixels do, inside a whole file) is reported as corrupt strip
/// data, not as a file cut short; a file cut short still is.
#[test]
fn a_short_strip_inside_a_whole_tiff_is_not_called_truncated() {
    use tiff::encoder::{colortype, Compression, TiffEncoder};
    let (w, h) = (64u32, 48u32);
    let mut rng = Rng::new(5);
    let px: Vec<u16> = (0..w * h * 3).map(|_| rng.next_u64() as u16).collect();
    let mut file = std::io::Cursor::new(Vec::new());
    TiffEncoder::new(&mut file)
        .unwrap()
        .with_compression(Compression::Lzw)
        .write_image::<colortype::RGB16>(w, h, &px)
        .unwrap();
    let whole = file.into_inner();
    let limits = DecodeLimits::default();
    let mut short = whole.clone();
    assert!(halve_first_strip(&mut short));
    let err = read_from(&short[..], "short.tif", &limits)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("a strip's data is corrupt or shorter than its pixels need"),
        "{err}"
    );
    let cut = &whole[..whole.len() / 2];
    let err = read_from(cut, "cut.tif", &limits).unwrap_err().to_string();
    assert!(err.contains("truncated"), "{err}");
    assert!(!err.contains("a strip's data"), "{err}");
}
