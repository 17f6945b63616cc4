//! Helpers shared by the integration tests: a seeded RNG, random images of
//! every sample type, exact comparisons, and the OpenCL engine (or a skip).
//!
//! Every test binary includes this module with `mod common;` and uses only
//! part of it, hence the `dead_code` allowance.
#![allow(dead_code)]

pub mod files;

use std::path::PathBuf;
use std::sync::{Mutex, OnceLock};

use clfilter::{Backend, CacheDir, DeviceSelector, Engine, EngineOptions, Image, Sample};

/// The generator the unit tests use too: one file, the same numbers.
#[path = "../../src/test_rng.rs"]
mod test_rng;
pub use test_rng::Rng;

/// The sample types, with what the tests need on top of [`Sample`].
pub trait TestSample: Sample {
    /// A random sample. f32 mixes values in [-2, 3) (negative and > 1),
    /// exact integers in -300..=300, and 0, 0.5, 1.
    fn random(rng: &mut Rng) -> Self;
    /// Equal bits, or both NaN.
    fn same(a: Self, b: Self) -> bool;
    /// The smallest and the largest value, used to poison row padding.
    fn extremes() -> (Self, Self);
    /// NaN for f32; integers have none.
    fn nan() -> Option<Self>;
}

impl TestSample for u8 {
    fn random(rng: &mut Rng) -> Self {
        rng.next_u64() as u8
    }
    fn same(a: Self, b: Self) -> bool {
        a == b
    }
    fn extremes() -> (Self, Self) {
        (0, u8::MAX)
    }
    fn nan() -> Option<Self> {
        None
    }
}

impl TestSample for u16 {
    fn random(rng: &mut Rng) -> Self {
        rng.next_u64() as u16
    }
    fn same(a: Self, b: Self) -> bool {
        a == b
    }
    fn extremes() -> (Self, Self) {
        (0, u16::MAX)
    }
    fn nan() -> Option<Self> {
        None
    }
}

impl TestSample for f32 {
    fn random(rng: &mut Rng) -> Self {
        match rng.below(8) {
            0 => (rng.below(601) as i32 - 300) as f32,
            1 => [0.0, 0.5, 1.0][rng.below(3) as usize],
            _ => rng.unit() * 5.0 - 2.0,
        }
    }
    fn same(a: Self, b: Self) -> bool {
        a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
    }
    fn extremes() -> (Self, Self) {
        (-1.0e30, 1.0e30)
    }
    fn nan() -> Option<Self> {
        Some(f32::NAN)
    }
}

/// A packed random image.
pub fn random_image<T: TestSample>(rng: &mut Rng, w: usize, h: usize, c: usize) -> Image<T> {
    let data = (0..w * h * c).map(|_| T::random(rng)).collect();
    Image::from_vec(w, h, c, data).expect("valid test shape")
}

/// A packed random image where about one sample in `one_in` is NaN (f32
/// only; integer images are as [`random_image`]).
pub fn random_image_nan<T: TestSample>(
    rng: &mut Rng,
    w: usize,
    h: usize,
    c: usize,
    one_in: u64,
) -> Image<T> {
    let data = (0..w * h * c)
        .map(|_| match T::nan() {
            Some(nan) if rng.below(one_in) == 0 => nan,
            _ => T::random(rng),
        })
        .collect();
    Image::from_vec(w, h, c, data).expect("valid test shape")
}

/// The same pixels with `pad` extra samples after every row (the last row's
/// padding is left out when `w + h` is odd, which the constructor allows).
/// The padding alternates the type's extremes, so reading it changes results.
pub fn strided_copy<T: TestSample>(img: &Image<T>, pad: usize) -> Image<T> {
    let (w, h, c) = (img.width(), img.height(), img.channels());
    let row = w * c;
    let stride = row + pad;
    let (lo, hi) = T::extremes();
    let mut data = Vec::with_capacity(stride * h);
    for (y, r) in img.rows().enumerate() {
        data.extend_from_slice(r);
        if y + 1 < h || (w + h) % 2 == 0 {
            data.extend((0..pad).map(|i| if (i + y) % 2 == 0 { hi } else { lo }));
        }
    }
    let s = Image::from_vec_with_stride(w, h, c, stride, data).expect("valid strided shape");
    assert!(pad == 0 || !s.is_packed());
    s
}

/// Index and values of the first sample where `got` and `want` differ by
/// more than `tol` times the full scale of `T` (tol 0: bit-exact, NaN == NaN).
pub fn first_difference<T: TestSample>(
    got: &Image<T>,
    want: &Image<T>,
    tol: f32,
) -> Option<String> {
    let (gs, ws) = (
        (got.width(), got.height(), got.channels()),
        (want.width(), want.height(), want.channels()),
    );
    if gs != ws {
        return Some(format!("shape {gs:?}, expected {ws:?}"));
    }
    let limit = tol as f64 * T::TYPE.full_scale() as f64;
    for y in 0..got.height() {
        for (i, (&g, &w)) in got.row(y).iter().zip(want.row(y)).enumerate() {
            let ok = if tol == 0.0 {
                T::same(g, w)
            } else {
                T::same(g, w) || (g.to_f32() as f64 - w.to_f32() as f64).abs() <= limit
            };
            if !ok {
                let c = got.channels();
                return Some(format!(
                    "pixel ({}, {y}) channel {}: got {g:?}, expected {w:?} (tolerance {tol})",
                    i / c,
                    i % c
                ));
            }
        }
    }
    None
}

