//! Cache faults. Through the real `filterctl`, where the fault belongs to a
//! process: a cached program binary that crashes the driver (the
//! crash-loop breaker), a live loader's mark, `$HOME` unset, a multi-GB
//! `tuning.json`, links planted at the lock and at load marks. Through the
//! engine, property tests: damaged program binaries and tuning files are
//! rejected and the engine goes on.
//!
//! Bounded for CI; a longer run of the property tests:
//! `PROPTEST_CASES=200 cargo test --release --test cache_faults`.
#![cfg(feature = "opencl")]

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

use clfilter::image as io;
use clfilter::ops::transpose;
use clfilter::prelude::*;
use clfilter::tune::{store, Candidate, Status, Timing, TuneEntry, TuneKey};
use clfilter::{Backend, CacheDir, DynImage, Engine, Image};
use common::files::{bin_file, bin_key, BIN_HEADER};
use common::{assert_images, opencl_engine_with, opencl_options, random_image, Rng};
use proptest::prelude::*;
use proptest::sample::Index;

/// The test image: RGB u8, odd sizes.
fn test_image() -> Image<u8> {
    random_image::<u8>(&mut Rng::new(23), 37, 19, 3)
}

/// An OpenCL engine with disk caching off, or `None` (skip).
fn probe() -> Option<Engine> {
    opencl_engine_with(opencl_options(CacheDir::Disabled))
}

/// Whether an OpenCL device is there (asked once).
fn have_opencl() -> bool {
    static HAVE: OnceLock<bool> = OnceLock::new();
    *HAVE.get_or_init(|| probe().is_some())
}

/// A folder for one test: the cache, PoCL's caches, a home, the input.
struct Sandbox {
    dir: tempfile::TempDir,
}

impl Sandbox {
    fn new() -> Self {
        let s = Sandbox {
            dir: tempfile::tempdir().unwrap(),
        };
        io::save(&DynImage::U8(test_image()), s.input()).unwrap();
        s
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    fn cache(&self) -> PathBuf {
        self.path().join("cache")
    }

    fn input(&self) -> PathBuf {
        self.path().join("in.png")
    }

    /// `filterctl ARGS` on an OpenCL device (`auto` would leave an untuned
    /// PoCL for the rayon path), with the cache in the sandbox, warnings on
    /// stderr, and PoCL's own kernel cache in `pocl` (a fresh name gives a
    /// cold one).
    fn filterctl(&self, pocl: &str, args: &[&str]) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_filterctl"));
        cmd.args(args)
            .env("FILTERCTL_CACHE_DIR", self.cache())
            .env("POCL_CACHE_DIR", self.path().join(pocl))
            .env("HOME", self.path().join("home"))
            .env("XDG_CACHE_HOME", self.path().join("xdg"))
            .env_remove("RUST_LOG")
            .env(
                "FILTERCTL_DEVICE",
                if have_opencl() { "opencl" } else { "auto" },
            )
            .env_remove("FILTERCTL_VARIANT");
        cmd
    }

    /// `filterctl apply -f transpose in.png -o <out>` (in the sandbox).
    fn transpose(&self, pocl: &str, out: &str) -> Command {
        let out = self.path().join(out);
        let input = self.input();
        let args = ["apply", "-f", "transpose", input.to_str().unwrap()];
        let mut cmd = self.filterctl(pocl, &args);
        cmd.arg("-o").arg(out);
        cmd
    }

    /// Checks that `out` holds the transposed test image.
    fn check_output(&self, out: &str, ctx: &str) {
        let want = transpose::reference::transpose(&test_image()).unwrap();
        match io::load(self.path().join(out)).unwrap() {
            DynImage::U8(got) => assert_images(&got, &want, 0.0, ctx),
            other => panic!("{ctx}: expected u8, got {:?}", other.sample_type()),
        }
    }

    /// Runs [`Sandbox::transpose`], checks that it succeeds with the right
    /// output, and returns its stderr.
    fn apply_ok(&self, pocl: &str, out: &str) -> String {
        let err = stderr(&run(self.transpose(pocl, out), true, out));
        self.check_output(out, out);
        err
    }

