//! `stats`: every path (the CPU, each OpenCL variant forced) against an f64
//! two-pass reference written here, on odd sizes, u8/u16/f32 and 1/3/4
//! channels, within the bounds of `clfilter::ops::stats`' docs; a large
//! mean over a small spread; the NaN and infinity rules; the stage on host
//! and device chains; `filterctl stats --json`.

use clfilter::ops::stats::{self, reference::Exact, Stats, StatsExt};
use clfilter::pipeline;
use clfilter::{DynImage, Engine, Error, Image, Pipeline, Sample};

mod common;
use common::Rng;

/// The CPU engine (bound 2u: f64 sums), then each OpenCL variant the
/// device can run, forced, with its table bound.
fn engines() -> Vec<(String, Engine, f64)> {
    let mut out = vec![("cpu".to_string(), Engine::cpu(), 2.0)];
    match common::opencl_engine() {
        Some(e) => {
            let info = e.backend().device().expect("device").info().clone();
            for spec in stats::SPEC.variants {
                if spec.check_device(&info).is_ok() {
                    let forced = e.with_variant(Some("stats"), spec.name);
                    out.push((spec.name.to_string(), forced, spec.tolerance as f64));
                }
            }
        }
        None => common::skip_no_opencl("stats variants"),
    }
    out
}

/// The f64 reference: the mean, then the squared deviations from it (two
/// passes), and the magnitudes the bounds scale with.
fn exact<T: Sample>(img: &Image<T>) -> Exact {
    let (w, h, ch) = (img.width(), img.height(), img.channels());
    let n = (w * h) as f64;
    let mut s = Stats {
        channels: ch,
        count: (w * h) as u64,
        sum: vec![],
        mean: vec![],
        std: vec![],
        min: vec![],
        max: vec![],
    };
    let (mut abs_sum, mut shifted_sq, mut shift) = (vec![], vec![], vec![]);
    for c in 0..ch {
        let xs: Vec<f64> = (0..h)
            .flat_map(|y| (0..w).map(move |x| (x, y)))
            .map(|(x, y)| img.get(x, y, c).to_f32() as f64)
            .collect();
        let sum: f64 = xs.iter().sum();
        let mean = sum / n;
        let var: f64 = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n;
        // The fused pass's shift: the first sample where finite, else 0.
        let k = if xs[0].is_finite() { xs[0] } else { 0.0 };
        let nums = || xs.iter().copied().filter(|x| !x.is_nan());
        s.sum.push(sum);
        s.mean.push(mean);
        s.std.push(var.sqrt());
        s.min.push(nums().fold(f64::INFINITY, f64::min));
        s.max.push(nums().fold(f64::NEG_INFINITY, f64::max));
        abs_sum.push(nums().map(f64::abs).sum());
        shifted_sq.push(xs.iter().map(|x| (x - k).powi(2)).sum());
        shift.push(k);
    }
    Exact {
        stats: s,
        abs_sum,
        shifted_sq,
        shift,
    }
}

/// f32 samples of mixed signs and magnitudes (1e-3 .. 1e3) around `offset`.
fn awkward(rng: &mut Rng, w: usize, h: usize, c: usize, offset: f32) -> Image<f32> {
    let data = (0..w * h * c)
        .map(|_| {
            let mag = 10f32.powf(rng.unit() * 6.0 - 3.0);
            offset + if rng.below(2) == 0 { mag } else { -mag * 0.999 }
        })
        .collect();
    Image::from_vec(w, h, c, data).unwrap()
}

fn check_all<T: Sample>(img: &Image<T>, what: &str) {
    let want = exact(img);
    for (name, e, k) in engines() {
        let got = match e.stats(img) {
            Ok(g) => g,
            // tree_vec4 reads gray images only.
            Err(Error::Unsupported { .. }) => continue,
            Err(err) => panic!("{name} {what}: {err}"),
        };
        if let Err(why) = stats::check_stats(&got, &want, k) {
            panic!("{name} {what}: {why}");
        }
    }
}

const SIZES: &[(usize, usize)] = &[(1, 1), (1, 37), (41, 1), (13, 11), (257, 3), (61, 67)];

