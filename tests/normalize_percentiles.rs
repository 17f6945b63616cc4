//! `normalize=low=P%:high=Q%`: the percentiles against a sort of the
//! pooled colour samples (exact for u8/u16, within one bin of 4096 for
//! f32), the stretched output against the reference normalize, host and
//! device chains, NaN and errors, and the older normalize syntax.

use clfilter::ops::normalize::{self, percentile, Coefficients, Percentiles};
use clfilter::pipeline;
use clfilter::prelude::*;
use clfilter::{DynImage, Engine, Error, Image, Pipeline, Sample};

mod common;
use common::Rng;

fn engines() -> Vec<(&'static str, Engine)> {
    let mut out = vec![("cpu", Engine::cpu())];
    match common::opencl_engine() {
        Some(e) => out.push(("opencl", e)),
        None => common::skip_no_opencl("percentile normalize on a device"),
    }
    out
}

/// The definition, by sorting: the smallest sample v with
/// count(x <= v) >= max(1, ceil(p / 100 * n)) over the colour channels.
fn by_sort<T: Sample>(img: &Image<T>, p: f64) -> f32 {
    let colour = if img.channels() == 4 {
        3
    } else {
        img.channels()
    };
    let mut xs: Vec<f32> = (0..img.height())
        .flat_map(|y| (0..img.width()).map(move |x| (x, y)))
        .flat_map(|(x, y)| (0..colour).map(move |c| img.get(x, y, c).to_f32()))
        .filter(|v| !v.is_nan())
        .collect();
    xs.sort_by(f32::total_cmp);
    let rank = ((p / 100.0 * xs.len() as f64).ceil() as usize).clamp(1, xs.len());
    xs[rank - 1]
}

const CASES: &[(f64, f64)] = &[
    (0.0, 100.0),
    (1.0, 99.0),
    (2.5, 97.5),
    (25.0, 75.0),
    (50.0, 50.5),
];

fn integer_case<T: Sample + common::TestSample>(rng: &mut Rng) {
    for (w, h, c) in [(1, 1, 1), (37, 17, 3), (61, 7, 4), (1, 131, 1)] {
        let img: Image<T> = common::random_image(rng, w, h, c);
        for &(lo, hi) in CASES {
            let pc = Percentiles::new(lo, hi).unwrap();
            let want = (by_sort(&img, lo), by_sort(&img, hi));
            let k = Coefficients::stretch(&percentile::span(c, want.0, want.1), T::TYPE, T::TYPE)
                .unwrap();
            let want_img = normalize::reference::normalize::<T, T>(&img, &k).unwrap();
            for (name, e) in engines() {
                let what = format!("{name} {} {w}x{h}x{c} {lo}%..{hi}%", T::TYPE);
                let (got, _) = e.percentile_range_report(&img, &pc).unwrap();
                assert_eq!(got, want, "{what}");
                let out: Image<T> = e.normalize_percentiles(&img, &pc).unwrap();
                common::assert_images(&out, &want_img, 0.0, &what);
            }
        }
    }
}

#[test]
fn integer_percentiles_are_exact_and_stretch_as_the_reference() {
    let mut rng = Rng::new(41);
    integer_case::<u8>(&mut rng);
    integer_case::<u16>(&mut rng);
}

#[test]
fn f32_percentiles_are_within_one_bin_of_4096() {
    let mut rng = Rng::new(42);
    for (w, h, c) in [(1, 1, 1), (257, 13, 1), (33, 31, 3), (17, 19, 4)] {
        // Skewed values (squares of uniforms, then scaled), a NaN now and then.
        let data: Vec<f32> = (0..w * h * c)
            .map(|_| {
                if rng.below(50) == 0 {
                    f32::NAN
                } else {
                    let u = rng.unit();
                    u * u * 300.0 - 20.0
                }
            })
            .collect();
        let img = Image::from_vec(w, h, c, data).unwrap();
        for &(lo, hi) in CASES {
            let pc = Percentiles::new(lo, hi).unwrap();
            let (a, b) = (by_sort(&img, 0.0), by_sort(&img, 100.0));
            let width = (b - a) / 4096.0;
            for (name, e) in engines() {
                let ((glo, ghi), _) = e.percentile_range_report(&img, &pc).unwrap();
                for (got, p, outward) in [
                    (glo, lo, glo <= by_sort(&img, lo)),
                    (ghi, hi, ghi >= by_sort(&img, hi)),
                ] {
                    let exact = by_sort(&img, p);
                    assert!(
                        (got - exact).abs() <= width * 1.001 && outward,
                        "{name} {w}x{h}x{c} {p}%: {got}, exact {exact}, bin width {width}"
                    );
                }
            }
        }
    }
}

