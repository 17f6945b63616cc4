//! Non-finite pixels (NaN, +inf, -inf) in f32 inputs (docs/QUALITY.md,
//! "Non-finite pixels").
//!
//! Operations that spread them ([`OpSpec::spreads_nonfinite`]: the
//! Gaussian) refuse them by default with `Error::NonFinite` (the count and
//! the first position), and repair them first with `nonfinite=zero|clamp`:
//! on the CPU path, every OpenCL variant forced, and inside device-resident
//! pipelines (each variant forced there too), on odd sizes with one NaN,
//! one +inf, one -inf and several. Operations that keep them local take
//! them without error and keep them where they were. Also: the spec key,
//! the engine API, a pipeline or stream stage that creates infinities, and
//! the real `filterctl` binary.

use std::io::Cursor;
use std::process::Command;

use clfilter::ops::gaussian::{reference, GaussianParams, SPEC};
use clfilter::ops::normalize::NormalizeParams;
use clfilter::ops::OPERATIONS;
use clfilter::pipeline::stream::{run_stream, FrameSink, OutFrame, StreamOptions};
use clfilter::pipeline::{self, Pipeline};
use clfilter::prelude::*;
use clfilter::{ColormapParams, DynImage, Engine, Error, Image, NonFinite};

mod common;
use common::{opencl_engine, random_image, Rng};

/// Odd sizes: primes both ways, and a column.
const SIZES: &[(usize, usize)] = &[(13, 11), (37, 17), (1, 9)];
/// Below the recursive filters' range (the FIR runs) and inside it.
const SIGMAS: &[f32] = &[0.7, 3.0];
/// The CPU path's bound against the reference (tests/gaussian.rs).
const CPU_TOLERANCE: f32 = 1e-3;

/// Samples set to NaN, an infinity or a magnitude beyond
/// [`clfilter::image::finite::MAX_MAGNITUDE`]: `(x, y, channel, value)`.
type Damage = Vec<(usize, usize, usize, f32)>;

/// One NaN, one +inf, one -inf, and several of each kind together.
fn damages(w: usize, h: usize, c: usize) -> Vec<(&'static str, Damage)> {
    let (nan, inf) = (f32::NAN, f32::INFINITY);
    vec![
        ("one NaN", vec![(w / 2, h / 2, c - 1, nan)]),
        ("one +inf", vec![(0, h - 1, 0, inf)]),
        ("one -inf", vec![(w - 1, 0, c / 2, -inf)]),
        // Finite, but beyond 2^120 the recursive sums overflow.
        ("one -3e38", vec![(w / 3, h - 1, 0, -3e38)]),
        (
            "several",
            vec![
                (w - 1, h - 1, c - 1, nan),
                (w / 3, h / 2, 0, -inf),
                (w / 2, 1, c - 1, inf),
                (0, h / 3, c / 2, nan),
            ],
        ),
    ]
}

/// A random finite image with `damage` applied.
fn damaged(seed: u64, (w, h, c): (usize, usize, usize), damage: &Damage) -> Image<f32> {
    let mut img = random_image::<f32>(&mut Rng::from_parts(&[seed, w as u64, h as u64]), w, h, c);
    for &(x, y, ch, v) in damage {
        img.row_mut(y)[x * c + ch] = v;
    }
    img
}

/// Whether a sample is one a spreading operation accepts.
fn usable(v: f32) -> bool {
    v.abs() <= 2f32.powi(120)
}

/// The count and the first position in reading order, counted here
/// independently of the library.
fn expected(img: &Image<f32>) -> (u64, (usize, usize, usize)) {
    let c = img.channels();
    let bad: Vec<_> = (0..img.height())
        .flat_map(|y| (0..img.width() * c).map(move |i| (y, i)))
        .filter(|&(y, i)| !usable(img.row(y)[i]))
        .collect();
    let (y, i) = bad[0];
    (bad.len() as u64, (i / c, y, i % c))
}

