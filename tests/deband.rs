//! `deband`: every variant and the CPU path byte-identical to the reference
//! (the hard requirement of its counter-based RNG), seeds, the banding and
//! detail evidence of docs/QUALITY.md, pipelines, and errors.

use clfilter::ops::deband::{reference, DebandParams, Space};
use clfilter::pipeline::{self, Pipeline};
use clfilter::prelude::*;
use clfilter::{DynImage, Engine, Error, Image};

mod common;
use common::{Rng, TestSample};

/// Single pixels and lines, primes, and sizes that are no multiple of the
/// 16x16 work-group.
const SIZES: &[(usize, usize)] = &[(1, 1), (1, 9), (9, 1), (13, 11), (37, 17), (66, 35)];

/// A test image: random in some tiles, gentle steps one level apart in the
/// others, so that both branches of the threshold run.
fn mixed<T: TestSample>(rng: &mut Rng, w: usize, h: usize, c: usize) -> Image<T> {
    let noise = common::random_image::<T>(rng, w, h, c);
    let level = T::TYPE.full_scale() / 255.0;
    Image::from_fn(w, h, c, |x, y, ch| {
        if (x / 8 + y / 8) % 3 == 0 {
            noise.get(x, y, ch)
        } else {
            T::from_f32((((x + y) / 3 + 50 * ch) % 256) as f32 * level)
        }
    })
    .unwrap()
}

/// A checked pipeline from spec text.
fn parse(spec: &str) -> clfilter::Result<Pipeline> {
    pipeline::parse(spec).map(Pipeline::new)
}

fn params(space: Space, samples: u32, range: u32, seed: u32) -> DebandParams {
    DebandParams {
        range,
        threshold: 3.0,
        grain: 2.0,
        seed,
        space,
        samples,
    }
}

/// Every parameter combination the variants distinguish, on `T`.
fn every_path_is_byte_identical<T: TestSample>(cl: Option<&Engine>) {
    let cpu = Engine::cpu();
    let mut ran = std::collections::BTreeMap::<&str, usize>::new();
    for channels in [1, 3, 4] {
        for space in [Space::Rgb, Space::Ycc] {
            if space == Space::Ycc && channels == 1 {
                continue;
            }
            for samples in [2, 4] {
                for (i, &(w, h)) in SIZES.iter().enumerate() {
                    let mut rng = Rng::from_parts(&[w as u64, h as u64, channels as u64]);
                    let img = mixed::<T>(&mut rng, w, h, channels);
                    let p = params(space, samples, 1 + 4 * i as u32, 7);
                    let ctx = format!("{} {w}x{h}x{channels} {p:?}", T::TYPE);
                    let want = reference::deband(&img, &p).unwrap();
                    let got = cpu.deband(&img, &p).unwrap();
                    common::assert_images(&got, &want, 0.0, &format!("{ctx} cpu"));
                    let Some(cl) = cl else { continue };
                    for v in clfilter::ops::deband::SPEC.variants {
                        match cl.with_variant(Some("deband"), v.name).deband(&img, &p) {
                            Ok(got) => {
                                common::assert_images(
                                    &got,
                                    &want,
                                    0.0,
                                    &format!("{ctx} {}", v.name),
                                );
                                *ran.entry(v.name).or_default() += 1;
                            }
                            Err(Error::Unsupported { .. }) => {}
                            Err(e) => panic!("{ctx} {}: {e}", v.name),
                        }
                    }
                }
            }
        }
    }
    if cl.is_some() {
        for v in clfilter::ops::deband::SPEC.variants {
            let n = ran.get(v.name).copied().unwrap_or(0);
            let rgba8_on_u16 = v.name == "rgba8" && T::TYPE == clfilter::SampleType::U16;
            assert!(
                n > 0 || rgba8_on_u16,
                "{} ran no case on {}",
                v.name,
                T::TYPE
            );
        }
    }
}

#[test]
fn every_variant_and_the_cpu_path_are_byte_identical_to_the_reference() {
    let cl = common::opencl_engine();
    every_path_is_byte_identical::<u8>(cl.as_ref());
    every_path_is_byte_identical::<u16>(cl.as_ref());
}

/// A strided input (row padding holding the extremes) gives the packed result.
#[test]
fn strided_input_is_read_as_packed() {
    let mut rng = Rng::new(3);
    let img = mixed::<u16>(&mut rng, 23, 19, 4);
    let strided = common::strided_copy(&img, 5);
    let p = params(Space::Ycc, 4, 6, 1);
    let want = reference::deband(&img, &p).unwrap();
    common::assert_images(
        &Engine::cpu().deband(&strided, &p).unwrap(),
        &want,
        0.0,
        "cpu",
    );
    if let Some(cl) = common::opencl_engine() {
        common::assert_images(&cl.deband(&strided, &p).unwrap(), &want, 0.0, "opencl");
    }
}

