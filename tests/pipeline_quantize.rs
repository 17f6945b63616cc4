//! Stages that report numbers about the image (`stats`, `minmax`,
//! `reduce`, a percentile `normalize`'s histogram) after a rounding stage
//! in a device-resident chain: they see the values the CPU path holds
//! (rounded and saturated as `convert` does), not the chain's unrounded
//! f32 working values. On the OpenCL device (PoCL in CI) against the CPU
//! engine, random data with ties, out-of-range values and NaN, odd sizes.

mod common;

use clfilter::pipeline::{self, run_outcomes};
use clfilter::{DynImage, Engine, Image};
use common::{opencl_engine, Rng};

/// Sizes: one pixel, one row, one column, primes.
const SIZES: &[(usize, usize)] = &[(1, 1), (1, 29), (31, 1), (37, 23)];

/// f32 samples around 0..1: ties at half a u8 step, values below 0 and
/// above 1 (saturated), and one NaN in 97 (converted to 0).
fn f32_input(rng: &mut Rng, w: usize, h: usize, c: usize) -> DynImage {
    let img = Image::<f32>::from_fn(w, h, c, |_, _, _| match rng.below(97) {
        0 => f32::NAN,
        1..=20 => (rng.below(256) as f32 + 0.5) / 255.0,
        21..=25 => -(rng.below(100) as f32) / 100.0,
        26..=30 => 1.0 + rng.below(100) as f32 / 100.0,
        _ => rng.below(1 << 20) as f32 / (1 << 20) as f32,
    })
    .unwrap();
    DynImage::F32(img)
}

/// u16 samples over the whole range.
fn u16_input(rng: &mut Rng, w: usize, h: usize, c: usize) -> DynImage {
    DynImage::U16(Image::from_fn(w, h, c, |_, _, _| rng.below(65536) as u16).unwrap())
}

/// The numbers of a `stats:` line: per channel mean, std, min, max, sum.
fn stats_numbers(line: &str) -> Vec<[f64; 5]> {
    let (_, rest) = line.split_once("; ").expect("a stats line");
    rest.split("; ")
        .map(|part| {
            let w: Vec<&str> = part.split_whitespace().collect();
            let at = |key: &str| -> f64 {
                let i = w.iter().position(|t| *t == key).expect(key);
                w[i + 1].parse().unwrap()
            };
            [at("mean"), at("std"), at("min"), at("max"), at("sum")]
        })
        .collect()
}

/// `spec` on the device (every stage on it) and on the CPU engine: the
/// outputs and the printed lines.
fn both(engine: &Engine, spec: &str, input: &DynImage) -> [(DynImage, Vec<String>); 2] {
    let ops = pipeline::parse(spec).unwrap();
    let (_, outcomes) = run_outcomes(engine, &ops, input.clone()).unwrap();
    assert!(
        outcomes.iter().all(|o| o.on_device),
        "{spec}: left the device"
    );
    let (dev_img, _, dev_lines) = pipeline::run(engine, &ops, input.clone()).unwrap();
    let (cpu_img, _, cpu_lines) = pipeline::run(&Engine::cpu(), &ops, input.clone()).unwrap();
    [(dev_img, dev_lines), (cpu_img, cpu_lines)]
}

#[test]
fn stats_and_minmax_after_convert_see_the_rounded_values() {
    let Some(engine) = opencl_engine() else {
        return;
    };
    let mut rng = Rng::new(33);
    for &(w, h) in SIZES {
        for c in [1, 3, 4] {
            for (input, to) in [
                (f32_input(&mut rng, w, h, c), "u8"),
                (f32_input(&mut rng, w, h, c), "u16"),
                (u16_input(&mut rng, w, h, c), "u8"),
            ] {
                let spec = format!("convert={to},stats,minmax");
                let [(dev, dl), (cpu, cl)] = both(&engine, &spec, &input);
                let ctx = format!("{spec} on {w}x{h}x{c} {:?}", input.sample_type());
                assert_eq!(dev, cpu, "{ctx}: the images");
                // minmax prints integer extremes: exactly the CPU's line.
                assert_eq!(dl[1], cl[1], "{ctx}");
                let n = (w * h) as f64;
                for (d, h) in stats_numbers(&dl[0]).into_iter().zip(stats_numbers(&cl[0])) {
                    // min and max exact; the sum within the f32 variants'
                    // bound (k = 24, docs/QUALITY.md) of sum |x|, which is the sum.
                    assert_eq!((d[2], d[3]), (h[2], h[3]), "{ctx}: {dl:?} {cl:?}");
                    let sum_bound = 24.0 * 2f64.powi(-24) * h[4];
                    assert!((d[4] - h[4]).abs() <= sum_bound, "{ctx}: {dl:?} {cl:?}");
                    // The mean within its bound plus the printed 4 decimals.
                    let mean_bound = 25.0 * 2f64.powi(-24) * h[4] / n + 1e-4;
                    assert!((d[0] - h[0]).abs() <= mean_bound, "{ctx}: {dl:?} {cl:?}");
                    assert!(
                        (d[1] - h[1]).abs() <= 1e-3 * h[1].max(1.0),
                        "{ctx}: {dl:?} {cl:?}"
                    );
                }
            }
        }
    }
}

#[test]
fn reduce_and_percentiles_after_convert_see_the_rounded_values() {
    let Some(engine) = opencl_engine() else {
        return;
    };
    let mut rng = Rng::new(34);
    for &(w, h) in SIZES {
        for c in [1, 3] {
            let input = f32_input(&mut rng, w, h, c);
            for spec in [
                "convert=u8,reduce=axis=x",
                "convert=u8,reduce=axis=y:op=mean",
                "convert=u8,reduce=axis=x:op=max",
            ] {
                let [(dev, _), (cpu, _)] = both(&engine, spec, &input);
                assert_eq!(dev.shape(), cpu.shape(), "{spec}");
                let (DynImage::F32(dv), DynImage::F32(hv)) = (&dev, &cpu) else {
                    panic!("{spec}: reduce gives f32");
                };
                for (a, b) in dv.rows().flatten().zip(hv.rows().flatten()) {
                    // Sums of whole steps: within the compensated sum's bound
                    // (k = 24) of the value; max exactly.
                    let bound = 24.0 * 2f32.powi(-24) * b.abs();
                    assert!((a - b).abs() <= bound, "{spec} {w}x{h}x{c}: {a} vs {b}");
                }
            }
            let spec = "convert=u8,normalize=low=5%:high=95%";
            let [(dev, _), (cpu, _)] = both(&engine, spec, &input);
            assert_eq!(dev, cpu, "{spec} {w}x{h}x{c}");
        }
    }
}
