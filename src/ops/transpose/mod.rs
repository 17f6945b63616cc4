//! `transpose`: swaps rows and columns. Used by the separable filters, and
//! the simplest kernel that shows what memory access patterns cost.

pub mod api;
pub mod cpu;
pub(crate) mod device;
pub mod reference;
pub mod stage;
mod tune;
pub mod variants;

use crate::backend::Dev;
use crate::error::Result;
use crate::image::{Image, Sample};
use crate::ops::{OpSpec, RunReport, Shape};
pub use api::TransposeExt;
pub use tune::TUNE;

/// The operation's description.
pub static SPEC: OpSpec = OpSpec {
    name: "transpose",
    sources: &[crate::cl_source!("transpose/transpose.cl")],
    variants: variants::VARIANTS,
    gpu_order: &["local_x4", "local_diag", "local", "naive"],
    cpu_device_order: &["local_x4", "local", "naive"],
    prefer: None,
    // Moves samples; a NaN moves with its pixel.
    spreads_nonfinite: false,
    overflows: false,
};

/// The operation's registry entry.
pub static OP: crate::ops::Operation = crate::ops::Operation {
    spec: &SPEC,
    stages: &[&stage::TRANSPOSE],
    tune: &TUNE,
};
