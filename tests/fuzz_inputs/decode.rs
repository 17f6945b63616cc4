//! Image files through `load_with`: valid PNG, TIFF, PNM and JPEG files
//! (every sample type and colour layout the loader reads, palettes,
//! progressive JPEG) with bits flipped, bytes changed, inserted or removed,
//! cut short and header sizes edited, PNG CRCs recomputed or not. Each load
//! returns an image or a typed error naming the file, never panics, and
//! never holds more than the decode limit (plus fixed working buffers).

use std::path::Path;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use clfilter::image::{load_with, save, DecodeLimits};
use clfilter::{DynImage, Error};
use proptest::prelude::*;

use crate::common::files::{
    encode, fix_png_crcs, png_chunks, set_jpeg_size, set_png_size, set_pnm_size, set_tiff_size,
    stored_gray_png,
};
use crate::common::{random_image, Rng};
use crate::{config, peak_during, serial};

/// What a load may hold beyond the limit: fixed-size working buffers (file
/// buffering, the PNG stream check's window, decoder tables).
const SLACK: usize = 1 << 20;

/// The longest one load may take in a debug build.
const SLOW: Duration = Duration::from_secs(5);

/// A valid file to mutate.
struct Seed {
    name: String,
    bytes: Vec<u8>,
}

fn saved(img: DynImage, name: &str) -> Seed {
    let d = tempfile::tempdir().unwrap();
    let path = d.path().join(name);
    save(&img, &path).unwrap();
    Seed {
        name: name.to_string(),
        bytes: std::fs::read(&path).unwrap(),
    }
}

fn encoded(img: image::DynamicImage, format: image::ImageFormat, name: &str) -> Seed {
    Seed {
        name: name.to_string(),
        bytes: encode(&img, format),
    }
}

/// A 2-bit palette PNG with a transparent entry (expands to RGBA).
fn palette_png() -> Seed {
    let mut bytes = Vec::new();
    let mut enc = png::Encoder::new(&mut bytes, 21, 13);
    enc.set_color(png::ColorType::Indexed);
    enc.set_depth(png::BitDepth::Two);
    enc.set_palette(vec![0, 0, 0, 255, 0, 0, 0, 255, 0, 9, 9, 200]);
    enc.set_trns(vec![255, 0, 128]);
    let mut w = enc.write_header().unwrap();
    let data: Vec<u8> = (0..6 * 13).map(|i| (i * 37) as u8).collect();
    w.write_image_data(&data).unwrap();
    w.finish().unwrap();
    Seed {
        name: "palette.png".into(),
        bytes,
    }
}

/// Progressive JPEGs, which keep every coefficient until their last scan.
fn progressive_jpeg(sampling: jpeg_encoder::SamplingFactor, name: &str) -> Seed {
    let (w, h) = (40u16, 29u16);
    let data: Vec<u8> = (0..usize::from(w) * usize::from(h) * 3)
        .map(|i| ((i * 7) ^ (i / 120)) as u8)
        .collect();
    let mut bytes = Vec::new();
    let mut enc = jpeg_encoder::Encoder::new(&mut bytes, 80);
    enc.set_progressive(true);
    enc.set_sampling_factor(sampling);
    enc.encode(&data, w, h, jpeg_encoder::ColorType::Rgb)
        .unwrap();
    Seed {
        name: name.into(),
        bytes,
    }
}

