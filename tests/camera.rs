//! The camera colour stages (`black`, `wb`, `ccm`, `gamma`): every
//! OpenCL variant (forced), the default dispatch and the CPU path x
//! u8/u16/f32 x 1/3/4 channels x odd sizes against independent f64
//! references written here, on random data; device-resident chains
//! against the host path; and the typed errors of bad parameters.
//!
//! Without an OpenCL device only the CPU paths run and "skipped: no OpenCL
//! device" is printed (`FILTERCTL_REQUIRE_OPENCL=1` turns that into a failure).

use clfilter::prelude::*;
mod common;

use clfilter::ops::black::BlackParams;
use clfilter::ops::ccm::CcmParams;
use clfilter::ops::gamma::GammaParams;
use clfilter::ops::wb::WbParams;
use clfilter::ops::{OpSpec, CPU};
use clfilter::pipeline::{self, run_outcomes, run_stages};
use clfilter::{DynImage, Engine, Error, Image, Sample, SampleType};
use common::{opencl_engine, random_image, Rng, TestSample};

/// 1x1, a row, a column, primes, and sizes past one 256-item work-group.
const SIZES: &[(usize, usize)] = &[
    (1, 1),
    (1, 13),
    (13, 1),
    (5, 3),
    (17, 11),
    (257, 3),
    (2, 131),
];

/// The engines to run an operation on: the CPU engine, and on OpenCL the
/// default dispatch and each variant forced.
fn engines(op: &OpSpec, cl: Option<&Engine>) -> Vec<(String, Engine)> {
    let mut v = vec![("cpu".to_string(), Engine::cpu())];
    if let Some(cl) = cl {
        v.push(("opencl default".into(), cl.clone()));
        v.push((
            "opencl forced cpu".into(),
            cl.with_variant(Some(op.name), CPU),
        ));
        for spec in op.variants {
            v.push((
                format!("opencl forced {}", spec.name),
                cl.with_variant(Some(op.name), spec.name),
            ));
        }
    }
    v
}

/// Checks `got` against `want(x, y, c)` (unrounded f64): integers within
/// half a step (rounding) plus `tol` of full scale, f32 within `tol`
/// relative to max(1, |want|).
fn check<T: Sample>(
    got: &Image<T>,
    want: impl Fn(usize, usize, usize) -> f64,
    tol: f64,
    ctx: &str,
) {
    let full = T::TYPE.full_scale() as f64;
    for y in 0..got.height() {
        for x in 0..got.width() {
            for c in 0..got.channels() {
                let (g, w) = (f64::from(got.get(x, y, c).to_f32()), want(x, y, c));
                let (w, limit) = if T::TYPE == SampleType::F32 {
                    (w, tol * w.abs().max(1.0))
                } else {
                    (w.clamp(0.0, full), 0.5 + tol * full)
                };
                assert!(
                    (g - w).abs() <= limit,
                    "{ctx}: ({x}, {y}) channel {c}: got {g}, want {w}"
                );
            }
        }
    }
}

fn each_type(mut f: impl FnMut(SampleType)) {
    for t in [SampleType::U8, SampleType::U16, SampleType::F32] {
        f(t)
    }
}

fn black_case<T: TestSample>(engines: &[(String, Engine)], rng: &mut Rng) {
    let full = T::TYPE.full_scale();
    let levels = [
        BlackParams {
            black: 0.0625 * full,
            white: None,
        },
        BlackParams {
            black: 0.05 * full,
            white: Some(0.8 * full),
        },
        BlackParams {
            black: 0.0,
            white: None,
        },
    ];
    for &(w, h) in SIZES {
        for c in [1, 3, 4] {
            let img = random_image::<T>(rng, w, h, c);
            for p in &levels {
                let k = p.white.map_or(1.0, |wl| {
                    f64::from(full) / (f64::from(wl) - f64::from(p.black))
                });
                let want = |x, y, ch| {
                    let v = f64::from(img.get(x, y, ch).to_f32());
                    if c == 4 && ch == 3 {
                        v
                    } else {
                        (v - f64::from(p.black)).max(0.0) * k
                    }
                };
                for (label, e) in engines {
                    let got = e.black(&img, p).unwrap_or_else(|e| panic!("{label}: {e}"));
                    let ctx = format!("black {label} {}x{c} {w}x{h} {p:?}", T::TYPE);
                    check(&got, want, 1e-6, &ctx);
                }
            }
        }
    }
}

