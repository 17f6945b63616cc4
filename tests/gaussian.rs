//! `gaussian` against `ops::gaussian::reference` (the f64 FIR, unrounded):
//! every OpenCL variant forced, the default dispatch of both engines, and the
//! CPU path (plain and forced on the OpenCL engine), on seeded random data of
//! every sample type, 1/3/4 channels, thin, prime and odd sizes, many sigma
//! pairs (f32 all of them, u8 and u16 the ones that are not only a further
//! FIR radius: `INT_COLUMNS`) and both borders. Also: constant images pass unchanged, strong
//! blurs stay finite and in range, bad parameters are rejected everywhere,
//! both sigmas 0 is a copy, and the mirror border.
//!
//! Error metric: max |out - ref| / max |input| over every sample; integer
//! outputs get 0.5 / max |input| extra for their rounding (the recorded
//! error is what remains after it). Bounds: `fir_local` and `fir_tiles`
//! 1e-5; every other
//! variant 1e-3 wherever it runs (the recursive ones only take sigma >= 1);
//! the CPU path and the default dispatch 1e-3 at every sigma.
//!
//! The worst error per path and sigma is printed as markdown tables (for
//! docs/QUALITY.md) when the last test that fills them ends; run with
//! `cargo test --test gaussian -- --nocapture` to see them.

use clfilter::prelude::*;
mod common;

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use clfilter::ops::gaussian::{reference, Border, GaussianParams, IIR_MIN_SIGMA, MAX_SIGMA, SPEC};
use clfilter::ops::{OpParams, Shape, VariantSpec, CPU};
use clfilter::{Engine, Error, Image, Sample, SampleType};
use common::{local_mem, opencl_engine, random_image, strided_copy, Rng, TestSample};

/// 1x1, thin lines both ways, primes, sizes that are not multiples of the
/// 4-pixel vectors, the 16/32 tiles, the 128-wide FIR segments or
/// iir_local's 32-sample row segments.
const SIZES: &[(usize, usize)] = &[
    (1, 1),
    (1, 23),
    (23, 1),
    (2, 3),
    (5, 7),
    (17, 13),
    (31, 33),
    (64, 7),
    (257, 3),
    (3, 257),
    // Past 32 work-items of 32 samples: iir_local's row scan spans several
    // warps; past 16 blocks of 32 rows: its carry pass takes several batches.
    (1031, 3),
    (3, 1031),
    // Past iir_rowblk's 4096-sample gray row tile (1031 already spans three
    // 512-pixel colour tiles).
    (4099, 2),
    // Several of iir_tiles' 64x64 tiles both ways, the last ones partial:
    // both carries and the fix-up between them.
    (131, 97),
    // fir_tiles: partial strips of 256 rows and partial tiles of 64 gray
    // or 32 and 16 colour columns, two and more of each.
    (70, 300),
];
const CHANNELS: &[usize] = &[1, 3, 4];
const BORDERS: &[Border] = &[Border::Replicate, Border::Mirror];
/// (sigma_x, sigma_y). Below 1 only the FIR and the CPU path run (the
/// default dispatch included); (0.9, 8) is the largest FIR radius
/// (`FIR_RMAX` = 48) with the recursive variants declining; (0.5, 20) needs
/// a radius past `FIR_RMAX` with a sigma below 1, which only the CPU path
/// takes; 40 and 1000 are larger than most of the images. Recursive variants
/// are the table entries named `iir_*`.
const SIGMAS: &[(f32, f32)] = &[
    (0.3, 0.3),
    (0.6, 0.6),
    (0.9, 0.9),
    (1.0, 1.0),
    (2.5, 2.5),
    (0.0, 3.0),
    (3.0, 0.0),
    (1.5, 7.0),
    (0.9, 8.0),
    (0.5, 20.0),
    (40.0, 40.0),
    (1000.0, 1000.0),
];
/// The `SIGMAS` columns that u8 and u16 run (f32 runs all): the sample type
/// changes only how a kernel loads and stores, not how it walks its taps,
/// and every FIR radius pair is a separate program build (`fir_tiles`
/// compiles its radii in; on PoCL 2-4 s of CPU each). Kept: sigmas below
/// the recursive filters' range, sigma 1 and 2.5 on both axes, the x axis
/// zero, a short and a long radius together, a radius past the FIR
/// maximum, and the large sigmas. f32 adds the tiny radius 2, the y axis
/// zero and the largest FIR radius.
const INT_COLUMNS: &[usize] = &[1, 2, 3, 4, 5, 7, 9, 10, 11];
/// Columns of the summary past `SIGMAS`: the stability test's.
const STABILITY_SIGMAS: &[f32] = &[1000.0, MAX_SIGMA];
/// The reference costs samples x taps; cases above this are left out (large
/// sigma then runs on the small images only).
const REFERENCE_BUDGET: usize = 10_000_000;

/// The recursive variants' and the CPU path's bound.
const IIR_BOUND: f64 = 1e-3;
/// The FIR variants' bound (`fir_local`, `fir_tiles`).
const FIR_BOUND: f64 = 1e-5;
/// Two paths that each meet 1e-3 agree within this.
const AGREE_BOUND: f64 = 2e-3;

fn bound(variant: &str) -> f64 {
    if variant.starts_with("fir_") {
        FIR_BOUND
    } else {
        IIR_BOUND
    }
}

fn params(sigma_x: f32, sigma_y: f32, border: Border) -> GaussianParams {
    GaussianParams {
        sigma_x,
        sigma_y,
        border,
    }
}

fn shape<T: Sample>(img: &Image<T>, p: &GaussianParams) -> Shape {
    Shape::new(img.width(), img.height(), img.channels(), T::TYPE).with_params(OpParams::new(*p))
}

/// `(width, height, channels)`.
fn dims<T: Sample>(img: &Image<T>) -> (usize, usize, usize) {
    (img.width(), img.height(), img.channels())
}

fn is_int<T: Sample>() -> bool {
    T::TYPE != SampleType::F32
}

fn border_name(b: Border) -> &'static str {
    match b {
        Border::Replicate => "replicate",
        Border::Mirror => "mirror",
    }
}

// -------------------------------------------------------------------- paths

/// One way of running the blur.
struct Path {
    label: String,
    engine: Engine,
    /// The OpenCL variant this path forces, if any.
    forced: Option<&'static VariantSpec>,
    /// The variant the report must name; `None`: any that can run the request.
    expect: Option<&'static str>,
    local_mem: u64,
}

/// The CPU engine, and with an OpenCL engine also its default dispatch,
/// forced `cpu`, and every variant forced.
fn paths(cl: Option<&Engine>) -> Vec<Path> {
    let mut v = vec![Path {
        label: "Engine::cpu()".into(),
        engine: Engine::cpu(),
        forced: None,
        expect: Some(CPU),
        local_mem: 0,
    }];
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
            engine: cl.with_variant(Some(SPEC.name), CPU),
            forced: None,
            expect: Some(CPU),
            local_mem: lm,
        });
        for spec in SPEC.variants {
            v.push(Path {
                label: spec.name.into(),
                engine: cl.with_variant(Some(SPEC.name), spec.name),
                forced: Some(spec),
                expect: Some(spec.name),
                local_mem: lm,
            });
        }
    }
    v
}