#[test]
fn equal_seeds_repeat_and_other_seeds_change_the_grain() {
    let e = Engine::cpu();
    let img = Image::<u8>::from_fn(64, 48, 3, |_, _, _| 128).unwrap();
    let run = |seed| e.deband(&img, &params(Space::Rgb, 4, 8, seed)).unwrap();
    let (a, b, c) = (run(1), run(1), run(2));
    assert_eq!(a.as_packed(), b.as_packed());
    let differ = a
        .as_packed()
        .unwrap()
        .iter()
        .zip(c.as_packed().unwrap())
        .filter(|(x, y)| x != y)
        .count();
    // Grain of ±2 levels takes 16 values: almost every sample changes.
    assert!(differ > a.as_packed().unwrap().len() * 3 / 4, "{differ}");
    // The planes draw independent grain.
    let px = a.row(10);
    assert!((0..64).any(|x| px[3 * x] != px[3 * x + 1]));
}

/// The banding evidence of docs/QUALITY.md: 64-pixel bands one level apart.
#[test]
fn a_banded_ramp_becomes_smooth() {
    let (w, h) = (64 * 10, 256);
    let img = Image::<u8>::from_fn(w, h, 1, |x, _, _| (100 + x / 64) as u8).unwrap();
    let p = DebandParams {
        range: 15,
        threshold: 4.0,
        grain: 1.0,
        ..DebandParams::default()
    };
    let out = Engine::cpu().deband(&img, &p).unwrap();
    let mean =
        |im: &Image<u8>, x: usize| (0..h).map(|y| f64::from(im.row(y)[x])).sum::<f64>() / h as f64;
    let jump = |im: &Image<u8>| {
        (1..w)
            .map(|x| (mean(im, x) - mean(im, x - 1)).abs())
            .fold(0.0, f64::max)
    };
    assert_eq!(jump(&img), 1.0);
    let j = jump(&out);
    eprintln!("largest column-mean jump after deband: {j:.3} level");
    assert!(j <= 0.4, "largest column-mean jump {j}");
}

/// A photo-like image: smooth gradients, soft blobs and fine texture.
fn photo_like(w: usize, h: usize) -> Image<u8> {
    let mut rng = Rng::new(11);
    let texture = common::random_image::<u8>(&mut rng, w, h, 3);
    Image::from_fn(w, h, 3, |x, y, c| {
        let (fx, fy) = (x as f32 / w as f32, y as f32 / h as f32);
        let blob = (-((fx - 0.4).powi(2) + (fy - 0.6).powi(2)) * 12.0).exp();
        let base = 40.0 + 120.0 * fx + 60.0 * blob * (c as f32 + 1.0) / 3.0 + 20.0 * fy;
        let edge = if (x / 37 + y / 29) % 5 == 0 {
            30.0
        } else {
            0.0
        };
        let fine = (f32::from(texture.get(x, y, c)) - 127.5) / 16.0;
        (base + edge + fine).round().clamp(0.0, 255.0) as u8
    })
    .unwrap()
}

fn psnr(a: &Image<u8>, b: &Image<u8>) -> f64 {
    let (mut se, mut n) = (0.0f64, 0usize);
    for y in 0..a.height() {
        for (p, q) in a.row(y).iter().zip(b.row(y)) {
            se += (f64::from(*p) - f64::from(*q)).powi(2);
            n += 1;
        }
    }
    10.0 * (255.0f64.powi(2) / (se / n as f64)).log10()
}

/// The detail evidence: the parameters keep PSNR >= 42 dB, on the
/// committed photo and on a generated one, in both spaces.
#[test]
fn photos_keep_their_detail() {
    let png = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/data/coffee.png");
    let DynImage::U8(photo) = clfilter::image::load(png).unwrap() else {
        panic!("coffee.png is 8-bit");
    };
    for img in [photo, photo_like(320, 200)] {
        for space in [Space::Rgb, Space::Ycc] {
            let p = DebandParams {
                range: 15,
                threshold: 4.0,
                grain: 1.0,
                space,
                ..DebandParams::default()
            };
            let out = Engine::cpu().deband(&img, &p).unwrap();
            let db = psnr(&img, &out);
            assert!(db >= 42.0, "{space}: PSNR {db:.2} dB");
        }
    }
}

