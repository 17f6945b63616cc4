//! Watchdog-safe dispatch: under a tiny dispatch limit every launch of a
//! kernel that can be split is cut into chunks of whole work-groups (each
//! with a global offset), and the result must be the same bytes as one
//! dispatch gives, for every variant of every registered operation (each
//! sample type on some variants), in pipelines, and through `filterctl
//! apply --json`, which counts the dispatches. Needs an OpenCL device (PoCL in CI).

use std::any::Any;
use std::time::Duration;

use clfilter::backend::{Backend, DispatchLimit};
use clfilter::image::Image;
use clfilter::ops::histogram::Histogram;
use clfilter::ops::minmax::MinMax;
use clfilter::ops::stats::Stats;
use clfilter::ops::tuning::Ask;
use clfilter::ops::{Operation, OPERATIONS};
use clfilter::pipeline::Pipeline;
use clfilter::{CacheDir, DynImage, Engine, SampleType};

mod common;

/// Grid-stride variants: a fixed number of work-items each loop over the
/// data by the global size, so an offset would make them read data twice;
/// they always run as one dispatch (`ClDevice::launch_whole`).
const UNSPLIT: &[&str] = &["minmax/tree", "minmax/tree_vec4", "normalize/x4"];

/// Variants whose one work-group covers the whole test image (stats'
/// `tree_vec4`: 256 work-items of 16 quads, 16384 gray pixels), so there
/// is nothing to split; the same bytes are still checked.
const ONE_GROUP: &[&str] = &["stats/tree_vec4"];

/// Engines on the OpenCL device without a limit and with a 1 ns one
/// (after the probe chunk, one group per dispatch). No binary cache: PoCL
/// compiles a program for every work-group size when asked for its binary
/// (about twice the CPU of a build), and its own kernel cache already
/// serves the second engine's builds.
fn engines() -> Option<(Engine, Engine)> {
    let mut opts = common::opencl_options(CacheDir::Disabled);
    opts.dispatch_limit = DispatchLimit::Off;
    let plain = common::opencl_engine_with(opts.clone())?;
    opts.dispatch_limit = DispatchLimit::Max(Duration::from_nanos(1));
    let split = common::opencl_engine_with(opts)?;
    Some((plain, split))
}

/// Whether the engine runs on a GPU, where no chunk has fewer groups than
/// the device has compute units (`watchdog::chunk_groups`): a launch of
/// fewer groups runs whole there even under a 1 ns limit, so the tests
/// below count splits only on CPU devices (PoCL in CI), and check the
/// bytes everywhere.
fn on_gpu(e: &Engine) -> bool {
    e.backend()
        .device_info()
        .is_some_and(|i| i.kind == clfilter::backend::DeviceKind::Gpu)
}

/// Equal bits (NaN payloads included).
fn same_image<T: common::TestSample>(a: &Image<T>, b: &Image<T>) -> bool {
    (a.width(), a.height(), a.channels()) == (b.width(), b.height(), b.channels())
        && a.rows()
            .flatten()
            .zip(b.rows().flatten())
            .all(|(x, y)| T::same(*x, *y))
}

/// Whether two outputs of a tuning case are the same bytes.
fn same(a: &dyn Any, b: &dyn Any) -> bool {
    if let (Some(a), Some(b)) = (a.downcast_ref::<DynImage>(), b.downcast_ref::<DynImage>()) {
        return match (a, b) {
            (DynImage::U8(a), DynImage::U8(b)) => same_image(a, b),
            (DynImage::U16(a), DynImage::U16(b)) => same_image(a, b),
            (DynImage::F32(a), DynImage::F32(b)) => same_image(a, b),
            _ => false,
        };
    }
    if let (Some(a), Some(b)) = (a.downcast_ref::<Image<u8>>(), b.downcast_ref::<Image<u8>>()) {
        return same_image(a, b);
    }
    if let (Some(a), Some(b)) = (
        a.downcast_ref::<Image<u16>>(),
        b.downcast_ref::<Image<u16>>(),
    ) {
        return same_image(a, b);
    }
    if let (Some(a), Some(b)) = (
        a.downcast_ref::<Image<f32>>(),
        b.downcast_ref::<Image<f32>>(),
    ) {
        return same_image(a, b);
    }
    if let (Some(a), Some(b)) = (a.downcast_ref::<MinMax>(), b.downcast_ref::<MinMax>()) {
        return a == b;
    }
    if let (Some(a), Some(b)) = (a.downcast_ref::<Vec<u32>>(), b.downcast_ref::<Vec<u32>>()) {
        return a == b;
    }
    if let (Some(a), Some(b)) = (a.downcast_ref::<Histogram>(), b.downcast_ref::<Histogram>()) {
        return a == b;
    }
    if let (Some(a), Some(b)) = (a.downcast_ref::<Stats>(), b.downcast_ref::<Stats>()) {
        // Debug shows every field, NaN as NaN (which == would not match).
        return format!("{a:?}") == format!("{b:?}");
    }
    panic!("an output type this test does not know: extend `same`");
}

