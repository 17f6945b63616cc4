//! `bilateral` against the definition, evaluated here in f64 (independently
//! of `ops::bilateral::reference`): the CPU path, every OpenCL variant
//! forced and the default dispatch, on uniform random images and a
//! photo-like one (gradients, edges, texture and noise), every sample type,
//! 1/3/4 channels, odd sizes (1x1, lines, primes, sizes that are no
//! multiple of the 16x16 tile), both borders (windows wider than the
//! image included) and both precisions. Also: RGBA's alpha passes through,
//! a fast variant never serves an exact request, and bad parameters are
//! typed errors everywhere.
//!
//! Bounds (docs/QUALITY.md), in units of full scale: `precision=exact`
//! 1e-4, `precision=fast` 2e-3; integer outputs add the rounding's half
//! step (so u8 and u16 results are the definition rounded to nearest,
//! except within 1e-4 of full scale of a .5 tie). The worst errors seen
//! are printed (`cargo test --test bilateral -- --nocapture`).

use clfilter::ops::bilateral::{
    variants::EXACT_TOLERANCE, BilateralParams, Border, Precision, MAX_RADIUS, SPEC,
};
use clfilter::prelude::*;
use clfilter::{Engine, Error, Image, Sample, SampleType};
use std::sync::{Mutex, OnceLock};

mod common;
use common::{opencl_engine, Rng};

/// Single pixels, lines both ways, primes, and a size past the 16x16 tile.
const SIZES: &[(usize, usize)] = &[(1, 1), (1, 11), (11, 1), (13, 7), (19, 17)];

/// The worst error seen per (path, precision), in units of full scale.
static WORST: Mutex<Vec<(String, f64)>> = Mutex::new(Vec::new());

/// Where sample `i` of a line of `n` comes from: clamped, or reflected
/// about the outer edges of the end samples (`cba|abc|cba`), repeatedly.
fn source(i: i64, n: i64, border: Border) -> usize {
    match border {
        Border::Mirror => {
            let mut i = i;
            while i < 0 || i >= n {
                i = if i < 0 { -1 - i } else { 2 * n - 1 - i };
            }
            i as usize
        }
        _ => i.clamp(0, n - 1) as usize,
    }
}

/// The definition in f64: every sample, unrounded, in sample units.
fn definition<T: Sample>(img: &Image<T>, p: &BilateralParams) -> Vec<f64> {
    let (w, h, c) = (img.width() as i64, img.height() as i64, img.channels());
    let colours = c.min(3);
    let r = p
        .radius
        .unwrap_or_else(|| (2.0 * p.sigma_s as f64).ceil() as usize) as i64;
    let ss2 = 2.0 * (p.sigma_s as f64).powi(2);
    let sr = p.sigma_r as f64 * T::TYPE.full_scale() as f64;
    let px = |x: i64, y: i64| -> Vec<f64> {
        let (sx, sy) = (source(x, w, p.border), source(y, h, p.border));
        (0..c)
            .map(|ch| img.get(sx, sy, ch).to_f32() as f64)
            .collect()
    };
    let mut out = Vec::new();
    for y in 0..h {
        for x in 0..w {
            let centre = px(x, y);
            let (mut sum, mut wsum) = (vec![0.0; colours], 0.0);
            for dy in -r..=r {
                for dx in -r..=r {
                    if dx * dx + dy * dy > r * r {
                        continue;
                    }
                    let q = px(x + dx, y + dy);
                    let d2: f64 = (0..colours).map(|k| (q[k] - centre[k]).powi(2)).sum();
                    let wt =
                        (-((dx * dx + dy * dy) as f64) / ss2).exp() * (-d2 / (2.0 * sr * sr)).exp();
                    wsum += wt;
                    for k in 0..colours {
                        sum[k] += wt * q[k];
                    }
                }
            }
            out.extend(sum.iter().map(|s| s / wsum));
            if c == 4 {
                out.push(centre[3]);
            }
        }
    }
    out
}

/// Uniform random samples over the type's whole range.
fn uniform<T: Sample>(rng: &mut Rng, w: usize, h: usize, c: usize) -> Image<T> {
    let full = T::TYPE.full_scale();
    let data = (0..w * h * c)
        .map(|_| T::from_f32(rng.unit() * full))
        .collect();
    Image::from_vec(w, h, c, data).unwrap()
}

