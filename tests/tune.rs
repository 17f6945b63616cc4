//! The autotuner on a real OpenCL device (PoCL in CI): the engine follows
//! what the tuner measured, broken variants are disqualified, changed
//! kernels invalidate entries, damaged or shared cache files stay valid,
//! and forced variants override the tuning.
//!
//! Every test uses its own cache folder and small images. Without a device
//! each prints "skipped: no OpenCL device" (or fails with
//! `FILTERCTL_REQUIRE_OPENCL=1`).
#![cfg(feature = "opencl")]

use clfilter::prelude::*;
mod common;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use clfilter::ops::{self, any_shape, no_local, OpParams, Shape, VariantSpec};
use clfilter::tune::{self, store, Formats, Mode, Status, TuneConfig, TuneEntry, TuneReport};
use clfilter::{CacheDir, Engine, EngineOptions, Error, Image, SampleType};
use common::{opencl_engine_with, opencl_options, random_image, Rng};

/// A transpose variant whose kernel copies instead of transposing: it
/// builds and runs, and its results are wrong.
static WRONG: VariantSpec = VariantSpec {
    name: "wrong",
    summary: "test only: copies instead of transposing",
    files: &["transpose/transpose.cl"],
    options: "",
    local: [16, 16],
    local_bytes: no_local,
    supports: any_shape,
    requires: &[],
    tolerance: 0.0,
};

/// A transpose variant with no kernel function: it fails to launch.
static BROKEN: VariantSpec = VariantSpec {
    name: "broken",
    summary: "test only: its kernel does not exist",
    files: &["transpose/transpose.cl"],
    options: "",
    local: [16, 16],
    local_bytes: no_local,
    supports: any_shape,
    requires: &[],
    tolerance: 0.0,
};

const WRONG_KERNEL: &str = "\n__kernel void transpose_wrong(__global const T* in, __global T* out, \
                            int width, int height)\n{\n    int x = get_global_id(0), y = get_global_id(1);\n    \
                            if (x < width && y < height)\n        \
                            STOREP(LOADP(in, y * width + x), out, y * width + x);\n}\n";

