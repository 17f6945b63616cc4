//! `stats`: per-channel sum, mean, population standard deviation, minimum
//! and maximum of a whole image, fused in one pass over it.
//!
//! The OpenCL variants sum in f32 with compensation (Kahan per work-item,
//! trees over work-items and work-groups) and the host finishes in f64:
//! `mean = sum / n`, `std = sqrt(max(Q / n - (mean - K)^2, 0))`, where `Q`
//! is the sum of squares about a shift `K` per channel (the first pixel's
//! sample where it is finite, else 0), so a large mean does not cancel
//! the variance away. The rayon path does the same in f64 for f32 samples;
//! for u8 and u16 samples both paths sum in integers, exactly (`int`).
//!
//! Accuracy (docs/QUALITY.md; [`tune::check_stats`] enforces it in
//! `tests/registry.rs`, the tuner's gate and `tests/stats.rs`), with
//! u = 2^-24, `k` the variant's table tolerance, `A = sum(|x|)`:
//! - sum within `k u A`; mean within `dm = (k + 1) u A / n`;
//! - `Q` within `(k + 4) u Q` (each square adds up to 3u of its own), so
//!   the variance is within `E = (k + 4) u Q / n + (2 |mean - K| + dm) dm`
//!   and the standard deviation within `min(sqrt(E), E / std)`
//!   (`|sqrt(a) - sqrt(b)| <= sqrt(|a - b|)` and `<= |a - b| / sqrt(b)`);
//! - min and max are exact.
//!
//! Non-finite samples follow `reduce`: min and max ignore NaN (a channel of
//! NaN only reports min = +inf, max = -inf); sum and mean are NaN when a
//! sample is NaN (or infinities of both signs meet), +-inf with infinities
//! of one sign; std is NaN when any sample is NaN or infinite (the
//! deviation from an infinite mean is undefined, as in f64). On a device a
//! sum beyond f32's range is infinite.

pub mod api;
pub mod cpu;
pub(crate) mod device;
mod int;
pub mod reference;
pub mod stage;
mod tune;
pub mod variants;

use serde::Serialize;

use crate::backend::Dev;
use crate::error::Result;
use crate::image::{Image, Sample};
use crate::ops::{OpSpec, RunReport, Shape};
pub use api::StatsExt;
pub use tune::{check_stats, TUNE};

/// The operation's description.
pub static SPEC: OpSpec = OpSpec {
    name: "stats",
    sources: &[
        crate::cl_source!("stats/stats.cl"),
        crate::cl_source!("stats/dp4a.cl"),
    ],
    variants: variants::VARIANTS,
    gpu_order: &["vec4_dp4a", "tree_vec4", "tree"],
    cpu_device_order: &["tree_vec4", "tree"],
    prefer: None,
    // A NaN reaches only its own channel's statistics, which is what they
    // mean; min and max ignore it.
    spreads_nonfinite: false,
    // A sum of finite samples can exceed f32's range on a device.
    overflows: true,
};

/// The operation's registry entry.
pub static OP: crate::ops::Operation = crate::ops::Operation {
    spec: &SPEC,
    stages: &[&stage::STATS],
    tune: &TUNE,
};

/// Per-channel statistics of an image, in the input's units (a u8 200 is
/// 200.0). Each list has one entry per channel. In JSON, non-finite values
/// are `null`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Stats {
    /// Channels (1, 3 or 4).
    pub channels: usize,
    /// Samples per channel (the pixel count, NaN samples included).
    pub count: u64,
    /// Sum of the samples.
    pub sum: Vec<f64>,
    /// `sum / count`.
    pub mean: Vec<f64>,
    /// Population standard deviation (divided by `count`, not `count - 1`).
    pub std: Vec<f64>,
    /// Minimum, ignoring NaN.
    pub min: Vec<f64>,
    /// Maximum, ignoring NaN.
    pub max: Vec<f64>,
}

/// Per channel, what one pass gathers: the sum, the sum of squares about
/// `shift`, and the extremes. [`Sums::finish`] turns it into [`Stats`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sums {
    /// Sum of the samples.
    pub sum: f64,
    /// Sum of `(x - shift)^2`.
    pub shifted_sq: f64,
    /// The shift: the first pixel's sample where finite, else 0.
    pub shift: f64,
    /// Minimum, ignoring NaN.
    pub min: f64,
    /// Maximum, ignoring NaN.
    pub max: f64,
}

impl Sums {
    /// The shift of a channel whose first sample is `first`.
    pub fn shift_for(first: f32) -> f64 {
        if first.is_finite() {
            f64::from(first)
        } else {
            0.0
        }
    }

    /// The population variance of `count` samples: `Q / n - (mean - K)^2`,
    /// clamped at 0 against rounding; NaN stays NaN.
    pub fn variance(&self, count: u64) -> f64 {
        let n = count as f64;
        let d = self.sum / n - self.shift;
        let v = self.shifted_sq / n - d * d;
        if v < 0.0 {
            0.0
        } else {
            v
        }
    }

    /// The statistics of `channels` per-channel sums over `count` samples each.
    pub fn finish(sums: &[Sums], count: u64) -> Stats {
        let n = count as f64;
        Stats {
            channels: sums.len(),
            count,
            sum: sums.iter().map(|s| s.sum).collect(),
            mean: sums.iter().map(|s| s.sum / n).collect(),
            std: sums.iter().map(|s| s.variance(count).sqrt()).collect(),
            min: sums.iter().map(|s| s.min).collect(),
            max: sums.iter().map(|s| s.max).collect(),
        }
    }
}

