//! `median`: every variant and the CPU path against a reference written
//! here (gather, sort by `total_cmp`, take the middle), bit for bit, on odd
//! sizes, every sample type, 1/3/4 channels and radii 1..3; NaN and ±0 in
//! f32; the alpha channel copied; the stage in device chains; typed errors.

use clfilter::ops::median::{MedianExt, MedianParams};
use clfilter::pipeline;
use clfilter::{DynImage, Engine, Error, Image, Sample};

mod common;
use common::{random_image, Rng, TestSample};

/// The median as the docs define it, independently of the library.
fn expected<T: Sample>(img: &Image<T>, r: usize) -> Image<T> {
    let (w, h, c) = (img.width(), img.height(), img.channels());
    Image::from_fn(w, h, c, |x, y, ch| {
        if c == 4 && ch == 3 {
            return img.get(x, y, 3);
        }
        let mut v: Vec<T> = Vec::new();
        for yy in y as isize - r as isize..=(y + r) as isize {
            for xx in x as isize - r as isize..=(x + r) as isize {
                let (cx, cy) = (xx.clamp(0, w as isize - 1), yy.clamp(0, h as isize - 1));
                v.push(img.get(cx as usize, cy as usize, ch));
            }
        }
        v.sort_by(|a, b| a.to_f32().total_cmp(&b.to_f32()));
        v[v.len() / 2]
    })
    .unwrap()
}

/// Bit-for-bit equality (f32 compared by bits: NaN payloads and signs, ±0).
fn assert_bits<T: Sample>(got: &Image<T>, want: &Image<T>, what: &str) {
    assert_eq!(
        (got.width(), got.height(), got.channels()),
        (want.width(), want.height(), want.channels()),
        "{what}: shape"
    );
    for y in 0..want.height() {
        for (i, (a, b)) in got.row(y).iter().zip(want.row(y)).enumerate() {
            assert!(
                a.to_f32().to_bits() == b.to_f32().to_bits(),
                "{what}: pixel ({}, {y}) channel {}: got {a:?}, expected {b:?}",
                i / want.channels(),
                i % want.channels()
            );
        }
    }
}

const SIZES: &[(usize, usize)] = &[
    (1, 1),
    (1, 12),
    (12, 1),
    (5, 3),
    (17, 19),
    (33, 7),
    (131, 5),
];

/// Engines to check: the CPU, and with OpenCL each variant forced.
fn engines() -> Vec<(String, Engine)> {
    let mut out = vec![("cpu".to_string(), Engine::cpu())];
    match common::opencl_engine() {
        Some(e) => {
            for v in clfilter::ops::median::SPEC.variants {
                out.push((v.name.to_string(), e.with_variant(Some("median"), v.name)));
            }
        }
        None => common::skip_no_opencl("median variants"),
    }
    out
}

fn check_type<T: TestSample>(engines: &[(String, Engine)], channels: &[usize]) {
    for &c in channels {
        for r in 1..=3u32 {
            let p = MedianParams::new(r).unwrap();
            for &(w, h) in SIZES {
                let mut rng = Rng::from_parts(&[w as u64, h as u64, c as u64, r as u64]);
                let img: Image<T> = random_image(&mut rng, w, h, c);
                let want = expected(&img, r as usize);
                for (name, e) in engines {
                    let got = e.median(&img, &p).unwrap();
                    let what = format!("{name} {:?} {w}x{h}x{c} r={r}", T::TYPE);
                    assert_bits(&got, &want, &what);
                }
            }
        }
    }
}

#[test]
fn every_path_is_exact_on_odd_sizes() {
    let engines = engines();
    check_type::<u8>(&engines, &[1, 3, 4]);
    check_type::<u16>(&engines, &[1, 3]);
    check_type::<f32>(&engines, &[1, 4]);
}