    /// The program-binary folder of the (one) device.
    fn programs(&self) -> PathBuf {
        let root = self.cache().join("programs");
        let mut dirs: Vec<PathBuf> = std::fs::read_dir(&root)
            .unwrap_or_else(|e| panic!("{}: {e}", root.display()))
            .map(|e| e.unwrap().path())
            .collect();
        assert_eq!(dirs.len(), 1, "{dirs:?}");
        dirs.pop().unwrap()
    }

    /// Names in the program folder containing `part`, sorted.
    fn names(&self, part: &str) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(self.programs())
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .filter(|n| n.contains(part))
            .collect();
        v.sort();
        v
    }
}

/// Runs `cmd`; when `ok`, checks that it succeeded (showing its stderr if not).
fn run(mut cmd: Command, ok: bool, ctx: &str) -> Output {
    let out = cmd.output().unwrap();
    if ok {
        assert!(
            out.status.success(),
            "{ctx}: {}\nstderr:\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
    }
    out
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Asserts that `text` contains `part`, showing `text` if not.
fn assert_has(text: &str, part: &str) {
    assert!(text.contains(part), "expected '{part}' in:\n{text}");
}

/// A PoCL binary that crashes PoCL 3.1 in `clCreateProgramWithBinary`:
/// the length of the `/program.bc` path (the `u32` before it) set to
/// 0xffff_fff0, so unpacking copies 4 GiB out of a buffer of a few KB.
fn crashing(pocl_binary: &[u8]) -> Vec<u8> {
    let at = pocl_binary
        .windows(11)
        .position(|w| w == b"/program.bc")
        .expect("a PoCL binary names its /program.bc");
    let mut p = pocl_binary.to_vec();
    p[at - 4..at].copy_from_slice(&0xffff_fff0u32.to_le_bytes());
    p
}

/// Whether the probe engine runs on PoCL.
fn on_pocl(engine: &Engine) -> bool {
    engine
        .backend()
        .device_info()
        .is_some_and(|i| i.platform.contains("Portable Computing Language"))
}

/// A valid cached binary that crashes the driver kills one run; the next
/// run finds the dead loader's mark, warns, discards the entry, rebuilds it
/// from source and succeeds; the run after that loads the rebuilt binary.
#[cfg(unix)]
#[test]
fn binary_that_crashes_the_driver_is_discarded_by_the_next_run() {
    use std::os::unix::process::ExitStatusExt;
    let Some(engine) = probe() else {
        return;
    };
    if !on_pocl(&engine) {
        eprintln!("skipped: the crashing binary is a PoCL binary, and this device is not PoCL");
        return;
    }
    let s = Sandbox::new();
    s.apply_ok("pocl-1", "first.png");
    let victim = s.programs().join(&s.names(".bin")[0]);
    let good = std::fs::read(&victim).unwrap();
    let key = bin_key(&victim);
    std::fs::write(&victim, bin_file(key, &crashing(&good[BIN_HEADER..]))).unwrap();

    // PoCL unpacks a binary only into a cold kernel cache, hence a new one.
    // No core file: the crash is the point.
    let mut crash = Command::new("sh");
    let inner = s.transpose("pocl-2", "crash.png");
    crash
        .args(["-c", "ulimit -c 0; exec \"$0\" \"$@\""])
        .arg(inner.get_program())
        .args(inner.get_args());
    for (k, v) in inner.get_envs() {
        match v {
            Some(v) => crash.env(k, v),
            None => crash.env_remove(k),
        };
    }
    let out = run(crash, false, "crashing run");
    assert!(
        out.status.signal().is_some(),
        "PoCL did not crash on the crafted binary ({}); stderr:\n{}",
        out.status,
        stderr(&out)
    );
    let marks = s.names(".loading.");
    assert_eq!(marks.len(), 1, "the dead loader's mark: {marks:?}");
    assert!(marks[0].starts_with(victim.file_name().unwrap().to_str().unwrap()));

    let err = s.apply_ok("pocl-3", "after.png");
    assert_has(&err, "died while the driver loaded it");
    assert_has(&err, "rebuilding from source");
    assert!(s.names(".loading.").is_empty(), "marks left behind");
    let rebuilt = std::fs::read(&victim).unwrap();
    assert_eq!(&rebuilt[..8], b"CLFBIN02");
    let payload = &rebuilt[BIN_HEADER..];
    assert_eq!(rebuilt, bin_file(key, payload), "a valid file again");

    let err = s.apply_ok("pocl-4", "again.png");
    assert!(!err.contains("WARN"), "{err}");
}

/// Another process's mark, still locked, is a live loader, not a crash: the
/// binary loads as usual. Once that process lets go without removing its
/// mark (as a dying process does), the next run discards the entry.
#[test]
fn a_live_loaders_mark_is_not_a_crash() {
    if !have_opencl() {
        return;
    }
    let s = Sandbox::new();
    s.apply_ok("pocl", "first.png");
    let bin = s.names(".bin")[0].clone();
    let before = std::fs::read(s.programs().join(&bin)).unwrap();
    let mark_path = s.programs().join(format!("{bin}.loading.999999999.0"));
    let mark = std::fs::File::create(&mark_path).unwrap();
    mark.lock().unwrap();

    let err = s.apply_ok("pocl", "live.png");
    assert!(!err.contains("WARN"), "{err}");
    assert!(mark_path.exists(), "a live loader's mark stays");
    assert_eq!(std::fs::read(s.programs().join(&bin)).unwrap(), before);

    drop(mark);
    assert_has(
        &s.apply_ok("pocl", "dead.png"),
        "died while the driver loaded it",
    );
    assert!(!mark_path.exists());
}

/// With `$HOME` unset and no `FILTERCTL_CACHE_DIR`, caching is off with one
/// warning, nothing is written under `$XDG_CACHE_HOME` (where the
/// password database's home would have led), and the run succeeds.
#[test]
fn home_unset_turns_caching_off_with_one_warning() {
    if !have_opencl() {
        return;
    }
    let s = Sandbox::new();
    let mut cmd = s.transpose("pocl", "out.png");
    cmd.env_remove("HOME").env_remove("FILTERCTL_CACHE_DIR");
    let out = run(cmd, true, "HOME unset");
    let err = stderr(&out);
    assert_eq!(err.matches("disk caching is off").count(), 1, "{err}");
    assert_has(&err, "$HOME is unset");
    s.check_output("out.png", "HOME unset");
    assert!(!s.path().join("xdg/clfilter").exists());
    assert!(!s.cache().exists());

    let mut show = s.filterctl("pocl", &["tune", "--show"]);
    show.env_remove("HOME").env_remove("FILTERCTL_CACHE_DIR");
    let out = run(show, false, "tune --show");
    assert!(!out.status.success());
    assert_has(&stderr(&out), "disk caching is off");
}

/// A 4.3 GB `tuning.json` (sparse: no disk space) is not read: it is set
/// aside with one warning, and the command goes on. Reading it whole took
/// 4.3 GB of memory.
#[test]
fn multi_gb_tuning_file_is_set_aside_unread() {
    let s = Sandbox::new();
    std::fs::create_dir_all(s.cache()).unwrap();
    let tuning = s.cache().join("tuning.json");
    let size = 4_300_000_000u64;
    std::fs::File::create(&tuning)
        .unwrap()
        .set_len(size)
        .unwrap();
    let start = std::time::Instant::now();
    let out = run(
        s.filterctl("pocl", &["tune", "--show"]),
        true,
        "tune --show",
    );
    assert!(start.elapsed().as_secs() < 60);
    let err = stderr(&out);
    assert_eq!(
        err.matches("over the 67108864-byte limit").count(),
        1,
        "{err}"
    );
    assert!(!tuning.exists());
    let aside: Vec<PathBuf> = std::fs::read_dir(s.cache())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().contains("tuning.json.oversized-"))
        .collect();
    assert_eq!(aside.len(), 1, "{aside:?}");
    assert_eq!(std::fs::metadata(&aside[0]).unwrap().len(), size);
    assert!(String::from_utf8_lossy(&out.stdout).contains("(0 entries)"));
}

/// Links planted at the tuning lock and at load marks are not followed:
/// a dangling lock link's target is not created, a mark link's target is
/// not touched, and both commands succeed with warnings.
#[cfg(unix)]
#[test]
fn planted_links_are_not_followed() {
    if !have_opencl() {
        return;
    }
    let s = Sandbox::new();
    std::fs::create_dir_all(s.cache()).unwrap();
    let created = s.path().join("created-through-a-link");
    std::os::unix::fs::symlink(&created, s.cache().join("tuning.json.lock")).unwrap();
    let tune = "tune --ops transpose --sizes 16x16 --type f32 --channels 1 --budget 0.1";
    let tune: Vec<&str> = tune.split(' ').collect();
    let out = run(s.filterctl("pocl", &tune), true, "tune");
    assert_has(&stderr(&out), "is a symbolic link");
    assert!(!created.exists(), "the lock link was followed");
    let file = clfilter::tune::store::load(&s.cache().join("tuning.json"));
    assert_eq!(file.entries.len(), 1);

    // The marks, in a cache that holds just the programs `apply` loads.
    let s = Sandbox::new();
    s.apply_ok("pocl", "first.png");
    let victim = s.path().join("victim");
    std::fs::write(&victim, b"precious").unwrap();
    for bin in s.names(".bin") {
        let link = s.programs().join(format!("{bin}.loading.1.0"));
        std::os::unix::fs::symlink(&victim, link).unwrap();
    }
    assert_has(&s.apply_ok("pocl", "out.png"), "is not a load mark");
    assert!(s.names(".loading.").is_empty());
    assert_eq!(std::fs::read(&victim).unwrap(), b"precious");
}

// ---------------------------------------------------------- properties

/// An engine on the default OpenCL device caching in `cache`.
fn engine_in(cache: &Path) -> Engine {
    opencl_engine_with(opencl_options(CacheDir::Dir(cache.to_path_buf())))
        .expect("the device was there a moment ago")
}

/// Transposes the test image in process and checks the result.
fn transpose_ok(engine: &Engine, ctx: &str) {
    let img = test_image();
    let got = engine
        .transpose(&img)
        .unwrap_or_else(|e| panic!("{ctx}: {e}"));
    let want = transpose::reference::transpose(&img).unwrap();
    assert_images(&got, &want, 0.0, ctx);
}

/// `default` cases, or `PROPTEST_CASES` when set.
fn cases(default: u32) -> ProptestConfig {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default);
    ProptestConfig {
        cases,
        ..ProptestConfig::default()
    }
}