/// The kernel sources in a temporary folder, with `append` added to `transpose/transpose.cl`.
fn sources_with(append: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in clfilter::ops::all_sources() {
        let mut text = text.to_string();
        if name == "transpose/transpose.cl" {
            text.push_str(append);
        }
        let path = dir.path().join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    dir
}

fn engine_in(cache: &Path) -> Option<Engine> {
    opencl_engine_with(opencl_options(CacheDir::Dir(cache.to_path_buf())))
}

fn config(ops: &[&str], sizes: &[(usize, usize)]) -> TuneConfig {
    TuneConfig {
        ops: ops.iter().map(|s| s.to_string()).collect(),
        sizes: sizes.to_vec(),
        formats: Formats::Only(SampleType::F32, 1),
        sigmas: vec![2.0],
        budget: Duration::from_millis(300),
        force: false,
    }
}

fn run(engine: &Engine, cfg: &TuneConfig) -> TuneReport {
    tune::tune(engine, cfg, &mut |_| {}).expect("tuning runs")
}

fn gray(w: usize, h: usize) -> Image<f32> {
    random_image::<f32>(&mut Rng::new(5), w, h, 1)
}

fn file_entries(cache: &Path) -> Vec<TuneEntry> {
    let text = std::fs::read_to_string(store::path_in(cache)).expect("tuning.json exists");
    serde_json::from_str::<store::TuningFile>(&text)
        .expect("tuning.json is valid")
        .entries
}

/// Demosaic is tuned per method on u8 frames (one key each), every
/// candidate passes the gate against the reference, and the engine's
/// demosaic then runs each method's winner; asked for f32 (the default
/// `--type`), it is tuned on u8, the first type it reads, and a mixed list
/// tunes every operation on its own type.
#[test]
fn demosaic_is_tuned_per_method() {
    use clfilter::ops::demosaic::{DemosaicParams, Method, Pattern, Raw};
    let cache = tempfile::tempdir().unwrap();
    let Some(engine) = engine_in(cache.path()) else {
        return;
    };
    let cfg = TuneConfig {
        formats: Formats::Only(SampleType::U8, 1),
        ..config(&["demosaic"], &[(46, 34)])
    };
    let report = run(&engine, &cfg);
    assert_eq!(report.keys.len(), Method::ALL.len());
    let frame = random_image::<u8>(&mut Rng::new(9), 46, 34, 1);
    for (k, method) in report.keys.iter().zip(Method::ALL) {
        let e = &k.entry;
        assert_eq!(e.key.params, format!("{method} rgba"));
        assert_eq!(e.key.format, "u8x1");
        for c in &e.candidates {
            assert_eq!(c.status, Status::Ok, "{method}/{}", c.variant);
        }
        let p = DemosaicParams {
            channels: 4,
            ..DemosaicParams::new(Pattern::Rggb, method)
        };
        let r = engine
            .demosaic_report::<u8>(&Raw::U8(&frame), &p)
            .unwrap()
            .1;
        assert_eq!(Some(&r.variant), e.e2e_winner.as_ref(), "{method}");
    }
    let mixed = run(&engine, &config(&["transpose", "demosaic"], &[(46, 34)]));
    let formats: Vec<(&str, &str)> = mixed
        .keys
        .iter()
        .map(|k| (k.entry.key.op.as_str(), k.entry.key.format.as_str()))
        .collect();
    assert!(formats.contains(&("transpose", "f32x1")), "{formats:?}");
    assert!(formats.contains(&("demosaic", "u8x1")), "{formats:?}");
}

/// Colormap is tuned on a 1-channel image into RGBA (one key, bucket
/// `rgba`), every candidate passes the gate against the f64 reference, and
/// the engine's colormap then runs the end-to-end winner, for any map.
#[test]
fn colormap_is_tuned_into_rgba() {
    use clfilter::ops::colormap::{ColorMap, ColormapParams};
    let cache = tempfile::tempdir().unwrap();
    let Some(engine) = engine_in(cache.path()) else {
        return;
    };
    for sample in [SampleType::U16, SampleType::F32] {
        let cfg = TuneConfig {
            formats: Formats::Only(sample, 1),
            ..config(&["colormap"], &[(40, 30)])
        };
        let report = run(&engine, &cfg);
        assert_eq!(report.keys.len(), 1);
        let e = &report.keys[0].entry;
        assert_eq!(e.key.params, "rgba");
        assert_eq!(e.key.format, format!("{sample}x1"));
        for c in &e.candidates {
            assert_eq!(c.status, Status::Ok, "{sample}/{}", c.variant);
        }
    }
    let img = gray(40, 30);
    let p = ColormapParams {
        map: ColorMap::Gray,
        channels: 4,
        ..Default::default()
    };
    let winner = report_winner(&engine, "colormap", &img, &p);
    let r = engine.colormap_report::<f32, u8>(&img, &p).unwrap().1;
    assert_eq!(Some(r.variant), winner);
}

/// The end-to-end winner recorded for `op` at `img`'s shape.
fn report_winner(
    engine: &Engine,
    op: &str,
    img: &Image<f32>,
    p: &clfilter::ColormapParams,
) -> Option<String> {
    let shape = ops::Shape::new(img.width(), img.height(), 1, SampleType::F32)
        .with_params(OpParams::new(*p));
    engine
        .tuned_order(self::op(op), &shape, Mode::E2e)
        .and_then(|o| o.first().cloned())
}

#[test]
fn engine_runs_what_the_tuner_chose() {
    let cache = tempfile::tempdir().unwrap();
    let Some(engine) = engine_in(cache.path()) else {
        return;
    };
    let report = run(&engine, &config(&["transpose", "gaussian"], &[(64, 64)]));
    assert_eq!(report.keys.len(), 2);
    for k in &report.keys {
        assert!(!k.cached);
        let e = &k.entry;
        // Every candidate was gated, and every one that passed was timed end to end.
        assert_eq!(e.candidates.len(), engine.variants(op(&e.key.op)).len() + 1);
        for c in &e.candidates {
            assert_eq!(c.status, Status::Ok, "{}/{}", e.key.op, c.variant);
            assert!(c.e2e.is_some(), "{}/{}", e.key.op, c.variant);
            assert_eq!(c.kernel.is_some(), c.variant != ops::CPU);
        }
        assert!(e.e2e_winner.is_some() && e.kernel_winner.is_some());
        // The tuner's own check: the engine's call ran the winner.
        let check = k.dispatch.as_ref().expect("measured keys are checked");
        assert_eq!(Some(&check.variant), e.e2e_winner.as_ref());
        assert!(check.median_ms > 0.0 && check.winner_median_ms > 0.0);
    }
    let winner = |op: &str| {
        report
            .keys
            .iter()
            .find(|k| k.entry.key.op == op)
            .and_then(|k| k.entry.e2e_winner.clone())
            .unwrap()
    };
    let img = gray(64, 64);
    let p = ops::gaussian::GaussianParams::new(2.0);
    // The same engine, a fresh one reading tuning.json, and a size in a
    // neighbouring bucket (nearest-bucket fallback) all run the winner.
    let fresh = engine_in(cache.path()).unwrap();
    for (label, e, w, h) in [
        ("same engine", &engine, 64, 64),
        ("fresh engine", &fresh, 64, 64),
        ("nearest bucket", &fresh, 90, 90),
    ] {
        let img = if w == 64 { img.clone() } else { gray(w, h) };
        let r = e.transpose_report(&img).unwrap().1;
        assert_eq!(r.variant, winner("transpose"), "{label}");
        let r = e.gaussian_report(&img, &p).unwrap().1;
        assert_eq!(r.variant, winner("gaussian"), "{label}");
    }
    // The kernel-mode order, for device-resident callers.
    let shape = Shape::new(64, 64, 1, SampleType::F32);
    let order = fresh
        .tuned_order(&ops::transpose::SPEC, &shape, Mode::Kernel)
        .unwrap();
    assert_eq!(
        Some(order[0].as_str()),
        report.keys[0].entry.kernel_winner.as_deref()
    );
    assert!(!order.iter().any(|v| v == ops::CPU));
    // Another parameter bucket is untuned: the default order runs.
    let sharp = ops::gaussian::GaussianParams::new(1.5);
    let shape = Shape::new(64, 64, 1, SampleType::F32).with_params(OpParams::new(sharp));
    assert!(fresh
        .tuned_order(&ops::gaussian::SPEC, &shape, Mode::E2e)
        .is_none());

    // An entry in which the CPU path is fastest end to end makes the engine
    // run the CPU path, with the OpenCL device open.
    let mut entries = file_entries(cache.path());
    for e in entries.iter_mut().filter(|e| e.key.op == "transpose") {
        e.e2e_winner = Some(ops::CPU.into());
        for c in &mut e.candidates {
            if let Some(t) = &mut c.e2e {
                t.median_ms = if c.variant == ops::CPU { 0.001 } else { 1e3 };
            }
        }
    }
    let file = store::TuningFile {
        format: store::FORMAT,
        entries,
    };
    std::fs::write(
        store::path_in(cache.path()),
        serde_json::to_vec(&file).unwrap(),
    )
    .unwrap();
    let cpu_wins = engine_in(cache.path()).unwrap();
    let (out, r) = cpu_wins.transpose_report(&img).unwrap();
    assert_eq!(r.variant, ops::CPU);
    assert_eq!(out, ops::transpose::reference::transpose(&img).unwrap());

    // A second run reuses the cache and measures nothing.
    let again = run(&fresh, &config(&["transpose", "gaussian"], &[(64, 64)]));
    assert!(again.keys.iter().all(|k| k.cached && k.dispatch.is_none()));
    let forced = TuneConfig {
        force: true,
        ..config(&["transpose"], &[(64, 64)])
    };
    assert!(!run(&fresh, &forced).keys[0].cached);
}

fn op(name: &str) -> &'static ops::OpSpec {
    ops::OPS.iter().copied().find(|o| o.name == name).unwrap()
}

