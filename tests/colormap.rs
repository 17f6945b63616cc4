//! `colormap`: every OpenCL variant (forced), the default dispatch and the
//! CPU path x u8/u16/f32 input x u8/u16/f32 output x RGB/RGBA x odd sizes
//! against the f64 reference on random data, with explicit and automatic
//! ranges; constant images, NaN and infinite pixels, one-sided ranges,
//! strided input, and the typed errors.
//!
//! Without an OpenCL device only the CPU paths run and "skipped: no OpenCL
//! device" is printed (`FILTERCTL_REQUIRE_OPENCL=1` turns that into a failure).

use clfilter::prelude::*;
mod common;

use clfilter::ops::colormap::{reference, variants::TOLERANCE, ColorMap, ColormapParams, SPEC};
use clfilter::ops::{minmax, CPU};
use clfilter::{Engine, Error, Image, Result, RunReport, Sample};
use common::{opencl_engine, random_image_nan, strided_copy, Rng, TestSample};

/// 1x1, thin rows and columns, primes, and sizes that are not multiples of
/// the 256-item work-groups (257 = one group and one item).
const SIZES: &[(usize, usize)] = &[
    (1, 1),
    (1, 7),
    (7, 1),
    (2, 3),
    (5, 3),
    (13, 11),
    (31, 17),
    (257, 3),
    (3, 257),
    (1, 257),
    (257, 1),
    (33, 33),
];

/// One way of running the operation.
struct Path {
    label: String,
    engine: Engine,
    /// The variant the report must name; `None`: any of the op's.
    expect: Option<&'static str>,
}

fn paths(cl: Option<&Engine>) -> Vec<Path> {
    let mut v = vec![Path {
        label: "Engine::cpu()".into(),
        engine: Engine::cpu(),
        expect: Some(CPU),
    }];
    if let Some(cl) = cl {
        v.push(Path {
            label: "opencl default".into(),
            engine: cl.clone(),
            expect: None,
        });
        v.push(Path {
            label: "opencl forced cpu".into(),
            engine: cl.with_variant(Some(SPEC.name), CPU),
            expect: Some(CPU),
        });
        for spec in SPEC.variants {
            v.push(Path {
                label: format!("opencl forced {}", spec.name),
                engine: cl.with_variant(Some(SPEC.name), spec.name),
                expect: Some(spec.name),
            });
        }
    }
    v
}

impl Path {
    /// Runs `colormap_report` and checks the report; returns the image and
    /// the tolerance of the variant that ran.
    fn run<T: Sample, U: Sample>(
        &self,
        img: &Image<T>,
        p: &ColormapParams,
        ctx: &str,
    ) -> (Image<U>, f32) {
        let (out, r): (Image<U>, RunReport) = self
            .engine
            .colormap_report(img, p)
            .unwrap_or_else(|e| panic!("{ctx}: {}: {e}", self.label));
        assert_eq!(r.op, SPEC.name, "{ctx}: {}", self.label);
        match self.expect {
            Some(v) => assert_eq!(r.variant, v, "{ctx}: {}", self.label),
            None => assert!(SPEC.names().contains(&r.variant.as_str())),
        }
        assert!(
            r.fallbacks.is_empty(),
            "{ctx}: {}: fallbacks {:?}",
            self.label,
            r.fallbacks
        );
        let tol = SPEC.variant(&r.variant).map_or(TOLERANCE, |s| s.tolerance);
        (out, tol)
    }
}

/// `|got - want| <= tol` of full scale, plus one step for integer outputs
/// (a colour within float error of a rounding tie may round either way).
/// Returns the largest difference of f32 outputs, in units of full scale
/// (0 for integer outputs).
fn compare<U: Sample>(got: &Image<U>, want: &Image<U>, tol: f32, ctx: &str) -> f64 {
    assert_eq!(
        (got.width(), got.height(), got.channels()),
        (want.width(), want.height(), want.channels()),
        "{ctx}: shape"
    );
    let full = U::TYPE.full_scale() as f64;
    let lsb = if U::TYPE == clfilter::SampleType::F32 {
        0.0
    } else {
        1.0
    };
    let mut worst = 0f64;
    for y in 0..want.height() {
        for (i, (g, w)) in got.row(y).iter().zip(want.row(y)).enumerate() {
            let (g, w) = (g.to_f32() as f64, w.to_f32() as f64);
            let d = (g - w).abs();
            assert!(
                d <= tol as f64 * full + lsb,
                "{ctx}: pixel ({}, {y}) channel {}: got {g}, expected {w} (tolerance {tol})",
                i / want.channels(),
                i % want.channels()
            );
            if lsb == 0.0 {
                worst = worst.max(d / full);
            }
        }
    }
    worst
}