/// The image a policy should produce, written out plainly: zero: every
/// non-finite sample 0; clamp: infinities to their channel's finite
/// extremes, NaN to 0.
fn repaired(img: &Image<f32>, policy: NonFinite) -> Image<f32> {
    let c = img.channels();
    let finite = |ch: usize| {
        (0..img.height())
            .flat_map(move |y| img.row(y).iter().skip(ch).step_by(c).copied())
            .filter(|&v| usable(v))
    };
    let lo: Vec<f32> = (0..c)
        .map(|ch| finite(ch).fold(f32::INFINITY, f32::min))
        .collect();
    let hi: Vec<f32> = (0..c)
        .map(|ch| finite(ch).fold(f32::NEG_INFINITY, f32::max))
        .collect();
    Image::from_fn(img.width(), img.height(), c, |x, y, ch| {
        let v = img.get(x, y, ch);
        match (policy, v) {
            (_, v) if usable(v) => v,
            (NonFinite::Clamp, v) if v > 0.0 => hi[ch],
            (NonFinite::Clamp, v) if v < 0.0 => lo[ch],
            _ => 0.0,
        }
    })
    .unwrap()
}

/// Checks `got` against the reference blur of `fixed`: max |got - ref| /
/// max |fixed| within `tol`, every sample finite.
fn assert_blur(got: &Image<f32>, fixed: &Image<f32>, p: &GaussianParams, tol: f32, ctx: &str) {
    let want = reference::gaussian(fixed, p).unwrap();
    let scale = fixed.rows().flatten().fold(1e-30f32, |m, v| m.max(v.abs()));
    for y in 0..got.height() {
        for (i, (&g, &w)) in got.row(y).iter().zip(want.row(y)).enumerate() {
            assert!(g.is_finite(), "{ctx}: sample {i} of row {y} is {g}");
            let e = (g - w).abs() / scale;
            assert!(
                e <= tol,
                "{ctx}: sample {i} of row {y}: {g} vs {w} ({e:.2e} > {tol})"
            );
        }
    }
}

/// Checks that `r` is the `NonFinite` error `img` deserves.
fn assert_refused<T: std::fmt::Debug>(r: clfilter::Result<T>, img: &Image<f32>, ctx: &str) {
    let (count, first) = expected(img);
    match r {
        Err(Error::NonFinite {
            op,
            count: n,
            first: at,
        }) => {
            assert_eq!((op.as_str(), n, at), ("gaussian", count, first), "{ctx}");
        }
        other => panic!("{ctx}: expected Error::NonFinite, got {other:?}"),
    }
}

/// Engines that run the Gaussian on one path each: the CPU, and each
/// OpenCL variant forced, with the tolerance each holds.
fn paths(cl: Option<&Engine>) -> Vec<(String, Engine, f32)> {
    let mut out = vec![("cpu".to_string(), Engine::cpu(), CPU_TOLERANCE)];
    if let Some(cl) = cl {
        for v in SPEC.variants {
            let e = cl.with_variant(Some(SPEC.name), v.name);
            out.push((v.name.to_string(), e, v.tolerance));
        }
    }
    out
}

/// Every operation whose table says it spreads non-finite values has a
/// runner below; a new one fails here until its tests exist.
#[test]
fn every_spreading_operation_is_tested() {
    let spreading: Vec<&str> = OPERATIONS
        .iter()
        .filter(|o| o.spec.spreads_nonfinite)
        .map(|o| o.spec.name)
        .collect();
    assert_eq!(spreading, ["gaussian", "bilateral"]);
}