fn seeds() -> &'static [Seed] {
    static SEEDS: OnceLock<Vec<Seed>> = OnceLock::new();
    SEEDS.get_or_init(|| {
        let mut rng = Rng::new(41);
        let rgb = image::RgbImage::from_fn(48, 32, |x, y| {
            image::Rgb([(x * 5) as u8, ((y * 7) ^ x) as u8, (x * y) as u8])
        });
        let gray_alpha = image::GrayAlphaImage::from_fn(23, 11, |x, y| {
            image::LumaA([(x * 11) as u8, (y * 23) as u8])
        });
        vec![
            saved(random_image::<u8>(&mut rng, 31, 17, 1).into(), "gray8.png"),
            saved(random_image::<u16>(&mut rng, 19, 9, 3).into(), "rgb16.png"),
            saved(random_image::<u8>(&mut rng, 16, 16, 4).into(), "rgba8.png"),
            encoded(
                image::DynamicImage::ImageLumaA8(gray_alpha),
                image::ImageFormat::Png,
                "ga8.png",
            ),
            palette_png(),
            Seed {
                name: "stored.png".into(),
                bytes: stored_gray_png(24, 10, &[77; 240]),
            },
            saved(random_image::<u8>(&mut rng, 20, 12, 3).into(), "rgb8.tif"),
            saved(random_image::<u16>(&mut rng, 13, 7, 1).into(), "gray16.tif"),
            saved(random_image::<f32>(&mut rng, 17, 5, 1).into(), "grayf.tif"),
            saved(random_image::<f32>(&mut rng, 6, 9, 4).into(), "rgbaf.tif"),
            saved(random_image::<u8>(&mut rng, 25, 14, 1).into(), "gray8.pgm"),
            saved(random_image::<u16>(&mut rng, 11, 8, 3).into(), "rgb16.ppm"),
            saved(random_image::<u8>(&mut rng, 9, 7, 4).into(), "rgba8.pam"),
            Seed {
                name: "ascii.pgm".into(),
                bytes: b"P2\n3 2\n15\n0 1 2\n13 14 15\n".to_vec(),
            },
            encoded(
                image::DynamicImage::ImageRgb8(rgb.clone()),
                image::ImageFormat::Jpeg,
                "rgb.jpg",
            ),
            encoded(
                image::DynamicImage::ImageRgb8(rgb).grayscale(),
                image::ImageFormat::Jpeg,
                "gray.jpg",
            ),
            progressive_jpeg(jpeg_encoder::SamplingFactor::F_1_1, "prog444.jpg"),
            progressive_jpeg(jpeg_encoder::SamplingFactor::F_2_2, "prog420.jpg"),
        ]
    })
}

/// One edit of a file.
#[derive(Debug, Clone)]
enum Mutation {
    Flip(usize, u8),
    Set(usize, u8),
    Cut(usize),
    Insert(usize, Vec<u8>),
    Remove(usize, usize),
    /// The width and height the header declares.
    Size(u32, u32),
}

fn dimension() -> impl Strategy<Value = u32> {
    prop_oneof![
        4 => 0u32..100,
        2 => 100u32..5000,
        1 => 5000u32..70000,
        1 => any::<u32>(),
    ]
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        6 => (any::<usize>(), 0u8..8).prop_map(|(p, b)| Mutation::Flip(p, b)),
        3 => (any::<usize>(), any::<u8>()).prop_map(|(p, v)| Mutation::Set(p, v)),
        2 => any::<usize>().prop_map(Mutation::Cut),
        1 => (any::<usize>(), prop::collection::vec(any::<u8>(), 1..24)).prop_map(|(p, v)| Mutation::Insert(p, v)),
        1 => (any::<usize>(), 1usize..32).prop_map(|(p, n)| Mutation::Remove(p, n)),
        2 => (dimension(), dimension()).prop_map(|(w, h)| Mutation::Size(w, h)),
    ]
}

fn apply(name: &str, bytes: &mut Vec<u8>, m: &Mutation) {
    let at = |p: usize, len: usize| p % (len + 1);
    match m {
        Mutation::Flip(p, b) if !bytes.is_empty() => {
            let i = p % bytes.len();
            bytes[i] ^= 1 << b;
        }
        Mutation::Set(p, v) if !bytes.is_empty() => {
            let i = p % bytes.len();
            bytes[i] = *v;
        }
        Mutation::Cut(p) => bytes.truncate(at(*p, bytes.len())),
        Mutation::Insert(p, v) => {
            let i = at(*p, bytes.len());
            bytes.splice(i..i, v.iter().copied());
        }
        Mutation::Remove(p, n) => {
            let i = at(*p, bytes.len());
            bytes.drain(i..(i + n).min(bytes.len()));
        }
        Mutation::Size(w, h) => resize(name, bytes, *w, *h),
        _ => {}
    }
}