impl Path {
    /// Blurs `img`. When the forced variant cannot take the request (its
    /// `check` says so), asserts that the engine answered
    /// `Error::Unsupported` naming it and returns `None`. Otherwise checks
    /// the report and returns the result and the variant that ran.
    fn run<T: Sample>(
        &self,
        img: &Image<T>,
        p: &GaussianParams,
        ctx: &str,
    ) -> Option<(Image<T>, String)> {
        let res = self.engine.gaussian_report(img, p);
        let shape = shape(img, p);
        if let Some(spec) = self.forced {
            if let Err(why) = spec.check(&shape, self.local_mem) {
                match res {
                    Err(Error::Unsupported { op, variant, .. })
                        if op == SPEC.name && variant == spec.name => {}
                    other => panic!(
                        "{ctx}: {}: the variant cannot run this ({why}), so forcing it must be \
                         Error::Unsupported naming gaussian/{}; got {:?}",
                        self.label,
                        spec.name,
                        other.map(|(_, r)| r)
                    ),
                }
                return None;
            }
        }
        let (out, report) = res.unwrap_or_else(|e| panic!("{ctx}: {}: {e}", self.label));
        assert_eq!(report.op, SPEC.name, "{ctx}: {}: report.op", self.label);
        match self.expect {
            Some(want) => assert_eq!(report.variant, want, "{ctx}: {}: variant", self.label),
            None => {
                let v = report.variant.as_str();
                assert!(
                    SPEC.names().contains(&v),
                    "{ctx}: {}: unknown variant '{v}'",
                    self.label
                );
                if let Some(spec) = SPEC.variant(v) {
                    assert!(
                        spec.check(&shape, self.local_mem).is_ok(),
                        "{ctx}: {}: the default ran '{v}', which cannot take the request",
                        self.label
                    );
                } else if !matches!(self.engine.backend(), clfilter::Backend::Cpu) {
                    // The CPU only when no OpenCL variant can take the request.
                    let able: Vec<_> = SPEC
                        .variants
                        .iter()
                        .filter(|s| s.check(&shape, self.local_mem).is_ok())
                        .map(|s| s.name)
                        .collect();
                    assert!(
                        able.is_empty(),
                        "{ctx}: {}: the default ran the CPU path although {able:?} can take it",
                        self.label
                    );
                }
            }
        }
        assert!(
            report.fallbacks.is_empty(),
            "{ctx}: {}: variants failed before '{}' ran: {:?}",
            self.label,
            report.variant,
            report.fallbacks
        );
        assert_eq!(dims(&out), dims(img), "{ctx}: {}: shape", self.label);
        Some((out, report.variant))
    }
}

// ---------------------------------------------------------------- measuring

/// The largest |sample|, at least the smallest positive value.
fn max_abs<T: Sample>(img: &Image<T>) -> f64 {
    img.rows()
        .flatten()
        .map(|v| (v.to_f32() as f64).abs())
        .fold(f64::MIN_POSITIVE, f64::max)
}

/// A random image that is not all zeros (a 1x1 u8 image can draw 0).
fn random_nonzero<T: TestSample>(rng: &mut Rng, w: usize, h: usize, c: usize) -> Image<T> {
    let mut img = random_image::<T>(rng, w, h, c);
    if img.rows().flatten().all(|v| v.to_f32() == 0.0) {
        img.row_mut(0)[0] = T::from_f32(200.0);
    }
    img
}

/// Where two images differ most: (difference, x, y, channel, a, b).
/// NaN anywhere counts as an infinite difference.
struct Diff {
    abs: f64,
    at: (usize, usize, usize),
    a: f64,
    b: f64,
}

fn max_diff(
    w: usize,
    h: usize,
    c: usize,
    a: impl Fn(usize, usize, usize) -> f64,
    b: impl Fn(usize, usize, usize) -> f64,
) -> Diff {
    let mut d = Diff {
        abs: 0.0,
        at: (0, 0, 0),
        a: 0.0,
        b: 0.0,
    };
    for y in 0..h {
        for x in 0..w {
            for ch in 0..c {
                let (va, vb) = (a(x, y, ch), b(x, y, ch));
                let e = (va - vb).abs();
                let e = if e.is_nan() { f64::INFINITY } else { e };
                if e > d.abs || (e.is_infinite() && !d.abs.is_infinite()) {
                    d = Diff {
                        abs: e,
                        at: (x, y, ch),
                        a: va,
                        b: vb,
                    };
                }
            }
        }
    }
    d
}

/// The metric against the reference, and where it is worst.
fn error_vs<T: Sample>(out: &Image<T>, want: &Image<f32>, scale: f64) -> (f64, String) {
    let (w, h, c) = dims(out);
    let d = max_diff(
        w,
        h,
        c,
        |x, y, ch| out.get(x, y, ch).to_f32() as f64,
        |x, y, ch| want.get(x, y, ch) as f64,
    );
    let rounding = if is_int::<T>() { 0.5 } else { 0.0 };
    let err = (d.abs - rounding).max(0.0) / scale;
    let (x, y, ch) = d.at;
    (
        err,
        format!(
            "pixel ({x}, {y}) channel {ch}: got {}, reference {} (max |input| {scale})",
            d.a, d.b
        ),
    )
}

/// Two outputs' disagreement, in the same units (integer outputs may round
/// apart by 1).
fn disagreement<T: Sample>(a: &Image<T>, b: &Image<T>, scale: f64) -> (f64, String) {
    let (w, h, c) = dims(a);
    let d = max_diff(
        w,
        h,
        c,
        |x, y, ch| a.get(x, y, ch).to_f32() as f64,
        |x, y, ch| b.get(x, y, ch).to_f32() as f64,
    );
    let rounding = if is_int::<T>() { 1.0 } else { 0.0 };
    let (x, y, ch) = d.at;
    (
        (d.abs - rounding).max(0.0) / scale,
        format!("pixel ({x}, {y}) channel {ch}: {} vs {}", d.a, d.b),
    )
}

fn reference_cost(w: usize, h: usize, c: usize, p: &GaussianParams) -> usize {
    let taps = |s: f32| 2 * (6.0 * s as f64).ceil() as usize + 1;
    w * h * c * (taps(p.sigma_x) + taps(p.sigma_y))
}

// ------------------------------------------------------------------ summary

/// A worst value and where it occurred.
type Worst = (f64, String);