/// Panics with `ctx` when the images differ (see [`first_difference`]).
pub fn assert_images<T: TestSample>(got: &Image<T>, want: &Image<T>, tol: f32, ctx: &str) {
    if let Some(d) = first_difference(got, want, tol) {
        panic!("{ctx}: {d}");
    }
}

/// Whether `FILTERCTL_REQUIRE_OPENCL=1` is set (CI sets it).
pub fn opencl_required() -> bool {
    std::env::var("FILTERCTL_REQUIRE_OPENCL").is_ok_and(|v| v.trim() == "1")
}

/// This process's program-binary cache folder: `<tmp>/clfilter-tests-<pid>`.
/// On first use, the folders of test processes that no longer run are removed.
pub fn process_cache_dir() -> PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let tmp = std::env::temp_dir();
        remove_dead_process_dirs(&tmp);
        tmp.join(format!("clfilter-tests-{}", std::process::id()))
    })
    .clone()
}

#[cfg(target_os = "linux")]
fn remove_dead_process_dirs(tmp: &std::path::Path) {
    let Ok(entries) = std::fs::read_dir(tmp) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix("clfilter-tests-"))
            .and_then(|p| p.parse::<u32>().ok())
        else {
            continue;
        };
        if pid != std::process::id() && !std::path::Path::new(&format!("/proc/{pid}")).exists() {
            let _ = std::fs::remove_dir_all(e.path());
        }
    }
}

#[cfg(not(target_os = "linux"))]
fn remove_dead_process_dirs(_: &std::path::Path) {}

/// Prints the skip line, or panics when OpenCL is required.
pub fn skip_no_opencl(why: &str) {
    if opencl_required() {
        panic!(
            "FILTERCTL_REQUIRE_OPENCL=1 but no OpenCL device is usable ({why}); \
             install an OpenCL driver (for example PoCL) or unset the variable"
        );
    }
    eprintln!("skipped: no OpenCL device");
}

/// Options for an OpenCL engine on the first device `opencl` picks (a GPU
/// first, else any, PoCL included), caching
/// program binaries in `cache`.
pub fn opencl_options(cache: CacheDir) -> EngineOptions {
    EngineOptions {
        device: DeviceSelector::OpenCl,
        cache,
        ..Default::default()
    }
}

/// An engine on an OpenCL device, without a program-binary cache; `None`
/// (after printing "skipped: no OpenCL device") when only the CPU backend
/// is available. Panics instead when `FILTERCTL_REQUIRE_OPENCL=1`.
///
/// No binary cache: CI's device is PoCL, which keeps its own kernel cache
/// (`~/.cache/pocl`, or `POCL_CACHE_DIR`), so a later engine's build of the
/// same program is a cache hit anyway; and asking PoCL for a program's
/// binary (what storing it takes) makes PoCL compile every kernel of the
/// program for any work-group size first. Measured on the 2-core VM
/// (PoCL 3.1, 2026-11-27): one `fir_tiles` blur built in 8.3-9.2 s of CPU
/// with the binary stored, 3.6-4.1 s without. The tests of the binary cache
/// pass their own folders (`opencl_options`).
pub fn opencl_engine() -> Option<Engine> {
    opencl_engine_with(opencl_options(CacheDir::Disabled))
}

/// `Engine::new`, one thread at a time. PoCL 3.1 answers `clGetDeviceIDs`
/// with zero devices on every thread but one while threads initialise it
/// concurrently, which would silently give those engines the CPU backend;
/// test functions run in parallel, so every engine is opened through here.
pub fn open_engine(opts: EngineOptions) -> clfilter::Result<Engine> {
    static OPEN: Mutex<()> = Mutex::new(());
    let _guard = OPEN.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    Engine::new(opts)
}

/// As [`opencl_engine`], with the given options.
pub fn opencl_engine_with(opts: EngineOptions) -> Option<Engine> {
    match open_engine(opts) {
        Ok(e) if matches!(e.backend(), Backend::Cpu) => {
            let why = clfilter::backend::list_devices()
                .map(|d| format!("{} device(s) listed, none usable", d.len()))
                .unwrap_or_else(|reason| reason);
            skip_no_opencl(&why);
            None
        }
        Ok(e) => Some(e),
        Err(e) => {
            skip_no_opencl(&format!("opening the engine failed: {e}"));
            None
        }
    }
}

/// The local memory of the engine's device (0 for the CPU backend).
pub fn local_mem(engine: &Engine) -> u64 {
    engine.backend().device_info().map_or(0, |i| i.local_mem)
}