/// The resolved range the engine should use, from the reference minmax.
fn range<T: Sample>(img: &Image<T>, p: &ColormapParams) -> Result<(f32, f32)> {
    p.range(Some(&minmax::reference::minmax(img)))
}

/// An explicit range inside the data, so both ends clamp: 20%..80% of an
/// integer type's range, -0.5..2 for f32 (whose random data spans -2..3
/// and -300..300).
fn explicit<T: Sample>() -> (f32, f32) {
    match T::TYPE {
        clfilter::SampleType::F32 => (-0.5, 2.0),
        t => (0.2 * t.full_scale(), 0.8 * t.full_scale()),
    }
}

#[test]
fn every_variant_matches_reference() {
    let cl = opencl_engine();
    let paths = paths(cl.as_ref());
    let mut worst = 0f64;
    for (n, &(w, h)) in SIZES.iter().enumerate() {
        worst = worst.max(input::<u8>(&paths, n, w, h));
        worst = worst.max(input::<u16>(&paths, n, w, h));
        worst = worst.max(input::<f32>(&paths, n, w, h));
    }
    eprintln!("colormap: worst f32-output difference from the reference {worst:.2e} of full scale");
    assert!(worst <= TOLERANCE as f64);
}

fn input<T: TestSample>(paths: &[Path], n: usize, w: usize, h: usize) -> f64 {
    let mut rng = Rng::from_parts(&[11, T::TYPE.size() as u64, w as u64, h as u64]);
    let img = random_image_nan::<T>(&mut rng, w, h, 1, 16);
    let worst = case::<T, u8>(paths, n, &img);
    let worst = worst.max(case::<T, u16>(paths, n, &img));
    worst.max(case::<T, f32>(paths, n, &img))
}

fn case<T: TestSample, U: Sample>(paths: &[Path], n: usize, img: &Image<T>) -> f64 {
    let (w, h) = (img.width(), img.height());
    let strided = strided_copy(img, 5);
    let (lo, hi) = explicit::<T>();
    let mut worst = 0f64;
    for channels in [3, 4] {
        for (k, (label, min, max)) in [("auto", None, None), ("explicit", Some(lo), Some(hi))]
            .into_iter()
            .enumerate()
        {
            // Each map in turn, so every map meets every type over the sizes.
            let map = ColorMap::ALL[(n + k + channels) % 3];
            let p = ColormapParams {
                map,
                min,
                max,
                channels,
            };
            let r = range(img, &p).expect("range");
            let want: Image<U> = reference::colormap(img, &p, r).expect("reference");
            for path in paths {
                for (layout, input) in [("packed", img), ("strided", &strided)] {
                    let ctx = format!(
                        "{} -> {}x{channels} {w}x{h} {map} {label} {layout}",
                        T::TYPE,
                        U::TYPE
                    );
                    let (got, tol) = path.run::<T, U>(input, &p, &ctx);
                    worst = worst.max(compare(&got, &want, tol, &format!("{ctx}: {}", path.label)));
                }
            }
        }
    }
    worst
}

/// The colour every pixel of `out` must have: entry 0 (low) or 255 (high)
/// of the table at `U`'s full scale, alpha full scale.
fn end_colour<U: Sample>(map: ColorMap, high: bool, channels: usize) -> Vec<U> {
    let e = map.table()[if high { 255 } else { 0 }];
    (0..channels)
        .map(|c| U::from_f32(e[c] * U::TYPE.full_scale()))
        .collect()
}

fn assert_all<U: Sample + PartialEq>(out: &Image<U>, want: &[U], ctx: &str) {
    for y in 0..out.height() {
        for (x, px) in out.row(y).chunks_exact(out.channels()).enumerate() {
            assert_eq!(px, want, "{ctx}: pixel ({x}, {y})");
        }
    }
}