#[test]
fn broken_and_wrong_variants_are_disqualified() {
    let cache = tempfile::tempdir().unwrap();
    let cl = sources_with(WRONG_KERNEL);
    let Some(engine) = opencl_engine_with(EngineOptions {
        cl_dir: Some(cl.path().to_path_buf()),
        extra_variants: vec![("transpose", &WRONG), ("transpose", &BROKEN)],
        ..opencl_options(CacheDir::Dir(cache.path().to_path_buf()))
    }) else {
        return;
    };
    // Non-square, so a copy differs from the transpose.
    let report = run(&engine, &config(&["transpose"], &[(32, 16)]));
    let e = &report.keys[0].entry;
    let status = |name: &str| {
        e.candidates
            .iter()
            .find(|c| c.variant == name)
            .map(|c| c.status.clone())
            .unwrap()
    };
    match status("wrong") {
        Status::Disqualified(why) => assert!(why.contains("wrong result"), "{why}"),
        other => panic!("wrong: {other:?}"),
    }
    match status("broken") {
        Status::Disqualified(why) => assert!(why.contains("transpose_broken"), "{why}"),
        other => panic!("broken: {other:?}"),
    }
    for c in e
        .candidates
        .iter()
        .filter(|c| c.variant != "wrong" && c.variant != "broken")
    {
        assert_eq!(c.status, Status::Ok, "{}", c.variant);
    }
    for mode in [Mode::Kernel, Mode::E2e] {
        let ranked = e.ranking(mode);
        assert!(!ranked.is_empty());
        assert!(!ranked.contains(&"wrong") && !ranked.contains(&"broken"));
        assert!(!["wrong", "broken"].contains(&e.winner(mode).unwrap()));
    }
    // The disqualified are never run by the engine, and the file holds them
    // with their reasons.
    let img = gray(32, 16);
    let (out, r) = engine.transpose_report(&img).unwrap();
    assert_eq!(Some(r.variant.as_str()), e.winner(Mode::E2e));
    assert_eq!(out, ops::transpose::reference::transpose(&img).unwrap());
    let stored = file_entries(cache.path());
    assert!(stored[0]
        .candidates
        .iter()
        .any(|c| c.variant == "wrong" && matches!(c.status, Status::Disqualified(_))));
    // Forcing them still runs them: a forced variant is the caller's choice.
    let forced = engine.with_variant(Some("transpose"), "wrong");
    assert_eq!(forced.transpose_report(&img).unwrap().1.variant, "wrong");
}