/// Engine calls: the default refuses with the count and the first position;
/// zero and clamp give the blur of the repaired image, on every path.
#[test]
fn engine_calls_refuse_or_repair_on_every_path() {
    let cl = opencl_engine();
    for (label, engine, tol) in paths(cl.as_ref()) {
        let mut count = 0;
        for &(w, h) in SIZES {
            for c in [1, 3, 4] {
                for (what, damage) in damages(w, h, c) {
                    let img = damaged(7, (w, h, c), &damage);
                    for &sigma in SIGMAS {
                        let p = GaussianParams::new(sigma);
                        let ctx = format!("{label} {w}x{h}x{c} sigma {sigma} {what}");
                        // A forced variant that declines the shape declines it
                        // finite too; the input is checked first.
                        if ran(engine.gaussian(&repaired(&img, NonFinite::Zero), &p)).is_none() {
                            continue;
                        }
                        assert_refused(engine.gaussian(&img, &p), &img, &ctx);
                        let mut dst = img.clone();
                        assert_refused(engine.gaussian_into(&img, &p, &mut dst), &img, &ctx);
                        common::assert_images(&dst, &img, 0.0, &format!("{ctx}: dst on an error"));
                        for policy in [NonFinite::Zero, NonFinite::Clamp] {
                            let ctx = format!("{ctx} nonfinite={policy}");
                            let fixed = repaired(&img, policy);
                            let e = engine.with_nonfinite(policy);
                            let got = e
                                .gaussian(&img, &p)
                                .unwrap_or_else(|e| panic!("{ctx}: {e}"));
                            assert_blur(&got, &fixed, &p, tol, &ctx);
                            let same = engine.gaussian(&fixed, &p).unwrap();
                            assert!(got == same, "{ctx}: differs from the repaired input's blur");
                            e.gaussian_into(&img, &p, &mut dst).unwrap();
                            assert!(dst == same, "{ctx}: gaussian_into");
                        }
                        count += 1;
                    }
                }
            }
        }
        assert!(count > 0, "{label}: declined every case");
    }
}

/// Device-resident pipelines check the f32 input of the Gaussian stage on
/// the device, each variant forced there; the result of a repair equals
/// the chain run on the repaired image.
#[test]
fn device_pipelines_refuse_or_repair_with_every_variant() {
    let Some(cl) = opencl_engine() else {
        return;
    };
    for v in SPEC.variants {
        let mut ran = 0;
        for &(w, h) in SIZES {
            for c in [1, 3, 4] {
                for (what, damage) in damages(w, h, c) {
                    let img = damaged(11, (w, h, c), &damage);
                    let ctx = format!("{} {w}x{h}x{c} {what}", v.name);
                    let spec =
                        |policy: &str| format!("gaussian=sigma=3{policy}:variant={}", v.name);
                    let plain: Pipeline = spec("").parse().unwrap();
                    assert_refused(plain.run(&cl, img.clone().into()), &img, &ctx);
                    for policy in [NonFinite::Zero, NonFinite::Clamp] {
                        let ctx = format!("{ctx} nonfinite={policy}");
                        let p: Pipeline = spec(&format!(":nonfinite={policy}")).parse().unwrap();
                        let Ok((out, outcomes)) = p.run(&cl, img.clone().into()) else {
                            continue;
                        };
                        if !outcomes[0].on_device {
                            continue; // the variant declined; the host path ran
                        }
                        assert!(
                            outcomes[0].reports.iter().any(|r| r.variant == "nonfinite"),
                            "{ctx}: no device check reported"
                        );
                        let fixed = repaired(&img, policy);
                        let (same, _) = plain.run(&cl, fixed.clone().into()).unwrap();
                        assert_eq!(out, same, "{ctx}: differs from the repaired input's chain");
                        let DynImage::F32(out) = out else {
                            panic!("{ctx}: not f32")
                        };
                        assert_blur(&out, &fixed, &GaussianParams::new(3.0), v.tolerance, &ctx);
                        ran += 1;
                    }
                }
            }
        }
        eprintln!("{}: {ran} device-resident repairs", v.name);
    }
}

/// In a pipeline the position is in the input of the stage that spreads
/// (after a transpose, transposed); integer working images are not
/// refused; a stage that creates infinities from finite values is caught
/// by the next stage that would spread them. On both paths.
#[test]
fn pipelines_check_the_input_of_the_spreading_stage() {
    let cl = opencl_engine();
    let engines: Vec<Engine> = std::iter::once(Engine::cpu()).chain(cl).collect();
    let img = damaged(
        3,
        (9, 5, 1),
        &vec![(7, 1, 0, f32::NAN), (2, 3, 0, f32::INFINITY)],
    );
    for e in &engines {
        let ctx = e.backend().describe();
        let run = |spec: &str, img: &Image<f32>| -> clfilter::Result<DynImage> {
            Ok(spec.parse::<Pipeline>()?.run(e, img.clone().into())?.0)
        };
        match run("transpose,gaussian=sigma=2", &img) {
            Err(Error::NonFinite { count, first, .. }) => {
                assert_eq!((count, first), (2, (3, 2, 0)), "{ctx}: transposed position")
            }
            other => panic!("{ctx}: {other:?}"),
        }
        let out = run("normalize=sub=0:factor=50:out=u8,gaussian=sigma=2", &img).unwrap();
        assert!(matches!(out, DynImage::U8(_)), "{ctx}");
        let finite = Image::from_fn(9, 5, 1, |x, _, _| 1e30 * (x + 1) as f32).unwrap();
        let created = "normalize=factor=1e10:out=f32,gaussian=sigma=2";
        match run(created, &finite) {
            Err(Error::NonFinite {
                count: 45,
                first: (0, 0, 0),
                ..
            }) => {}
            other => panic!("{ctx}: the stage's infinities: {other:?}"),
        }
        let out = run(&format!("{created}:nonfinite=zero"), &finite).unwrap();
        let DynImage::F32(out) = out else {
            panic!("{ctx}")
        };
        assert!(
            out.rows().flatten().all(|v| *v == 0.0),
            "{ctx}: all infinite became 0"
        );
        // A copy keeps NaN where it is, so it needs no check.
        let DynImage::F32(copy) = run("gaussian=sigma=0", &img).unwrap() else {
            panic!()
        };
        assert!(copy.get(7, 1, 0).is_nan(), "{ctx}: the copy");
    }
}

