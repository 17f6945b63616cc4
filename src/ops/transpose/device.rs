//! `transpose` on OpenCL devices. Without the `opencl` feature, [`Dev`] has no
//! values, so `run` cannot be called.

use super::*;
use crate::backend::Dev;
use crate::ops::{Programs, VariantSpec};
use std::time::Duration;

#[cfg(feature = "opencl")]
pub(crate) use cl::launch;

/// Transposes `img` with `spec` on `dev`: upload, kernel, download. Returns the result and the kernels' device time.
#[cfg(feature = "opencl")]
pub(super) fn run<T: Sample>(
    progs: &Programs,
    dev: &Dev,
    spec: &VariantSpec,
    img: &Image<T>,
) -> Result<(Image<T>, Duration)> {
    use crate::backend::opencl::DeviceImage;
    let input = DeviceImage::upload(dev, img)?;
    let out = DeviceImage::<T>::new(dev, img.height(), img.width(), img.channels())?;
    let kt = launch(progs, dev, spec, &input, &out)?
        .duration()?
        .unwrap_or_default();
    Ok((out.download(dev)?, kt))
}

/// No device exists in a build without OpenCL.
#[cfg(not(feature = "opencl"))]
pub(super) fn run<T: Sample>(
    _: &Programs,
    dev: &Dev,
    _: &VariantSpec,
    _: &Image<T>,
) -> Result<(Image<T>, Duration)> {
    match *dev {}
}

#[cfg(feature = "opencl")]
mod cl {
    use super::*;

    /// Enqueues `spec` on device images: `out` must be `in` with width and height swapped.
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
}

/// The stage's arm in a device-resident chain ([`crate::ops::StageOp::run_device`]).
#[cfg(feature = "opencl")]
pub(crate) fn run_stage(
    _: &super::stage::TransposeStage,
    cx: &crate::ops::work::Chain<'_>,
    forced: Option<&str>,
    input: crate::ops::work::ChainInput<'_>,
    record: &mut crate::ops::stage::StageRecord,
) -> Result<crate::ops::work::Work> {
    use crate::backend::opencl::DeviceImage;
    use crate::ops::work::time;
    use crate::ops::OpParams;
    let w = input.into_work();
    let (logical, working) = (
        w.logical_shape(OpParams::NONE),
        w.working_shape(OpParams::NONE),
    );
    let (img, rep) = crate::ops::dispatch_on_device(
        cx.d,
        &super::SPEC,
        forced,
        (&logical, &working),
        |dev, spec| {
            let out = DeviceImage::<f32>::new(dev, w.height(), w.width(), w.img.channels())?;
            let ev = super::device::launch(cx.d.programs(), dev, spec, &w.img, &out)?;
            Ok((out, time(ev)?))
        },
    )?;
    record.reports.push(rep);
    Ok(w.with(img))
}

/// No chain exists in a build without OpenCL.
#[cfg(not(feature = "opencl"))]
pub(crate) fn run_stage(
    _: &super::stage::TransposeStage,
    cx: &crate::ops::work::Chain<'_>,
    _: Option<&str>,
    _: crate::ops::work::ChainInput<'_>,
    _: &mut crate::ops::stage::StageRecord,
) -> Result<crate::ops::work::Work> {
    cx.never()
}

/// A kernel-only runner of `spec` on the case's input, uploaded once
/// ([`crate::ops::tuning::Case::kernel_runner`]).
#[cfg(feature = "opencl")]
pub(super) fn kernel_runner<'a, T: crate::image::Sample>(
    case: &'a super::tune::TransposeCase<T>,
    progs: &'a crate::ops::Programs,
    dev: &'a crate::backend::Dev,
    spec: &'static crate::ops::VariantSpec,
) -> crate::error::Result<crate::ops::tuning::Runner<'a>> {
    use crate::ops::tuning::Case;
        use crate::backend::opencl::DeviceImage;
        crate::ops::tuning::check_variant(&super::SPEC, spec, &case.shape(), dev.info().local_mem)?;
        let input = case.on_device.image(dev, &case.img)?;
        let (w, h, c) = (input.width(), input.height(), input.channels());
        let out = DeviceImage::<T>::new(dev, h, w, c)?;
        Ok(Box::new(move || {
            Ok(super::device::launch(progs, dev, spec, input, &out)?
                .duration()?
                .unwrap_or_default())
        }))
    }

/// No device exists in a build without OpenCL.
#[cfg(not(feature = "opencl"))]
pub(super) fn kernel_runner<'a, T: crate::image::Sample>(
    case: &'a super::tune::TransposeCase<T>,
    _: &'a crate::ops::Programs,
    dev: &'a crate::backend::Dev,
    _: &'static crate::ops::VariantSpec,
) -> crate::error::Result<crate::ops::tuning::Runner<'a>> {
    // The upload slot exists in every build; only a device fills it.
    let _ = &case.on_device;
    match *dev {}
}