#[test]
fn changed_kernel_source_invalidates_entries() {
    let cache = tempfile::tempdir().unwrap();
    let a = sources_with("");
    let b = sources_with("\n// edited\n");
    let open = |cl: &Path| {
        opencl_engine_with(EngineOptions {
            cl_dir: Some(cl.to_path_buf()),
            ..opencl_options(CacheDir::Dir(cache.path().to_path_buf()))
        })
    };
    let Some(ea) = open(a.path()) else {
        return;
    };
    let cfg = config(&["transpose"], &[(32, 32)]);
    run(&ea, &cfg);
    let eb = open(b.path()).unwrap();
    assert_ne!(
        ea.tuning().checksum("transpose"),
        eb.tuning().checksum("transpose")
    );
    assert!(eb.tuning().entries().is_empty(), "the edit must invalidate");
    let shape = Shape::new(32, 32, 1, SampleType::F32);
    assert!(eb
        .tuned_order(&ops::transpose::SPEC, &shape, Mode::E2e)
        .is_none());
    // The stale entry stays in the file for the old sources, and the new
    // sources get their own entry when tuned.
    assert!(!run(&eb, &cfg).keys[0].cached);
    assert_eq!(file_entries(cache.path()).len(), 2);
    let ea2 = open(a.path()).unwrap();
    assert_eq!(ea2.tuning().entries().len(), 1);
    assert!(run(&ea2, &cfg).keys[0].cached);
}

/// Runs the built `filterctl tune` with its cache in `cache`.
fn filterctl_tune(cache: &Path, size: &str) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_filterctl"));
    c.env("FILTERCTL_CACHE_DIR", cache)
        .env_remove("FILTERCTL_VARIANT")
        .env_remove("RUST_LOG")
        .args([
            "tune",
            "--ops",
            "transpose",
            "--sizes",
            size,
            "--type",
            "f32",
            "--budget",
            "0.3",
        ]);
    c
}

#[test]
fn corrupt_cache_is_a_warning_and_is_rebuilt() {
    let cache = tempfile::tempdir().unwrap();
    if engine_in(cache.path()).is_none() {
        return;
    }
    let path = store::path_in(cache.path());
    std::fs::write(&path, b"{\"format\": 1, \"entries\": [ {truncated").unwrap();
    // The engine opens and works without it.
    let engine = engine_in(cache.path()).unwrap();
    assert!(engine.tuning().entries().is_empty());
    engine.transpose(&gray(8, 8)).unwrap();
    let out = filterctl_tune(cache.path(), "32x32").output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    // Once, though the engine and the tuner each read the file.
    assert_eq!(stderr.matches("is corrupt").count(), 1, "{stderr}");
    assert_eq!(file_entries(cache.path()).len(), 1);
}

