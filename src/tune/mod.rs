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
pub use crate::dispatch::Asked;
pub use crate::dispatch::Tuning;
pub use device::{tune, tune_requests};

use crate::engine::Engine;
use crate::error::Result;
use crate::pipeline::{Input, Op};
use crate::SampleType;

/// What to tune.
#[derive(Debug, Clone)]
pub struct TuneConfig {
    /// Operations by name; empty means every operation.
    pub ops: Vec<String>,
    /// Image sizes (width, height).
    pub sizes: Vec<(usize, usize)>,
    /// The pixel formats, one key each per operation that reads them.
    pub formats: Formats,
    /// Gaussian sigmas (both axes, replicate border), one key each.
    pub sigmas: Vec<f32>,
    /// Time to spend, spread evenly over the keys still to measure. It is
    /// a target: every candidate gets at least a few runs.
    pub budget: Duration,
    /// Measure keys that already have a valid entry again.
    pub force: bool,
}

/// Which pixel formats a tuning run measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Formats {
    /// The formats that `apply`, `stream` and `view` look up for common
    /// inputs: [`COMMON_FORMATS`], each operation on those it reads (so
    /// demosaic on u8 and u16 frames, into RGB and RGBA), formats that
    /// give an operation the same key measured once.
    Common,
    /// One sample type and channel count; an operation that does not read
    /// the type is tuned on the first of u8, u16, f32 that it reads.
    Only(SampleType, usize),
}

/// Gray, RGB and RGBA of u8, u16 and f32: the host calls' keys of common
/// images (8- and 16-bit PNG and TIFF, f32 TIFF; 8-, 12- and 16-bit raw
/// frames decode to u8 or u16 gray), and the f32 gray and RGBA working
/// images that device-resident stages look up in kernel mode.
pub const COMMON_FORMATS: [(SampleType, usize); 9] = [
    (SampleType::U8, 1),
    (SampleType::U8, 3),
    (SampleType::U8, 4),
    (SampleType::U16, 1),
    (SampleType::U16, 3),
    (SampleType::U16, 4),
    (SampleType::F32, 1),
    (SampleType::F32, 3),
    (SampleType::F32, 4),
];

/// The requests a pipeline looks up when it runs on `input`: every
/// operation and shape whose tuned order its stages ask for, in order and
/// each once, on the device (a device-resident chain's working and logical
/// shapes, in kernel mode) and on the host (each stage as a host call, end
/// to end). The pipeline runs both ways once to learn them: what `filterctl
/// tune --for IN -f SPEC` measures with [`tune_requests`].
pub fn requests_for(engine: &Engine, ops: &[Op], input: Input<'_>) -> Result<Vec<Asked>> {
    let (ran, asked) =
        crate::dispatch::recording(|| crate::pipeline::run_both_ways(engine, ops, input));
    ran?;
    let mut kept: Vec<Asked> = Vec::new();
    for a in asked {
        let key = TuneKey::new("", a.op.name, &a.shape);
        if !kept
            .iter()
            .any(|k| TuneKey::new("", k.op.name, &k.shape) == key)
        {
            kept.push(a);
        }
    }
    Ok(kept)
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
