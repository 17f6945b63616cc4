//! `auto` and OpenCL CPU devices: untuned, `auto` runs the rayon path
//! rather than an OpenCL CPU device (PoCL) on the same cores; once tuning
//! measured a device variant faster end to end, `auto` keeps the device
//! for what was measured and still runs the rest on rayon; a single stage
//! measured faster on the CPU path runs there on any device. Needs PoCL
//! (CI); skips on machines with a GPU, where `auto` takes the GPU. Once it
//! has listed the devices, `auto` trusts its record of them (`devices.json`)
//! and skips the listing until tuning proves the device.

use clfilter::backend::{list_devices, DeviceKind};
use clfilter::dispatch::key::TuneKey;
use clfilter::dispatch::store::{self, Candidate, Status, Timing, TuneEntry};
use clfilter::ops::gaussian::GaussianParams;
use clfilter::pipeline::Pipeline;
use clfilter::prelude::*;
use clfilter::{CacheDir, DeviceSelector, DynImage, EngineOptions, Image};

mod common;

/// The test image's shape: u8 RGB, 37x19 (size bucket 9).
fn image() -> Image<u8> {
    common::random_image(&mut common::Rng::new(21), 37, 19, 3)
}

/// Whether every OpenCL device is a CPU device (and there is one).
fn only_cpu_devices() -> bool {
    match list_devices() {
        Ok(d) if !d.is_empty() => d.iter().all(|i| i.kind == DeviceKind::Cpu),
        _ => {
            common::skip_no_opencl("auto_device");
            false
        }
    }
}

fn options(device: DeviceSelector, cache: &std::path::Path) -> EngineOptions {
    EngineOptions {
        device,
        cache: CacheDir::Dir(cache.to_path_buf()),
        ..Default::default()
    }
}

/// Writes a tuning file with one entry for `transpose` on the test image's
/// key whose end-to-end winner is `winner`.
fn write_tuning(cache: &std::path::Path, winner: &str) {
    let engine = common::open_engine(options(DeviceSelector::OpenCl, cache)).unwrap();
    let tuning = engine.tuning();
    let timing = |ms: f64| Timing {
        median_ms: ms,
        min_ms: ms,
        max_ms: ms,
        spread_pct: 0.0,
        runs: 3,
        retimed: false,
        mp_per_s: 1.0,
        gb_per_s: 1.0,
        pct_of_copy: None,
    };
    let candidate = |variant: &str, ms: f64| Candidate {
        variant: variant.into(),
        status: Status::Ok,
        kernel: None,
        kernel_note: None,
        e2e: Some(timing(ms)),
        e2e_note: None,
    };
    let (cpu_ms, naive_ms) = if winner == "cpu" {
        (0.1, 1.0)
    } else {
        (1.0, 0.1)
    };
    let entry = TuneEntry {
        key: TuneKey {
            device: tuning.fingerprint().unwrap().to_string(),
            op: "transpose".into(),
            format: "u8x3".into(),
            size_bucket: 9,
            params: "-".into(),
        },
        checksum: tuning.checksum("transpose").unwrap().to_string(),
        width: 37,
        height: 19,
        sigma: None,
        device_name: "test".into(),
        copy_gb_per_s: None,
        tuned_at: 1,
        kernel_winner: None,
        e2e_winner: Some(winner.into()),
        candidates: vec![candidate("cpu", cpu_ms), candidate("naive", naive_ms)],
    };
    let file = store::TuningFile {
        format: store::FORMAT,
        entries: vec![entry],
    };
    std::fs::write(
        store::path_in(cache),
        serde_json::to_vec_pretty(&file).unwrap(),
    )
    .unwrap();
}

#[test]
fn untuned_auto_runs_the_rayon_path_not_an_opencl_cpu_device() {
    if !only_cpu_devices() {
        return;
    }
    let cache = tempfile::tempdir().unwrap();
    let auto = common::open_engine(options(DeviceSelector::Auto, cache.path())).unwrap();
    assert!(
        auto.backend().device().is_none(),
        "{}",
        auto.backend().describe()
    );
    let (_, report) = auto.transpose_report(&image()).unwrap();
    assert_eq!(report.variant, "cpu");
    // `opencl` still opens the device, and a forced variant keeps it too.
    let opencl = common::open_engine(options(DeviceSelector::OpenCl, cache.path())).unwrap();
    assert!(opencl.backend().device().is_some());
    let forced = common::open_engine(EngineOptions {
        variant: Some("transpose=naive".into()),
        ..options(DeviceSelector::Auto, cache.path())
    })
    .unwrap();
    assert!(forced.backend().device().is_some());
}

