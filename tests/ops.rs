//! Every operation in `ops::OPS` × every OpenCL variant in its table (forced),
//! the default dispatch, and the CPU path × u8/u16/f32 × 1/3/4 channels ×
//! many sizes, against the op's `reference` module on random data.
//!
//! One test function covers one op, so its programs are compiled once (PoCL
//! compiles at first use) and the ops run in parallel. Without an OpenCL
//! device only the CPU paths run and "skipped: no OpenCL device" is printed
//! (`FILTERCTL_REQUIRE_OPENCL=1` turns that into a failure).

use clfilter::prelude::*;
mod common;

use std::collections::BTreeMap;
use std::time::Instant;

use clfilter::ops::minmax::{self, MinMax};
use clfilter::ops::normalize::{self, Coefficients};
use clfilter::ops::{transpose, OpSpec, Shape, VariantSpec, CPU, OPS};
use clfilter::{Engine, Error, Image, NormalizeParams, Result, RunReport, Sample};
use common::{
    assert_images, local_mem, opencl_engine, random_image_nan, strided_copy, Rng, TestSample,
};

/// Sides combined pairwise: 1, primes, powers of two and their neighbours
/// (not multiples of the 16/32 tiles or of the 4-pixel vectors).
const SIDES: &[usize] = &[1, 2, 3, 5, 7, 16, 17, 31, 33];
/// Long thin images (more than one work-group along one axis) and one square.
const EXTRA: &[(usize, usize)] = &[(257, 3), (3, 257), (1, 257), (257, 1), (64, 64)];
const CHANNELS: &[usize] = &[1, 3, 4];
/// Samples of padding after each row of the strided copies (not a multiple
/// of any channel count).
const PAD: usize = 5;
/// About one f32 sample in this many is NaN.
const NAN_ONE_IN: u64 = 16;

fn sizes() -> Vec<(usize, usize)> {
    let mut v: Vec<_> = SIDES
        .iter()
        .flat_map(|&w| SIDES.iter().map(move |&h| (w, h)))
        .collect();
    v.extend_from_slice(EXTRA);
    v
}

fn op(name: &str) -> &'static OpSpec {
    OPS.iter()
        .copied()
        .find(|o| o.name == name)
        .unwrap_or_else(|| panic!("ops::OPS has no '{name}'"))
}

fn shape<T: Sample>(img: &Image<T>) -> Shape {
    Shape::new(img.width(), img.height(), img.channels(), T::TYPE)
}

fn seed<T: Sample>(op: u64, w: usize, h: usize, c: usize) -> Rng {
    Rng::from_parts(&[op, T::TYPE.size() as u64, w as u64, h as u64, c as u64])
}

/// One way of running an operation.
struct Path {
    label: String,
    engine: Engine,
    /// The OpenCL variant this path forces, if any.
    forced: Option<&'static VariantSpec>,
    /// The variant the report must name; `None`: any of the op's.
    expect: Option<&'static str>,
    local_mem: u64,
}

/// The CPU backend (plain and with `cpu` forced), and with an OpenCL engine
/// also its default dispatch, forced `cpu`, and every variant forced.
fn paths(op: &'static OpSpec, cl: Option<&Engine>) -> Vec<Path> {
    let mut v = vec![
        Path {
            label: "Engine::cpu()".into(),
            engine: Engine::cpu(),
            forced: None,
            expect: Some(CPU),
            local_mem: 0,
        },
        Path {
            label: "Engine::cpu() forced cpu".into(),
            engine: Engine::cpu().with_variant(Some(op.name), CPU),
            forced: None,
            expect: Some(CPU),
            local_mem: 0,
        },
    ];
    if let Some(cl) = cl {
        let lm = local_mem(cl);
        v.push(Path {
            label: "opencl default".into(),
            engine: cl.clone(),
            forced: None,
            expect: None,
            local_mem: lm,
        });
        v.push(Path {
            label: "opencl forced cpu".into(),
            engine: cl.with_variant(Some(op.name), CPU),
            forced: None,
            expect: Some(CPU),
            local_mem: lm,
        });
        for spec in op.variants {
            v.push(Path {
                label: format!("opencl forced {}", spec.name),
                engine: cl.with_variant(Some(op.name), spec.name),
                forced: Some(spec),
                expect: Some(spec.name),
                local_mem: lm,
            });
        }
    }
    v
}

/// Per path: (runs compared, runs the variant declined as unsupported).
#[derive(Default)]
struct Tally(BTreeMap<String, (usize, usize)>);