/// `deband` in `apply`-style pipelines: the device chain (store, variant,
/// load) gives the host path's bytes, also after another stage.
#[test]
fn pipelines_match_the_host_path() {
    let mut rng = Rng::new(5);
    let img = DynImage::U8(mixed::<u8>(&mut rng, 45, 31, 3));
    let specs = [
        "deband=range=9:threshold=4:grain=1:seed=3",
        "deband=range=9:threshold=4:grain=1:seed=3:space=ycc:samples=2",
        "transpose,deband=range=5:seed=9,transpose",
    ];
    let cpu = Engine::cpu();
    let cl = common::opencl_engine();
    for spec in specs {
        let pipe = parse(spec).unwrap();
        let (want, _) = pipe.run(&cpu, img.clone()).unwrap();
        if let Some(cl) = &cl {
            let (got, _) = pipe.run(cl, img.clone()).unwrap();
            match (&got, &want) {
                (DynImage::U8(g), DynImage::U8(w)) => common::assert_images(g, w, 0.0, spec),
                _ => panic!("{spec}: not u8"),
            }
        }
    }
}

#[test]
fn bad_parameters_are_typed_errors() {
    let e = Engine::cpu();
    let rgb = Image::<u8>::new(8, 8, 3).unwrap();
    let gray = Image::<u8>::new(8, 8, 1).unwrap();
    let ok = DebandParams::default();
    let bad = [
        DebandParams { range: 0, ..ok },
        DebandParams { range: 256, ..ok },
        DebandParams {
            threshold: -1.0,
            ..ok
        },
        DebandParams {
            threshold: f32::NAN,
            ..ok
        },
        DebandParams {
            grain: f32::INFINITY,
            ..ok
        },
        DebandParams { grain: 300.0, ..ok },
        DebandParams { samples: 3, ..ok },
        DebandParams { samples: 0, ..ok },
    ];
    for p in bad {
        assert!(
            matches!(e.deband(&rgb, &p), Err(Error::InvalidArgument(_))),
            "{p:?}"
        );
    }
    let ycc = DebandParams {
        space: Space::Ycc,
        ..ok
    };
    assert!(matches!(
        e.deband(&gray, &ycc),
        Err(Error::InvalidArgument(_))
    ));
    let f = Image::<f32>::new(4, 4, 3).unwrap();
    assert!(matches!(e.deband(&f, &ok), Err(Error::InvalidArgument(_))));
    // The same through an OpenCL engine: refused before any variant runs.
    if let Some(cl) = common::opencl_engine() {
        assert!(matches!(
            cl.deband(&gray, &ycc),
            Err(Error::InvalidArgument(_))
        ));
        let forced = cl.with_variant(Some("deband"), "ycc_soa");
        assert!(matches!(
            forced.deband(&rgb, &ok),
            Err(Error::Unsupported { .. })
        ));
    }
    for spec in [
        "deband=range=0",
        "deband=range=100000",
        "deband=threshold=-1",
        "deband=threshold=nan",
        "deband=grain=inf",
        "deband=samples=3",
        "deband=space=yuv",
        "deband=seed=-1",
        "deband=bogus=1",
    ] {
        assert!(matches!(parse(spec), Err(Error::Spec(_))), "{spec}");
    }
    // space=ycc on gray and f32 input fail when the pipeline meets them.
    let pipe = parse("deband=space=ycc").unwrap();
    assert!(pipe.run(&e, DynImage::U8(gray)).is_err());
    let pipe = parse("deband").unwrap();
    assert!(matches!(
        pipe.run(&e, DynImage::F32(f)),
        Err(Error::InvalidArgument(_))
    ));
}

/// The spec form writes back to an equal stage.
#[test]
fn spec_round_trips() {
    let p = parse("deband=range=7:threshold=2.5:grain=0:seed=42:space=ycc:samples=2").unwrap();
    let again = parse(&p.to_string()).unwrap();
    assert_eq!(p.to_string(), again.to_string());
    assert!(p.to_string().contains("threshold=2.5"), "{p}");
}

/// Samples of the reference stay put where nothing is banded and no grain
/// is asked for: a noise image with threshold 0 comes back unchanged.
#[test]
fn threshold_and_grain_zero_is_the_identity() {
    let mut rng = Rng::new(9);
    for space in [Space::Rgb, Space::Ycc] {
        let img = common::random_image::<u8>(&mut rng, 17, 13, 3);
        let p = DebandParams {
            threshold: 0.0,
            grain: 0.0,
            space,
            ..DebandParams::default()
        };
        let out = Engine::cpu().deband(&img, &p).unwrap();
        common::assert_images(&out, &img, 0.0, &format!("{space}"));
    }
}