#[test]
fn black_matches_the_reference() {
    let cl = opencl_engine();
    let engines = engines(&clfilter::ops::black::SPEC, cl.as_ref());
    let mut rng = Rng::new(2201);
    each_type(|t| match t {
        SampleType::U8 => black_case::<u8>(&engines, &mut rng),
        SampleType::U16 => black_case::<u16>(&engines, &mut rng),
        SampleType::F32 => black_case::<f32>(&engines, &mut rng),
    });
}

/// The gray-world gains, computed here from f64 means.
fn gray_world_gains<T: Sample>(img: &Image<T>) -> [f64; 3] {
    let mut sums = [0.0f64; 3];
    for y in 0..img.height() {
        for x in 0..img.width() {
            for (c, s) in sums.iter_mut().enumerate() {
                *s += f64::from(img.get(x, y, c).to_f32());
            }
        }
    }
    let g = |m: f64| {
        let r = sums[1] / m;
        if m > 0.0 && r > 0.0 && r.is_finite() {
            r.min(64.0)
        } else {
            1.0
        }
    };
    [g(sums[0]), 1.0, g(sums[2])]
}

fn wb_case<T: TestSample>(engines: &[(String, Engine)], rng: &mut Rng) {
    for &(w, h) in SIZES {
        for c in [3, 4] {
            let mut img = random_image::<T>(rng, w, h, c);
            // A colour cast for the gray world to remove: halve the red.
            let data: Vec<T> = img
                .rows()
                .flatten()
                .enumerate()
                .map(|(i, &v)| {
                    if i % c == 0 {
                        T::from_f32(v.to_f32() * 0.5)
                    } else {
                        v
                    }
                })
                .collect();
            img = Image::from_vec(w, h, c, data).unwrap();
            for p in [
                WbParams::Gains([2.1, 1.0, 0.6]),
                WbParams::Gains([0.0, 64.0, 1.0]),
                WbParams::Auto,
            ] {
                let gains = match p {
                    WbParams::Gains(g) => g.map(f64::from),
                    WbParams::Auto => gray_world_gains(&img),
                };
                // The gray world's means are f32 sums on a device.
                let tol = if p == WbParams::Auto { 1e-4 } else { 1e-6 };
                let want = |x, y, ch| {
                    let v = f64::from(img.get(x, y, ch).to_f32());
                    if ch == 3 {
                        v
                    } else {
                        v * gains[ch]
                    }
                };
                for (label, e) in engines {
                    let got = e.wb(&img, &p).unwrap_or_else(|e| panic!("{label}: {e}"));
                    let ctx = format!("wb {label} {}x{c} {w}x{h} {p:?}", T::TYPE);
                    check(&got, want, tol, &ctx);
                }
            }
        }
    }
}

#[test]
fn wb_matches_the_reference() {
    let cl = opencl_engine();
    let engines = engines(&clfilter::ops::wb::SPEC, cl.as_ref());
    let mut rng = Rng::new(2202);
    each_type(|t| match t {
        SampleType::U8 => wb_case::<u8>(&engines, &mut rng),
        SampleType::U16 => wb_case::<u16>(&engines, &mut rng),
        SampleType::F32 => wb_case::<f32>(&engines, &mut rng),
    });
    // The gray world equalises the channel means.
    let img =
        Image::<f32>::from_fn(6, 5, 3, |x, y, c| [0.2, 0.4, 0.8][c] * (1 + x + y) as f32).unwrap();
    let out = Engine::cpu().wb(&img, &WbParams::Auto).unwrap();
    let mean = |c| {
        out.rows()
            .flatten()
            .skip(c)
            .step_by(3)
            .map(|&v| f64::from(v))
            .sum::<f64>()
            / 30.0
    };
    assert!((mean(0) - mean(1)).abs() < 1e-5 && (mean(2) - mean(1)).abs() < 1e-5);
}