impl Tally {
    fn finish(&self, op: &OpSpec, paths: &[Path], start: Instant) {
        eprintln!("{}: {:.1} s", op.name, start.elapsed().as_secs_f64());
        for p in paths {
            let (ran, unsupported) = self.0.get(&p.label).copied().unwrap_or_default();
            eprintln!(
                "  {:<28} compared {ran:>6}, unsupported {unsupported:>5}",
                p.label
            );
            assert!(ran > 0, "{}: path '{}' never ran", op.name, p.label);
        }
    }
}

impl Path {
    /// Runs `call` on this path's engine. When the forced variant cannot
    /// take `shape`, checks that the engine said `Error::Unsupported` and
    /// returns `None`. Otherwise checks the report (the forced variant ran,
    /// nothing fell back) and returns the result with the tolerance of the
    /// variant that produced it.
    fn run<R>(
        &self,
        op: &OpSpec,
        shape: &Shape,
        ctx: &str,
        tally: &mut Tally,
        call: impl FnOnce(&Engine) -> Result<(R, RunReport)>,
    ) -> Option<(R, f32)> {
        let res = call(&self.engine);
        let count = tally.0.entry(self.label.clone()).or_default();
        if let Some(spec) = self.forced {
            if let Err(why) = spec.check(shape, self.local_mem) {
                match res {
                    Err(Error::Unsupported {
                        op: o, variant: v, ..
                    }) if o == op.name && v == spec.name => {}
                    Err(e) => panic!(
                        "{ctx}: {}: the variant cannot run this shape ({why}), so forcing it \
                         must be Error::Unsupported naming {}/{}; got {e:?}",
                        self.label, op.name, spec.name
                    ),
                    Ok(_) => panic!(
                        "{ctx}: {}: the variant cannot run this shape ({why}), \
                         yet forcing it returned Ok",
                        self.label
                    ),
                }
                count.1 += 1;
                return None;
            }
        }
        let (r, report) = res.unwrap_or_else(|e| panic!("{ctx}: {}: {e}", self.label));
        assert_eq!(report.op, op.name, "{ctx}: {}: report.op", self.label);
        match self.expect {
            Some(want) => assert_eq!(
                report.variant, want,
                "{ctx}: {}: report.variant",
                self.label
            ),
            None => assert!(
                op.names().contains(&report.variant.as_str()),
                "{ctx}: {}: report.variant '{}' is not one of {:?}",
                self.label,
                report.variant,
                op.names()
            ),
        }
        assert!(
            report.fallbacks.is_empty(),
            "{ctx}: {}: variants failed before '{}' ran: {:?}",
            self.label,
            report.variant,
            report.fallbacks
        );
        count.0 += 1;
        let tol = op.variant(&report.variant).map_or(0.0, |s| s.tolerance);
        Some((r, tol))
    }
}

/// Runs `case::<T>(w, h, c)` for every sample type, channel count and size.
macro_rules! for_every_shape {
    ($case:ident, $($arg:expr),*) => {
        for (w, h) in sizes() {
            for &c in CHANNELS {
                $case::<u8>($($arg,)* w, h, c);
                $case::<u16>($($arg,)* w, h, c);
                $case::<f32>($($arg,)* w, h, c);
            }
        }
    };
}

// ---------------------------------------------------------------- transpose

#[test]
fn transpose_every_variant_matches_reference() {
    let start = Instant::now();
    let spec = op("transpose");
    let cl = opencl_engine();
    let paths = paths(spec, cl.as_ref());
    let mut tally = Tally::default();
    for_every_shape!(transpose_case, spec, &paths, &mut tally);
    tally.finish(spec, &paths, start);
}

fn transpose_case<T: TestSample>(
    spec: &OpSpec,
    paths: &[Path],
    tally: &mut Tally,
    w: usize,
    h: usize,
    c: usize,
) {
    let mut rng = seed::<T>(1, w, h, c);
    let img = random_image_nan::<T>(&mut rng, w, h, c, NAN_ONE_IN);
    let strided = strided_copy(&img, PAD);
    let want = transpose::reference::transpose(&img).expect("reference transpose");
    let shape = shape(&img);
    for p in paths {
        for (layout, input) in [("packed", &img), ("strided", &strided)] {
            let ctx = format!("transpose {} {w}x{h}x{c} {layout}", T::TYPE);
            if let Some((out, tol)) =
                p.run(spec, &shape, &ctx, tally, |e| e.transpose_report(input))
            {
                assert_images(&out, &want, tol, &format!("{ctx}: {}", p.label));
            }
        }
    }
}