#[test]
fn every_path_matches_the_f64_reference_on_odd_sizes_types_and_channels() {
    let mut rng = Rng::new(2020);
    for &(w, h) in SIZES {
        for c in [1, 3, 4] {
            let a: Image<u8> = common::random_image(&mut rng, w, h, c);
            check_all(&a, &format!("u8 {w}x{h}x{c}"));
            let b: Image<u16> = common::random_image(&mut rng, w, h, c);
            check_all(&b, &format!("u16 {w}x{h}x{c}"));
            let f = awkward(&mut rng, w, h, c, 0.0);
            check_all(&f, &format!("f32 {w}x{h}x{c}"));
        }
    }
}

#[test]
fn a_million_samples_stay_within_the_bound_and_a_large_mean_keeps_its_spread() {
    let mut rng = Rng::new(99);
    // Sums over 2^20 + samples of mixed magnitudes, and a mean of 1e4 with
    // a spread of about 1, where sum(x^2) - n mean^2 would cancel in f32.
    let mixed = awkward(&mut rng, 1031, 1021, 1, 0.0);
    check_all(&mixed, "mixed 1031x1021");
    let data: Vec<f32> = (0..1031 * 1021)
        .map(|_| 1.0e4 + (rng.unit() - 0.5) * 3.4641)
        .collect();
    let offset = Image::from_vec(1031, 1021, 1, data).unwrap();
    check_all(&offset, "offset 1031x1021");
    let want = exact(&offset).stats.std[0];
    for (name, e, _) in engines() {
        let got = e.stats(&offset).unwrap().std[0];
        assert!(
            (got - want).abs() < 1e-3 * want,
            "{name}: std {got} vs {want}"
        );
    }
}

/// Per channel of an integer image: the exact sum, the standard deviation
/// (two passes in f64 over the count of each level, so at most 65536
/// terms: within about 1e-14 of itself), min and max.
fn integer_truth<T: Sample>(img: &Image<T>) -> Vec<(u64, f64, f64, f64)> {
    let (w, h, ch) = (img.width(), img.height(), img.channels());
    let n = (w * h) as f64;
    (0..ch)
        .map(|c| {
            let mut levels = std::collections::BTreeMap::<u64, u64>::new();
            for y in 0..h {
                for x in 0..w {
                    *levels.entry(img.get(x, y, c).to_f32() as u64).or_default() += 1;
                }
            }
            let sum: u64 = levels.iter().map(|(v, k)| v * k).sum();
            let mean = sum as f64 / n;
            let sq: f64 = levels
                .iter()
                .map(|(&v, &k)| k as f64 * (v as f64 - mean).powi(2))
                .sum();
            let (lo, hi) = (levels.keys().next(), levels.keys().next_back());
            (
                sum,
                (sq / n).sqrt(),
                *lo.unwrap() as f64,
                *hi.unwrap() as f64,
            )
        })
        .collect()
}

/// Every device variant's integer path against [`integer_truth`]: sums,
/// means, min and max equal, the deviation within 1e-12 of itself.
fn check_integer<T: Sample>(img: &Image<T>, what: &str) {
    let truth = integer_truth(img);
    let n = (img.width() * img.height()) as f64;
    for (name, e, _) in engines().into_iter().filter(|(n, _, _)| n != "cpu") {
        let got = match e.stats(img) {
            Ok(g) => g,
            Err(Error::Unsupported { .. }) => continue,
            Err(err) => panic!("{name} {what}: {err}"),
        };
        for (c, &(sum, std, lo, hi)) in truth.iter().enumerate() {
            let at = format!("{name} {what} channel {c}");
            assert_eq!(got.sum[c], sum as f64, "{at}: sum");
            assert_eq!(got.mean[c], sum as f64 / n, "{at}: mean");
            assert_eq!((got.min[c], got.max[c]), (lo, hi), "{at}: min, max");
            let d = (got.std[c] - std).abs();
            assert!(
                d <= 1e-12 * std.max(1e-300),
                "{at}: std {} vs {std}",
                got.std[c]
            );
        }
    }
}