/// How a cache file is damaged.
#[derive(Debug, Clone)]
enum Damage {
    /// Replaced by these bytes.
    Replace(Vec<u8>),
    /// Cut short here.
    Cut(Index),
    /// These bits flipped.
    Flip(Vec<(Index, u8)>),
}

impl Damage {
    fn apply(&self, good: &[u8]) -> Vec<u8> {
        match self {
            Damage::Replace(bytes) => bytes.clone(),
            Damage::Cut(at) => good[..at.index(good.len())].to_vec(),
            Damage::Flip(flips) => {
                let mut v = good.to_vec();
                for (at, bit) in flips {
                    v[at.index(good.len())] ^= 1 << bit;
                }
                v
            }
        }
    }
}

fn damage() -> impl Strategy<Value = Damage> {
    prop_oneof![
        proptest::collection::vec(any::<u8>(), 0..256).prop_map(Damage::Replace),
        any::<Index>().prop_map(Damage::Cut),
        proptest::collection::vec((any::<Index>(), 0u8..8), 1..4).prop_map(Damage::Flip),
    ]
}

/// A cache folder holding the valid program binaries of the test's
/// transpose, made once per test process.
fn program_template() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = common::process_cache_dir().join("cache-faults-template");
        let _ = std::fs::remove_dir_all(&dir);
        transpose_ok(&engine_in(&dir), "template");
        dir
    })
}