#[test]
fn the_stage_parses_runs_on_host_and_device_and_keeps_the_old_syntax() {
    let p: Pipeline = "normalize=low=1%:high=99%:out=u8".parse().unwrap();
    assert_eq!(p.to_string(), "normalize=low=1%:high=99%:out=u8");
    let one: Pipeline = "normalize=low=2".parse().unwrap();
    assert_eq!(one.to_string(), "normalize=low=2%:high=100%");
    for old in [
        "normalize",
        "normalize=out=f32",
        "normalize=sub=3:factor=0.5:out=u16",
    ] {
        let parsed: Pipeline = old.parse().unwrap();
        assert_eq!(parsed.to_string(), old);
    }
    for bad in [
        "normalize=low=1%:sub=2",
        "normalize=low=x%",
        "normalize=low=60%:high=40%",
        "normalize=high=101%",
        "normalize=low=-1%",
    ] {
        assert!(
            matches!(bad.parse::<Pipeline>(), Err(Error::Spec(_))),
            "{bad}"
        );
    }
    let mut rng = Rng::new(43);
    let img: Image<u8> = common::random_image(&mut rng, 64, 48, 3);
    let stages = pipeline::parse("normalize=low=5%:high=95%").unwrap();
    let mut outs = Vec::new();
    for (name, e) in engines() {
        let (out, outcomes) =
            pipeline::run_outcomes(&e, &stages, DynImage::U8(img.clone())).unwrap();
        let ops: Vec<&str> = outcomes[0].reports.iter().map(|r| r.op).collect();
        assert_eq!(ops, ["histogram", "normalize"], "{name}");
        let DynImage::U8(out) = out else {
            panic!("u8 out")
        };
        outs.push(out);
    }
    // The chain counts the uploaded u8 levels, so it finds the same percentiles.
    if outs.len() == 2 {
        common::assert_images(&outs[1], &outs[0], 0.0, "device chain vs host");
    }
    // f32 in a device chain: after a convert (a pending scale).
    let stages = pipeline::parse("convert=f32,normalize=low=5%:high=95%:out=u8").unwrap();
    let mut f = Vec::new();
    for (_, e) in engines() {
        let (out, _) = pipeline::run_outcomes(&e, &stages, DynImage::U8(img.clone())).unwrap();
        let DynImage::U8(out) = out else {
            panic!("u8 out")
        };
        f.push(out);
    }
    if f.len() == 2 {
        common::assert_images(&f[1], &f[0], 1.0, "f32 device chain vs host");
    }
}

#[test]
fn constant_nan_and_infinite_inputs() {
    let pc = Percentiles::new(1.0, 99.0).unwrap();
    for (name, e) in engines() {
        let flat = Image::from_vec(3, 1, 1, vec![5.0f32; 3]).unwrap();
        let out: Image<u8> = e.normalize_percentiles(&flat, &pc).unwrap();
        assert_eq!(out.row(0), &[0, 0, 0], "{name}");
        let nan = Image::from_vec(2, 1, 1, vec![f32::NAN; 2]).unwrap();
        assert!(
            matches!(
                e.normalize_percentiles::<f32, u8>(&nan, &pc),
                Err(Error::InvalidInput(_))
            ),
            "{name}"
        );
        let inf = Image::from_vec(2, 1, 1, vec![1.0, f32::INFINITY]).unwrap();
        assert!(
            matches!(
                e.normalize_percentiles::<f32, u8>(&inf, &pc),
                Err(Error::InvalidInput(_))
            ),
            "{name}"
        );
    }
    assert!(matches!(
        Percentiles::new(f64::NAN, 5.0),
        Err(Error::InvalidArgument(_))
    ));
}

/// Percentiles built from the public fields are checked when they are used,
/// as `Percentiles::new` checks them: by the engine call and by a stage in
/// a pipeline on every engine (they stretched to an all-black image).
#[test]
fn percentiles_from_the_fields_are_checked_where_they_are_used() {
    use clfilter::ops::normalize::stage::PercentileStage;
    let img = Image::<u16>::from_fn(16, 16, 1, |x, y, _| (x * 256 + y * 16) as u16).unwrap();
    for bad in [
        Percentiles {
            low: 90.0,
            high: 10.0,
        },
        Percentiles {
            low: f64::NAN,
            high: f64::NAN,
        },
        Percentiles {
            low: -50.0,
            high: 500.0,
        },
        Percentiles {
            low: 50.0,
            high: 50.0,
        },
    ] {
        for (name, e) in engines() {
            let r = e.normalize_percentiles::<u16, u8>(&img, &bad);
            assert!(
                matches!(r, Err(Error::InvalidArgument(_))),
                "{name} {bad:?}: {r:?}"
            );
            let p = Pipeline::builder()
                .stage(PercentileStage {
                    range: bad,
                    out: Some(clfilter::SampleType::U8),
                })
                .build();
            let r = p.run(&e, DynImage::U16(img.clone()));
            assert!(
                matches!(r, Err(Error::InvalidArgument(_))),
                "{name} {bad:?}: {:?}",
                r.err()
            );
        }
    }
}