/// Runs one variant's cases of one sample type and channel count on both
/// engines; asserts the same bytes and no fewer dispatches when split.
/// Returns (cases run, cases split).
fn chunk_cases(
    op: &Operation,
    name: &str,
    (p, s): (&Engine, &Engine),
    sample: SampleType,
    channels: usize,
) -> (usize, usize) {
    // Past several tiles in both directions, no multiple of the 16- and
    // 32-pixel tiles, and even (a Bayer frame).
    let size = (138, 70, channels);
    let (mut ran, mut splits) = (0, 0);
    if op.tune.reads(sample).is_err() {
        return (0, 0);
    }
    let ask = Ask {
        sigmas: &[0.7, 3.0],
        channels,
        method: None,
        bins: None,
    };
    for params in op.tune.params(&ask).expect("parameter sets") {
        if op.tune.job_shape(sample, size, params.clone()).is_err() {
            continue;
        }
        let case = op.tune.case(sample, size, params.clone()).unwrap();
        let before = Backend::dispatches_on_this_thread();
        let Ok((a, _)) = case.run(p) else {
            continue;
        };
        let one = Backend::dispatches_on_this_thread() - before;
        let (b, _) = case.run(s).unwrap_or_else(|e| panic!("{name}: {e}"));
        let many = Backend::dispatches_on_this_thread() - before - one;
        let what = format!("{name} {sample}x{channels} {params:?}");
        assert!(
            same(a.as_ref(), b.as_ref()),
            "{what}: chunks changed the output"
        );
        assert!(many >= one, "{what}: {many} < {one} dispatches");
        ran += 1;
        splits += usize::from(many > one);
    }
    (ran, splits)
}

/// Every variant, gray and 4 channels, one sample type for each: the types
/// rotate from variant to variant (the next one when a variant declines a
/// type), so every type runs, split, on most variants' code. A type changes
/// only a kernel's loads and stores, not its work-group grid, and each
/// (variant, type, channels) is a program build of its own (seconds on
/// PoCL), so the full product is left to `tests/registry.rs`, unsplit.
#[test]
fn every_variant_gives_the_same_bytes_in_chunks() {
    let Some((plain, split)) = engines() else {
        return;
    };
    const TYPES: [SampleType; 3] = [SampleType::U8, SampleType::U16, SampleType::F32];
    let mut turn = 0;
    for op in OPERATIONS {
        for spec in op.spec.variants {
            let name = format!("{}/{}", op.spec.name, spec.name);
            let info = plain.backend().device_info().expect("an OpenCL engine");
            if let Err(why) = spec.check_device(info) {
                eprintln!("{name}: skipped: {why}");
                continue;
            }
            let engines = (
                &plain.with_variant(Some(op.spec.name), spec.name),
                &split.with_variant(Some(op.spec.name), spec.name),
            );
            let (mut ran, mut splits) = (0, 0);
            for channels in [1, 4] {
                turn += 1;
                for i in 0..TYPES.len() {
                    let sample = TYPES[(turn + i) % TYPES.len()];
                    let (r, s) = chunk_cases(op, &name, engines, sample, channels);
                    (ran, splits) = (ran + r, splits + s);
                    if r > 0 {
                        break;
                    }
                }
            }
            eprintln!("{name}: {ran} cases, {splits} split");
            assert!(ran > 0, "{name}: no case ran");
            if UNSPLIT.contains(&name.as_str()) {
                assert_eq!(splits, 0, "{name} is grid-stride and must not split");
            } else if ONE_GROUP.contains(&name.as_str()) {
                assert_eq!(splits, 0, "{name}: one group cannot split");
            } else if !on_gpu(&plain) {
                assert_eq!(splits, ran, "{name}: some launches were not split");
            }
        }
    }
}