/// Edits the declared size where the header is still intact enough to find.
fn resize(name: &str, bytes: &mut Vec<u8>, w: u32, h: u32) {
    let ihdr = png_chunks(bytes)
        .iter()
        .any(|c| &c.1 == b"IHDR" && c.2 == 13);
    if name.ends_with(".png") && ihdr {
        set_png_size(bytes, w, h);
    } else if name.ends_with(".jpg") && common_jpeg(bytes) {
        set_jpeg_size(bytes, w as u16, h as u16);
    } else if name.ends_with(".tif") {
        set_tiff_size(bytes, w, h);
    } else if (name.ends_with(".pgm") || name.ends_with(".ppm"))
        && name != "ascii.pgm"
        && bytes.len() > 16
        && bytes.iter().take(24).all(|b| b.is_ascii())
    {
        *bytes = set_pnm_size(bytes, w, h);
    }
}

fn common_jpeg(bytes: &[u8]) -> bool {
    crate::common::files::jpeg_size_at(bytes).is_some_and(|at| at + 4 <= bytes.len())
}

/// Loads `bytes` as `name` under `limit` and checks the outcome.
fn check(dir: &Path, name: &str, bytes: &[u8], limit: u64) -> Result<(), TestCaseError> {
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    let limits = DecodeLimits::new(limit);
    let t = Instant::now();
    let (result, peak) = peak_during(|| std::panic::catch_unwind(|| load_with(&path, &limits)));
    let took = t.elapsed();
    let Ok(result) = result else {
        return Err(TestCaseError::fail(format!(
            "{name} ({} bytes) panicked",
            bytes.len()
        )));
    };
    prop_assert!(took < SLOW, "{} took {:?}", name, took);
    prop_assert!(
        peak <= limit as usize + SLACK,
        "{}: held {} bytes under a limit of {}: {:?}",
        name,
        peak,
        limit,
        result.as_ref().map(|i| i.shape())
    );
    match result {
        Ok(img) => {
            let (w, h, c) = img.shape();
            prop_assert!(
                w >= 1 && h >= 1 && matches!(c, 1 | 3 | 4),
                "{}: {:?}",
                name,
                img.shape()
            );
            let bytes = (w * h * c * img.sample_type().size()) as u64;
            prop_assert!(
                bytes <= limit,
                "{}: a {}-byte image under a limit of {}",
                name,
                bytes,
                limit
            );
        }
        Err(Error::Format { path: p, .. } | Error::Io { path: p, .. }) => prop_assert_eq!(p, path),
        Err(Error::DecodeLimit {
            path: p,
            need,
            limit: l,
            ..
        }) => {
            prop_assert_eq!(p, path);
            prop_assert_eq!(l, limit);
            prop_assert!(need.is_none_or(|n| n > limit), "{:?} under {}", need, limit);
        }
        Err(other) => {
            return Err(TestCaseError::fail(format!(
                "{name}: untyped error {other:?}"
            )))
        }
    }
    Ok(())
}

/// Mutated seeds under `limit`.
fn mutated_files_under(limit: u64, cases: u32) {
    let _serial = serial();
    let all = seeds();
    let dir = tempfile::tempdir().unwrap();
    for s in all {
        check(dir.path(), &s.name, &s.bytes, limit).unwrap();
        load_with(dir.path().join(&s.name), &DecodeLimits::new(limit))
            .unwrap_or_else(|e| panic!("the seed {} does not load: {e}", s.name));
    }
    let case = (
        0..all.len(),
        prop::collection::vec(mutation(), 1..4),
        any::<bool>(),
    );
    proptest!(config(cases), |((k, edits, fix_crcs) in case)| {
        let seed = &all[k];
        let mut bytes = seed.bytes.clone();
        for m in &edits {
            apply(&seed.name, &mut bytes, m);
        }
        if fix_crcs && seed.name.ends_with(".png") {
            fix_png_crcs(&mut bytes);
        }
        check(dir.path(), &seed.name, &bytes, limit)?;
    });
}

#[test]
fn mutated_files_load_or_fail_typed_under_a_tiny_limit() {
    mutated_files_under(64 << 10, 4000);
}

#[test]
fn mutated_files_load_or_fail_typed_under_a_small_limit() {
    mutated_files_under(4 << 20, 4000);
}
