//! Fuzzing on stable Rust: property tests that throw arbitrary and mutated
//! inputs at the parsers and decoders and check that each answers with a
//! value or a typed error, never a panic, a hang or an allocation beyond
//! what it was allowed.
//!
//! - [`spec`]: pipeline spec strings (`pipeline::parse`,
//!   `parse_with_format`): arbitrary text and mutations of valid specs.
//! - [`raw`]: raw camera frames (`RawFormat::frame_bytes`, `decode`,
//!   `FrameReader`): every format, arbitrary sizes and byte streams, short
//!   reads, truncated frames and huge declared sizes.
//! - [`decode`]: image files through `image::load_with`: valid PNG, TIFF,
//!   PNM and JPEG files with bits flipped, bytes changed, cut short and
//!   header sizes edited, under a small decode limit.
//! - [`histogram`]: the most bins on a small image, on many CPU threads.
//!
//! Allocation is measured with a counting global allocator (`peak_alloc`);
//! the tests take [`serial`] so that one test's allocations never count
//! against another's.
//!
//! CI runs a bounded number of cases (each test sets its own, well under a
//! minute in all in a debug build); a longer run takes `PROPTEST_CASES`:
//!
//! ```text
//! PROPTEST_CASES=100000 cargo test --release --test fuzz_inputs
//! ```

#[path = "../common/mod.rs"]
mod common;

mod decode;
mod histogram;
mod raw;
mod spec;

use std::sync::{Mutex, MutexGuard};

use peak_alloc::PeakAlloc;
use proptest::test_runner::Config;

#[global_allocator]
static ALLOC: PeakAlloc = PeakAlloc;

/// Held by every test of this binary, so allocations are measured one
/// test at a time.
pub fn serial() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Runs `f`; returns its value and the most bytes it held at once beyond
/// what was allocated when it started.
pub fn peak_during<T>(f: impl FnOnce() -> T) -> (T, usize) {
    let before = ALLOC.current_usage();
    ALLOC.reset_peak_usage();
    let value = f();
    (value, ALLOC.peak_usage().saturating_sub(before))
}

/// `cases` cases unless `PROPTEST_CASES` asks for another number.
pub fn config(cases: u32) -> Config {
    let mut c = Config::default();
    if std::env::var_os("PROPTEST_CASES").is_none() {
        c.cases = cases;
    }
    c
}
