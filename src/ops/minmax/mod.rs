//! `minmax`: per-channel minimum and maximum, fused in one pass over the image.

pub mod api;
pub mod cpu;
pub(crate) mod device;
pub mod reference;
pub mod stage;
mod tune;
pub mod variants;

use serde::Serialize;

use crate::backend::Dev;
use crate::error::Result;
use crate::image::{Image, Sample};
use crate::ops::{OpSpec, RunReport, Shape};
pub use api::MinmaxExt;
pub use tune::TUNE;

/// The operation's description.
pub static SPEC: OpSpec = OpSpec {
    name: "minmax",
    sources: &[crate::cl_source!("minmax/minmax.cl")],
    variants: variants::VARIANTS,
    gpu_order: &["tree_vec4", "tree"],
    cpu_device_order: &["tree_vec4", "tree"],
    prefer: None,
    // Ignores NaN; an infinity is a true extreme and is reported as one.
    spreads_nonfinite: false,
    overflows: false,
};

/// The operation's registry entry.
pub static OP: crate::ops::Operation = crate::ops::Operation {
    spec: &SPEC,
    stages: &[&stage::MINMAX],
    tune: &TUNE,
};

/// Per-channel extremes, as f32 in the input's units (200u8 is 200.0).
///
/// NaN samples are ignored. A channel with no number at all (every sample
/// NaN) reports `min = +inf` and `max = -inf`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct MinMax {
    /// Channels in use (1, 3 or 4); entries beyond it are unused.
    pub channels: usize,
    /// Minimum per channel.
    pub min: [f32; 4],
    /// Maximum per channel.
    pub max: [f32; 4],
}

impl MinMax {
    /// The identity of the reduction: +inf minima, -inf maxima.
    pub fn empty(channels: usize) -> Self {
        MinMax {
            channels,
            min: [f32::INFINITY; 4],
            max: [f32::NEG_INFINITY; 4],
        }
    }

    /// Minimum over the first `n` channels (at most 4).
    pub fn min_of(&self, n: usize) -> f32 {
        self.min[..n.min(4)]
            .iter()
            .copied()
            .fold(f32::INFINITY, f32::min)
    }

    /// Maximum over the first `n` channels (at most 4).
    pub fn max_of(&self, n: usize) -> f32 {
        self.max[..n.min(4)]
            .iter()
            .copied()
            .fold(f32::NEG_INFINITY, f32::max)
    }
}
