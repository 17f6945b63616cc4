//! Failure handling on a real OpenCL device: build failures fall back to the
//! next variant (and finally the CPU), damaged binary caches are rebuilt,
//! stale driver folders are removed, caching can be turned off, and bad
//! variant or device requests are errors that say what exists.
//!
//! Every test needs OpenCL: without a device it prints
//! "skipped: no OpenCL device" (or fails with `FILTERCTL_REQUIRE_OPENCL=1`).
#![cfg(feature = "opencl")]

use clfilter::prelude::*;
mod common;

use std::path::{Path, PathBuf};

use clfilter::backend::opencl::{ClDevice, ProgramCounts};
use clfilter::ops::transpose;
use clfilter::{Backend, CacheDir, DeviceSelector, Engine, EngineOptions, Error, Image};
use common::files::{bin_file, bin_key, BIN_HEADER};
use common::{assert_images, open_engine, opencl_engine_with, opencl_options, random_image, Rng};

fn device(engine: &Engine) -> &ClDevice {
    match engine.backend() {
        Backend::OpenCl(d) => d,
        other => panic!("expected an OpenCL backend, got {}", other.describe()),
    }
}

fn stats(engine: &Engine) -> ProgramCounts {
    device(engine).programs().counts()
}

/// An OpenCL engine caching in `cache`, or `None` (skip).
fn engine_in(cache: &Path) -> Option<Engine> {
    opencl_engine_with(opencl_options(CacheDir::Dir(cache.to_path_buf())))
}

fn test_image() -> Image<u16> {
    random_image::<u16>(&mut Rng::new(7), 37, 19, 3)
}

/// Transposes the test image with the default dispatch and checks the result.
fn transpose_ok(engine: &Engine, ctx: &str) -> clfilter::RunReport {
    let img = test_image();
    let (out, report) = engine
        .transpose_report(&img)
        .unwrap_or_else(|e| panic!("{ctx}: {e}"));
    let want = transpose::reference::transpose(&img).unwrap();
    assert_images(&out, &want, 0.0, ctx);
    report
}

/// The kernel sources copied to a temporary folder, with `append` added to
/// the end of `transpose/transpose.cl`.
fn sources_with(append: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in clfilter::ops::all_sources() {
        let mut text = text.to_string();
        if name == "transpose/transpose.cl" {
            text.push('\n');
            text.push_str(append);
        }
        let path = dir.path().join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    dir
}

fn engine_with_sources(cl_dir: &Path, cache: &Path) -> Option<Engine> {
    opencl_engine_with(EngineOptions {
        cl_dir: Some(cl_dir.to_path_buf()),
        ..opencl_options(CacheDir::Dir(cache.to_path_buf()))
    })
}

const BROKEN_X4: &str = "#if defined(TILE) && TILE == 32\n\
                         #error deliberately broken for the fallback test\n\
                         #endif\n";

#[test]
fn build_failure_falls_back_to_next_variant() {
    let cl = sources_with(BROKEN_X4);
    let cache = tempfile::tempdir().unwrap();
    let Some(engine) = engine_with_sources(cl.path(), cache.path()) else {
        return;
    };
    let kind = device(&engine).info().kind;
    let order: Vec<_> = transpose::SPEC.order(kind).iter().map(|s| s.name).collect();
    assert_eq!(
        order.first(),
        Some(&"local_x4"),
        "this test breaks local_x4 because {kind} devices try it first"
    );

    let report = transpose_ok(&engine, "default transpose with local_x4 broken");
    assert_ne!(report.variant, "local_x4");
    assert_eq!(
        report.variant, order[1],
        "the next variant in the order ran"
    );
    assert_eq!(report.fallbacks.len(), 1, "{:?}", report.fallbacks);
    assert!(
        report.fallbacks[0].starts_with("local_x4")
            && report.fallbacks[0].contains("deliberately broken"),
        "the fallback names the variant and carries the build log: {:?}",
        report.fallbacks
    );

    match engine
        .with_variant(Some("transpose"), "local_x4")
        .transpose_report(&test_image())
    {
        Err(Error::Build {
            op, variant, log, ..
        }) => {
            assert_eq!((op.as_str(), variant.as_str()), ("transpose", "local_x4"));
            assert!(log.contains("deliberately broken"), "build log: {log}");
        }
        other => panic!("forcing the broken variant: expected Error::Build, got {other:?}"),
    }

    // The other variants still build from the same file.
    for v in ["naive", "local", "local_diag"] {
        let r = transpose_ok(
            &engine.with_variant(Some("transpose"), v),
            &format!("forced {v}"),
        );
        assert_eq!(r.variant, v);
    }
}

#[test]
fn every_variant_broken_falls_back_to_cpu() {
    let cl = sources_with("#error every transpose variant is broken\n");
    let cache = tempfile::tempdir().unwrap();
    let Some(engine) = engine_with_sources(cl.path(), cache.path()) else {
        return;
    };
    let tried = transpose::SPEC.order(device(&engine).info().kind).len();
    let report = transpose_ok(&engine, "default transpose with transpose.cl broken");
    assert_eq!(report.variant, "cpu");
    assert_eq!(report.fallbacks.len(), tried, "{:?}", report.fallbacks);
    assert!(report
        .fallbacks
        .iter()
        .all(|f| f.contains("every transpose variant is broken")));
    // Other operations are unaffected.
    let img = test_image();
    let (_, r) = engine.minmax_report(&img).unwrap();
    assert_ne!(r.variant, "cpu");
}

/// The `.bin` files of a cache folder (not the `.tmp` files of unfinished writes).
fn bins(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "bin"))
        .collect();
    v.sort();
    v
}