/// A photo-like image: two gradients, a bright disk with a hard edge, a
/// stripe texture and mild noise, in `0..=full`; alpha is a ramp.
fn photo<T: Sample>(rng: &mut Rng, w: usize, h: usize, c: usize) -> Image<T> {
    let full = T::TYPE.full_scale();
    Image::from_fn(w, h, c, |x, y, ch| {
        let (u, v) = (x as f32 / w as f32, y as f32 / h as f32);
        let disk = ((u - 0.6).powi(2) + (v - 0.4).powi(2) < 0.08) as u8 as f32;
        let stripes = if (x / 3) % 2 == 0 { 0.08 } else { 0.0 };
        let base = match ch {
            0 => 0.2 + 0.5 * u,
            1 => 0.3 + 0.4 * v,
            2 => 0.6 - 0.3 * u * v,
            _ => u,
        };
        let noise = if ch == 3 {
            0.0
        } else {
            (rng.unit() - 0.5) * 0.04
        };
        let val = (base + 0.3 * disk * (ch != 3) as u8 as f32 + stripes + noise).clamp(0.0, 1.0);
        T::from_f32(val * full)
    })
    .unwrap()
}

/// `got` against the definition within `tol` of full scale (plus half a
/// step for integers); the alpha channel must be the input's exactly.
fn check<T: Sample>(what: &str, img: &Image<T>, got: &Image<T>, want: &[f64], tol: f32) {
    let full = T::TYPE.full_scale() as f64;
    let half = if T::TYPE == SampleType::F32 { 0.0 } else { 0.5 };
    let c = img.channels();
    let mut worst = 0.0f64;
    let samples = got.rows().flat_map(|r| r.iter());
    for (i, (g, w)) in samples.zip(want).enumerate() {
        let g = g.to_f32() as f64;
        if c == 4 && i % 4 == 3 {
            assert_eq!(g, *w, "{what}: alpha of pixel {} changed", i / 4);
            continue;
        }
        let err = ((g - w).abs() - half).max(0.0) / full;
        assert!(
            err <= tol as f64,
            "{what}: sample {i} (pixel {}, channel {}) is {g}, the definition {w}: \
             {err:.2e} of full scale, bound {tol:e}",
            i / c,
            i % c
        );
        worst = worst.max(err);
    }
    let key = what.split(' ').take(2).collect::<Vec<_>>().join(" ");
    let mut table = WORST.lock().unwrap_or_else(|e| e.into_inner());
    match table.iter_mut().find(|(k, _)| *k == key) {
        Some((_, v)) => *v = v.max(worst),
        None => table.push((key, worst)),
    }
}

/// The parameter sets: default radius and replicate; an explicit radius
/// wider than the small images with the mirror border.
fn param_sets(precision: Precision) -> [BilateralParams; 2] {
    [
        BilateralParams {
            precision,
            ..BilateralParams::new(1.5, 0.15)
        },
        BilateralParams {
            radius: Some(5),
            border: Border::Mirror,
            precision,
            ..BilateralParams::new(2.5, 0.3)
        },
    ]
}

/// Every type, channel count, size, image kind and parameter set of
/// `precision`, each with its description.
fn cases(precision: Precision) -> Vec<(String, DynCase)> {
    let mut rng = Rng::new(19);
    let mut out = Vec::new();
    for p in param_sets(precision) {
        for c in [1, 3, 4] {
            for &(w, h) in SIZES {
                for kind in ["uniform", "photo"] {
                    let what = format!("{} {kind} {w}x{h}x{c} {p:?}", precision.name());
                    out.push((what, DynCase::new(&mut rng, kind, (w, h, c), p)));
                }
            }
        }
    }
    out
}

/// Runs `run` on every case, checking each result at `tol`; returns how
/// many cases ran (were not declined).
fn every_case(
    label: &str,
    cases: &[(String, DynCase)],
    tol: f32,
    run: &dyn Fn(&DynCase) -> Option<()>,
) -> usize {
    let mut ran = 0;
    for (what, case) in cases {
        if run(case).is_some() {
            case.check(&format!("{label} {what}"), tol);
            ran += 1;
        }
    }
    ran
}

/// One input and the result a path made of it.
struct Slot<T: Sample> {
    input: Image<T>,
    got: Mutex<Option<Image<T>>>,
    /// The definition's result, computed once.
    want: OnceLock<Vec<f64>>,
}