/// A constant image with the automatic range maps to the low end on every
/// path (no division by zero), whatever its value, for every map.
#[test]
fn constant_image_auto_range_maps_to_low_end() {
    let cl = opencl_engine();
    for path in paths(cl.as_ref()) {
        for map in ColorMap::ALL {
            for channels in [3, 4] {
                let p = ColormapParams {
                    map,
                    channels,
                    ..Default::default()
                };
                for (w, h) in [(1, 1), (257, 3)] {
                    let img = Image::<u16>::from_vec(w, h, 1, vec![1234; w * h]).unwrap();
                    let ctx = format!("{map} u16 {w}x{h} constant");
                    let (out, _) = path.run::<u16, u8>(&img, &p, &ctx);
                    assert_all(&out, &end_colour::<u8>(map, false, channels), &ctx);
                    let img = Image::<f32>::from_vec(w, h, 1, vec![-7.5; w * h]).unwrap();
                    let (out, _) = path.run::<f32, f32>(&img, &p, &ctx);
                    assert_all(&out, &end_colour::<f32>(map, false, channels), &ctx);
                }
            }
        }
    }
}

/// NaN pixels map to the low end with explicit and automatic ranges (and
/// do not disturb the automatic range); an image of NaN alone maps to the
/// low end; infinities clamp to the ends.
#[test]
fn nan_and_infinite_pixels() {
    let cl = opencl_engine();
    let (w, h) = (37, 9);
    let mut rng = Rng::new(21);
    let mut img = common::random_image::<f32>(&mut rng, w, h, 1);
    for (x, y) in [(0, 0), (36, 8), (5, 4), (20, 2)] {
        img.row_mut(y)[x] = f32::NAN;
    }
    let low = end_colour::<u8>(ColorMap::Turbo, false, 4);
    for path in paths(cl.as_ref()) {
        for (label, min, max) in [("auto", None, None), ("explicit", Some(-1.0), Some(1.0))] {
            let p = ColormapParams {
                min,
                max,
                channels: 4,
                ..Default::default()
            };
            let ctx = format!("NaN pixels, {label} range");
            let (out, tol) = path.run::<f32, u8>(&img, &p, &ctx);
            let want = reference::colormap::<f32, u8>(&img, &p, range(&img, &p).unwrap()).unwrap();
            compare(&out, &want, tol, &format!("{ctx}: {}", path.label));
            for (x, y) in [(0, 0), (36, 8), (5, 4), (20, 2)] {
                assert_eq!(&out.row(y)[x * 4..x * 4 + 4], &low[..], "{ctx}: ({x}, {y})");
            }
        }
        let nan = Image::<f32>::from_vec(5, 3, 1, vec![f32::NAN; 15]).unwrap();
        for (min, max) in [(None, None), (Some(3.0), None), (None, Some(3.0))] {
            let p = ColormapParams {
                min,
                max,
                ..Default::default()
            };
            let ctx = format!("all NaN, min {min:?} max {max:?}");
            let (out, _) = path.run::<f32, u16>(&nan, &p, &ctx);
            assert_all(&out, &end_colour::<u16>(ColorMap::Turbo, false, 3), &ctx);
        }
        let inf = Image::<f32>::from_vec(2, 1, 1, vec![f32::NEG_INFINITY, f32::INFINITY]).unwrap();
        let p = ColormapParams {
            map: ColorMap::Gray,
            min: Some(0.0),
            max: Some(1.0),
            channels: 3,
        };
        let (out, _) = path.run::<f32, u8>(&inf, &p, "infinities, explicit range");
        assert_eq!(out.row(0), &[0, 0, 0, 255, 255, 255], "{}", path.label);
        // The automatic range of an image holding an infinity is not finite.
        match path
            .engine
            .colormap::<f32, u8>(&inf, &ColormapParams::default())
        {
            Err(Error::InvalidInput(_)) => {}
            other => panic!("{}: expected InvalidInput, got {other:?}", path.label),
        }
    }
}