/// Checks a cache file's header: magic, the key its name gives, payload
/// length and FNV-1a checksum.
fn assert_valid_bin(file: &Path) {
    let bytes = std::fs::read(file).unwrap();
    assert!(
        bytes.len() > BIN_HEADER && &bytes[..8] == b"CLFBIN02",
        "{}: bad header",
        file.display()
    );
    let payload = &bytes[BIN_HEADER..];
    assert_eq!(
        bytes,
        bin_file(bin_key(file), payload),
        "{}",
        file.display()
    );
}

/// Ways to damage a cache file.
fn damage(case: &str, file: &Path, rng: &mut Rng) {
    let good = std::fs::read(file).unwrap();
    let bytes = match case {
        "garbage" => (0..good.len()).map(|_| rng.next_u64() as u8).collect(),
        "truncated" => good[..good.len() / 2].to_vec(),
        "empty" => Vec::new(),
        // Header and checksum are right, so only the driver can reject it.
        "driver-rejected" => {
            let payload: Vec<u8> = (0..4096).map(|_| rng.next_u64() as u8).collect();
            bin_file(bin_key(file), &payload)
        }
        // A whole, valid file of another entry (the same source built with
        // other options), copied or renamed over this one: the driver would
        // take it, and its kernels would compute garbage.
        "another entry's" => {
            let [source, options] = bin_key(file);
            bin_file([source, options ^ 1], &good[BIN_HEADER..])
        }
        other => unreachable!("{other}"),
    };
    std::fs::write(file, bytes).unwrap();
}