#[test]
fn concurrent_tuners_leave_a_valid_file() {
    let cache = tempfile::tempdir().unwrap();
    if engine_in(cache.path()).is_none() {
        return;
    }
    let children: Vec<_> = ["32x32", "64x64"]
        .iter()
        .map(|s| {
            filterctl_tune(cache.path(), s)
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for c in children {
        let out = c.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    // Both entries survive: each writer re-reads and merges under the lock.
    let mut buckets: Vec<u32> = file_entries(cache.path())
        .iter()
        .map(|e| e.key.size_bucket)
        .collect();
    buckets.sort();
    assert_eq!(buckets, [10, 12]);
}

#[test]
fn unwritable_cache_folder_still_tunes_in_memory() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("a-file");
    std::fs::write(&file, b"x").unwrap();
    // A folder below a regular file can never be created.
    let Some(engine) = engine_in(&file.join("cache")) else {
        return;
    };
    let report = run(&engine, &config(&["transpose"], &[(32, 32)]));
    let winner = report.keys[0].entry.e2e_winner.clone().unwrap();
    assert_eq!(
        engine.transpose_report(&gray(32, 32)).unwrap().1.variant,
        winner
    );
}

#[test]
fn forced_variants_override_the_tuning() {
    let cache = tempfile::tempdir().unwrap();
    let Some(engine) = engine_in(cache.path()) else {
        return;
    };
    let report = run(&engine, &config(&["transpose"], &[(32, 32)]));
    let winner = report.keys[0].entry.e2e_winner.clone().unwrap();
    let img = gray(32, 32);
    for v in ["naive", "local", "local_diag", "local_x4", ops::CPU] {
        let r = engine
            .with_variant(Some("transpose"), v)
            .transpose_report(&img)
            .unwrap()
            .1;
        assert_eq!(r.variant, v, "forced {v} (tuned winner {winner})");
        assert!(r.fallbacks.is_empty());
    }
    // Forced variants that cannot run the request are errors, not fallbacks.
    let rgb = random_image::<f32>(&mut Rng::new(9), 16, 16, 3);
    match engine
        .with_variant(Some("minmax"), "tree_vec4")
        .minmax(&rgb)
    {
        Err(Error::Unsupported { op, variant, .. }) => {
            assert_eq!((op.as_str(), variant.as_str()), ("minmax", "tree_vec4"))
        }
        other => panic!("tree_vec4 on RGB: expected Unsupported, got {other:?}"),
    }
    let wide = ops::gaussian::GaussianParams::new(20.0);
    match engine
        .with_variant(Some("gaussian"), "fir_local")
        .gaussian(&img, &wide)
    {
        Err(Error::Unsupported { variant, .. }) => assert_eq!(variant, "fir_local"),
        other => panic!("fir_local at sigma 20: expected Unsupported, got {other:?}"),
    }
    match engine
        .with_variant(Some("transpose"), "no_such_variant")
        .transpose(&img)
    {
        Err(Error::UnknownVariant { .. }) => {}
        other => panic!("unknown forced variant: expected UnknownVariant, got {other:?}"),
    }
}

/// Each operation's parameter buckets, and keys that fit only their own bucket.
#[test]
fn params_buckets() {
    use clfilter::ops::{colormap::ColormapParams, gaussian::GaussianParams};
    use clfilter::tune::key::{params_bucket, TuneKey};
    let g = |s: f32| params_bucket(&OpParams::new(GaussianParams::new(s)));
    assert_eq!(g(1.5), "sigma<2 replicate");
    assert_eq!(g(2.0), "sigma2-8 replicate");
    assert_eq!(g(8.0), "sigma>=8 replicate");
    let cm = ColormapParams {
        channels: 4,
        ..Default::default()
    };
    assert_eq!(params_bucket(&OpParams::new(cm)), "rgba");
    let cm_shape = Shape::new(9, 9, 1, SampleType::U8).with_params(OpParams::new(cm));
    let key = TuneKey::new("d", "colormap", &cm_shape);
    assert!(key.fits(&cm_shape));
    let rgb = OpParams::new(ColormapParams::default());
    assert!(!key.fits(&cm_shape.with_params(rgb)));
    let shape =
        Shape::new(7, 5, 1, SampleType::F32).with_params(OpParams::new(GaussianParams::new(9.0)));
    let key = TuneKey::new("d", "gaussian", &shape);
    assert!(key.fits(&shape));
    assert!(!key.fits(&Shape {
        channels: 4,
        ..shape
    }));
    assert!(!key.fits(
        &Shape::new(7, 5, 3, SampleType::U8).with_params(OpParams::new(GaussianParams::new(1.0)))
    ));
}

/// `filterctl` with its cache in `cache`, on the OpenCL device, with
/// `args`; its stdout and stderr, after checking that it succeeded.
fn filterctl_in(cache: &Path, dir: &Path, args: &[&str]) -> (String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_filterctl"))
        .env("FILTERCTL_CACHE_DIR", cache)
        .env_remove("FILTERCTL_VARIANT")
        .env_remove("RUST_LOG")
        .current_dir(dir)
        .args(["--device", "opencl"])
        .args(args)
        .output()
        .unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    );
    assert!(out.status.success(), "{args:?}: {stderr}");
    (stdout, stderr)
}

/// A 64x48 RGB PNG, a 16-bit gray TIFF and four 12-bit packed RGGB
/// frames in `dir`: a colour photo, a gray scan and a camera stream.
fn common_inputs(dir: &Path) {
    let mut rng = Rng::new(22);
    let rgb = random_image::<u8>(&mut rng, 64, 48, 3);
    clfilter::image::save(&rgb.into(), dir.join("rgb.png")).unwrap();
    let gray = random_image::<u16>(&mut rng, 64, 48, 1);
    clfilter::image::save(&gray.into(), dir.join("gray16.tif")).unwrap();
    let raw: Vec<u8> = (0..64 * 48 * 3 / 2 * 4)
        .map(|_| rng.below(256) as u8)
        .collect();
    std::fs::write(dir.join("frames.raw"), raw).unwrap();
}

/// The `info` line of the first use of a tuned entry, in `mode`.
fn uses_tuned(stderr: &str, op: &str, mode: &str) -> bool {
    stderr.contains(&format!("{op} uses the tuned {mode} entry"))
}

/// The common formats leave out, quietly, those an operation never takes
/// (a white balance on gray), and tune the rest.
#[test]
fn common_formats_skip_those_an_operation_never_takes() {
    let cache = tempfile::tempdir().unwrap();
    if engine_in(cache.path()).is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (c, d) = (cache.path(), dir.path());
    let (_, stderr) = filterctl_in(
        c,
        d,
        &["tune", "--ops", "wb", "--sizes", "17x9", "--budget", "0.2"],
    );
    assert!(!stderr.contains("not tuned"), "{stderr}");
    let mut formats: Vec<String> = file_entries(c)
        .iter()
        .map(|e| e.key.format.to_string())
        .collect();
    formats.sort();
    formats.dedup();
    // Every sample type, 3 and 4 channels; no gray.
    assert_eq!(formats.len(), 6, "{formats:?}");
    assert!(formats.iter().all(|f| !f.ends_with("x1")), "{formats:?}");
}

/// After a default `filterctl tune` (no --type or --channels; tiny size,
/// small budget), an RGB PNG, a 16-bit gray TIFF and a 12-bit packed Bayer
/// stream each find tuned entries: end to end for the host calls, and in
/// kernel mode for the device-resident stages.
#[test]
fn default_tune_covers_common_inputs() {
    let cache = tempfile::tempdir().unwrap();
    if engine_in(cache.path()).is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    common_inputs(dir.path());
    let (c, d) = (cache.path(), dir.path());
    let (stdout, stderr) = filterctl_in(
        c,
        d,
        &[
            "tune",
            "--ops",
            "gaussian,demosaic",
            "--sizes",
            "64x48",
            "--budget",
            "0.5",
        ],
    );
    // Gaussian on 9 formats, demosaic on 2 frame types x 3 methods x RGB/RGBA.
    let formats: Vec<String> = file_entries(c)
        .iter()
        .map(|e| format!("{} {} {}", e.key.op, e.key.format, e.key.params))
        .collect();
    assert_eq!(formats.len(), 9 + 12, "{formats:?}");
    for f in [
        "gaussian u8x3",
        "gaussian u16x1",
        "gaussian f32x4",
        "demosaic u8x1 mhc rgb",
    ] {
        assert!(formats.iter().any(|k| k.starts_with(f)), "{f}: {formats:?}");
    }
    // Without a terminal: the summary, no bar.
    assert!(stdout.contains("e2e winner"), "{stdout}");
    assert!(stdout.lines().count() < formats.len() + 10, "{stdout}");
    assert!(
        !stderr.contains("ETA") && !stderr.contains('\r'),
        "{stderr}"
    );

    let (_, e) = filterctl_in(
        c,
        d,
        &[
            "-v",
            "apply",
            "-f",
            "gaussian=sigma=2",
            "rgb.png",
            "-o",
            "o.png",
        ],
    );
    assert!(uses_tuned(&e, "gaussian", "e2e"), "{e}");
    let (_, e) = filterctl_in(
        c,
        d,
        &[
            "-v",
            "apply",
            "-f",
            "gaussian=sigma=2",
            "gray16.tif",
            "-o",
            "o.tif",
        ],
    );
    assert!(uses_tuned(&e, "gaussian", "e2e"), "{e}");
    let (_, e) = filterctl_in(
        c,
        d,
        &[
            "-v",
            "stream",
            "-f",
            "demosaic,convert=u8",
            "--size",
            "64x48",
            "--format",
            "bayer_rggb12p",
            "frames.raw",
            "-o",
            "f%02d.png",
        ],
    );
    assert!(uses_tuned(&e, "demosaic", "kernel"), "{e}");
    assert!(!e.contains("not tuned"), "{e}");
}

/// `tune --for IN -f SPEC` measures exactly the keys that `apply -f SPEC
/// IN` looks up (the host calls' and the device stages'), with the stage's
/// own parameters; `apply` then finds an entry for each of its lookups.
#[test]
fn tune_for_measures_what_apply_runs() {
    let cache = tempfile::tempdir().unwrap();
    if engine_in(cache.path()).is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    common_inputs(dir.path());
    let (c, d) = (cache.path(), dir.path());
    let spec = "gaussian=sigma=12,convert=u16";
    let (stdout, _) = filterctl_in(
        c,
        d,
        &[
            "tune", "--for", "rgb.png", "-f", spec, "--budget", "0.5", "--json",
        ],
    );
    let report: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let mut keys: Vec<String> = report["keys"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| {
            let key = &k["entry"]["key"];
            format!(
                "{} {} {} {}",
                key["op"], key["format"], key["size_bucket"], key["params"]
            )
            .replace('"', "")
        })
        .collect();
    keys.sort();
    // The host calls on u8x3, the device chain on its f32 RGBA working image.
    assert_eq!(
        keys,
        [
            "gaussian f32x4 12 sigma>=8 replicate",
            "gaussian u8x3 12 sigma>=8 replicate",
            "normalize u8x3 12 -",
        ],
    );
    let (_, e) = filterctl_in(c, d, &["-v", "apply", "-f", spec, "rgb.png", "-o", "o.tif"]);
    assert!(
        uses_tuned(&e, "gaussian", "e2e") || uses_tuned(&e, "gaussian", "kernel"),
        "{e}"
    );
    assert!(!e.contains("not tuned"), "{e}");
}

/// `tune` at the default device where no OpenCL device can be opened
/// (the ICD loader finds no platform) says why, not only that the CPU
/// backend cannot be tuned; with `--device cpu`, chosen by the user, the
/// short message stays. Both are exit 2.
#[test]
fn tune_without_a_usable_opencl_device_says_why() {
    let cache = tempfile::tempdir().unwrap();
    let empty = tempfile::tempdir().unwrap();
    let run = |device: &str| {
        let out = Command::new(env!("CARGO_BIN_EXE_filterctl"))
            .env("FILTERCTL_CACHE_DIR", cache.path())
            .env("OCL_ICD_VENDORS", empty.path())
            .env("OCL_ICD_FILENAMES", "")
            .env_remove("FILTERCTL_VARIANT")
            .env_remove("RUST_LOG")
            .args([
                "--device",
                device,
                "tune",
                "--ops",
                "transpose",
                "--sizes",
                "16x16",
            ])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{device}");
        String::from_utf8(out.stderr).unwrap()
    };
    let auto = run("auto");
    assert!(auto.contains("tuning needs an OpenCL device"), "{auto}");
    assert!(auto.contains("; no OpenCL device was usable: "), "{auto}");
    let cpu = run("cpu");
    assert!(cpu.contains("tuning needs an OpenCL device"), "{cpu}");
    assert!(!cpu.contains("was usable"), "{cpu}");
}