/// Collects a stream's frames.
#[derive(Default)]
struct Frames(Vec<DynImage>);

impl FrameSink for Frames {
    fn frame(&mut self, f: &OutFrame<'_>) -> clfilter::Result<()> {
        self.0.push(f.to_image()?);
        Ok(())
    }
}

/// Streams of integer camera frames hold no NaN, but a stage that
/// overflows f32 makes infinities: the stage that would spread them
/// refuses the frame (the stream ends with the error, on a device without
/// retrying on the host path), or repairs it with `nonfinite=zero`.
#[test]
fn streams_refuse_infinities_a_stage_made() {
    let cl = opencl_engine();
    let engines: Vec<Engine> = std::iter::once(Engine::cpu()).chain(cl).collect();
    let (w, h) = (16, 6);
    // Three mono16 frames, little-endian: small samples, and every 11th
    // 65535, which the factor pushes past f32's range.
    let sample = |i: usize| if i % 11 == 4 { 65535 } else { (i % 7) as u16 };
    let bytes: Vec<u8> = (0..3 * w * h)
        .flat_map(|i| sample(i).to_le_bytes())
        .collect();
    let opts = StreamOptions::new(w, h, "mono16".parse().unwrap());
    let spec = "normalize=factor=1e34:out=f32,gaussian=sigma=2";
    for e in &engines {
        let ctx = e.backend().describe();
        let ops = pipeline::parse(spec).unwrap();
        let r = run_stream(e, &ops, &opts, Cursor::new(&bytes), &mut Frames::default());
        match r {
            Err(Error::NonFinite { count, first, .. }) => {
                assert_eq!((count, first), (9, (4, 0, 0)), "{ctx}")
            }
            other => panic!("{ctx}: {other:?}"),
        }
        let ops = pipeline::parse(&format!("{spec}:nonfinite=zero")).unwrap();
        let mut frames = Frames::default();
        run_stream(e, &ops, &opts, Cursor::new(&bytes), &mut frames).unwrap();
        assert_eq!(frames.0.len(), 3, "{ctx}");
        for f in &frames.0 {
            let DynImage::F32(f) = f else {
                panic!("{ctx}: not f32")
            };
            assert!(f.rows().flatten().all(|v| v.is_finite()), "{ctx}");
        }
    }
}