#[test]
fn corrupt_binary_cache_is_deleted_and_rebuilt() {
    let mut rng = Rng::new(11);
    for case in [
        "garbage",
        "truncated",
        "empty",
        "driver-rejected",
        "another entry's",
    ] {
        let cache = tempfile::tempdir().unwrap();
        let Some(first) = engine_in(cache.path()) else {
            return;
        };
        transpose_ok(&first, &format!("{case}: first run"));
        let s = stats(&first);
        assert!(s.built_from_source >= 1, "{case}: first run: {s:?}");
        let dir = device(&first)
            .programs()
            .dir()
            .expect("disk caching is on")
            .to_path_buf();
        assert_eq!(dir.parent(), Some(cache.path().join("programs").as_path()));
        let files = bins(&dir);
        assert!(!files.is_empty(), "{case}: no .bin in {}", dir.display());
        for f in &files {
            assert_valid_bin(f);
            damage(case, f, &mut rng);
        }
        drop(first);

        let second = engine_in(cache.path()).expect("the device was there a moment ago");
        transpose_ok(&second, &format!("{case}: run on the damaged cache"));
        let s = stats(&second);
        assert!(
            s.rejected_binaries >= 1 && s.built_from_source >= 1,
            "{case}: damaged files must be rejected and rebuilt: {s:?}"
        );
        assert_eq!(s.loaded_from_binary, 0, "{case}: {s:?}");
        let rewritten = bins(&dir);
        assert_eq!(rewritten, files, "{case}: the same files are rewritten");
        for f in &rewritten {
            assert_valid_bin(f);
        }
        drop(second);

        let third = engine_in(cache.path()).expect("the device was there a moment ago");
        transpose_ok(&third, &format!("{case}: run on the rebuilt cache"));
        let s = stats(&third);
        assert!(
            s.loaded_from_binary >= 1 && s.rejected_binaries == 0 && s.built_from_source == 0,
            "{case}: the rewritten binaries load: {s:?}"
        );
    }
}

#[test]
fn stale_driver_folders_are_removed() {
    // Learn this device's folder name from a first engine.
    let probe = tempfile::tempdir().unwrap();
    let Some(engine) = engine_in(probe.path()) else {
        return;
    };
    let current = device(&engine)
        .programs()
        .dir()
        .unwrap()
        .file_name()
        .unwrap()
        .to_str()
        .unwrap()
        .to_string();
    drop(engine);
    // `<vendor>--<device>--<platform>--<driver>`; the sanitised parts contain no '-'.
    let (prefix, driver) = current.rsplit_once("--").unwrap_or_else(|| {
        panic!("folder name '{current}' is not vendor--device--platform--driver")
    });
    assert_ne!(driver, "OLDDRIVER");
    let prefix = format!("{prefix}--");

    let cache = tempfile::tempdir().unwrap();
    let programs = cache.path().join("programs");
    let stale = programs.join(format!("{prefix}OLDDRIVER"));
    let stale2 = programs.join(format!("{prefix}0.0.1"));
    let other_device = programs.join("OtherVendor--OtherDevice--1.0");
    let not_a_dir = programs.join(format!("{prefix}file"));
    for d in [&stale, &stale2, &other_device] {
        std::fs::create_dir_all(d).unwrap();
        std::fs::write(d.join("x.bin"), b"old binary").unwrap();
    }
    std::fs::write(&not_a_dir, b"a file, not a driver folder").unwrap();

    let engine = engine_in(cache.path()).expect("the device was there a moment ago");
    assert!(!stale.exists(), "{} should be removed", stale.display());
    assert!(!stale2.exists(), "{} should be removed", stale2.display());
    assert!(
        other_device.join("x.bin").exists(),
        "another device's folder is kept"
    );
    assert!(not_a_dir.exists(), "only folders are removed");
    transpose_ok(&engine, "after removing stale folders");
    assert!(!bins(&programs.join(&current)).is_empty());
}

#[test]
fn disabled_cache_writes_nothing() {
    let Some(engine) = opencl_engine_with(opencl_options(CacheDir::Disabled)) else {
        return;
    };
    assert_eq!(CacheDir::Disabled.resolve(), None);
    assert!(device(&engine).programs().dir().is_none());
    transpose_ok(&engine, "first run, caching disabled");
    transpose_ok(&engine, "second run, caching disabled");
    let s = stats(&engine);
    assert!(s.built_from_source >= 1, "{s:?}");
    assert_eq!(s.loaded_from_binary, 0, "{s:?}");
    assert!(
        s.memory_hits >= 1,
        "the second run reuses the program: {s:?}"
    );
}

/// Lists every file under `dir`, recursively.
fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                todo.push(p);
            } else {
                out.push(p);
            }
        }
    }
    out
}

const CHILD: &str = "CLFILTER_TEST_CACHE_ENV_CHILD";