/// stats' `tree_vec4` covers 16384 gray pixels per work-group, the whole
/// image of the test above: on a larger image it has several groups, and
/// splits into chunks like the others, with the same bytes.
#[test]
fn stats_tree_vec4_splits_past_one_group() {
    let Some((plain, split)) = engines() else {
        return;
    };
    let op = OPERATIONS.iter().find(|o| o.spec.name == "stats").unwrap();
    let spec = op
        .spec
        .variants
        .iter()
        .find(|v| v.name == "tree_vec4")
        .unwrap();
    if let Err(why) = spec.check_device(plain.backend().device_info().unwrap()) {
        eprintln!("stats/tree_vec4: skipped: {why}");
        return;
    }
    let (p, s) = (
        plain.with_variant(Some("stats"), "tree_vec4"),
        split.with_variant(Some("stats"), "tree_vec4"),
    );
    let ask = Ask {
        sigmas: &[],
        channels: 1,
        method: None,
        bins: None,
    };
    let mut ran = 0;
    for sample in [SampleType::U8, SampleType::U16, SampleType::F32] {
        for params in op.tune.params(&ask).unwrap() {
            // 331 x 211 = 69841 pixels: five groups, the last one partial.
            let case = op.tune.case(sample, (331, 211, 1), params).unwrap();
            let before = Backend::dispatches_on_this_thread();
            let (a, _) = case.run(&p).unwrap_or_else(|e| panic!("{sample}: {e}"));
            let one = Backend::dispatches_on_this_thread() - before;
            let (b, _) = case.run(&s).unwrap_or_else(|e| panic!("{sample}: {e}"));
            let many = Backend::dispatches_on_this_thread() - before - one;
            assert!(
                same(a.as_ref(), b.as_ref()),
                "{sample}: chunks changed the output"
            );
            // Five groups: fewer than any GPU's compute units.
            assert!(
                many > one || (on_gpu(&plain) && many == one),
                "{sample}: {many} dispatches split, {one} whole"
            );
            ran += 1;
        }
    }
    assert!(ran > 0);
}

#[test]
fn a_chained_pipeline_gives_the_same_bytes_in_chunks() {
    let Some((plain, split)) = engines() else {
        return;
    };
    let mut rng = common::Rng::new(20);
    let raw: DynImage = common::random_image::<u16>(&mut rng, 258, 130, 1).into();
    let p: Pipeline =
        "demosaic=pattern=rggb:method=mhc:bits=12,gaussian=sigma=5,transpose,convert=u8"
            .parse()
            .unwrap();
    let (a, sa) = p.run(&plain, raw.clone()).unwrap();
    let (b, sb) = p.run(&split, raw).unwrap();
    assert_eq!(a, b);
    assert!(sa.iter().chain(&sb).all(|s| s.on_device));
    for (x, y) in sa.iter().zip(&sb) {
        // A folded `convert` dispatches nothing; on a GPU, a launch of
        // fewer groups than compute units runs whole.
        assert!(
            y.dispatches > x.dispatches
                || x.dispatches == 0
                || (on_gpu(&plain) && y.dispatches == x.dispatches),
            "{}: {} vs {}",
            x.op,
            y.dispatches,
            x.dispatches
        );
    }
    assert!(sa.iter().any(|s| s.dispatches > 0));
}

#[test]
fn apply_json_counts_the_dispatches_of_each_stage() {
    let Some((plain, _)) = engines() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    // On a GPU, enough 64x64 and 32x32 tiles for every launch to have more
    // groups than the device has compute units, so that every stage splits.
    let (w, h) = if on_gpu(&plain) {
        (2000, 1500)
    } else {
        (300, 200)
    };
    let img = common::random_image::<u8>(&mut common::Rng::new(3), w, h, 3);
    let input = dir.path().join("in.png");
    clfilter::image::save(&DynImage::U8(img), &input).unwrap();
    let run = |limit: &str| {
        let out = assert_cmd::Command::cargo_bin("filterctl")
            .unwrap()
            .env("FILTERCTL_CACHE_DIR", common::process_cache_dir())
            .env("FILTERCTL_MAX_DISPATCH_MS", limit)
            .args([
                "--device",
                "opencl",
                "apply",
                "-f",
                "gaussian=sigma=3,transpose",
                "--json",
            ])
            .arg(&input)
            .arg("-o")
            .arg(dir.path().join(format!("out{limit}.png")))
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        v["files"][0]["stages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["dispatches"].as_u64().unwrap())
            .collect::<Vec<_>>()
    };
    let one = run("0");
    let many = run("0.000001");
    assert_eq!(one.len(), 2);
    assert!(one.iter().all(|&n| n > 0));
    assert!(
        many.iter().zip(&one).all(|(m, o)| m > o),
        "{many:?} vs {one:?}"
    );
    let a = std::fs::read(dir.path().join("out0.png")).unwrap();
    let b = std::fs::read(dir.path().join("out0.000001.png")).unwrap();
    assert_eq!(a, b);
    // A bad limit is a usage error that names the variable.
    let bad = assert_cmd::Command::cargo_bin("filterctl")
        .unwrap()
        .env("FILTERCTL_MAX_DISPATCH_MS", "soon")
        .args(["apply", "-f", "transpose"])
        .arg(&input)
        .arg("-o")
        .arg(dir.path().join("never.png"))
        .output()
        .unwrap();
    assert_eq!(
        bad.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&bad.stderr)
    );
    assert!(String::from_utf8_lossy(&bad.stderr).contains("FILTERCTL_MAX_DISPATCH_MS"));
}
