//! The autotuner: every variant of an operation (the CPU path included) is
//! checked against the reference on a random image, timed in two modes
//! (kernel-only and end to end), and the figures are kept per [`TuneKey`]
//! in `<cache>/tuning.json`. The engine then runs the fastest variant that
//! passed for each call. See `docs/TUNING.md`.
//!
//! - [`key`]: keys and buckets (in `crate::dispatch`, which reads them).
//! - [`store`]: the cache file and its records (likewise).
//! - `device`: the tuner itself ([`tune`]; `run`: the keys to measure,
//!   `measure`: one key's gate and timings), on OpenCL devices only.
//!
//! Operations come from the registry: each one's inputs, parameter sets and
//! checks are in its `tune.rs` ([`crate::ops::tuning`]).

mod device;

use std::path::PathBuf;
use std::time::Duration;

use serde::Serialize;

pub use crate::dispatch::key::{self, TuneKey};
pub use crate::dispatch::store::{self, Candidate, Mode, Status, Timing, TuneEntry};
pub use crate::dispatch::Tuning;
pub use device::tune;

use crate::SampleType;

/// What to tune.
#[derive(Debug, Clone)]
pub struct TuneConfig {
    /// Operations by name; empty means every operation.
    pub ops: Vec<String>,
    /// Image sizes (width, height).
    pub sizes: Vec<(usize, usize)>,
    /// Sample type.
    pub sample: SampleType,
    /// Channels per pixel.
    pub channels: usize,
    /// Gaussian sigmas (both axes, replicate border), one key each.
    pub sigmas: Vec<f32>,
    /// Time to spend, spread evenly over the keys still to measure. It is
    /// a target: every candidate gets at least a few runs.
    pub budget: Duration,
    /// Measure keys that already have a valid entry again.
    pub force: bool,
}

/// One key's outcome.
#[derive(Debug, Clone, Serialize)]
pub struct KeyResult {
    /// Whether the entry came from the cache (nothing was timed).
    pub cached: bool,
    /// The figures.
    pub entry: TuneEntry,
    /// The engine's own dispatch once the entry was recorded, timed against
    /// the end-to-end winner; `None` for cached keys.
    pub dispatch: Option<DispatchCheck>,
}

/// The engine's unforced call (`engine.gaussian(&img, ..)`) after tuning,
/// timed end to end in interleaved rounds with the forced end-to-end
/// winner: the proof that the tuned engine is as fast as the best variant.
#[derive(Debug, Clone, Serialize)]
pub struct DispatchCheck {
    /// The variant the engine's dispatch ran.
    pub variant: String,
    /// Its median, ms.
    pub median_ms: f64,
    /// The forced winner's median in the same rounds, ms.
    pub winner_median_ms: f64,
    /// Rounds timed.
    pub runs: usize,
}

/// What a tuning run produced.
#[derive(Debug, Clone, Serialize)]
pub struct TuneReport {
    /// The device's description.
    pub device: String,
    /// The device fingerprint the keys carry.
    pub fingerprint: String,
    /// The cache file written, if disk caching is on.
    pub file: Option<PathBuf>,
    /// One result per key, in the order asked for.
    pub keys: Vec<KeyResult>,
}

/// A progress update: `done` of `total` steps (one step is one candidate
/// gated or timed in one mode), and what is being done.
#[derive(Debug, Clone, Copy)]
pub struct Progress<'a> {
    /// Steps finished.
    pub done: usize,
    /// Steps in all.
    pub total: usize,
    /// What runs now.
    pub message: &'a str,
}