#[test]
fn tuned_auto_keeps_the_device_for_what_was_measured_only() {
    if !only_cpu_devices() {
        return;
    }
    let cache = tempfile::tempdir().unwrap();
    write_tuning(cache.path(), "naive");
    let auto = common::open_engine(options(DeviceSelector::Auto, cache.path())).unwrap();
    assert!(auto.backend().device().is_some());
    assert!(auto.cpu_first_untuned());
    let img = image();
    // Measured: the device variant.
    assert_eq!(auto.transpose_report(&img).unwrap().1.variant, "naive");
    // Not measured: the CPU path first.
    assert_eq!(
        auto.gaussian_report(&img, &GaussianParams::new(1.5))
            .unwrap()
            .1
            .variant,
        "cpu"
    );
    // A chain with an unmeasured stage runs stage by stage; the measured
    // stage alone stays on the device.
    let input: DynImage = img.into();
    let mixed: Pipeline = "transpose,gaussian=sigma=1.5".parse().unwrap();
    let (_, stages) = mixed.run(&auto, input.clone()).unwrap();
    assert!(stages.iter().all(|s| !s.on_device));
    let alone: Pipeline = "transpose".parse().unwrap();
    let (_, stages) = alone.run(&auto, input).unwrap();
    assert!(stages[0].on_device);
}

#[test]
fn a_single_stage_measured_faster_on_the_cpu_path_runs_there() {
    if common::opencl_engine().is_none() {
        return;
    }
    let cache = tempfile::tempdir().unwrap();
    write_tuning(cache.path(), "cpu");
    let engine = common::open_engine(options(DeviceSelector::OpenCl, cache.path())).unwrap();
    let input: DynImage = image().into();
    let p: Pipeline = "transpose".parse().unwrap();
    let (_, stages) = p.run(&engine, input.clone()).unwrap();
    assert!(!stages[0].on_device);
    assert_eq!(stages[0].reports[0].variant, "cpu");
    // Forced onto the device, it stays there.
    let forced: Pipeline = "transpose=variant=naive".parse().unwrap();
    let (_, stages) = forced.run(&engine, input).unwrap();
    assert!(stages[0].on_device);
}

#[test]
fn auto_lists_the_devices_once_then_trusts_the_record_until_tuning_proves_the_device() {
    if !only_cpu_devices() {
        return;
    }
    let cache = tempfile::tempdir().unwrap();
    let listings = clfilter::backend::listings_on_this_thread;
    let open_auto = || common::open_engine(options(DeviceSelector::Auto, cache.path())).unwrap();
    // First run: lists the devices, records them, runs rayon.
    let before = listings();
    assert!(open_auto().backend().device().is_none());
    assert_eq!(listings(), before + 1);
    assert!(cache.path().join("devices.json").is_file());
    // Later runs: rayon without listing.
    let before = listings();
    let engine = open_auto();
    assert!(engine.backend().device().is_none());
    assert_eq!(engine.transpose_report(&image()).unwrap().1.variant, "cpu");
    assert_eq!(listings(), before);
    // A corrupt record is listed past (and rewritten).
    std::fs::write(cache.path().join("devices.json"), b"{\"format\": 1, \"regi").unwrap();
    let before = listings();
    assert!(open_auto().backend().device().is_none());
    assert_eq!(listings(), before + 1);
    let before = listings();
    open_auto();
    assert_eq!(listings(), before);
    // Once tuning measured the device faster, auto lists and opens it.
    write_tuning(cache.path(), "naive");
    let before = listings();
    assert!(open_auto().backend().device().is_some());
    assert_eq!(listings(), before + 1);
    // Forgetting the record (`filterctl devices`) lists again.
    write_tuning(cache.path(), "cpu");
    clfilter::backend::forget_devices(&CacheDir::Dir(cache.path().to_path_buf()));
    let before = listings();
    assert!(open_auto().backend().device().is_none());
    assert_eq!(listings(), before + 1);
}

/// Across processes too: the second `filterctl` run trusts the first's
/// record (nothing the first run sets in its own environment may change the
/// drivers' hash).
#[test]
fn a_second_filterctl_run_skips_the_listing() {
    if !only_cpu_devices() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let img = dir.path().join("in.png");
    clfilter::image::save(&DynImage::U8(image()), &img).unwrap();
    let run = || {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_filterctl"))
            .env("FILTERCTL_CACHE_DIR", dir.path().join("cache"))
            .env_remove("FILTERCTL_DEVICE")
            .env_remove("FILTERCTL_VARIANT")
            .env_remove("RUST_LOG")
            .args(["-v", "apply", "-f", "gaussian=sigma=1"])
            .arg(&img)
            .arg("-o")
            .arg(dir.path().join("out.png"))
            .output()
            .unwrap();
        assert!(out.status.success());
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let first = run();
    assert!(first.contains("using OpenCL device"), "{first}");
    let second = run();
    assert!(
        second.contains("without listing OpenCL devices"),
        "{second}"
    );
    assert!(!second.contains("using OpenCL device"), "{second}");
}