/// Runs `child_process_cache_env` in a new process of this test binary, with
/// `FILTERCTL_CACHE_DIR=value` and `HOME`/`XDG_CACHE_HOME` inside `sandbox`
/// (so a cache written to the default place would land there too).
fn run_child(sandbox: &Path, value: &str, expect_dir: &str) {
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "child_process_cache_env", "--nocapture"])
        .env(CHILD, expect_dir)
        .env("FILTERCTL_CACHE_DIR", value)
        .env("HOME", sandbox.join("home"))
        .env("XDG_CACHE_HOME", sandbox.join("xdg"))
        .env("POCL_CACHE_DIR", sandbox.join("pocl"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "child with FILTERCTL_CACHE_DIR={value} failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("1 passed"),
        "the child test did not run:\n{stdout}"
    );
}

/// `FILTERCTL_CACHE_DIR=disabled` with `CacheDir::Default` writes nothing
/// anywhere; `FILTERCTL_CACHE_DIR=<dir>` puts the binaries there. The
/// variable is set in child processes, since changing the environment of
/// this multi-threaded process would race with the other tests.
#[test]
fn cache_dir_environment_variable() {
    if opencl_engine_with(opencl_options(CacheDir::Disabled)).is_none() {
        return;
    }
    let sandbox = tempfile::tempdir().unwrap();
    run_child(sandbox.path(), "disabled", "none");
    let written = our_files(sandbox.path());
    assert!(written.is_empty(), "caching disabled, yet: {written:?}");

    let dir = sandbox.path().join("explicit");
    run_child(sandbox.path(), dir.to_str().unwrap(), dir.to_str().unwrap());
    let written = our_files(sandbox.path());
    assert!(!written.is_empty());
    // Besides the program binaries, the record of the device listing
    // (`devices.json`, what `auto` found) lives in the cache folder.
    for f in written.iter().filter(|f| **f != dir.join("devices.json")) {
        assert!(f.starts_with(dir.join("programs")), "{}", f.display());
        assert_valid_bin(f);
    }
}

/// Files under `dir` that this crate wrote: anything in a `clfilter` folder
/// or under `explicit/`, and any file holding a program binary. (Drivers keep
/// caches of their own, such as PoCL's kcache under `$XDG_CACHE_HOME`.)
fn our_files(dir: &Path) -> Vec<PathBuf> {
    files_under(dir)
        .into_iter()
        .filter(|f| {
            let rel = f.strip_prefix(dir).unwrap();
            rel.components()
                .any(|c| c.as_os_str() == "clfilter" || c.as_os_str() == "explicit")
                || std::fs::read(f).is_ok_and(|b| b.starts_with(b"CLFBIN02"))
        })
        .collect()
}

/// The child half of [`cache_dir_environment_variable`]; does nothing in a
/// normal run.
#[test]
fn child_process_cache_env() {
    let Ok(expect) = std::env::var(CHILD) else {
        return;
    };
    let engine = open_engine(EngineOptions {
        device: DeviceSelector::OpenCl,
        ..EngineOptions::default()
    })
    .unwrap();
    let expect_dir = (expect != "none").then(|| PathBuf::from(&expect));
    assert_eq!(CacheDir::Default.resolve(), expect_dir);
    let dir = device(&engine).programs().dir().map(Path::to_path_buf);
    assert_eq!(dir.is_some(), expect_dir.is_some(), "{dir:?}");
    if let (Some(dir), Some(root)) = (&dir, &expect_dir) {
        assert!(dir.starts_with(root.join("programs")), "{}", dir.display());
    }
    transpose_ok(&engine, "child");
}

/// Engines in several threads share one cache folder: every file ends up
/// valid and no temporary file is left behind.
#[test]
fn concurrent_engines_share_a_cache_folder() {
    let cache = tempfile::tempdir().unwrap();
    let Some(first) = engine_in(cache.path()) else {
        return;
    };
    let dir = device(&first).programs().dir().unwrap().to_path_buf();
    let engines: Vec<Engine> = (0..4)
        .map(|_| engine_in(cache.path()).expect("the device was there a moment ago"))
        .collect();
    std::thread::scope(|s| {
        for (i, e) in engines.iter().enumerate() {
            s.spawn(move || {
                for v in ["naive", "local", "local_x4"] {
                    transpose_ok(
                        &e.with_variant(Some("transpose"), v),
                        &format!("thread {i} {v}"),
                    );
                }
                let img = test_image();
                assert_eq!(
                    e.minmax(&img).unwrap(),
                    clfilter::ops::minmax::reference::minmax(&img)
                );
            });
        }
    });
    let all: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert!(
        all.iter()
            .all(|p| p.extension().is_some_and(|x| x == "bin")),
        "leftover files: {all:?}"
    );
    assert!(all.len() >= 4, "{all:?}");
    for f in &all {
        assert_valid_bin(f);
    }
}