impl<T: Sample> Slot<T> {
    fn new(rng: &mut Rng, kind: &str, (w, h, c): (usize, usize, usize)) -> Self {
        let input = if kind == "photo" {
            photo(rng, w, h, c)
        } else {
            uniform(rng, w, h, c)
        };
        Slot {
            input,
            got: Mutex::new(None),
            want: OnceLock::new(),
        }
    }

    fn check(&self, what: &str, p: &BilateralParams, tol: f32) {
        let got = self.got.lock().unwrap().take().expect("a result");
        let want = self.want.get_or_init(|| definition(&self.input, p));
        check(&format!("{what} {}", T::TYPE), &self.input, &got, want, tol);
    }
}

/// One case in every sample type, with the results of one path.
struct DynCase {
    p: BilateralParams,
    u8: Slot<u8>,
    u16: Slot<u16>,
    f32: Slot<f32>,
}

impl DynCase {
    fn new(rng: &mut Rng, kind: &str, size: (usize, usize, usize), p: BilateralParams) -> Self {
        DynCase {
            p,
            u8: Slot::new(rng, kind, size),
            u16: Slot::new(rng, kind, size),
            f32: Slot::new(rng, kind, size),
        }
    }

    /// Runs `e` on all three inputs; `None` when the engine declines them
    /// (a forced variant that does not take the request).
    fn run_on(&self, e: &Engine) -> Option<()> {
        let got = (
            e.bilateral(&self.u8.input, &self.p),
            e.bilateral(&self.u16.input, &self.p),
            e.bilateral(&self.f32.input, &self.p),
        );
        match got {
            (Ok(a), Ok(b), Ok(c)) => {
                *self.u8.got.lock().unwrap() = Some(a);
                *self.u16.got.lock().unwrap() = Some(b);
                *self.f32.got.lock().unwrap() = Some(c);
                Some(())
            }
            (Err(Error::Unsupported { .. }), _, _) => None,
            (a, b, c) => panic!("{:?} {:?} {:?}", a.err(), b.err(), c.err()),
        }
    }

    fn check(&self, what: &str, tol: f32) {
        self.u8.check(what, &self.p, tol);
        self.u16.check(what, &self.p, tol);
        self.f32.check(what, &self.p, tol);
    }
}

fn print_worst() {
    let table = WORST.lock().unwrap_or_else(|e| e.into_inner());
    eprintln!("| path precision | worst error (full scale, after rounding) |");
    for (k, v) in table.iter() {
        eprintln!("| {k} | {v:.1e} |");
    }
}

#[test]
fn cpu_path_matches_the_definition() {
    let e = Engine::cpu();
    // The CPU path is exact at either precision.
    for precision in [Precision::Exact, Precision::Fast] {
        let cases = cases(precision);
        assert!(every_case("cpu", &cases, EXACT_TOLERANCE, &|case| case.run_on(&e)) > 0);
    }
    print_worst();
}

#[test]
fn every_variant_and_the_default_match_the_definition() {
    let Some(engine) = opencl_engine() else {
        return;
    };
    for precision in [Precision::Exact, Precision::Fast] {
        let (tol, cases) = (precision.tolerance(), cases(precision));
        assert!(every_case("default", &cases, tol, &|case| case.run_on(&engine)) > 0);
        for spec in SPEC.variants {
            let forced = engine.with_variant(Some(SPEC.name), spec.name);
            // Each variant at its own tolerance, which is within the bound
            // of every precision it takes.
            let ran = every_case(spec.name, &cases, spec.tolerance, &|case| {
                case.run_on(&forced)
            });
            let fast = spec.name.starts_with("fast");
            if precision == Precision::Exact && fast {
                assert_eq!(ran, 0, "{} served an exact request", spec.name);
            } else {
                assert!(ran > 0, "{} ran no case", spec.name);
                assert!(spec.tolerance <= tol, "{}", spec.name);
            }
        }
    }
    print_worst();
}

