//! Operations, and THE registry: `registry!`'s list below is the only
//! place that names every operation. Each lives in its own folder,
//! `src/ops/<op>/`, with its kernels in `cl/<op>/`:
//!
//! - `mod.rs`: parameters, the [`OpSpec`] (variant table, default orders,
//!   embedded sources) and the [`Operation`] entry `OP`;
//! - `reference.rs`: the simplest correct version, ground truth for tests;
//! - `cpu.rs`: the rayon path; `variants.rs`: the OpenCL variant table;
//! - `device.rs`: the OpenCL launches (the op's only `cfg(feature = "opencl")`;
//!   the per-pixel camera stages describe theirs to `pixel_stage`);
//! - `api.rs`: its entry points on an engine (`engine.<op>(..)`, through [`Dispatch`]);
//! - `stage.rs`: its pipeline stage(s) ([`StageDef`], [`StageOp`]);
//! - `tune.rs`: its tuning and bench cases ([`tuning::Tunable`]) and tuning key fields.
//!
//! A variant has one name everywhere: the `--variant` value, the log field,
//! and the OpenCL kernel function `<op>_<variant>`, which is built from the
//! table entry so the two cannot drift apart.

mod contract;
mod device;
pub(crate) mod pixel_stage;
mod report;
pub mod stage;
mod table;
pub mod tuning;
pub mod work;

use std::sync::LazyLock;

pub use contract::{dispatch, dispatch_on_device, guard_nonfinite, Dispatch, Programs, RunCl};
pub use report::{ser_ms, ser_opt_ms, RunReport};
pub use stage::{StageDef, StageOp};
pub use table::{
    any_shape, no_local, OpParams, OpSpec, Params, Requirement, Shape, TuneBucket, VariantSpec, CPU,
};

/// One operation as the generic layers see it: its variant table, its
/// pipeline stages and its tuning cases. Each operation defines one, `OP`,
/// in its `mod.rs`.
pub struct Operation {
    /// The variant table, default orders and kernel sources.
    pub spec: &'static OpSpec,
    /// The pipeline stages it defines, in listing order.
    pub stages: &'static [&'static StageDef],
    /// Its tuning and bench cases.
    pub tune: &'static dyn tuning::Tunable,
}

impl std::fmt::Debug for Operation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Operation")
            .field("name", &self.spec.name)
            .field("stages", &self.stages)
            .finish_non_exhaustive()
    }
}

/// Declares the operations' modules and lists them: [`OPERATIONS`], [`OPS`]
/// and the [`prelude`] of their entry points. Adding an operation is one
/// name here (plus its folders).
macro_rules! registry {
    ($($op:ident),* $(,)?) => {
        $(pub mod $op;)*

        /// Every operation, in listing order.
        pub static OPERATIONS: &[&Operation] = &[$(&$op::OP),*];

        /// Every operation's variant table, in listing order.
        pub static OPS: &[&OpSpec] = &[$(&$op::SPEC),*];

        /// The operations' entry points on an engine (`engine.gaussian(..)`,
        /// `engine.transpose(..)`, ...): `use clfilter::prelude::*;`.
        pub mod prelude {
            $(pub use super::$op::api::*;)*
            pub use super::Dispatch;
        }
    };
}

registry! {
    transpose,
    minmax,
    normalize,
    gaussian,
    demosaic,
    colormap,
    median,
    sort,
    bilateral,
    deband,
    reduce,
    histogram,
    stats,
    black,
    wb,
    ccm,
    gamma,
}

/// Every stage a pipeline can use, in the operations' order (each defined
/// in its operation's `stage.rs`).
pub static STAGES: LazyLock<Vec<&'static StageDef>> = LazyLock::new(|| {
    OPERATIONS
        .iter()
        .flat_map(|o| o.stages.iter().copied())
        .collect()
});

/// Every embedded kernel source: the shared ones, then each operation's.
pub fn all_sources() -> Vec<crate::kernels::Source> {
    let mut all = crate::kernels::SHARED.to_vec();
    for op in OPS {
        all.extend_from_slice(op.sources);
    }
    all
}