fn ccm_case<T: TestSample>(engines: &[(String, Engine)], rng: &mut Rng) {
    let mats = [
        [1.72, -0.52, -0.2, -0.26, 1.58, -0.32, 0.04, -0.62, 1.58],
        [0.0, 0.0, 1.0, 0.0, 1.0, 0.0, 1.0, 0.0, 0.0],
        [64.0, -64.0, 0.5, 0.0, 0.0, 0.0, -1.0, 2.0, -3.0],
    ];
    let full = f64::from(T::TYPE.full_scale());
    for &(w, h) in SIZES {
        for c in [3, 4] {
            let img = random_image::<T>(rng, w, h, c);
            for m in mats {
                let p = CcmParams { m };
                let v = |x, y, k| f64::from(img.get(x, y, k).to_f32());
                // f32 sums of three products: within 4 half-steps of the
                // largest partial sum (docs/QUALITY.md).
                let bound = |x, y, ch: usize| {
                    let terms: f64 = (0..3)
                        .map(|k| (f64::from(m[3 * ch + k]) * v(x, y, k)).abs())
                        .sum();
                    4.0 * f64::from(f32::EPSILON) / 2.0 * terms
                };
                for (label, e) in engines {
                    let got = e.ccm(&img, &p).unwrap_or_else(|e| panic!("{label}: {e}"));
                    for y in 0..h {
                        for x in 0..w {
                            for ch in 0..c {
                                let g = f64::from(got.get(x, y, ch).to_f32());
                                let want = if ch == 3 {
                                    v(x, y, 3)
                                } else {
                                    (0..3).map(|k| f64::from(m[3 * ch + k]) * v(x, y, k)).sum()
                                };
                                let (want, limit) = if T::TYPE == SampleType::F32 {
                                    (want, bound(x, y, ch.min(2)) + 1e-30)
                                } else {
                                    // u8 RGB may take the CPU's fixed point:
                                    // coefficients rounded to 2^-10 or finer
                                    // (docs/QUALITY.md).
                                    let fixed = match (T::TYPE, c) {
                                        (SampleType::U8, 3) => {
                                            (0..3).map(|k| v(x, y, k)).sum::<f64>() / 2048.0
                                        }
                                        _ => 0.0,
                                    };
                                    (want.clamp(0.0, full), 0.5 + bound(x, y, ch.min(2)) + fixed)
                                };
                                assert!(
                                    (g - want).abs() <= limit,
                                    "ccm {label} {}x{c} {w}x{h} {m:?}: ({x}, {y}) channel {ch}: got {g}, want {want}",
                                    T::TYPE
                                );
                            }
                        }
                    }
                }
            }
        }
    }
}

/// A NaN or infinity in one channel makes its gray-world mean non-finite:
/// `wb=auto` refuses it on every path, and the pipeline stage does too.
#[test]
fn wb_auto_refuses_a_non_finite_channel_mean() {
    let cl = opencl_engine();
    let engines = engines(&clfilter::ops::wb::SPEC, cl.as_ref());
    let mut rng = Rng::new(2203);
    for (bad, c) in [(f32::NAN, 2), (f32::INFINITY, 0), (f32::NEG_INFINITY, 1)] {
        let (w, h) = (13, 7);
        let mut data: Vec<f32> = random_image::<f32>(&mut rng, w, h, 3)
            .rows()
            .flatten()
            .copied()
            .collect();
        data[(3 * w + 5) * 3 + c] = bad;
        let img = Image::from_vec(w, h, 3, data).unwrap();
        for (label, e) in &engines {
            match e.wb(&img, &WbParams::Auto) {
                Err(Error::InvalidInput(m)) => assert!(m.contains("wb=auto"), "{label}: {m}"),
                other => panic!("{label}: {bad} in channel {c} gave {other:?}"),
            }
            let stages = pipeline::parse("wb=auto").unwrap();
            let r = run_outcomes(e, &stages, DynImage::F32(img.clone()));
            assert!(
                matches!(r, Err(Error::InvalidInput(_))),
                "{label}: pipeline gave {:?}",
                r.map(|_| ())
            );
        }
        // Given gains still run: the sample stays where it is.
        let out = Engine::cpu()
            .wb(&img, &WbParams::Gains([1.0, 1.0, 1.0]))
            .unwrap();
        assert_eq!(out.get(5, 3, c).to_bits(), bad.to_bits());
    }
}

#[test]
fn ccm_matches_the_reference() {
    let cl = opencl_engine();
    let engines = engines(&clfilter::ops::ccm::SPEC, cl.as_ref());
    let mut rng = Rng::new(2204);
    each_type(|t| match t {
        SampleType::U8 => ccm_case::<u8>(&engines, &mut rng),
        SampleType::U16 => ccm_case::<u16>(&engines, &mut rng),
        SampleType::F32 => ccm_case::<f32>(&engines, &mut rng),
    });
}

/// The curves, written here from the standards (IEC 61966-2-1, ITU-R BT.709).
fn encode(p: GammaParams, l: f64) -> f64 {
    match p {
        GammaParams::Srgb if l <= 0.0031308 => 12.92 * l,
        GammaParams::Srgb => 1.055 * l.powf(1.0 / 2.4) - 0.055,
        GammaParams::Rec709 if l < 0.018 => 4.5 * l,
        GammaParams::Rec709 => 1.099 * l.powf(0.45) - 0.099,
        GammaParams::Power(n) => l.powf(1.0 / f64::from(n)),
    }
}