/// A device chain that starts from integers checks a spreading stage's
/// input only once the stages' bound (`StageOp::bound`) leaves the range:
/// a camera chain `demosaic=out=f32,gaussian` or `convert=f32,gaussian`
/// runs no count (and no readback that would stall a stream), a
/// `normalize` with a huge factor before the Gaussian does. Demosaic's
/// gains are bounded for this.
#[test]
fn integer_chains_skip_the_check_until_a_stage_can_overflow() {
    let frame = DynImage::U16(random_image::<u16>(&mut Rng::new(5), 34, 18, 1));
    let Err(Error::Spec(m)) = pipeline::parse("demosaic=wb_r=65537") else {
        panic!("a gain over 65536 parsed")
    };
    assert!(m.contains("wb_r=65537 is not within 0..=65536"), "{m}");
    // The host path follows the same bounds: a factor that can overflow
    // is still checked there.
    let cpu = Engine::cpu();
    let p: Pipeline = "demosaic=bits=12:out=f32,gaussian=sigma=2".parse().unwrap();
    assert!(p.run(&cpu, frame.clone()).is_ok());
    let p: Pipeline = "normalize=factor=1e36:out=f32,gaussian=sigma=2"
        .parse()
        .unwrap();
    assert!(matches!(
        p.run(&cpu, frame.clone()),
        Err(Error::NonFinite { .. })
    ));
    let Some(cl) = opencl_engine() else {
        return;
    };
    for (spec, checks) in [
        ("demosaic=bits=12:out=f32,gaussian=sigma=2", false),
        ("demosaic=bits=12:out=f32,transpose,gaussian=sigma=2", false),
        (
            "demosaic=bits=12:out=f32,normalize=factor=3:out=f32,gaussian=sigma=2",
            false,
        ),
        ("convert=f32,gaussian=sigma=2", false),
        (
            "convert=f32,normalize=factor=1e33:out=f32,gaussian=sigma=2",
            true,
        ),
        (
            "normalize=sub=-1e20:factor=1e20:out=f32,gaussian=sigma=2",
            true,
        ),
    ] {
        let p: Pipeline = spec.parse().unwrap();
        // A refusal proves the count ran as well as its report does.
        let counted = match p.run(&cl, frame.clone()) {
            Ok((_, outcomes)) => outcomes
                .iter()
                .flat_map(|o| &o.reports)
                .any(|r| r.variant == "nonfinite"),
            Err(Error::NonFinite { .. }) => true,
            Err(e) => panic!("{spec}: {e}"),
        };
        assert_eq!(counted, checks, "{spec}");
    }
}

/// Operations that keep NaN local take it without error under the default
/// policy, and leave it where it was.
#[test]
fn local_operations_keep_nan_where_it_was() {
    let cl = opencl_engine();
    let mut engines = vec![("cpu".to_string(), Engine::cpu())];
    for op in OPERATIONS.iter().filter(|o| !o.spec.spreads_nonfinite) {
        for v in op.spec.variants {
            if let Some(cl) = &cl {
                let e = cl.with_variant(Some(op.spec.name), v.name);
                engines.push((format!("{}/{}", op.spec.name, v.name), e));
            }
        }
    }
    let (w, h) = (13, 7);
    for c in [1, 3, 4] {
        let img = damaged(
            5,
            (w, h, c),
            &vec![(4, 2, c - 1, f32::NAN), (1, 5, 0, f32::INFINITY)],
        );
        for (label, e) in &engines {
            let ctx = format!("{label} {w}x{h}x{c}");
            if let Some(t) = ran(e.transpose(&img)) {
                for y in 0..w {
                    for x in 0..h {
                        for ch in 0..c {
                            let (v, src) = (t.get(x, y, ch), img.get(y, x, ch));
                            assert!(
                                v.to_bits() == src.to_bits(),
                                "{ctx}: transpose at ({x}, {y}, {ch})"
                            );
                        }
                    }
                }
            }
            let explicit = NormalizeParams {
                sub: Some(0.5),
                factor: Some(2.0),
            };
            if let Some(n) = ran::<Image<f32>>(e.normalize(&img, &explicit)) {
                for y in 0..h {
                    for i in 0..w * c {
                        let bad = (y, i) == (2, 4 * c + c - 1) || (y, i) == (5, c);
                        assert_eq!(!n.row(y)[i].is_finite(), bad, "{ctx}: normalize ({i}, {y})");
                    }
                }
            }
            ran(e.minmax(&img));
            if c == 1 {
                let p = ColormapParams {
                    min: Some(0.0),
                    max: Some(1.0),
                    ..Default::default()
                };
                ran::<Image<u8>>(e.colormap(&img, &p));
            }
        }
    }
}

/// The result of a call, `None` when a forced variant declines the shape;
/// any other error fails the test.
fn ran<T>(r: clfilter::Result<T>) -> Option<T> {
    match r {
        Err(Error::Unsupported { .. }) => None,
        r => Some(r.unwrap_or_else(|e| panic!("{e}"))),
    }
}