/// Worst errors per (path, border) and column, for the printed tables.
#[derive(Default)]
struct Summary {
    /// (path order, path label, border) -> column -> (worst error, where).
    err: BTreeMap<(usize, String, &'static str), BTreeMap<usize, Worst>>,
    /// (path order, path label) -> worst disagreement with `Engine::cpu()`.
    agree: BTreeMap<(usize, String), (f64, String)>,
    /// Worst disagreement between two recursive variants.
    iir_pair: (f64, String),
    /// (path order, path label) -> (runs compared, runs declined).
    counts: BTreeMap<(usize, String), (usize, usize)>,
}

static SUMMARY: Mutex<Summary> = Mutex::new(Summary {
    err: BTreeMap::new(),
    agree: BTreeMap::new(),
    iir_pair: (0.0, String::new()),
    counts: BTreeMap::new(),
});
/// Tests that fill the summary; the last one to end prints it.
const CONTRIBUTORS: usize = 4;
static FINISHED: AtomicUsize = AtomicUsize::new(0);

fn summary() -> std::sync::MutexGuard<'static, Summary> {
    SUMMARY.lock().unwrap_or_else(|p| p.into_inner())
}

fn column_label(i: usize) -> String {
    if let Some(&(sx, sy)) = SIGMAS.get(i) {
        if sx == sy {
            format!("σ {sx}")
        } else {
            format!("σ {sx}/{sy}")
        }
    } else {
        let s = STABILITY_SIGMAS[i - SIGMAS.len()];
        format!("σ {s} (257x3, 3x257, 1x257)")
    }
}

fn record_err(order: usize, label: &str, border: Border, column: usize, err: f64, ctx: String) {
    let mut s = summary();
    let cell = s
        .err
        .entry((order, label.to_string(), border_name(border)))
        .or_default()
        .entry(column)
        .or_insert((0.0, String::new()));
    if err > cell.0 || cell.1.is_empty() {
        *cell = (err, ctx);
    }
}

fn record_count(order: usize, label: &str, ran: bool) {
    let mut s = summary();
    let c = s.counts.entry((order, label.to_string())).or_default();
    if ran {
        c.0 += 1;
    } else {
        c.1 += 1;
    }
}

fn print_summary() {
    let s = summary();
    let columns: Vec<usize> = (0..SIGMAS.len() + STABILITY_SIGMAS.len()).collect();
    let mut t = String::new();
    t.push_str(
        "\nWorst max|out - ref| / max|input| per path (integer outputs: less 0.5 for rounding); \
         - = the variant declines every such request\n\n",
    );
    t.push_str("| path | border |");
    for &c in &columns {
        t.push_str(&format!(" {} |", column_label(c)));
    }
    t.push_str(" worst |\n|---|---|");
    for _ in &columns {
        t.push_str("---|");
    }
    t.push_str("---|\n");
    let mut worst_where = Vec::new();
    for ((_, label, border), cells) in &s.err {
        t.push_str(&format!("| {label} | {border} |"));
        let mut worst = (0.0, String::new());
        for c in &columns {
            match cells.get(c) {
                Some((e, ctx)) => {
                    t.push_str(&format!(" {e:.1e} |"));
                    if *e >= worst.0 {
                        worst = (*e, ctx.clone());
                    }
                }
                None => t.push_str(" - |"),
            }
        }
        t.push_str(&format!(" {:.1e} |\n", worst.0));
        worst_where.push(format!(
            "  {label} ({border}): {:.2e} at {}",
            worst.0, worst.1
        ));
    }
    t.push_str("\nWhere each worst error occurred:\n");
    for w in worst_where {
        t.push_str(&w);
        t.push('\n');
    }
    t.push_str(
        "\nAgreement with Engine::cpu() (max |a - b| / max|input|, integer outputs less 1):\n\n",
    );
    t.push_str(
        "| path | worst | runs compared | runs declined (Unsupported) |\n|---|---|---|---|\n",
    );
    for (key, (ran, declined)) in &s.counts {
        let agree = s.agree.get(key).map_or(0.0, |a| a.0);
        t.push_str(&format!(
            "| {} | {agree:.1e} | {ran} | {declined} |\n",
            key.1
        ));
    }
    for ((_, label), (e, ctx)) in &s.agree {
        t.push_str(&format!("  {label}: {e:.2e} at {ctx}\n"));
    }
    t.push_str(&format!(
        "\nWorst disagreement between two recursive variants: {:.2e} ({})\n",
        s.iir_pair.0, s.iir_pair.1
    ));
    eprintln!("{t}");
}

/// Marks one contributing test as done; the last prints the summary. Then
/// fails with `failures`, if any.
fn finish(name: &str, start: Instant, failures: Vec<String>) {
    eprintln!("{name}: {:.1} s", start.elapsed().as_secs_f64());
    if FINISHED.fetch_add(1, Ordering::SeqCst) + 1 == CONTRIBUTORS {
        print_summary();
    }
    if !failures.is_empty() {
        let shown = failures
            .iter()
            .take(25)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n");
        panic!("{name}: {} failures:\n{shown}", failures.len());
    }
}

// ------------------------------------------------- 1 + 3: every path vs reference

/// Runs every path on one image and parameter set; compares each result with
/// `want` (its variant's bound) and with `Engine::cpu()` (2e-3), the
/// recursive variants also with each other.
#[allow(clippy::too_many_arguments)]
fn compare_paths<T: TestSample>(
    paths: &[Path],
    img: &Image<T>,
    want: &Image<f32>,
    scale: f64,
    p: &GaussianParams,
    column: usize,
    ctx: &str,
    failures: &mut Vec<String>,
) {
    let mut outs: Vec<(usize, String, Image<T>)> = Vec::new();
    for (order, path) in paths.iter().enumerate() {
        let Some((out, variant)) = path.run(img, p, ctx) else {
            record_count(order, &path.label, false);
            continue;
        };
        record_count(order, &path.label, true);
        let (err, at) = error_vs(&out, want, scale);
        let b = bound(&variant);
        if err > b {
            failures.push(format!(
                "{ctx}: {} (ran {variant}): error {err:.3e} > {b:e} at {at}",
                path.label
            ));
        }
        record_err(
            order,
            &path.label,
            p.border,
            column,
            err,
            format!("{ctx}, {at}"),
        );
        outs.push((order, variant, out));
    }
    let Some(cpu) = outs.first().filter(|o| o.1 == CPU).map(|o| o.2.clone()) else {
        return;
    };
    let mut s = summary();
    for (order, variant, out) in &outs[1..] {
        let (d, at) = disagreement(out, &cpu, scale);
        let label = &paths[*order].label;
        if d > AGREE_BOUND {
            failures.push(format!(
                "{ctx}: {label} (ran {variant}) vs Engine::cpu(): {d:.3e} > {AGREE_BOUND:e} at {at}"
            ));
        }
        let cell = s
            .agree
            .entry((*order, label.clone()))
            .or_insert((0.0, String::new()));
        if d > cell.0 || cell.1.is_empty() {
            *cell = (d, format!("{ctx}, {at}"));
        }
    }
    let iir: Vec<_> = outs
        .iter()
        .filter(|o| paths[o.0].forced.is_some() && o.1.starts_with("iir_"))
        .collect();
    for (i, a) in iir.iter().enumerate() {
        for b in &iir[i + 1..] {
            let (d, at) = disagreement(&a.2, &b.2, scale);
            if d > AGREE_BOUND {
                failures.push(format!("{ctx}: {} vs {}: {d:.3e} at {at}", a.1, b.1));
            }
            if d > s.iir_pair.0 || s.iir_pair.1.is_empty() {
                s.iir_pair = (d, format!("{ctx}: {} vs {}, {at}", a.1, b.1));
            }
        }
    }
}