#[test]
fn integer_samples_are_exact_on_a_device_and_large_images_take_more_loads() {
    let mut rng = Rng::new(31);
    // Past 2^22 pixels (2^24 for tree_vec4's quads) each work-item makes
    // more than 16 loads: 17 at 2053x2053 (the unrolled walk's remainder;
    // u8 colour rounds up to 32 pixels, whole 16-byte loads: RGBA 8, RGB
    // 6, one unrolled step of 4 and a remainder of 2); 1031x1021 has 16
    // (RGB: 3 loads, the remainder alone), in whole blocks and a partial
    // one. The gray size leaves a partial last quad; the u16 maximum
    // everywhere is the largest sum of squares per pixel.
    for (w, h) in [(1031, 1021), (2053, 2053), (2237, 2237)] {
        for c in [3, 4] {
            let img: Image<u8> = common::random_image(&mut rng, w, h, c);
            check_integer(&img, &format!("u8 {w}x{h}x{c}"));
        }
    }
    let full = Image::from_vec(2053, 2053, 3, vec![u8::MAX; 2053 * 2053 * 3]).unwrap();
    check_integer(&full, "u8 max 2053x2053x3");
    let gray: Image<u8> = common::random_image(&mut rng, 4097, 4099, 1);
    check_integer(&gray, "u8 4097x4099x1");
    // Gray blocks in 16-byte loads (`per` a multiple of the quads per
    // load): 16 quads per work-item and a partial block at 2048x2050;
    // 20 (one load past the unrolled 4 for u8) at 4600x4560.
    let gray: Image<u8> = common::random_image(&mut rng, 2048, 2050, 1);
    check_integer(&gray, "u8 2048x2050x1");
    let gray: Image<u8> = common::random_image(&mut rng, 4600, 4560, 1);
    check_integer(&gray, "u8 4600x4560x1");
    let gray: Image<u16> = common::random_image(&mut rng, 2048, 2050, 1);
    check_integer(&gray, "u16 2048x2050x1");
    let full = Image::from_vec(2053, 2053, 1, vec![u16::MAX; 2053 * 2053]).unwrap();
    check_integer(&full, "u16 max 2053x2053x1");
    let full = Image::from_vec(2053, 2053, 4, vec![u16::MAX; 2053 * 2053 * 4]).unwrap();
    check_integer(&full, "u16 max 2053x2053x4");
    for &(w, h) in SIZES {
        for c in [1, 3, 4] {
            let a: Image<u8> = common::random_image(&mut rng, w, h, c);
            check_integer(&a, &format!("u8 {w}x{h}x{c}"));
            let b: Image<u16> = common::random_image(&mut rng, w, h, c);
            check_integer(&b, &format!("u16 {w}x{h}x{c}"));
        }
    }
    // The float path at 17 loads per work-item, against its bound.
    let f = awkward(&mut rng, 2053, 2053, 1, 0.0);
    check_all(&f, "f32 2053x2053x1");
    let f4 = awkward(&mut rng, 1031, 1031, 4, 0.0);
    check_all(&f4, "f32 1031x1031x4");
}