/// `nonfinite=` is a key of stages that spread non-finite values only; a
/// bad value is a spec error pointing at it; it prints back.
#[test]
fn spec_key_parses_and_points_at_bad_values() {
    let ops = pipeline::parse("gaussian=sigma=2:nonfinite=clamp:variant=cpu").unwrap();
    assert_eq!(ops[0].nonfinite, Some(NonFinite::Clamp));
    assert_eq!(
        ops[0].to_string(),
        "gaussian=sigma=2:nonfinite=clamp:variant=cpu"
    );
    assert_eq!(pipeline::parse(&ops[0].to_string()).unwrap(), ops);
    assert_eq!(
        pipeline::parse("gaussian=sigma=2").unwrap()[0].nonfinite,
        None
    );
    let spec = "transpose,gaussian=sigma=2:nonfinite=nan";
    let Err(Error::Spec(m)) = pipeline::parse(spec) else {
        panic!("{spec}")
    };
    assert!(
        m.contains("stage 2 'gaussian': nonfinite=nan is not error, zero or clamp"),
        "{m}"
    );
    let caret = m.lines().last().unwrap();
    let col = spec.find("nonfinite=nan").unwrap();
    assert_eq!(caret.trim_start().len(), "nonfinite=nan".len(), "{m}");
    assert_eq!(caret.len() - caret.trim_start().len(), 4 + col, "{m}");
    let Err(Error::Spec(m)) = pipeline::parse("transpose=nonfinite=zero") else {
        panic!()
    };
    assert!(
        m.contains("option 'nonfinite' unknown (known: variant)"),
        "{m}"
    );
}

/// The engine's policy: default Error, set and copied, and the message
/// names the count, the position and the repair.
#[test]
fn engine_policy_and_message() {
    let mut e = Engine::cpu();
    assert_eq!(e.nonfinite(), NonFinite::Error);
    let img = damaged(
        1,
        (6, 4, 3),
        &vec![(5, 2, 1, f32::NAN), (2, 3, 0, f32::NAN)],
    );
    let err = e.gaussian(&img, &GaussianParams::new(2.0)).unwrap_err();
    let m = err.to_string();
    for part in [
        "2 samples that are NaN, infinite or beyond ±2^120",
        "x=5 y=2 channel 1",
        "nonfinite=zero",
    ] {
        assert!(m.contains(part), "'{part}' missing from: {m}");
    }
    e.set_nonfinite(NonFinite::Zero);
    assert_eq!(
        e.with_nonfinite(NonFinite::Clamp).nonfinite(),
        NonFinite::Clamp
    );
    assert!(e.gaussian(&img, &GaussianParams::new(2.0)).is_ok());
    // A stage's own key wins over the engine's policy.
    let p: Pipeline = "gaussian=sigma=2:nonfinite=error".parse().unwrap();
    assert!(matches!(
        p.run(&e, img.into()),
        Err(Error::NonFinite { .. })
    ));
}

/// The real binary: a gray f32 TIFF with a NaN is refused (exit 1, the
/// count and the position on stderr, no output file); with
/// `nonfinite=zero` it is blurred into a finite image.
#[test]
fn filterctl_apply_refuses_or_repairs() {
    let dir = tempfile::tempdir().unwrap();
    let (input, output) = (dir.path().join("in.tif"), dir.path().join("out.tif"));
    let mut img = Image::from_fn(21, 13, 1, |x, y, _| (x * y) as f32 / 300.0).unwrap();
    img.row_mut(6)[10] = f32::NAN;
    clfilter::image::save(&img.into(), &input).unwrap();
    // The CPU backend (the host path) and, where OpenCL is required, an
    // OpenCL device (the device chain).
    let mut devices = vec!["cpu"];
    if common::opencl_required() {
        devices.push("opencl");
    }
    for device in devices {
        let apply = |spec: &str| {
            Command::new(env!("CARGO_BIN_EXE_filterctl"))
                .env("FILTERCTL_CACHE_DIR", "disabled")
                .env_remove("FILTERCTL_VARIANT")
                .args(["--device", device, "apply", "-f", spec])
                .arg(&input)
                .arg("-o")
                .arg(&output)
                .output()
                .unwrap()
        };
        let out = apply("gaussian=sigma=2");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{device}: {stderr}");
        assert!(
            stderr.contains("1 sample that is NaN, infinite or beyond ±2^120"),
            "{stderr}"
        );
        assert!(stderr.contains("x=10 y=6 channel 0"), "{stderr}");
        assert!(!output.exists(), "{device}: an output was written");
        let out = apply("gaussian=sigma=2:nonfinite=zero");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let DynImage::F32(blurred) = clfilter::image::load(&output).unwrap() else {
            panic!("{device}: the output is not f32")
        };
        assert!(blurred.rows().flatten().all(|v| v.is_finite()), "{device}");
        std::fs::remove_file(&output).unwrap();
    }
}