/// Whether a sigma column runs channel count `ci` with border `bi`: half
/// of the pairs, alternating by column, so that each column runs every
/// channel count and both borders, and two neighbouring columns run all six
/// pairs. The channel count and the border are compiled into the kernels
/// (and each FIR radius pair too), so the whole product would build twice
/// the programs (2-4 s of CPU each on PoCL) for the same code.
fn paired(ci: usize, bi: usize, column: usize) -> bool {
    (ci + bi + column).is_multiple_of(2)
}

fn every_path_matches_reference<T: TestSample>(name: &str) {
    let start = Instant::now();
    let cl = opencl_engine();
    let paths = paths(cl.as_ref());
    let mut failures = Vec::new();
    let (mut cases, mut left_out) = (0, 0);
    for &(w, h) in SIZES {
        for (ci, &c) in CHANNELS.iter().enumerate() {
            let mut rng =
                Rng::from_parts(&[61, T::TYPE.size() as u64, w as u64, h as u64, c as u64]);
            let img = random_nonzero::<T>(&mut rng, w, h, c);
            let scale = max_abs(&img);
            for (column, &(sx, sy)) in SIGMAS.iter().enumerate() {
                if is_int::<T>() && !INT_COLUMNS.contains(&column) {
                    continue;
                }
                for (bi, &border) in BORDERS.iter().enumerate() {
                    if !paired(ci, bi, column) {
                        continue;
                    }
                    let p = params(sx, sy, border);
                    if reference_cost(w, h, c, &p) > REFERENCE_BUDGET {
                        left_out += 1;
                        continue;
                    }
                    cases += 1;
                    let want = reference::gaussian(&img, &p).expect("reference");
                    let ctx = format!(
                        "{} {w}x{h}x{c} sigma ({sx}, {sy}) {}",
                        T::TYPE,
                        border_name(border)
                    );
                    compare_paths(&paths, &img, &want, scale, &p, column, &ctx, &mut failures);
                }
            }
        }
    }
    eprintln!("{name}: {cases} cases, {left_out} left out (reference too slow)");
    finish(name, start, failures);
}

#[test]
fn every_path_matches_reference_u8() {
    every_path_matches_reference::<u8>("every_path_matches_reference_u8");
}

#[test]
fn every_path_matches_reference_u16() {
    every_path_matches_reference::<u16>("every_path_matches_reference_u16");
}

#[test]
fn every_path_matches_reference_f32() {
    every_path_matches_reference::<f32>("every_path_matches_reference_f32");
}