/// f32 samples of any magnitude the non-finite guard lets through (up to
/// 2^120) match the definition relative to the image's largest magnitude,
/// on every path and variant: the same photo at scales 1e-30 to 1e35 with
/// sigma_r scaled alike, and sigma_r far above the samples (every range
/// weight 1; for u16 too). Squared unscaled, differences from 1.8e19
/// overflowed, and
/// `1 / (2 sigma_r²)` underflowed from sigma_r 1e23: the CPU path ignored
/// the neighbours and every OpenCL variant gave NaN.
#[test]
fn f32_samples_of_any_scale_match_the_definition() {
    let mut rng = Rng::new(43);
    let mut cases = Vec::new();
    for c in [1, 3, 4] {
        let unit: Image<f32> = photo(&mut rng, 13, 7, c);
        for (scale, sigma_r) in [
            (1e-30f32, 0.15e-30f32),
            (1e20, 0.15e20),
            (1e35, 0.15e35),
            (1e20, 1e30),
            (1.0, 1e30),
        ] {
            let img = Image::from_fn(13, 7, c, |x, y, k| unit.get(x, y, k) * scale).unwrap();
            for precision in [Precision::Exact, Precision::Fast] {
                let p = BilateralParams {
                    precision,
                    ..BilateralParams::new(1.5, sigma_r)
                };
                let what = format!(
                    "{c} channels, scale {scale:e}, sigma_r {sigma_r:e}, {}",
                    precision.name()
                );
                cases.push((what, img.clone(), p));
            }
        }
    }
    for engine in engines() {
        let mut paths = vec![("default", engine.clone())];
        if engine.backend().device().is_some() {
            paths.extend(
                SPEC.variants
                    .iter()
                    .map(|v| (v.name, engine.with_variant(Some(SPEC.name), v.name))),
            );
        }
        for (name, e) in &paths {
            let mut ran = 0;
            for (what, img, p) in &cases {
                let got = match e.bilateral(img, p) {
                    Ok(g) => g,
                    Err(Error::Unsupported { .. }) => continue,
                    Err(e) => panic!("{name} {what}: {e}"),
                };
                ran += 1;
                let want = definition(img, p);
                let big = img
                    .rows()
                    .flatten()
                    .fold(0f64, |m, v| m.max(f64::from(v.abs())));
                for (i, (g, w)) in got.rows().flatten().zip(&want).enumerate() {
                    let err = (f64::from(*g) - w).abs() / big;
                    assert!(err <= 2e-3, "{name} {what}: sample {i} is {g}, the definition {w} ({err:.1e} of the largest)");
                }
            }
            assert!(ran > 0, "{name} ran no case");
            // Integer samples at the extremes of sigma_r: every range
            // weight 0 (a copy) or 1 (the spatial mean).
            for sigma_r in [1e-30f32, 1e30] {
                for precision in [Precision::Exact, Precision::Fast] {
                    let p = BilateralParams {
                        precision,
                        ..BilateralParams::new(1.5, sigma_r)
                    };
                    let img: Image<u16> = photo(&mut rng, 11, 5, 3);
                    match e.bilateral(&img, &p) {
                        Ok(got) => check(
                            &format!("{name} u16 sigma_r {sigma_r:e}"),
                            &img,
                            &got,
                            &definition(&img, &p),
                            2e-3,
                        ),
                        Err(Error::Unsupported { .. }) => {}
                        Err(e) => panic!("{name} u16 sigma_r {sigma_r:e}: {e}"),
                    }
                }
            }
        }
    }
}

/// The engines to check: the CPU, and the OpenCL one where there is one.
fn engines() -> Vec<Engine> {
    let mut v = vec![Engine::cpu()];
    v.extend(opencl_engine());
    v
}