/// One explicit end beyond every pixel: an empty range, a step at `max`.
#[test]
fn one_sided_ranges_beyond_the_data() {
    let cl = opencl_engine();
    let img = Image::<u8>::from_fn(17, 5, 1, |x, y, _| (100 + x + y) as u8).unwrap();
    let (lo_px, hi_px) = (
        end_colour::<u8>(ColorMap::Rainbow, false, 3),
        end_colour::<u8>(ColorMap::Rainbow, true, 3),
    );
    for path in paths(cl.as_ref()) {
        let p = |min, max| ColormapParams {
            map: ColorMap::Rainbow,
            min,
            max,
            channels: 3,
        };
        // Every pixel below min: the low end.
        let (out, _) = path.run::<u8, u8>(&img, &p(Some(200.0), None), "min above data");
        assert_all(&out, &lo_px, &format!("min above data: {}", path.label));
        // Every pixel above max: the high end.
        let (out, _) = path.run::<u8, u8>(&img, &p(None, Some(50.0)), "max below data");
        assert_all(&out, &hi_px, &format!("max below data: {}", path.label));
        // A one-sided range inside the data matches the reference.
        let q = p(Some(110.0), None);
        let (out, tol) = path.run::<u8, u8>(&img, &q, "min inside data");
        let want = reference::colormap::<u8, u8>(&img, &q, range(&img, &q).unwrap()).unwrap();
        compare(
            &out,
            &want,
            tol,
            &format!("min inside data: {}", path.label),
        );
    }
}

/// Equal, reversed and non-finite explicit ranges, bad channel counts and
/// multi-channel inputs are `Error::InvalidArgument` on every path.
#[test]
fn bad_parameters_are_typed_errors() {
    let cl = opencl_engine();
    let img = Image::<u8>::from_fn(5, 3, 1, |x, y, _| (x * 40 + y) as u8).unwrap();
    let rgb = Image::<u8>::from_fn(5, 3, 3, |x, _, c| (x + c) as u8).unwrap();
    for path in paths(cl.as_ref()) {
        for (min, max, channels) in [
            (Some(10.0), Some(10.0), 3),
            (Some(20.0), Some(10.0), 4),
            (Some(f32::NAN), Some(10.0), 3),
            (None, Some(f32::INFINITY), 3),
            (Some(0.0), Some(1e31), 3),
            (Some(0.0), Some(1.0), 2),
            (None, None, 1),
        ] {
            let p = ColormapParams {
                map: ColorMap::Gray,
                min,
                max,
                channels,
            };
            match path.engine.colormap::<u8, u8>(&img, &p) {
                Err(Error::InvalidArgument(_)) => {}
                other => panic!(
                    "{}: {p:?}: expected InvalidArgument, got {other:?}",
                    path.label
                ),
            }
        }
        match path
            .engine
            .colormap::<u8, u8>(&rgb, &ColormapParams::default())
        {
            Err(Error::InvalidArgument(msg)) => assert!(msg.contains("1-channel"), "{msg}"),
            other => panic!("{}: 3-channel input: got {other:?}", path.label),
        }
    }
}

#[test]
fn map_names_parse_and_unknown_names_list_the_known_ones() {
    for (name, map) in [
        ("turbo", ColorMap::Turbo),
        ("rainbow", ColorMap::Rainbow),
        ("GRAY", ColorMap::Gray),
    ] {
        assert_eq!(name.parse::<ColorMap>().unwrap(), map);
    }
    assert_eq!(ColorMap::Rainbow.to_string(), "rainbow");
    match "viridis".parse::<ColorMap>() {
        Err(e @ Error::InvalidArgument(_)) => {
            let msg = e.to_string();
            for known in ["turbo", "rainbow", "gray", "viridis"] {
                assert!(msg.contains(known), "{msg}");
            }
        }
        other => panic!("expected InvalidArgument, got {other:?}"),
    }
}

/// Gray over the type's full range is the identity for u8 -> u8 (the table
/// is linear, so interpolation reproduces every level exactly).
#[test]
fn gray_is_linear() {
    let cl = opencl_engine();
    let img = Image::<u8>::from_fn(256, 1, 1, |x, _, _| x as u8).unwrap();
    let p = ColormapParams {
        map: ColorMap::Gray,
        min: Some(0.0),
        max: Some(255.0),
        channels: 3,
    };
    for path in paths(cl.as_ref()) {
        let (out, _) = path.run::<u8, u8>(&img, &p, "gray ramp");
        for x in 0..256 {
            assert_eq!(
                &out.row(0)[3 * x..3 * x + 3],
                &[x as u8; 3],
                "{}",
                path.label
            );
        }
    }
}