fn gamma_case<T: TestSample>(engines: &[(String, Engine)], rng: &mut Rng) {
    let full = f64::from(T::TYPE.full_scale());
    let curves = [
        GammaParams::Srgb,
        GammaParams::Rec709,
        GammaParams::Power(2.2),
        GammaParams::Power(0.5),
    ];
    for &(w, h) in SIZES {
        for c in [1, 3, 4] {
            let img = random_image::<T>(rng, w, h, c);
            for p in curves {
                let want = |x, y, ch| {
                    let v = f64::from(img.get(x, y, ch).to_f32());
                    if c == 4 && ch == 3 {
                        v
                    } else {
                        encode(p, (v / full).max(0.0)) * full
                    }
                };
                for (label, e) in engines {
                    // The table variant declines f32 (forcing it is an error).
                    if T::TYPE == SampleType::F32 && label.ends_with("lut") {
                        continue;
                    }
                    let got = e.gamma(&img, &p).unwrap_or_else(|e| panic!("{label}: {e}"));
                    let ctx = format!("gamma {label} {}x{c} {w}x{h} {p:?}", T::TYPE);
                    // docs/QUALITY.md: 2e-6 of full scale; f32 above 1
                    // relative, 3e-6 for these samples (up to 300, powers
                    // up to 2).
                    let tol = if T::TYPE == SampleType::F32 {
                        3e-6
                    } else {
                        2e-6
                    };
                    check(&got, want, tol, &ctx);
                }
            }
        }
    }
}

#[test]
fn gamma_matches_the_reference() {
    let cl = opencl_engine();
    let engines = engines(&clfilter::ops::gamma::SPEC, cl.as_ref());
    let mut rng = Rng::new(2205);
    each_type(|t| match t {
        SampleType::U8 => gamma_case::<u8>(&engines, &mut rng),
        SampleType::U16 => gamma_case::<u16>(&engines, &mut rng),
        SampleType::F32 => gamma_case::<f32>(&engines, &mut rng),
    });
    // The table gives the correctly rounded result of every u16 value.
    let all = Image::<u16>::from_fn(256, 256, 1, |x, y, _| (y * 256 + x) as u16).unwrap();
    for p in [GammaParams::Srgb, GammaParams::Rec709] {
        let got = Engine::cpu().gamma(&all, &p).unwrap();
        for (i, &g) in got.rows().flatten().enumerate() {
            let want = encode(p, i as f64 / 65535.0) * 65535.0;
            assert!(
                (f64::from(g) - want).abs() <= 0.5 + 1e-9,
                "{p:?} {i}: {g} vs {want}"
            );
        }
    }
}

fn max_diff(a: &DynImage, b: &DynImage) -> f64 {
    assert_eq!(a.shape(), b.shape(), "shapes differ");
    assert_eq!(a.sample_type(), b.sample_type(), "types differ");
    fn d<T: Sample>(a: &Image<T>, b: &Image<T>) -> f64 {
        a.rows()
            .flatten()
            .zip(b.rows().flatten())
            .map(|(&x, &y)| f64::from((x.to_f32() - y.to_f32()).abs()))
            .fold(0.0, f64::max)
    }
    match (a, b) {
        (DynImage::U8(a), DynImage::U8(b)) => d(a, b),
        (DynImage::U16(a), DynImage::U16(b)) => d(a, b),
        (DynImage::F32(a), DynImage::F32(b)) => d(a, b),
        _ => unreachable!(),
    }
}

/// Runs `spec` chained on the device and stage by stage on the CPU
/// engine: within `tol` (the host rounds after every stage, the chain
/// only at the end).
fn chain_vs_host(engine: &Engine, spec: &str, input: DynImage, tol: f64) {
    let ops = pipeline::parse(spec).unwrap();
    let (got, outcomes) = run_outcomes(engine, &ops, input.clone()).unwrap();
    for o in &outcomes {
        assert!(o.on_device, "{spec}: stage {} left the device", o.op);
        assert!(
            o.reports.iter().all(|r| r.variant != CPU),
            "{spec}: {} ran on the CPU",
            o.op
        );
    }
    let (want, _) = run_stages(&Engine::cpu(), &ops, input).unwrap();
    let diff = max_diff(&got, &want);
    assert!(
        diff <= tol,
        "{spec}: device and host differ by {diff} (allowed {tol})"
    );
}

