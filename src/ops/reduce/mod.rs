//! `reduce`: per-channel sum, mean, minimum or maximum along one axis.
//!
//! `axis=x` reduces each row to one value (the output is 1 pixel wide and
//! as high as the input); `axis=y` reduces each column (as wide as the
//! input, 1 high). The output is f32 in the input's units (a row of u8 200s
//! sums to 200 x width), with the input's channels.
//!
//! Accuracy (docs/QUALITY.md, enforced by `tests/reduce.rs` and the tuner's
//! gate): a sum is within `k * u * sum(|x|)` of the exact sum, u = 2^-24,
//! with `k` from the variant's table entry ([`variants`]); a mean within
//! `(k + 3) * u * sum(|x|) / n`; min and max are exact. NaN samples: sums
//! and means are NaN; min and max ignore them (a line of NaN only gives
//! +inf for min, -inf for max, as `minmax` does). An infinity sums to
//! itself, opposite infinities to NaN, as in f64. A sum beyond f32's range
//! is infinite.

pub mod api;
pub mod cpu;
pub(crate) mod device;
pub mod reference;
pub mod stage;
mod sums;
#[cfg(test)]
mod tests;
mod tune;
pub mod variants;

use std::fmt;

use crate::backend::Dev;
use crate::error::{Error, Result};
use crate::image::{Image, Sample};
use crate::ops::{OpSpec, RunReport, Shape, TuneBucket};
pub use api::ReduceExt;
pub use tune::TUNE;

/// The operation's description.
pub static SPEC: OpSpec = OpSpec {
    name: "reduce",
    sources: &[
        crate::cl_source!("reduce/reduce.cl"),
        crate::cl_source!("reduce/columns.cl"),
        crate::cl_source!("reduce/subgroup.cl"),
        crate::cl_source!("reduce/shfl.cl"),
        crate::cl_source!("reduce/dp4a.cl"),
    ],
    variants: variants::VARIANTS,
    // Each axis's variants decline the other axis, so one order serves both.
    // x_shfl (NVIDIA only) matched or beat x_tree on every type measured on
    // the H100 and the H200 once short rows took teams of 32 (2026-11-27).
    // y_fused beat y_split on every type on the H200 (8192x8192: 1-10%;
    // 64x64: 7.5-9.7 against 13.5-15.4 us; 2026-11-28).
    gpu_order: &["x_shfl", "x_subgroup", "x_tree", "y_fused", "y_split", "x_row", "y_column"],
    cpu_device_order: &["x_row", "y_column", "x_tree", "y_split", "y_fused"],
    prefer: None,
    // A NaN reaches only the sums of its own row or column: that is what
    // the statistic means, not a smear, and min/max ignore it.
    spreads_nonfinite: false,
    // A sum of finite samples can exceed f32's range.
    overflows: true,
};

/// The operation's registry entry.
pub static OP: crate::ops::Operation = crate::ops::Operation {
    spec: &SPEC,
    stages: &[&stage::REDUCE],
    tune: &TUNE,
};

/// The axis a reduction runs along.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Axis {
    /// Along x: each row becomes one value (output 1 x height).
    X,
    /// Along y: each column becomes one value (output width x 1).
    Y,
}

/// What a reduction computes, per channel. The discriminants are the
/// kernels' `op` argument (`REDUCE_SUM` ... in `cl/reduce/reduce.cl`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reduction {
    /// The sum (compensated; see the module docs for the bound).
    Sum = 0,
    /// The sum divided by the number of samples.
    Mean = 1,
    /// The minimum, ignoring NaN.
    Min = 2,
    /// The maximum, ignoring NaN.
    Max = 3,
}

/// A reduction's parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReduceParams {
    /// The axis reduced away.
    pub axis: Axis,
    /// What is computed.
    pub op: Reduction,
}

impl Axis {
    /// `x` or `y`.
    pub fn name(self) -> &'static str {
        match self {
            Axis::X => "x",
            Axis::Y => "y",
        }
    }

    /// Parses `x` or `y`.
    pub fn parse(s: &str) -> Result<Self> {
        match s.trim() {
            "x" => Ok(Axis::X),
            "y" => Ok(Axis::Y),
            _ => Err(Error::arg(format!("axis '{s}' is not x or y"))),
        }
    }
}

impl Reduction {
    /// Every reduction, in `op` order.
    pub const ALL: [Reduction; 4] = [
        Reduction::Sum,
        Reduction::Mean,
        Reduction::Min,
        Reduction::Max,
    ];

    /// `sum`, `mean`, `min` or `max`.
    pub fn name(self) -> &'static str {
        match self {
            Reduction::Sum => "sum",
            Reduction::Mean => "mean",
            Reduction::Min => "min",
            Reduction::Max => "max",
        }
    }

    /// Parses a name of [`Reduction::name`].
    pub fn parse(s: &str) -> Result<Self> {
        Reduction::ALL
            .into_iter()
            .find(|r| r.name() == s.trim())
            .ok_or_else(|| Error::arg(format!("op '{s}' is not sum, mean, min or max")))
    }
}

impl fmt::Display for ReduceParams {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "axis={}:op={}", self.axis.name(), self.op.name())
    }
}

impl ReduceParams {
    /// The output's `(width, height)` for an input of `width x height`.
    pub fn output_size(&self, width: usize, height: usize) -> (usize, usize) {
        match self.axis {
            Axis::X => (1, height),
            Axis::Y => (width, 1),
        }
    }

    /// How many samples each output value reduces.
    pub fn count(&self, width: usize, height: usize) -> usize {
        match self.axis {
            Axis::X => width,
            Axis::Y => height,
        }
    }
}

/// The axis decides which variants run; the reduction may change the winner.
impl TuneBucket for ReduceParams {
    fn bucket_words(&self) -> (&'static str, &'static str) {
        (self.axis.name(), self.op.name())
    }
}