/// The `.bin` files under `cache`, recursively.
fn bins_under(cache: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut todo = vec![cache.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                todo.push(p);
            } else if p.extension().is_some_and(|x| x == "bin") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// A valid tuning file: one current entry for this device, naming the CPU
/// path for the test image's key.
fn tuning_template() -> &'static (Vec<u8>, TuneEntry) {
    static FILE: OnceLock<(Vec<u8>, TuneEntry)> = OnceLock::new();
    FILE.get_or_init(|| {
        let engine = probe().expect("OpenCL was there a moment ago");
        let tuning = engine.tuning();
        let timing = Timing {
            median_ms: 0.25,
            min_ms: 0.125,
            max_ms: 0.5,
            spread_pct: 10.0,
            runs: 3,
            retimed: false,
            mp_per_s: 2.5,
            gb_per_s: 1.5,
            pct_of_copy: None,
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
            e2e_winner: Some("cpu".into()),
            candidates: vec![Candidate {
                variant: "cpu".into(),
                status: Status::Ok,
                kernel: None,
                kernel_note: Some("the CPU path".into()),
                e2e: Some(timing),
                e2e_note: None,
            }],
        };
        let file = store::TuningFile {
            format: store::FORMAT,
            entries: vec![entry.clone()],
        };
        (serde_json::to_vec_pretty(&file).unwrap(), entry)
    })
}