#[test]
fn device_chains_match_the_host_path() {
    let Some(engine) = opencl_engine() else {
        return;
    };
    let mut rng = Rng::new(2203);
    for (w, h) in [(2, 2), (34, 18), (66, 130)] {
        let raw12 = Image::<u16>::from_vec(
            w,
            h,
            1,
            (0..w * h).map(|_| rng.below(4096) as u16).collect(),
        )
        .unwrap();
        let raw8 = random_image::<u8>(&mut rng, w, h, 1);
        let rgb = random_image::<u16>(&mut rng, w, h, 3);
        let rgbf = random_image::<f32>(&mut rng, w, h, 4);
        for (spec, input, tol) in [
            (
                "demosaic=bits=12,black=64,wb=r=1.8:b=1.4,convert=u8",
                DynImage::U16(raw12.clone()),
                1.0,
            ),
            (
                "demosaic,black=16:white=240,wb=auto",
                DynImage::U8(raw8.clone()),
                2.0,
            ),
            (
                "black=1000,wb=auto,black=10:white=60000",
                DynImage::U16(rgb.clone()),
                3.0,
            ),
            (
                "black=0.25:white=2,wb=r=0.5:g=2:b=1",
                DynImage::F32(rgbf.clone()),
                1e-4,
            ),
            (
                "demosaic=bits=12,black=64,wb=r=1.8:b=1.4,ccm=m=1.72/-0.52/-0.2/-0.26/1.58/-0.32/0.04/-0.62/1.58,gamma=srgb,convert=u8",
                DynImage::U16(raw12.clone()),
                1.0,
            ),
            (
                "wb=auto,ccm=m=1.5/-0.5/0/0/1/0/-0.25/-0.25/1.5,gamma=rec709",
                DynImage::U16(rgb.clone()),
                // The host's roundings after wb and ccm (up to 1.5 steps
                // through this matrix) times the curve's slope near 0 (4.5).
                7.0,
            ),
            (
                "ccm=m=2/0/0/0/1/0/0/0/0.5,gamma=2.2",
                DynImage::F32(rgbf.clone()),
                1e-4,
            ),
        ] {
            chain_vs_host(&engine, spec, input, tol);
        }
    }
}

#[test]
fn bad_parameters_are_typed_errors() {
    for spec in [
        "black",
        "black=-1",
        "black=nan",
        "black=inf",
        "black=64:white=64",
        "black=64:white=10",
        "black=x",
        "wb=r=-1",
        "wb=g=nan",
        "wb=b=65",
        "wb=auto:r=2",
        "wb=manual",
        "ccm",
        "ccm=m=1/2/3",
        "ccm=m=1/0/0/0/1/0/0/0/x",
        "ccm=m=65/0/0/0/1/0/0/0/1",
        "ccm=1/0/0/0/1/0/0/0/nan",
        "gamma",
        "gamma=0",
        "gamma=11",
        "gamma=srgbb",
        "gamma=curve=inf",
    ] {
        match pipeline::parse(spec) {
            Err(Error::Spec(_)) => {}
            other => panic!("{spec}: {other:?}"),
        }
    }
    let e = Engine::cpu();
    let gray = Image::<u8>::from_fn(3, 2, 1, |x, _, _| x as u8).unwrap();
    let rgb = Image::<f32>::from_fn(3, 2, 3, |x, _, _| x as f32).unwrap();
    assert!(matches!(
        e.wb(&gray, &WbParams::Auto),
        Err(Error::InvalidArgument(_))
    ));
    assert!(matches!(
        e.ccm(&gray, &CcmParams::IDENTITY),
        Err(Error::InvalidArgument(_))
    ));
    assert!(matches!(
        e.ccm(
            &rgb,
            &CcmParams {
                m: [f32::INFINITY; 9]
            }
        ),
        Err(Error::InvalidArgument(_))
    ));
    assert!(matches!(
        e.gamma(&rgb, &GammaParams::Power(0.0)),
        Err(Error::InvalidArgument(_))
    ));
    assert!(matches!(
        e.wb(&rgb, &WbParams::Gains([f32::NAN, 1.0, 1.0])),
        Err(Error::InvalidArgument(_))
    ));
    assert!(matches!(
        e.wb(&rgb, &WbParams::Gains([-1.0, 1.0, 1.0])),
        Err(Error::InvalidArgument(_))
    ));
    for p in [
        BlackParams {
            black: -1.0,
            white: None,
        },
        BlackParams {
            black: f32::NAN,
            white: None,
        },
        BlackParams {
            black: 5.0,
            white: Some(5.0),
        },
        BlackParams {
            black: 0.0,
            white: Some(1e-35),
        },
    ] {
        assert!(
            matches!(e.black(&rgb, &p), Err(Error::InvalidArgument(_))),
            "{p:?}"
        );
    }
}
