//! `transpose`: swaps rows and columns. Used by the separable filters, and
//! the simplest kernel that shows what memory access patterns cost.

mod api;
pub mod cpu;
pub mod reference;
mod tune;
pub mod variants;

use crate::backend::Dev;
use crate::error::Result;
use crate::image::{Image, Sample};
use crate::ops::Programs;
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
};

/// Enqueues `spec` on device images: `out` must be `in` with width and height swapped.
#[cfg(feature = "opencl")]
pub(crate) fn launch<T: Sample>(
    progs: &Programs,
    dev: &Dev,
    spec: &crate::ops::VariantSpec,
    input: &crate::backend::opencl::DeviceImage<T>,
    out: &crate::backend::opencl::DeviceImage<T>,
) -> Result<crate::backend::opencl::ClEvent> {
    use crate::backend::opencl::Arg;
    let (w, h, c) = (input.width(), input.height(), input.channels());
    if (out.width(), out.height(), out.channels()) != (h, w, c) {
        return Err(crate::Error::arg(format!(
            "transpose of {w}x{h}x{c} needs a {h}x{w}x{c} output, got {}x{}x{}",
            out.width(),
            out.height(),
            out.channels()
        )));
    }
    let shape = Shape::new(w, h, c, T::TYPE);
    let k = progs.kernel(
        dev,
        SPEC.name,
        spec,
        &shape,
        "",
        &spec.kernel_name(SPEC.name),
    )?;
    let global = if spec.name == "local_x4" {
        // Each 32x8 group covers a 32x32 tile.
        let (tile, rows) = (spec.local[0], spec.local[1]);
        [w.div_ceil(tile) * tile, h.div_ceil(tile) * rows]
    } else {
        [w, h]
    };
    dev.launch(
        &k,
        &global,
        &spec.local,
        &[Arg::img(input), Arg::img(out), Arg::int(w)?, Arg::int(h)?],
    )
}