proptest! {
    #![proptest_config(cases(8))]

    /// Damaged program binaries (arbitrary bytes, cuts, bit flips) never
    /// reach the driver: the engine rejects them, rebuilds, gives the right
    /// result, and leaves valid files.
    #[test]
    fn damaged_program_binaries_are_rebuilt(d in damage()) {
        if !have_opencl() {
            return Ok(());
        }
        let cache = tempfile::tempdir().unwrap();
        let mut changed = false;
        for good in bins_under(program_template()) {
            let rel = good.strip_prefix(program_template()).unwrap();
            let bad = cache.path().join(rel);
            std::fs::create_dir_all(bad.parent().unwrap()).unwrap();
            let bytes = std::fs::read(&good).unwrap();
            let damaged = d.apply(&bytes);
            changed |= damaged != bytes;
            std::fs::write(&bad, damaged).unwrap();
        }
        let engine = engine_in(cache.path());
        transpose_ok(&engine, &format!("{d:?}"));
        let Backend::OpenCl(dev) = engine.backend() else {
            unreachable!("engine_in opens an OpenCL engine")
        };
        let stats = dev.programs().counts();
        if changed {
            prop_assert!(stats.rejected_binaries >= 1, "{stats:?}");
        }
        for f in bins_under(cache.path()) {
            let bytes = std::fs::read(&f).unwrap();
            prop_assert!(
                bytes.len() >= BIN_HEADER && bytes == bin_file(bin_key(&f), &bytes[BIN_HEADER..]),
                "{}",
                f.display()
            );
        }
    }

    /// Damaged tuning files never stop the engine: it runs, and the next
    /// result it records makes a valid file again.
    #[test]
    fn damaged_tuning_files_never_stop_the_engine(d in damage()) {
        if !have_opencl() {
            return Ok(());
        }
        let (good, entry) = tuning_template();
        let cache = tempfile::tempdir().unwrap();
        let path = store::path_in(cache.path());
        std::fs::write(&path, d.apply(good)).unwrap();
        let engine = engine_in(cache.path());
        transpose_ok(&engine, &format!("{d:?}"));
        let mut newer = entry.clone();
        newer.tuned_at = 2;
        newer.key.size_bucket = 10;
        engine.tuning().record(newer.clone());
        let file = store::load(&path);
        prop_assert_eq!(file.format, store::FORMAT);
        prop_assert!(file.entries.contains(&newer));
    }
}
