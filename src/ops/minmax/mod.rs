//! `minmax`: per-channel minimum and maximum, fused in one pass over the image.

mod api;
pub mod cpu;
pub mod reference;
mod tune;
pub mod variants;

use serde::Serialize;

use crate::backend::Dev;
use crate::error::Result;
use crate::image::{Image, Sample};
use crate::ops::Programs;
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

/// Work-groups for pass 1: enough to fill the device, few enough for one final group.
#[cfg(feature = "opencl")]
fn groups(items: usize, lws: usize, compute_units: u32) -> usize {
    let fill = (compute_units.max(1) as usize * 8).min(1024);
    items.div_ceil(lws).clamp(1, fill)
}

/// Runs `spec` on a device image and reads back the result (blocking).
/// Returns the extremes and the device time of both passes.
#[cfg(feature = "opencl")]
pub(crate) fn launch<T: Sample>(
    progs: &Programs,
    dev: &Dev,
    spec: &crate::ops::VariantSpec,
    input: &crate::backend::opencl::DeviceImage<T>,
) -> Result<(MinMax, std::time::Duration)> {
    use crate::backend::opencl::{Arg, DeviceBuffer};
    let c = input.channels();
    let shape = Shape::new(input.width(), input.height(), c, T::TYPE);
    let n = input.pixel_count();
    let lws = spec.local[0];
    let items = if spec.name == "tree_vec4" { n / 4 } else { n };
    let g = groups(items, lws, dev.info().compute_units);
    let k1 = progs.kernel(
        dev,
        SPEC.name,
        spec,
        &shape,
        "",
        &spec.kernel_name(SPEC.name),
    )?;
    let k2 = progs.kernel(dev, SPEC.name, spec, &shape, "", "minmax_final")?;
    let partial = DeviceBuffer::<[f32; 4]>::new(dev, 2 * g)?;
    let result = DeviceBuffer::<[f32; 4]>::new(dev, 2)?;
    let e1 = dev.launch(
        &k1,
        &[g * lws],
        &[lws],
        &[Arg::img(input), Arg::int(n)?, Arg::buf(&partial)],
    )?;
    let e2 = dev.launch(
        &k2,
        &[lws],
        &[lws],
        &[Arg::buf(&partial), Arg::int(g)?, Arg::buf(&result)],
    )?;
    let r = result.to_vec(dev)?;
    let kt = e1.duration()?.unwrap_or_default() + e2.duration()?.unwrap_or_default();
    let mut m = MinMax::empty(c);
    m.min[..c].copy_from_slice(&r[0][..c]);
    m.max[..c].copy_from_slice(&r[1][..c]);
    Ok((m, kt))
}