#[test]
fn unknown_and_unsupported_variants_are_errors() {
    let img = test_image();
    let cl = opencl_engine_with(opencl_options(CacheDir::Disabled));
    let mut engines = vec![("Engine::cpu()", Engine::cpu())];
    if let Some(cl) = &cl {
        engines.push(("opencl", cl.clone()));
    }
    for (label, engine) in &engines {
        match engine
            .with_variant(Some("transpose"), "no_such_variant")
            .transpose_report(&img)
        {
            Err(Error::UnknownVariant { op, variant, known }) => {
                assert_eq!(op, "transpose");
                assert_eq!(variant, "no_such_variant");
                for name in transpose::SPEC.names() {
                    assert!(known.contains(name), "{label}: known = {known}");
                }
            }
            other => panic!("{label}: expected UnknownVariant, got {other:?}"),
        }
        // A bare name forces only the operations whose table has it: `tree`
        // (a minmax variant) leaves transpose to its default choice.
        let (_, report) = engine
            .with_variant(None, "tree")
            .transpose_report(&img)
            .unwrap_or_else(|e| panic!("{label}: bare minmax name broke transpose: {e}"));
        assert_ne!(report.variant, "tree", "{label}");
    }
    // Unknown names in EngineOptions.variant (FILTERCTL_VARIANT / --variant)
    // fail when the engine is created, before any work.
    for bad in ["no_such_variant", "transpose=bogus", "transpos=local"] {
        let opts = EngineOptions {
            device: DeviceSelector::Cpu,
            variant: Some(bad.into()),
            ..Default::default()
        };
        assert!(Engine::new(opts).is_err(), "{bad} should be rejected");
    }
    for v in ["naive", "local_x4"] {
        match Engine::cpu()
            .with_variant(Some("transpose"), v)
            .transpose_report(&img)
        {
            Err(Error::Unsupported { op, variant, .. }) => {
                assert_eq!((op.as_str(), variant.as_str()), ("transpose", v));
            }
            other => panic!("{v} on Engine::cpu(): expected Unsupported, got {other:?}"),
        }
    }
    if cl.is_none() {
        return;
    }
    // Overrides from EngineOptions::variant.
    let forced = open_engine(EngineOptions {
        variant: Some("transpose=naive, minmax=tree".into()),
        ..opencl_options(CacheDir::Disabled)
    })
    .unwrap();
    assert_eq!(transpose_ok(&forced, "options override").variant, "naive");
    assert_eq!(forced.minmax_report(&img).unwrap().1.variant, "tree");
    match open_engine(EngineOptions {
        variant: Some("=naive".into()),
        ..opencl_options(CacheDir::Disabled)
    }) {
        Err(Error::InvalidArgument(_)) => {}
        other => panic!("bad override: expected InvalidArgument, got {other:?}"),
    }
}