#[test]
fn bad_parameters_and_inputs_are_typed_errors() {
    let img = Image::<u8>::new(8, 8, 3).unwrap();
    let ok = BilateralParams::new(2.0, 0.1);
    let bad = [
        BilateralParams { sigma_s: 0.0, ..ok },
        BilateralParams {
            sigma_s: -1.0,
            ..ok
        },
        BilateralParams {
            sigma_s: f32::NAN,
            ..ok
        },
        BilateralParams { sigma_r: 0.0, ..ok },
        BilateralParams {
            sigma_r: f32::INFINITY,
            ..ok
        },
        // The default radius ceil(2 sigma_s) past the limit.
        BilateralParams {
            sigma_s: 16.5,
            ..ok
        },
        BilateralParams {
            radius: Some(MAX_RADIUS + 1),
            ..ok
        },
        BilateralParams {
            radius: Some(usize::MAX),
            ..ok
        },
    ];
    let mut nan = Image::<f32>::new(8, 8, 1).unwrap();
    nan.row_mut(3)[4] = f32::NAN;
    for e in engines() {
        for p in &bad {
            let r = e.bilateral(&img, p);
            assert!(matches!(r, Err(Error::InvalidArgument(_))), "{p:?}: {r:?}");
        }
        let r = e.bilateral(&nan, &ok);
        assert!(matches!(r, Err(Error::NonFinite { .. })), "{r:?}");
    }
    for spec in [
        "bilateral",
        "bilateral=sigma_s=2",
        "bilateral=sigma_r=0.1",
        "bilateral=sigma_s=0:sigma_r=0.1",
        "bilateral=sigma_s=2:sigma_r=-1",
        "bilateral=sigma_s=2:sigma_r=nan",
        "bilateral=sigma_s=2:sigma_r=0.1:radius=33",
        "bilateral=sigma_s=2:sigma_r=0.1:radius=-1",
        "bilateral=sigma_s=2:sigma_r=0.1:radius=2.5",
        "bilateral=sigma_s=20:sigma_r=0.1",
        "bilateral=sigma_s=2:sigma_r=0.1:border=wrap",
        "bilateral=sigma_s=2:sigma_r=0.1:precision=sloppy",
        "bilateral=sigma_s=2:sigma_r=0.1:size=3",
    ] {
        let r = clfilter::pipeline::parse(spec);
        assert!(matches!(r, Err(Error::Spec(_))), "{spec}: {r:?}");
    }
    let p = clfilter::pipeline::parse(
        "bilateral=sigma_s=20:sigma_r=0.5:radius=3:border=mirror:precision=fast",
    )
    .unwrap();
    assert_eq!(
        p[0].to_string(),
        "bilateral=sigma_s=20:sigma_r=0.5:radius=3:border=mirror:precision=fast"
    );
}

#[test]
fn radius_zero_is_a_copy_and_constant_images_stay_constant() {
    let mut rng = Rng::new(7);
    let img: Image<u16> = uniform(&mut rng, 9, 5, 4);
    let flat = Image::<u8>::from_fn(12, 7, 3, |_, _, c| 40 + 50 * c as u8).unwrap();
    for e in engines() {
        let p = BilateralParams {
            radius: Some(0),
            ..BilateralParams::new(3.0, 0.1)
        };
        assert_eq!(e.bilateral(&img, &p).unwrap().data(), img.data());
        for precision in [Precision::Exact, Precision::Fast] {
            let p = BilateralParams {
                precision,
                ..BilateralParams::new(2.0, 0.05)
            };
            assert_eq!(e.bilateral(&flat, &p).unwrap().data(), flat.data());
        }
    }
}

/// A device chain keeps f32 between stages and rounds once at the end;
/// the host path rounds after each stage: at most a step or two apart.
#[test]
fn chains_on_the_device_match_the_host_path() {
    use clfilter::pipeline::{parse, run_outcomes, run_stages};
    let Some(engine) = opencl_engine() else {
        return;
    };
    let mut rng = Rng::new(3);
    for c in [1, 3, 4] {
        let img = clfilter::DynImage::U8(photo(&mut rng, 29, 21, c));
        for spec in [
            "bilateral=sigma_s=2:sigma_r=0.1,convert=u8",
            "convert=f32,bilateral=sigma_s=1.5:sigma_r=0.2:border=mirror:precision=fast,convert=u16",
        ] {
            let ops = parse(spec).unwrap();
            let (got, outcomes) = run_outcomes(&engine, &ops, img.clone()).unwrap();
            assert!(outcomes.iter().all(|o| o.on_device), "{spec}: left the device");
            let (want, _) = run_stages(&Engine::cpu(), &ops, img.clone()).unwrap();
            let steps = if spec.ends_with("u16") { 257.0 * 1.5 } else { 1.0 };
            let diff = samples(&got)
                .iter()
                .zip(samples(&want))
                .map(|(a, b)| (a - b).abs())
                .fold(0.0f64, f64::max);
            assert!(diff <= steps, "{spec} x{c}: {diff} apart");
        }
    }
}

/// Every sample of `d`, widened.
fn samples(d: &clfilter::DynImage) -> Vec<f64> {
    fn all<T: Sample>(i: &Image<T>) -> Vec<f64> {
        i.rows().flatten().map(|v| v.to_f32() as f64).collect()
    }
    match d {
        clfilter::DynImage::U8(i) => all(i),
        clfilter::DynImage::U16(i) => all(i),
        clfilter::DynImage::F32(i) => all(i),
    }
}