// ------------------------------------------------------------------- minmax

fn assert_minmax(got: &MinMax, want: &MinMax, tol: f32, full: f32, ctx: &str) {
    assert_eq!(got.channels, want.channels, "{ctx}: channels");
    if tol == 0.0 {
        assert_eq!(got, want, "{ctx}");
        return;
    }
    let limit = tol * full;
    for c in 0..want.channels {
        for (g, w, what) in [
            (got.min[c], want.min[c], "min"),
            (got.max[c], want.max[c], "max"),
        ] {
            assert!(
                g == w || (g - w).abs() <= limit,
                "{ctx}: channel {c} {what}: got {g}, expected {w} (tolerance {tol})"
            );
        }
    }
}

#[test]
fn minmax_every_variant_matches_reference() {
    let start = Instant::now();
    let spec = op("minmax");
    let cl = opencl_engine();
    let paths = paths(spec, cl.as_ref());
    let mut tally = Tally::default();
    for_every_shape!(minmax_case, spec, &paths, &mut tally);
    tally.finish(spec, &paths, start);
}

fn minmax_case<T: TestSample>(
    spec: &OpSpec,
    paths: &[Path],
    tally: &mut Tally,
    w: usize,
    h: usize,
    c: usize,
) {
    let mut rng = seed::<T>(2, w, h, c);
    let img = random_image_nan::<T>(&mut rng, w, h, c, NAN_ONE_IN);
    let strided = strided_copy(&img, PAD);
    let want = minmax::reference::minmax(&img);
    let shape = shape(&img);
    for p in paths {
        for (layout, input) in [("packed", &img), ("strided", &strided)] {
            let ctx = format!("minmax {} {w}x{h}x{c} {layout}", T::TYPE);
            if let Some((got, tol)) = p.run(spec, &shape, &ctx, tally, |e| e.minmax_report(input)) {
                let full = T::TYPE.full_scale();
                assert_minmax(&got, &want, tol, full, &format!("{ctx}: {}", p.label));
            }
        }
    }
}

/// NaN samples are ignored by every path, and a channel holding only NaN
/// reports min = +inf, max = -inf.
#[test]
fn minmax_ignores_nan_and_all_nan_channel_is_empty() {
    let spec = op("minmax");
    let cl = opencl_engine();
    let paths = paths(spec, cl.as_ref());
    let mut tally = Tally::default();
    for &(w, h) in &[(1, 1), (3, 1), (5, 7), (33, 17), (257, 3), (64, 64)] {
        for &c in CHANNELS {
            for nan_ch in 0..c {
                let mut rng = Rng::from_parts(&[3, w as u64, h as u64, c as u64]);
                let img = Image::<f32>::from_fn(w, h, c, |_, _, ch| {
                    if ch == nan_ch || rng.below(4) == 0 {
                        f32::NAN
                    } else {
                        f32::random(&mut rng)
                    }
                })
                .unwrap();
                let want = minmax::reference::minmax(&img);
                assert_eq!(want.min[nan_ch], f32::INFINITY, "reference");
                assert_eq!(want.max[nan_ch], f32::NEG_INFINITY, "reference");
                let shape = shape(&img);
                for p in &paths {
                    let ctx = format!("minmax f32 {w}x{h}x{c} channel {nan_ch} all NaN");
                    if let Some((got, _)) =
                        p.run(spec, &shape, &ctx, &mut tally, |e| e.minmax_report(&img))
                    {
                        let ctx = format!("{ctx}: {}", p.label);
                        assert_eq!(got.min[nan_ch], f32::INFINITY, "{ctx}: min");
                        assert_eq!(got.max[nan_ch], f32::NEG_INFINITY, "{ctx}: max");
                        assert_eq!(got, want, "{ctx}");
                    }
                }
            }
        }
    }
}

// ---------------------------------------------------------------- normalize

/// Parameter sets, scaled to the input and output types' full ranges.
fn normalize_params(input: f32, output: f32) -> Vec<(&'static str, NormalizeParams)> {
    let p = |sub, factor| NormalizeParams { sub, factor };
    vec![
        ("auto", p(None, None)),
        ("rescale", p(None, Some(output / input))),
        ("sub only", p(Some(0.25 * input), None)),
        // (x - half) * 3 * out/in: negative for the lower half, above full
        // scale for the upper part: integer outputs saturate both ways.
        (
            "saturating",
            p(Some(0.5 * input), Some(3.0 * output / input)),
        ),
        (
            "negative factor",
            p(Some(0.1 * input), Some(-0.5 * output / input)),
        ),
        // Halves of integers: round-half-to-even on integer outputs.
        ("halves", p(Some(0.0), Some(0.5))),
    ]
}

