//! `minmax` on OpenCL devices. Without the `opencl` feature, [`Dev`] has no
//! values, so `run` cannot be called.

use super::*;
use crate::backend::Dev;
use crate::ops::{Programs, VariantSpec};
use std::time::Duration;

#[cfg(feature = "opencl")]
pub(crate) use cl::launch;

/// Per-channel extremes of `img` with `spec` on `dev`. Returns the result and the kernels' device time.
#[cfg(feature = "opencl")]
pub(super) fn run<T: Sample>(
    progs: &Programs,
    dev: &Dev,
    spec: &VariantSpec,
    img: &Image<T>,
) -> Result<(MinMax, Duration)> {
    let input = crate::backend::opencl::DeviceImage::upload(dev, img)?;
    launch(progs, dev, spec, &input)
}

/// No device exists in a build without OpenCL.
#[cfg(not(feature = "opencl"))]
pub(super) fn run<T: Sample>(
    _: &Programs,
    dev: &Dev,
    _: &VariantSpec,
    _: &Image<T>,
) -> Result<(MinMax, Duration)> {
    match *dev {}
}

#[cfg(feature = "opencl")]
mod cl {
    use super::*;

    /// Work-groups for pass 1: enough to fill the device, few enough for one final group.
    fn groups(items: usize, lws: usize, compute_units: u32) -> usize {
        let fill = (compute_units.max(1) as usize * 8).min(1024);
        items.div_ceil(lws).clamp(1, fill)
    }

    /// Runs `spec` on a device image and reads back the result (blocking).
    /// Returns the extremes and the device time of both passes.
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
        // Grid-stride (and one partial per group): never split.
        let e1 = dev.launch_whole(
            &k1,
            &[g * lws],
            &[lws],
            &[Arg::img(input), Arg::int(n)?, Arg::buf(&partial)],
        )?;
        let e2 = dev.launch_whole(
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
}

/// The stage's arm in a device-resident chain ([`crate::ops::StageOp::run_device`]).
#[cfg(feature = "opencl")]
pub(crate) fn run_stage(
    _: &super::stage::MinMaxStage,
    cx: &crate::ops::work::Chain<'_>,
    forced: Option<&str>,
    input: crate::ops::work::ChainInput<'_>,
    record: &mut crate::ops::stage::StageRecord,
) -> Result<crate::ops::work::Work> {
    let mut w = input.into_work();
    // The extremes the host path reports: whole steps of an integer type.
    let kt = w.host_values(cx.d, cx.dev)?;
    let (m, mut rep) = minmax_of(cx, forced, &mut w)?;
    rep.kernel_time = rep.kernel_time.map(|k| k + kt);
    record.reports.push(rep);
    record.lines.push(super::stage::format_minmax(&m, w.ty));
    record.minmax = Some(m);
    Ok(w)
}

/// No chain exists in a build without OpenCL.
#[cfg(not(feature = "opencl"))]
pub(crate) fn run_stage(
    _: &super::stage::MinMaxStage,
    cx: &crate::ops::work::Chain<'_>,
    _: Option<&str>,
    _: crate::ops::work::ChainInput<'_>,
    _: &mut crate::ops::stage::StageRecord,
) -> Result<crate::ops::work::Work> {
    cx.never()
}
/// Per-channel extremes of a working image, in logical units and channels.
/// `forced` is a minmax stage's own `variant=`, or `None` for the minmax a
/// colormap or normalize stage runs for its range.
#[cfg(feature = "opencl")]
pub fn minmax_of(
    cx: &crate::ops::work::Chain<'_>,
    forced: Option<&str>,
    w: &mut crate::ops::work::Work,
) -> Result<(MinMax, crate::ops::RunReport)> {
    use crate::ops::OpParams;
    let mt = w.materialize(cx.d, cx.dev)?;
    let (logical, working) = (
        w.logical_shape(OpParams::NONE),
        w.working_shape(OpParams::NONE),
    );
    let img = &w.img;
    let (m, mut r) =
        crate::ops::dispatch_on_device(cx.d, &super::SPEC, forced, (&logical, &working), |dev, spec| {
            super::device::launch(cx.d.programs(), dev, spec, img)
        })?;
    r.kernel_time = r.kernel_time.map(|k| k + mt);
    let mut out = MinMax::empty(w.channels);
    out.min[..w.channels].copy_from_slice(&m.min[..w.channels]);
    out.max[..w.channels].copy_from_slice(&m.max[..w.channels]);
    Ok((out, r))
}

/// A kernel-only runner of `spec` on the case's input, uploaded once
/// ([`crate::ops::tuning::Case::kernel_runner`]).
#[cfg(feature = "opencl")]
pub(super) fn kernel_runner<'a, T: crate::image::Sample>(
    case: &'a super::tune::MinmaxCase<T>,
    progs: &'a crate::ops::Programs,
    dev: &'a crate::backend::Dev,
    spec: &'static crate::ops::VariantSpec,
) -> crate::error::Result<crate::ops::tuning::Runner<'a>> {
    use crate::ops::tuning::Case;
        crate::ops::tuning::check_variant(&super::SPEC, spec, &case.shape(), dev.info().local_mem)?;
        let input = case.on_device.image(dev, &case.img)?;
        Ok(Box::new(move || {
            Ok(super::device::launch(progs, dev, spec, input)?.1)
        }))
    }

/// No device exists in a build without OpenCL.
#[cfg(not(feature = "opencl"))]
pub(super) fn kernel_runner<'a, T: crate::image::Sample>(
    case: &'a super::tune::MinmaxCase<T>,
    _: &'a crate::ops::Programs,
    dev: &'a crate::backend::Dev,
    _: &'static crate::ops::VariantSpec,
) -> crate::error::Result<crate::ops::tuning::Runner<'a>> {
    // The upload slot exists in every build; only a device fills it.
    let _ = &case.on_device;
    match *dev {}
}