#[test]
fn device_selector_errors_list_the_devices() {
    let Some(engine) = opencl_engine_with(opencl_options(CacheDir::Disabled)) else {
        return;
    };
    let info = device(&engine).info().clone();
    let opts = |device| EngineOptions {
        device,
        ..opencl_options(CacheDir::Disabled)
    };
    for sel in [
        DeviceSelector::Name("no-such-device-xyz".into()),
        DeviceSelector::Index(99, 0),
    ] {
        match open_engine(opts(sel.clone())) {
            Err(e @ Error::DeviceNotFound { .. }) => {
                let msg = e.to_string();
                assert!(msg.contains("0:0"), "{sel:?}: {msg}");
                assert!(msg.contains(&info.name), "{sel:?}: {msg}");
                if let DeviceSelector::Name(n) = &sel {
                    assert!(msg.contains(n.as_str()), "{msg}");
                }
            }
            other => panic!("{sel:?}: expected DeviceNotFound, got {other:?}"),
        }
    }
    let devices = clfilter::backend::list_devices().unwrap();
    if !devices
        .iter()
        .any(|d| d.kind == clfilter::DeviceKind::Gpu && d.available)
    {
        match open_engine(opts(DeviceSelector::Gpu)) {
            Err(Error::DeviceNotFound { .. }) => {}
            other => panic!("no GPU: expected DeviceNotFound, got {other:?}"),
        }
    }
    // Selecting by index and by part of the name finds the same device.
    let (p, d) = info.index;
    for sel in [
        DeviceSelector::Index(p, d),
        DeviceSelector::Name(info.name.to_lowercase()),
    ] {
        let e = open_engine(opts(sel.clone())).unwrap();
        assert_eq!(device(&e).info().index, info.index, "{sel:?}");
    }
    assert!(matches!(
        open_engine(opts(DeviceSelector::Cpu)).unwrap().backend(),
        Backend::Cpu
    ));
}

/// `--variant` overrides: `NAME` for every table that has it, `op=NAME` for
/// one operation; unknown operations and variants are errors.
#[test]
fn variant_overrides_parse() {
    use clfilter::ops::{minmax, normalize, transpose};
    use clfilter::DeviceSelector;
    let with = |v: &str| {
        Engine::new(EngineOptions {
            device: DeviceSelector::Cpu,
            cache: CacheDir::Disabled,
            variant: Some(v.to_string()),
            ..Default::default()
        })
    };
    let e = with("local, minmax=tree").unwrap();
    assert_eq!(e.forced(&transpose::SPEC), Some("local"));
    assert_eq!(e.forced(&minmax::SPEC), Some("tree"));
    assert!(matches!(with("=x"), Err(Error::InvalidArgument(_))));
    assert!(matches!(
        with("transpos=local"),
        Err(Error::InvalidArgument(_))
    ));
    assert!(matches!(
        with("transpose=bogus"),
        Err(Error::UnknownVariant { .. })
    ));
    assert!(matches!(with("bogus"), Err(Error::InvalidArgument(_))));
    let e = Engine::cpu()
        .with_variant(None, "local_x4")
        .with_variant(Some("minmax"), "tree");
    assert_eq!(e.forced(&minmax::SPEC), Some("tree"));
    assert_eq!(e.forced(&transpose::SPEC), Some("local_x4"));
    // A bare name only applies where the table has it.
    assert_eq!(e.forced(&normalize::SPEC), None);
    let cpu = Engine::cpu().with_variant(None, "cpu");
    assert_eq!(cpu.forced(&normalize::SPEC), Some("cpu"));
}

/// PoCL lists no device when it cannot create its kernel cache (here
/// `XDG_CACHE_HOME` names a file): `filterctl devices` says which platform
/// listed none and what to check, instead of a bare "no devices".
#[test]
fn a_platform_without_devices_says_why() {
    let listed = clfilter::backend::list_devices().unwrap_or_default();
    if !listed
        .iter()
        .any(|d| d.platform.contains("Portable Computing Language"))
    {
        eprintln!("skipped: no PoCL platform");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("a-file");
    std::fs::write(&file, b"").unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_filterctl"))
        .arg("devices")
        .env("XDG_CACHE_HOME", &file)
        .env("HOME", dir.path())
        .env("FILTERCTL_CACHE_DIR", "disabled")
        .env_remove("POCL_CACHE_DIR")
        .env_remove("FILTERCTL_DEVICE")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    // Another platform (a GPU driver) may still list its devices, and a
    // PoCL may work without a cache folder: then nothing is missing.
    if text.contains("OpenCL devices:") {
        eprintln!("skipped: a device is listed without PoCL's cache folder");
        return;
    }
    assert!(
        text.contains("Portable Computing Language) lists no device")
            && text.contains("POCL_CACHE_DIR"),
        "{text}"
    );
}