#[test]
fn normalize_every_variant_matches_reference() {
    let start = Instant::now();
    let spec = op("normalize");
    let cl = opencl_engine();
    let paths = paths(spec, cl.as_ref());
    let mut tally = Tally::default();
    for_every_shape!(normalize_input, spec, &paths, &mut tally);
    tally.finish(spec, &paths, start);
}

fn normalize_input<T: TestSample>(
    spec: &OpSpec,
    paths: &[Path],
    tally: &mut Tally,
    w: usize,
    h: usize,
    c: usize,
) {
    let mut rng = seed::<T>(4, w, h, c);
    let img = random_image_nan::<T>(&mut rng, w, h, c, NAN_ONE_IN);
    let strided = strided_copy(&img, PAD);
    normalize_case::<T, u8>(spec, paths, tally, &img, &strided);
    normalize_case::<T, u16>(spec, paths, tally, &img, &strided);
    normalize_case::<T, f32>(spec, paths, tally, &img, &strided);
}

fn normalize_case<T: TestSample, U: TestSample>(
    spec: &OpSpec,
    paths: &[Path],
    tally: &mut Tally,
    img: &Image<T>,
    strided: &Image<T>,
) {
    let (w, h, c) = (img.width(), img.height(), img.channels());
    let reference_minmax = minmax::reference::minmax(img);
    let shape = shape(img);
    let params = normalize_params(T::TYPE.full_scale(), U::TYPE.full_scale());
    for (i, (name, params)) in params.iter().enumerate() {
        let auto = params.sub.is_none() && params.factor.is_none();
        let coefficients = if auto {
            Coefficients::stretch(&reference_minmax, T::TYPE, U::TYPE)
        } else {
            Coefficients::explicit(params)
        };
        let ctx = format!("normalize {}->{} {w}x{h}x{c} {name}", T::TYPE, U::TYPE);
        let Ok(k) = coefficients else {
            // Only a colour range made of NaN alone cannot be stretched.
            assert!(auto, "{ctx}: {coefficients:?}");
            for p in paths {
                match p.engine.normalize_report::<T, U>(img, params) {
                    Err(Error::InvalidInput(_)) => {}
                    other => panic!("{ctx}: {}: expected InvalidInput, got {other:?}", p.label),
                }
            }
            continue;
        };
        let want = normalize::reference::normalize::<T, U>(img, &k).expect("reference normalize");
        // Strided inputs for two of the parameter sets keep the run short;
        // the layout does not interact with the parameters.
        let layouts: &[(&str, &Image<T>)] = if i == 0 || i == 3 {
            &[("packed", img), ("strided", strided)]
        } else {
            &[("packed", img)]
        };
        for p in paths {
            for &(layout, input) in layouts {
                let ctx = format!("{ctx} {layout}");
                let out = p.run(spec, &shape, &ctx, tally, |e| {
                    let (out, mut reports) = e.normalize_report::<T, U>(input, params)?;
                    let ops: Vec<_> = reports.iter().map(|r| r.op).collect();
                    let expected: &[&str] = if auto {
                        &["minmax", "normalize"]
                    } else {
                        &["normalize"]
                    };
                    assert_eq!(ops, expected, "{ctx}: {}: reports", p.label);
                    Ok((out, reports.pop().expect("one report at least")))
                });
                if let Some((out, tol)) = out {
                    assert_images(&out, &want, tol, &format!("{ctx}: {}", p.label));
                }
            }
        }
    }
}