#[test]
fn min_max_ignore_nan_sums_propagate_it_and_infinities_have_no_spread() {
    let (nan, inf) = (f32::NAN, f32::INFINITY);
    // Channels: 0 a NaN among numbers, 1 a +inf, 2 only NaN, 3 +inf and -inf;
    // the first pixel is non-finite in channels 1..3 (the shift becomes 0).
    let img = Image::from_vec(
        3,
        1,
        4,
        vec![
            1.0, inf, nan, inf, //
            nan, 3.0, nan, -inf, //
            -2.0, 1.0, nan, 0.5,
        ],
    )
    .unwrap();
    let want = exact(&img);
    for (name, e, k) in engines() {
        let got = match e.stats(&img) {
            Ok(g) => g,
            Err(Error::Unsupported { .. }) => continue,
            Err(err) => panic!("{name}: {err}"),
        };
        stats::check_stats(&got, &want, k).unwrap_or_else(|w| panic!("{name}: {w}"));
        assert!(got.sum[0].is_nan() && got.mean[0].is_nan() && got.std[0].is_nan());
        assert_eq!((got.min[0], got.max[0]), (-2.0, 1.0), "{name}");
        assert_eq!(
            (got.sum[1], got.mean[1]),
            (f64::INFINITY, f64::INFINITY),
            "{name}"
        );
        assert!(got.std[1].is_nan(), "{name}");
        assert_eq!((got.min[1], got.max[1]), (1.0, f64::INFINITY), "{name}");
        assert_eq!(
            (got.min[2], got.max[2]),
            (f64::INFINITY, f64::NEG_INFINITY),
            "{name}"
        );
        assert!(got.sum[3].is_nan() && got.std[3].is_nan(), "{name}");
        assert_eq!(
            (got.min[3], got.max[3]),
            (-f64::INFINITY, f64::INFINITY),
            "{name}"
        );
    }
    // Gray, so tree_vec4 runs too: one NaN makes sum, mean and std NaN.
    let gray = Image::from_vec(5, 1, 1, vec![2.0, 4.0, nan, 4.0, 5.0]).unwrap();
    for (name, e, _) in engines() {
        let got = e.stats(&gray).unwrap();
        assert!(got.sum[0].is_nan() && got.std[0].is_nan(), "{name}");
        assert_eq!((got.min[0], got.max[0]), (2.0, 5.0), "{name}");
    }
}

#[test]
fn the_stage_reports_a_line_and_passes_the_image_through() {
    let p: Pipeline = "stats".parse().unwrap();
    assert_eq!(p.to_string(), "stats");
    assert!(matches!(
        "stats=x=1".parse::<Pipeline>(),
        Err(Error::Spec(_))
    ));
    let mut rng = Rng::new(5);
    let img: Image<u8> = common::random_image(&mut rng, 37, 17, 3);
    let want = exact(&img).stats;
    let mut engines = vec![Engine::cpu()];
    match common::opencl_engine() {
        Some(e) => engines.push(e),
        None => common::skip_no_opencl("stats device chain"),
    }
    for e in engines {
        // After a convert to f32 (a pending scale in device chains).
        for (spec, scale) in [("stats", 1.0), ("convert=f32,stats", 1.0 / 255.0)] {
            let stages = pipeline::parse(spec).unwrap();
            let (out, outcomes) =
                pipeline::run_outcomes(&e, &stages, DynImage::U8(img.clone())).unwrap();
            let line = &outcomes.last().unwrap().lines[0];
            let r_mean = format!("R mean {:.4}", want.mean[0] * scale);
            assert!(line.starts_with("stats: n=629; R mean"), "{line}");
            assert!(line.contains(&r_mean), "{spec}: {line} lacks {r_mean}");
            if spec == "stats" {
                assert!(matches!(&out, DynImage::U8(o) if o.row(3) == img.row(3)));
            }
        }
    }
}

#[test]
fn filterctl_stats_prints_json_and_refuses_a_missing_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("in.png");
    let img = Image::from_vec(2, 2, 1, vec![0u8, 10, 20, 30]).unwrap();
    clfilter::image::save(&DynImage::U8(img), &path).unwrap();
    let out = assert_cmd::Command::new(env!("CARGO_BIN_EXE_filterctl"))
        .args(["--device", "cpu", "stats", "--json"])
        .arg(&path)
        .output()
        .unwrap();
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["channels"], 1);
    assert_eq!(v["count"], 4);
    assert_eq!(v["sum"][0], 60.0);
    assert_eq!(v["mean"][0], 15.0);
    assert!((v["std"][0].as_f64().unwrap() - 125f64.sqrt()).abs() < 1e-12);
    assert_eq!(
        (v["min"][0].as_f64(), v["max"][0].as_f64()),
        (Some(0.0), Some(30.0))
    );
    let missing = assert_cmd::Command::new(env!("CARGO_BIN_EXE_filterctl"))
        .args(["--device", "cpu", "stats"])
        .arg(dir.path().join("nope.png"))
        .output()
        .unwrap();
    assert_eq!(missing.status.code(), Some(1));
}