/// f32 with NaNs of both signs, ±0 and ±inf: the total order decides, and
/// the selected sample keeps its bits.
#[test]
fn nan_and_signed_zero_follow_the_total_order() {
    let specials = [
        f32::NAN,
        -f32::NAN,
        f32::from_bits(0x7fc0_1234),
        0.0,
        -0.0,
        f32::INFINITY,
        f32::NEG_INFINITY,
        1.0,
    ];
    let engines = engines();
    for (w, h, c) in [(9, 7, 1), (6, 5, 4), (23, 3, 3)] {
        let mut rng = Rng::from_parts(&[w as u64, h as u64, c as u64, 99]);
        let data = (0..w * h * c)
            .map(|_| specials[rng.below(specials.len() as u64) as usize])
            .collect();
        let img = Image::<f32>::from_vec(w, h, c, data).unwrap();
        for r in 1..=3u32 {
            let want = expected(&img, r as usize);
            for (name, e) in &engines {
                let got = e.median(&img, &MedianParams::new(r).unwrap()).unwrap();
                assert_bits(&got, &want, &format!("{name} specials {w}x{h}x{c} r={r}"));
            }
        }
    }
    // A window of -0 and +0 (five +0): the median is +0; four: -0.
    let img = Image::<f32>::from_vec(
        9,
        1,
        1,
        vec![-0.0, 0.0, -0.0, 0.0, -0.0, 0.0, 0.0, -0.0, 0.0],
    )
    .unwrap();
    let one = Engine::cpu()
        .median(&img, &MedianParams::new(1).unwrap())
        .unwrap();
    assert_eq!(one.get(4, 0, 0).to_bits(), 0.0f32.to_bits());
}

/// Hot pixels go, alpha stays: a 4-channel image with one bright pixel.
#[test]
fn hot_pixels_go_and_alpha_is_copied() {
    let mut img = Image::<u8>::from_fn(8, 8, 4, |_, _, c| if c == 3 { 200 } else { 10 }).unwrap();
    for c in 0..4 {
        img.row_mut(3)[4 * 4 + c] = 255;
    }
    for (name, e) in engines() {
        let out = e.median(&img, &MedianParams::new(1).unwrap()).unwrap();
        assert_eq!(&out.row(3)[16..20], &[10, 10, 10, 255], "{name}");
    }
}

#[test]
fn bad_radii_are_typed_errors() {
    let e = Engine::cpu();
    let img = Image::<u8>::new(4, 4, 1).unwrap();
    for r in [0, 4, 100] {
        assert!(matches!(
            MedianParams::new(r),
            Err(Error::InvalidArgument(_))
        ));
        let p = MedianParams { radius: r };
        assert!(
            matches!(e.median(&img, &p), Err(Error::InvalidArgument(_))),
            "{r}"
        );
    }
    for spec in [
        "median=radius=0",
        "median=radius=4",
        "median=radius=nan",
        "median=radius=1.5",
    ] {
        let err = pipeline::parse(spec).unwrap_err();
        assert!(matches!(err, Error::Spec(_)), "{spec}: {err}");
    }
    let ops = pipeline::parse("median").unwrap();
    assert_eq!(pipeline::to_spec(&ops), "median=radius=1");
}

/// The stage in a device-resident chain (after a scale that the median
/// must see applied) equals the host path.
#[test]
fn chained_stage_matches_the_host() {
    let Some(e) = common::opencl_engine() else {
        common::skip_no_opencl("median in a device chain");
        return;
    };
    let mut rng = Rng::new(7);
    for spec in [
        "median=radius=2",
        "normalize=factor=0.5:out=u8,median=radius=3",
        "median,convert=f32",
    ] {
        let ops = pipeline::parse(spec).unwrap();
        for img in [
            DynImage::from(random_image::<u8>(&mut rng, 29, 13, 3)),
            DynImage::from(random_image::<f32>(&mut rng, 13, 29, 1)),
        ] {
            let (dev, _, _) = pipeline::run(&e, &ops, img.clone()).unwrap();
            let (host, _, _) = pipeline::run(&Engine::cpu(), &ops, img).unwrap();
            match (&dev, &host) {
                (DynImage::U8(a), DynImage::U8(b)) => assert_bits(a, b, spec),
                (DynImage::F32(a), DynImage::F32(b)) => assert_bits(a, b, spec),
                _ => panic!("{spec}: types differ"),
            }
        }
    }
}