/// The automatic stretch cannot use an infinite (or empty) colour range:
/// every path says `Error::InvalidInput`. Infinity in the alpha channel alone
/// does not matter, since alpha is not stretched.
#[test]
fn normalize_auto_rejects_infinite_range() {
    let spec = op("normalize");
    let cl = opencl_engine();
    let paths = paths(spec, cl.as_ref());
    let auto = NormalizeParams::default();
    for &(w, h) in &[(1, 1), (7, 5), (33, 3)] {
        for &c in CHANNELS {
            for bad in [f32::INFINITY, f32::NEG_INFINITY, f32::NAN] {
                let mut rng = Rng::from_parts(&[5, w as u64, h as u64, c as u64]);
                let mut img = common::random_image::<f32>(&mut rng, w, h, c);
                // One infinity in the last colour channel; NaN everywhere.
                let colour = if c == 4 { 3 } else { c };
                if bad.is_nan() {
                    img = Image::from_fn(w, h, c, |x, y, ch| {
                        if ch < colour {
                            f32::NAN
                        } else {
                            img.get(x, y, ch)
                        }
                    })
                    .unwrap();
                } else {
                    img.row_mut(h / 2)[(w / 2) * c + colour - 1] = bad;
                }
                for p in &paths {
                    let ctx = format!("normalize auto f32 {w}x{h}x{c} with {bad}: {}", p.label);
                    match p.engine.normalize_report::<f32, u8>(&img, &auto) {
                        Err(Error::InvalidInput(_)) => {}
                        other => panic!("{ctx}: expected Error::InvalidInput, got {other:?}"),
                    }
                    match p.engine.normalize_report::<f32, f32>(&img, &auto) {
                        Err(Error::InvalidInput(_)) => {}
                        other => panic!("{ctx}: expected Error::InvalidInput, got {other:?}"),
                    }
                }
            }
            if c == 4 {
                // +inf in alpha only: stretched normally, alpha saturates.
                let mut rng = Rng::from_parts(&[6, w as u64, h as u64]);
                let mut img = common::random_image::<f32>(&mut rng, w, h, 4);
                img.row_mut(0)[3] = f32::INFINITY;
                let k =
                    Coefficients::stretch(&minmax::reference::minmax(&img), f32::TYPE, u8::TYPE)
                        .expect("alpha is not part of the stretched range");
                let want = normalize::reference::normalize::<f32, u8>(&img, &k).unwrap();
                assert_eq!(want.get(0, 0, 3), 255);
                let shape = shape(&img);
                let mut tally = Tally::default();
                for p in &paths {
                    let ctx = format!("normalize auto f32 {w}x{h}x4 with +inf alpha");
                    if let Some((out, tol)) = p.run(spec, &shape, &ctx, &mut tally, |e| {
                        let (o, mut r) = e.normalize_report::<f32, u8>(&img, &auto)?;
                        Ok((o, r.pop().unwrap()))
                    }) {
                        assert_images(&out, &want, tol, &format!("{ctx}: {}", p.label));
                    }
                }
            }
        }
    }
}

/// Explicit parameters must be finite on every path.
#[test]
fn normalize_rejects_non_finite_parameters() {
    let spec = op("normalize");
    let cl = opencl_engine();
    let img = Image::<u8>::from_fn(5, 3, 3, |x, y, c| (x * 40 + y * 7 + c) as u8).unwrap();
    for p in &paths(spec, cl.as_ref()) {
        for params in [
            NormalizeParams {
                sub: Some(f32::NAN),
                factor: None,
            },
            NormalizeParams {
                sub: None,
                factor: Some(f32::INFINITY),
            },
        ] {
            match p.engine.normalize::<u8, u8>(&img, &params) {
                Err(Error::InvalidArgument(_)) => {}
                other => panic!(
                    "{}: {params:?}: expected InvalidArgument, got {other:?}",
                    p.label
                ),
            }
        }
    }
}

/// Regression: grid-stride loops once used `int` indices, which wrapped past
/// INT_MAX on the last step and read outside the buffer for gray images near
/// 2^31 pixels (a segfault on PoCL). Runs where the device can hold such a
/// buffer (PoCL: 2 GiB), else says it was skipped.
#[test]
fn minmax_near_int_max_pixels_stays_in_bounds() {
    let Some(engine) = common::opencl_engine() else {
        return;
    };
    let n = i32::MAX as usize; // 1 x (2^31 - 1) gray u8: the largest image allowed
    let max_alloc = engine.backend().device_info().map_or(0, |d| d.max_alloc);
    if (n as u64) > max_alloc {
        eprintln!("skipped: the device's largest buffer ({max_alloc} B) is below {n} B");
        return;
    }
    let mut data = vec![100u8; n];
    data[12_345] = 3;
    data[n - 1] = 250; // the very last sample, reached only by the last loop step
    let img = Image::from_vec(n, 1, 1, data).unwrap();
    for v in ["tree", "tree_vec4"] {
        let m = engine
            .with_variant(Some("minmax"), v)
            .minmax(&img)
            .unwrap_or_else(|e| panic!("{v}: {e}"));
        assert_eq!((m.min[0], m.max[0]), (3.0, 250.0), "{v}");
    }
}