/// Row padding is never read: strided inputs (padding holding the type's
/// extremes) give results within bounds on every path.
#[test]
fn strided_inputs_match_reference() {
    let cl = opencl_engine();
    let paths = paths(cl.as_ref());
    let mut failures = Vec::new();
    fn case<T: TestSample>(paths: &[Path], failures: &mut Vec<String>) {
        for &(w, h) in &[(17, 13), (5, 7), (64, 7)] {
            for &c in CHANNELS {
                let mut rng =
                    Rng::from_parts(&[62, T::TYPE.size() as u64, w as u64, h as u64, c as u64]);
                let img = random_nonzero::<T>(&mut rng, w, h, c);
                let strided = strided_copy(&img, 5);
                let scale = max_abs(&img);
                for &(sx, sy) in &[(0.6, 0.6), (2.5, 2.5), (1.5, 7.0)] {
                    for &border in BORDERS {
                        let p = params(sx, sy, border);
                        let want = reference::gaussian(&img, &p).expect("reference");
                        let ctx = format!(
                            "strided {} {w}x{h}x{c} sigma ({sx}, {sy}) {}",
                            T::TYPE,
                            border_name(border)
                        );
                        for path in paths {
                            if let Some((out, variant)) = path.run(&strided, &p, &ctx) {
                                let (err, at) = error_vs(&out, &want, scale);
                                if err > bound(&variant) {
                                    failures.push(format!(
                                        "{ctx}: {} (ran {variant}): error {err:.3e} at {at}",
                                        path.label
                                    ));
                                }
                            }
                        }
                    }
                }
            }
        }
    }
    case::<u8>(&paths, &mut failures);
    case::<u16>(&paths, &mut failures);
    case::<f32>(&paths, &mut failures);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

// ------------------------------------------------------ 2: constant images

/// A constant per channel (different per channel) comes back unchanged on
/// every path, borders included: exactly for u8/u16, within 1e-5 relative
/// for f32.
#[test]
fn constant_images_are_unchanged() {
    let cl = opencl_engine();
    let paths = paths(cl.as_ref());
    let mut failures = Vec::new();
    /// Small images at small and large sigma, every channel count and
    /// sample type, each sigma with half the (channels, border) pairs
    /// (`paired`: the next sigma takes the others); long lines (where the
    /// recursive filters reach their f32 steady state) at huge sigma, 1 and
    /// 4 channels, paired the same way, u16 and f32 only: the
    /// kernels compute in f32 for every type, and u16's 65535 must come back
    /// exact, a bound 257 times tighter than u8's 255 (each long-line case
    /// costs a second or more of PoCL time).
    type Set = (
        &'static [(usize, usize)],
        &'static [(f32, f32)],
        &'static [usize],
        &'static [SampleType],
    );
    const SETS: &[Set] = &[
        (
            &[(1, 1), (1, 9), (9, 1), (5, 7), (17, 13), (3, 65)],
            // The FIR radii of `SIGMAS`' (0.6, 0.6), (2.5, 2.5) and
            // (1.5, 7): no program builds of their own.
            &[
                (0.6, 0.6),
                (2.5, 2.5),
                (100.0, 100.0),
                (1.5, 7.0),
                (0.0, 100.0),
            ],
            CHANNELS,
            &[SampleType::U8, SampleType::U16, SampleType::F32],
        ),
        (
            &[(1, 40_000), (40_000, 1), (3, 9_000)],
            &[(1000.0, 1000.0), (MAX_SIGMA, MAX_SIGMA), (0.5, MAX_SIGMA)],
            &[1, 4],
            &[SampleType::U16, SampleType::F32],
        ),
    ];
    fn case<T: TestSample>(paths: &[Path], values: &[f32], failures: &mut Vec<String>) {
        for &(sizes, sigmas, channels, types) in SETS {
            if !types.contains(&T::TYPE) {
                continue;
            }
            for &(w, h) in sizes {
                for (ci, &c) in channels.iter().enumerate() {
                    let img = Image::<T>::from_fn(w, h, c, |_, _, ch| T::from_f32(values[ch]))
                        .expect("valid shape");
                    for (i, &(sx, sy)) in sigmas.iter().enumerate() {
                        // Paired as in `every_path_matches_reference`, by
                        // the sigma's column there (the same FIR programs).
                        let column = SIGMAS.iter().position(|&s| s == (sx, sy)).unwrap_or(i);
                        for (bi, &border) in BORDERS.iter().enumerate() {
                            if !paired(ci, bi, column) {
                                continue;
                            }
                            let p = params(sx, sy, border);
                            let ctx = format!(
                                "constant {} {w}x{h}x{c} sigma ({sx}, {sy}) {}",
                                T::TYPE,
                                border_name(border)
                            );
                            for path in paths {
                                let Some((out, variant)) = path.run(&img, &p, &ctx) else {
                                    continue;
                                };
                                let d = max_diff(
                                    w,
                                    h,
                                    c,
                                    |x, y, ch| out.get(x, y, ch).to_f32() as f64,
                                    |x, y, ch| img.get(x, y, ch).to_f32() as f64,
                                );
                                let ok = if is_int::<T>() {
                                    d.abs == 0.0
                                } else {
                                    d.abs <= 1e-5 * d.b.abs()
                                };
                                if !ok {
                                    let (x, y, ch) = d.at;
                                    failures.push(format!(
                                        "{ctx}: {} (ran {variant}): pixel ({x}, {y}) channel {ch} \
                                     is {}, expected {} (relative {:.2e})",
                                        path.label,
                                        d.a,
                                        d.b,
                                        d.abs / d.b.abs()
                                    ));
                                }
                            }
                        }
                    }
                }
            }
        }
    }
    case::<u8>(&paths, &[201.0, 255.0, 1.0, 128.0], &mut failures);
    case::<u16>(&paths, &[65535.0, 40001.0, 3.0, 777.0], &mut failures);
    case::<f32>(&paths, &[40001.004, -123.456, 1.0e6, 3.0e-3], &mut failures);
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures
            .iter()
            .take(25)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
}

// ---------------------------------------------------------- 4: stability

/// An exact blur with any sigma in O(n^2) per line instead of O(sigma): the
/// reference's taps folded into one weight per source sample (replicate:
/// the tails go to the edge samples; mirror: taps folded modulo the period
/// 2n). f64 throughout. Checked against `reference::gaussian` below.
fn fast_reference<T: Sample>(img: &Image<T>, p: &GaussianParams) -> Image<f32> {
    fn matrix(n: usize, sigma: f32, border: Border) -> Vec<Vec<f64>> {
        let mut m = vec![vec![0.0; n]; n];
        if sigma == 0.0 {
            for (i, row) in m.iter_mut().enumerate() {
                row[i] = 1.0;
            }
            return m;
        }
        let t = reference::taps(sigma as f64);
        let r = (t.len() / 2) as i64;
        let ni = n as i64;
        match border {
            Border::Replicate => {
                for (i, row) in m.iter_mut().enumerate() {
                    for (k, &tk) in t.iter().enumerate() {
                        let j = (i as i64 + k as i64 - r).clamp(0, ni - 1);
                        row[j as usize] += tk;
                    }
                }
            }
            Border::Mirror => {
                let period = 2 * ni;
                let mut folded = vec![0.0; period as usize];
                for (k, &tk) in t.iter().enumerate() {
                    folded[(k as i64 - r).rem_euclid(period) as usize] += tk;
                }
                for (i, row) in m.iter_mut().enumerate() {
                    for (o, &f) in folded.iter().enumerate() {
                        row[reference::source_index(i as i64 + o as i64, ni, border)] += f;
                    }
                }
            }
        }
        m
    }
    let (w, h, c) = dims(img);
    let mx = matrix(w, p.sigma_x, p.border);
    let my = matrix(h, p.sigma_y, p.border);
    let mut out = Image::<f32>::new(w, h, c).expect("valid shape");
    for ch in 0..c {
        let rows: Vec<Vec<f64>> = (0..h)
            .map(|y| {
                (0..w)
                    .map(|x| {
                        (0..w)
                            .map(|j| mx[x][j] * img.get(j, y, ch).to_f32() as f64)
                            .sum()
                    })
                    .collect()
            })
            .collect();
        for (y, weights) in my.iter().enumerate() {
            for x in 0..w {
                let v: f64 = weights.iter().zip(&rows).map(|(m, r)| m * r[x]).sum();
                out.row_mut(y)[x * c + ch] = v as f32;
            }
        }
    }
    out
}

#[test]
fn fast_reference_equals_reference() {
    for &(w, h) in &[(1, 1), (1, 6), (6, 1), (5, 7), (17, 13)] {
        for &(sx, sy) in &[(0.0, 3.0), (2.5, 0.6), (40.0, 40.0), (1000.0, 7.0)] {
            for &border in BORDERS {
                let mut rng = Rng::from_parts(&[63, w as u64, h as u64]);
                let img = random_nonzero::<f32>(&mut rng, w, h, 3);
                let p = params(sx, sy, border);
                let want = reference::gaussian(&img, &p).unwrap();
                let got = fast_reference(&img, &p);
                let (err, at) = error_vs(&got, &want, max_abs(&img));
                assert!(
                    err <= 1e-6,
                    "{w}x{h} sigma ({sx}, {sy}) {}: {err:e} at {at}",
                    border_name(border)
                );
            }
        }
    }
}

/// sigma 1000 and MAX_SIGMA (the cost of the recursive filter does not
/// depend on sigma) on long thin images: finite, within the input's range
/// (give or take 1e-3 of max|input|), and within the bound of the exact blur.
#[test]
fn strong_blur_is_stable() {
    let start = Instant::now();
    let cl = opencl_engine();
    let paths = paths(cl.as_ref());
    let mut failures = Vec::new();
    fn case<T: TestSample>(paths: &[Path], failures: &mut Vec<String>) {
        for &(w, h) in &[(257, 3), (3, 257), (1, 257)] {
            for &c in &[1, 4] {
                let mut rng =
                    Rng::from_parts(&[64, T::TYPE.size() as u64, w as u64, h as u64, c as u64]);
                let img = random_nonzero::<T>(&mut rng, w, h, c);
                let scale = max_abs(&img);
                let lo = img
                    .rows()
                    .flatten()
                    .map(|v| v.to_f32() as f64)
                    .fold(f64::INFINITY, f64::min);
                let hi = img
                    .rows()
                    .flatten()
                    .map(|v| v.to_f32() as f64)
                    .fold(f64::NEG_INFINITY, f64::max);
                for (i, &sigma) in STABILITY_SIGMAS.iter().enumerate() {
                    for &border in BORDERS {
                        let p = params(sigma, sigma, border);
                        let want = fast_reference(&img, &p);
                        let ctx = format!(
                            "{} {w}x{h}x{c} sigma {sigma} {}",
                            T::TYPE,
                            border_name(border)
                        );
                        for (order, path) in paths.iter().enumerate() {
                            let Some((out, variant)) = path.run(&img, &p, &ctx) else {
                                continue;
                            };
                            let slack = IIR_BOUND * scale;
                            for v in out.rows().flatten().map(|v| v.to_f32() as f64) {
                                if !v.is_finite() || v < lo - slack || v > hi + slack {
                                    failures.push(format!(
                                        "{ctx}: {} (ran {variant}): {v} outside [{lo}, {hi}]",
                                        path.label
                                    ));
                                    break;
                                }
                            }
                            let (err, at) = error_vs(&out, &want, scale);
                            if err > bound(&variant) {
                                failures.push(format!(
                                    "{ctx}: {} (ran {variant}): error {err:.3e} at {at}",
                                    path.label
                                ));
                            }
                            record_err(
                                order,
                                &path.label,
                                border,
                                SIGMAS.len() + i,
                                err,
                                format!("{ctx}, {at}"),
                            );
                        }
                    }
                }
            }
        }
    }
    case::<u8>(&paths, &mut failures);
    case::<u16>(&paths, &mut failures);
    case::<f32>(&paths, &mut failures);
    finish("strong_blur_is_stable", start, failures);
}

/// Around `BIQUAD_MAX_SIGMA` (64), where the rayon path switches between
/// real biquads and complex sections and `iir_tiles` between biquads and
/// the delta form (per direction), and far above it, on gray images of
/// several 64x64 tiles both ways: every path within its
/// bound of the exact blur and within `AGREE_BOUND` of `Engine::cpu()`.
/// (These sizes are past `REFERENCE_BUDGET` for `reference::gaussian`.)
#[test]
fn biquad_limit_meets_the_bound() {
    let cl = opencl_engine();
    let paths = paths(cl.as_ref());
    let mut failures = Vec::new();
    for &(w, h) in &[(200, 150), (131, 197)] {
        let mut rng = Rng::from_parts(&[65, w as u64, h as u64]);
        let img = random_nonzero::<f32>(&mut rng, w, h, 1);
        let scale = max_abs(&img);
        for &(sx, sy) in &[
            (64.0, 64.0),
            (64.0, 65.0),
            (65.0, 64.0),
            (2.0, 64.0),
            (1000.0, 1000.0),
            (2.0, 1000.0),
            (10000.0, 65.0),
        ] {
            let p = params(sx, sy, Border::Replicate);
            let want = fast_reference(&img, &p);
            let ctx = format!("f32 {w}x{h}x1 sigma ({sx}, {sy})");
            let mut cpu = None;
            for path in &paths {
                let Some((out, variant)) = path.run(&img, &p, &ctx) else {
                    continue;
                };
                let (err, at) = error_vs(&out, &want, scale);
                eprintln!("{ctx}: {} (ran {variant}): error {err:.2e}", path.label);
                if err > bound(&variant) {
                    failures.push(format!(
                        "{ctx}: {} (ran {variant}): error {err:.3e} at {at}",
                        path.label
                    ));
                }
                match &cpu {
                    None => cpu = Some(out),
                    Some(c) => {
                        let (d, at) = disagreement(&out, c, scale);
                        if d > AGREE_BOUND {
                            failures.push(format!(
                                "{ctx}: {} (ran {variant}) vs Engine::cpu(): {d:.3e} at {at}",
                                path.label
                            ));
                        }
                    }
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// `iir_tiles` on gray (64x64 tiles) and colour (float4 working pixels in
/// 32x32 tiles, one work-item per line and channel), u8 and f32, gray, RGB
/// and RGBA (u8 gray and RGBA read and written by the tile passes
/// themselves, RGB through the working image): on sizes that are 1 pixel
/// wide or tall, smaller than a tile, exactly one, several tiles both
/// ways with partial last tiles, and lines of enough tiles (700 pixels:
/// 11 gray, 22 colour) that the carries split them into several runs, the
/// last one partial, at sigmas from 1 to 1000 (both tile-line forms), within `IIR_BOUND` of the exact blur and within `AGREE_BOUND` of
/// `Engine::cpu()`.
#[test]
fn tiles_meet_the_bound_on_gray_and_colour() {
    fn case<T: TestSample>(tiles: &Path, cpu: &Path, failures: &mut Vec<String>) {
        let sizes = [
            (1, 1),
            (1, 23),
            (23, 1),
            (2, 3),
            (31, 33),
            (32, 32),
            (67, 97),
            (131, 65),
            (129, 127),
            (9, 700),
            (700, 9),
        ];
        for &(w, h) in &sizes {
            for c in [1, 3, 4] {
                let mut rng = Rng::from_parts(&[67, T::TYPE.size() as u64, w, h, c]);
                let (w, h, c) = (w as usize, h as usize, c as usize);
                let img = random_nonzero::<T>(&mut rng, w, h, c);
                let scale = max_abs(&img);
                for &(sx, sy) in &[
                    (1.0, 1.0),
                    (2.0, 8.0),
                    (8.0, 2.0),
                    (32.0, 32.0),
                    (65.0, 1000.0),
                ] {
                    let p = params(sx, sy, Border::Replicate);
                    let ctx = format!("{} {w}x{h}x{c} sigma ({sx}, {sy})", T::TYPE);
                    let Some((out, _)) = tiles.run(&img, &p, &ctx) else {
                        failures.push(format!("{ctx}: iir_tiles declined"));
                        continue;
                    };
                    let (err, at) = error_vs(&out, &fast_reference(&img, &p), scale);
                    eprintln!("{ctx}: error {err:.2e}");
                    if err > IIR_BOUND {
                        failures.push(format!("{ctx}: error {err:.3e} at {at}"));
                    }
                    let (want, _) = cpu.run(&img, &p, &ctx).expect("the CPU path runs");
                    let (d, at) = disagreement(&out, &want, scale);
                    if d > AGREE_BOUND {
                        failures.push(format!("{ctx}: vs Engine::cpu(): {d:.3e} at {at}"));
                    }
                }
            }
        }
    }
    let Some(cl) = opencl_engine() else {
        return;
    };
    let paths = paths(Some(&cl));
    let tiles = paths
        .iter()
        .find(|p| p.label == "iir_tiles")
        .expect("iir_tiles is a variant");
    let mut failures = Vec::new();
    case::<u8>(tiles, &paths[0], &mut failures);
    case::<f32>(tiles, &paths[0], &mut failures);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

// ---------------------------------------------------- 5: bad parameters

#[test]
fn bad_sigmas_are_invalid_arguments_everywhere() {
    let cl = opencl_engine();
    let paths = paths(cl.as_ref());
    let over = f32::from_bits(MAX_SIGMA.to_bits() + 1);
    let bad = [
        -1.0,
        -1e-30,
        f32::NAN,
        f32::INFINITY,
        f32::NEG_INFINITY,
        over,
        1e30,
    ];
    let img8 = Image::<u8>::from_fn(5, 3, 3, |x, y, c| (x * 40 + y * 7 + c) as u8).unwrap();
    let img32 = Image::<f32>::from_fn(4, 6, 1, |x, y, _| x as f32 - y as f32 * 0.5).unwrap();
    for &b in &bad {
        for &border in BORDERS {
            for p in [
                params(b, 1.0, border),
                params(1.0, b, border),
                params(b, b, border),
                params(b, 0.0, border),
            ] {
                assert!(
                    matches!(p.validate(), Err(Error::InvalidArgument(_))),
                    "{p:?}: validate"
                );
                for path in &paths {
                    let ctx = format!("{}: {p:?}", path.label);
                    match path.engine.gaussian_report(&img8, &p) {
                        Err(Error::InvalidArgument(_)) => {}
                        other => panic!(
                            "{ctx} (u8): expected InvalidArgument, got {:?}",
                            other.map(|r| r.1)
                        ),
                    }
                    match path.engine.gaussian(&img32, &p) {
                        Err(Error::InvalidArgument(_)) => {}
                        other => panic!(
                            "{ctx} (f32): expected InvalidArgument, got {:?}",
                            other.map(|_| ())
                        ),
                    }
                    let mut dst = img32.clone();
                    match path.engine.gaussian_into(&img32, &p, &mut dst) {
                        Err(Error::InvalidArgument(_)) => {}
                        other => panic!("{ctx} (into): expected InvalidArgument, got {other:?}"),
                    }
                }
            }
        }
    }
    // The limit itself is accepted.
    for p in [
        params(MAX_SIGMA, MAX_SIGMA, Border::Replicate),
        params(0.0, MAX_SIGMA, Border::Mirror),
    ] {
        assert!(p.validate().is_ok(), "{p:?}");
        Engine::cpu()
            .gaussian(&img8, &p)
            .unwrap_or_else(|e| panic!("{p:?}: {e}"));
    }
}

#[test]
fn border_parses() {
    for (s, want) in [
        ("replicate", Border::Replicate),
        ("clamp", Border::Replicate),
        ("mirror", Border::Mirror),
        ("reflect", Border::Mirror),
    ] {
        assert_eq!(s.parse::<Border>().unwrap(), want, "{s}");
    }
    for s in ["bogus", "", "wrap", "replicate "] {
        assert!(
            matches!(s.parse::<Border>(), Err(Error::InvalidArgument(_))),
            "'{s}' must not parse"
        );
    }
    assert_eq!(Border::default(), Border::Replicate);
    assert_eq!(
        GaussianParams::new(2.0),
        params(2.0, 2.0, Border::Replicate)
    );
}

/// Both sigmas 0 (also -0.0): an identical copy, NaN and infinities
/// included, on every path, forced variants too.
#[test]
fn zero_sigmas_return_identical_copy() {
    let cl = opencl_engine();
    let paths = paths(cl.as_ref());
    fn case<T: TestSample>(paths: &[Path]) {
        for &(w, h) in &[(1, 1), (5, 7), (31, 3)] {
            for &c in CHANNELS {
                let mut rng =
                    Rng::from_parts(&[65, T::TYPE.size() as u64, w as u64, h as u64, c as u64]);
                let img = common::random_image_nan::<T>(&mut rng, w, h, c, 5);
                let strided = strided_copy(&img, 3);
                for &border in BORDERS {
                    for (sx, sy) in [(0.0, 0.0), (-0.0, 0.0), (0.0, -0.0)] {
                        let p = params(sx, sy, border);
                        for path in paths {
                            for input in [&img, &strided] {
                                let ctx = format!(
                                    "{} {w}x{h}x{c} sigma ({sx}, {sy}) {}: {}",
                                    T::TYPE,
                                    border_name(border),
                                    path.label
                                );
                                let (out, report) = path
                                    .engine
                                    .gaussian_report(input, &p)
                                    .unwrap_or_else(|e| panic!("{ctx}: {e}"));
                                assert_eq!(report.variant, "copy", "{ctx}");
                                common::assert_images(&out, &img, 0.0, &ctx);
                            }
                        }
                    }
                }
            }
        }
    }
    case::<u8>(&paths);
    case::<u16>(&paths);
    case::<f32>(&paths);
    let mut img = Image::<f32>::from_fn(3, 2, 1, |x, _, _| x as f32).unwrap();
    img.row_mut(1)[2] = f32::INFINITY;
    let out = Engine::cpu()
        .gaussian(&img, &params(0.0, 0.0, Border::Replicate))
        .unwrap();
    common::assert_images(&out, &img, 0.0, "infinity copied");
}

// ------------------------------------------------------------- 6: mirror

/// The recursive variants decline the mirror border at every sigma (and
/// forcing them says `Unsupported`); the FIR variants and the CPU path follow the
/// reference, and the border matters (mirror and replicate differ).
#[test]
fn mirror_border() {
    let cl = opencl_engine();
    let paths = paths(cl.as_ref());
    let img = Image::<f32>::from_fn(23, 5, 1, |x, y, _| (x * x) as f32 * 0.1 + y as f32).unwrap();
    for spec in SPEC.variants {
        for &(sx, sy) in &[(1.0, 1.0), (2.5, 0.0), (0.0, 7.0), (40.0, 40.0)] {
            let p = params(sx, sy, Border::Mirror);
            let verdict = spec.check(&shape(&img, &p), u64::MAX);
            if spec.name.starts_with("iir_") {
                assert!(
                    verdict.is_err(),
                    "{}: mirror at ({sx}, {sy}) must be declined",
                    spec.name
                );
            } else if sx.max(sy) <= 7.0 {
                assert!(
                    verdict.is_ok(),
                    "{}: mirror at ({sx}, {sy}): {verdict:?}",
                    spec.name
                );
            }
            // The replicate border at sigma >= 1 is what the recursive variants are for.
            let verdict = spec.check(&shape(&img, &params(sx, sy, Border::Replicate)), u64::MAX);
            if spec.name.starts_with("iir_") {
                assert!(
                    verdict.is_ok(),
                    "{}: replicate at ({sx}, {sy}): {verdict:?}",
                    spec.name
                );
            }
        }
    }
    // Just below IIR_MIN_SIGMA on either axis, the recursive variants decline.
    let below = f32::from_bits(IIR_MIN_SIGMA.to_bits() - 1);
    for spec in SPEC.variants.iter().filter(|s| s.name.starts_with("iir_")) {
        for p in [
            params(below, 5.0, Border::Replicate),
            params(0.0, below, Border::Replicate),
        ] {
            assert!(
                spec.check(&shape(&img, &p), u64::MAX).is_err(),
                "{}: {p:?}",
                spec.name
            );
        }
        let p = params(IIR_MIN_SIGMA, 0.0, Border::Replicate);
        assert!(
            spec.check(&shape(&img, &p), u64::MAX).is_ok(),
            "{}: {p:?}",
            spec.name
        );
    }
    let scale = max_abs(&img);
    // Radius 42 on a 23 x 5 image: the FIR's mirror wraps several periods.
    for &(sx, sy) in &[(0.6, 0.6), (2.5, 2.5), (7.0, 7.0), (40.0, 3.0)] {
        let mirror = params(sx, sy, Border::Mirror);
        let want = reference::gaussian(&img, &mirror).unwrap();
        let replicate = reference::gaussian(&img, &params(sx, sy, Border::Replicate)).unwrap();
        if sx.max(sy) >= 2.5 {
            // Half-sample mirror equals replicate one sample out; further out they differ.
            let (d, _) = error_vs(&replicate, &want, scale);
            assert!(
                d > 1e-3,
                "({sx}, {sy}): mirror and replicate should differ on this image"
            );
        }
        let mut ran = Vec::new();
        for path in &paths {
            let ctx = format!("mirror 23x5 sigma ({sx}, {sy})");
            if let Some((out, variant)) = path.run(&img, &mirror, &ctx) {
                let (err, at) = error_vs(&out, &want, scale);
                assert!(
                    err <= bound(&variant),
                    "{ctx}: {} (ran {variant}): {err:e} at {at}",
                    path.label
                );
                ran.push(variant);
            }
        }
        assert!(ran.iter().all(|v| !v.starts_with("iir_")), "{ran:?}");
        if cl.is_some() && sx.max(sy) <= 7.0 {
            for fir in ["fir_local", "fir_tiles"] {
                assert!(ran.iter().any(|v| v == fir), "{fir} never ran: {ran:?}");
            }
        }
    }
}

/// A sigma far below a pixel (down to the smallest subnormal) is a copy up
/// to rounding on every path; `-0.0` counts as 0.
#[test]
fn tiny_sigmas_leave_the_image_as_it_is() {
    let cl = opencl_engine();
    let paths = paths(cl.as_ref());
    let mut rng = Rng::from_parts(&[66]);
    let img = random_nonzero::<f32>(&mut rng, 9, 5, 3);
    let img8 = random_nonzero::<u8>(&mut rng, 9, 5, 4);
    let tiny = f32::from_bits(1);
    for &(sx, sy) in &[
        (tiny, tiny),
        (1e-30, 0.0),
        (-0.0, 1e-3),
        (f32::MIN_POSITIVE, 0.05),
    ] {
        for &border in BORDERS {
            let p = params(sx, sy, border);
            for path in &paths {
                let ctx = format!("sigma ({sx:e}, {sy:e}) {}", border_name(border));
                if let Some((out, variant)) = path.run(&img, &p, &ctx) {
                    let (err, at) = error_vs(&out, &reference::gaussian(&img, &p).unwrap(), 1.0);
                    assert!(
                        err <= 1e-6 * max_abs(&img),
                        "{ctx}: {} ({variant}): {err:e} at {at}",
                        path.label
                    );
                }
                if let Some((out, variant)) = path.run(&img8, &p, &ctx) {
                    common::assert_images(
                        &out,
                        &img8,
                        0.0,
                        &format!("{ctx}: {} ({variant})", path.label),
                    );
                }
            }
        }
    }
}

/// The CPU engine runs `cpu` only: forcing an OpenCL variant there is
/// `Error::Unsupported` naming it (after the parameters are validated).
#[test]
fn forcing_a_variant_on_the_cpu_engine_is_unsupported() {
    let img = Image::<u8>::from_fn(4, 4, 1, |x, y, _| (x * 9 + y) as u8).unwrap();
    for spec in SPEC.variants {
        let e = Engine::cpu().with_variant(Some(SPEC.name), spec.name);
        match e.gaussian(&img, &GaussianParams::new(2.0)) {
            Err(Error::Unsupported { op, variant, .. }) => {
                assert_eq!((op.as_str(), variant.as_str()), (SPEC.name, spec.name));
            }
            other => panic!(
                "{}: expected Unsupported, got {:?}",
                spec.name,
                other.map(|_| ())
            ),
        }
        assert!(matches!(
            e.gaussian(&img, &GaussianParams::new(-1.0)),
            Err(Error::InvalidArgument(_))
        ));
    }
    let e = Engine::cpu().with_variant(Some(SPEC.name), "bogus");
    assert!(matches!(
        e.gaussian(&img, &GaussianParams::new(2.0)),
        Err(Error::UnknownVariant { .. })
    ));
}

#[test]
fn into_a_kept_destination_matches_every_path() {
    // Every path's gaussian_into gives its gaussian's result, into a packed
    // destination with stale contents and into a padded one; a destination
    // of another size is an InvalidArgument and is left untouched.
    let cl = opencl_engine();
    let mut rng = Rng::new(77);
    let img: Image<u16> = random_nonzero(&mut rng, 23, 17, 3);
    // A pair of `SIGMAS`, so its FIR program is one the other tests build.
    let p = params(1.5, 7.0, Border::Replicate);
    for path in paths(cl.as_ref()) {
        let ctx = &path.label;
        let want = match path.engine.gaussian_report(&img, &p) {
            Ok((out, _)) => out,
            // A forced variant that cannot run this request.
            Err(Error::Unsupported { .. }) => continue,
            Err(e) => panic!("{ctx}: {e}"),
        };
        let mut dst = Image::<u16>::from_fn(23, 17, 3, |x, y, c| (x * y + c) as u16).unwrap();
        let report = path.engine.gaussian_into(&img, &p, &mut dst).unwrap();
        if let Some(v) = path.expect {
            assert_eq!(report.variant, v, "{ctx}");
        }
        assert_eq!(dst, want, "{ctx}: packed");
        let mut padded = Image::from_vec_with_stride(23, 17, 3, 80, vec![1u16; 17 * 80]).unwrap();
        path.engine.gaussian_into(&img, &p, &mut padded).unwrap();
        assert!(padded.rows().eq(want.rows()), "{ctx}: padded");
        let mut bad = Image::<u16>::from_fn(23, 16, 3, |_, _, _| 5).unwrap();
        assert!(
            matches!(
                path.engine.gaussian_into(&img, &p, &mut bad),
                Err(Error::InvalidArgument(_))
            ),
            "{ctx}: wrong size"
        );
        assert!(bad.rows().flatten().all(|v| *v == 5), "{ctx}: untouched");
    }
}