/// The bilateral filter: an f32 input with NaN, infinities or huge values is
/// refused with the count and the first position, or filtered after the
/// repair (exactly the filter of the repaired image), on the CPU path and
/// every OpenCL variant forced, at both precisions; and a device chain's
/// stage takes `nonfinite=`.
#[test]
fn bilateral_refuses_or_repairs_on_every_path() {
    use clfilter::ops::bilateral::{BilateralParams, Precision, SPEC as BILATERAL};
    let cl = opencl_engine();
    let mut engines = vec![("cpu".to_string(), Engine::cpu())];
    if let Some(cl) = &cl {
        for v in BILATERAL.variants {
            engines.push((
                v.name.to_string(),
                cl.with_variant(Some(BILATERAL.name), v.name),
            ));
        }
    }
    for (label, engine) in &engines {
        let mut count = 0;
        for precision in [Precision::Exact, Precision::Fast] {
            let p = BilateralParams {
                precision,
                ..BilateralParams::new(1.5, 0.2)
            };
            for c in [1, 4] {
                for (what, damage) in damages(13, 11, c) {
                    let img = damaged(5, (13, 11, c), &damage);
                    let ctx = format!("{label} {precision:?} x{c} {what}");
                    if ran(engine.bilateral(&repaired(&img, NonFinite::Zero), &p)).is_none() {
                        continue;
                    }
                    let (n, first) = expected(&img);
                    match engine.bilateral(&img, &p) {
                        Err(Error::NonFinite {
                            op,
                            count,
                            first: at,
                        }) => {
                            assert_eq!((op.as_str(), count, at), ("bilateral", n, first), "{ctx}");
                        }
                        other => panic!("{ctx}: expected Error::NonFinite, got {other:?}"),
                    }
                    for policy in [NonFinite::Zero, NonFinite::Clamp] {
                        let got = engine.with_nonfinite(policy).bilateral(&img, &p).unwrap();
                        let same = engine.bilateral(&repaired(&img, policy), &p).unwrap();
                        assert!(
                            got == same,
                            "{ctx} {policy}: not the repaired input's filter"
                        );
                        assert!(
                            got.rows().flatten().all(|v| v.is_finite()),
                            "{ctx} {policy}"
                        );
                    }
                    count += 1;
                }
            }
        }
        assert!(count > 0, "{label}: declined every case");
    }
    let Some(cl) = cl else {
        return;
    };
    let img = damaged(6, (17, 9, 4), &damages(17, 9, 4)[4].1);
    let run = |spec: &str| {
        let ops = pipeline::parse(spec).unwrap();
        pipeline::run_outcomes(&cl, &ops, DynImage::F32(img.clone()))
    };
    assert!(matches!(
        run("bilateral=sigma_s=1.5:sigma_r=0.2"),
        Err(Error::NonFinite { .. })
    ));
    let (out, outcomes) = run("bilateral=sigma_s=1.5:sigma_r=0.2:nonfinite=zero").unwrap();
    assert!(outcomes.iter().all(|o| o.on_device));
    let DynImage::F32(out) = out else {
        panic!("the chain changed the sample type");
    };
    let want = Engine::cpu()
        .bilateral(
            &repaired(&img, NonFinite::Zero),
            &BilateralParams::new(1.5, 0.2),
        )
        .unwrap();
    let scale = want.rows().flatten().fold(1e-30f32, |m, v| m.max(v.abs()));
    for (a, b) in out.rows().flatten().zip(want.rows().flatten()) {
        assert!((a - b).abs() <= 1e-4 * scale, "chain {a} vs host {b}");
    }
}
