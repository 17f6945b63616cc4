//! `ccm` on OpenCL devices. Without the `opencl` feature, [`Dev`] has no
//! values, so `run` cannot be called.

use super::*;
use crate::backend::Dev;
use crate::ops::{Programs, VariantSpec};
use std::time::Duration;

/// Applies `p` with `spec` on `dev`. Returns the result and the kernel's
/// device time.
#[cfg(feature = "opencl")]
pub(super) fn run<T: Sample>(
    progs: &Programs,
    dev: &Dev,
    spec: &VariantSpec,
    img: &Image<T>,
    p: &CcmParams,
) -> Result<(Image<T>, Duration)> {
    use crate::backend::opencl::DeviceImage;
    let input = DeviceImage::upload(dev, img)?;
    let out = DeviceImage::<T>::new(dev, img.width(), img.height(), img.channels())?;
    let kt = launch(progs, dev, spec, &input, &out, p)?
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
    _: &CcmParams,
) -> Result<(Image<T>, Duration)> {
    match *dev {}
}

/// Runs `spec` on device images of the same shape and type (3 or 4 channels).
#[cfg(feature = "opencl")]
pub(crate) fn launch<T: Sample>(
    progs: &Programs,
    dev: &Dev,
    spec: &VariantSpec,
    input: &crate::backend::opencl::DeviceImage<T>,
    out: &crate::backend::opencl::DeviceImage<T>,
    p: &CcmParams,
) -> Result<crate::backend::opencl::ClEvent> {
    use crate::backend::opencl::Arg;
    p.validate()?;
    check_channels(input.channels())?;
    let shape = Shape::new(input.width(), input.height(), input.channels(), T::TYPE);
    if (out.width(), out.height(), out.channels()) != (shape.width, shape.height, shape.channels) {
        return Err(Error::arg("ccm's output must have the input's shape"));
    }
    let extra = format!("-DOUT_FLOAT={}", (T::TYPE == SampleType::F32) as u8);
    let kernel = progs.kernel(dev, SPEC.name, spec, &shape, &extra, &spec.kernel_name(SPEC.name))?;
    let n = input.pixel_count();
    // pixel4 takes four pixels per work-item.
    let per_item = if spec.name == "pixel4" { 4 } else { 1 };
    let [m0, m1, m2] = p.rows();
    dev.launch(
        &kernel,
        &[n.div_ceil(per_item)],
        &[spec.local[0]],
        &[
            Arg::img(input),
            Arg::img(out),
            Arg::int(n)?,
            Arg::F32x4(m0),
            Arg::F32x4(m1),
            Arg::F32x4(m2),
        ],
    )
}

/// The stage's arm in a device-resident chain ([`crate::ops::StageOp::run_device`]):
/// the kernel on the working floats (saturated first where the host path
/// would have), in the logical type's units.
#[cfg(feature = "opencl")]
pub(crate) fn run_stage(
    p: &CcmParams,
    cx: &crate::ops::work::Chain<'_>,
    forced: Option<&str>,
    input: crate::ops::work::ChainInput<'_>,
    record: &mut crate::ops::stage::StageRecord,
) -> Result<crate::ops::work::Work> {
    use crate::backend::opencl::DeviceImage;
    use crate::ops::work::{time, Work};
    use crate::ops::OpParams;
    p.validate()?;
    let mut w = input.into_work();
    check_channels(w.channels)?;
    let mt = w.materialize(cx.d, cx.dev)?;
    let (logical, working) = (
        w.logical_shape(OpParams::NONE),
        w.working_shape(OpParams::NONE),
    );
    let (img, mut rep) =
        crate::ops::dispatch_on_device(cx.d, &SPEC, forced, (&logical, &working), |dev, spec| {
            let out = DeviceImage::<f32>::new(dev, w.width(), w.height(), w.img.channels())?;
            let ev = launch(cx.d.programs(), dev, spec, &w.img, &out, p)?;
            Ok((out, time(ev)?))
        })?;
    rep.kernel_time = rep.kernel_time.map(|t| t + mt);
    record.reports.push(rep);
    Ok(Work {
        img,
        channels: w.channels,
        ty: w.ty,
        scale: 1.0,
        // Sums of products leave 0..full; the next stage or the store saturates.
        unsaturated: w.ty != SampleType::F32,
    })
}

/// No chain exists in a build without OpenCL.
#[cfg(not(feature = "opencl"))]
pub(crate) fn run_stage(
    _: &CcmParams,
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
pub(super) fn kernel_runner<'a, T: Sample>(
    case: &'a super::tune::CcmCase<T>,
    progs: &'a Programs,
    dev: &'a Dev,
    spec: &'static VariantSpec,
) -> Result<crate::ops::tuning::Runner<'a>> {
    use crate::backend::opencl::DeviceImage;
    use crate::ops::tuning::Case;
    crate::ops::tuning::check_variant(&SPEC, spec, &case.shape(), dev.info().local_mem)?;
    let input = case.on_device.image(dev, &case.img)?;
    let out = DeviceImage::<T>::new(dev, input.width(), input.height(), input.channels())?;
    let p = case.p;
    Ok(Box::new(move || {
        Ok(launch(progs, dev, spec, input, &out, &p)?
            .duration()?
            .unwrap_or_default())
    }))
}

/// No device exists in a build without OpenCL.
#[cfg(not(feature = "opencl"))]
pub(super) fn kernel_runner<'a, T: Sample>(
    case: &'a super::tune::CcmCase<T>,
    _: &'a Programs,
    dev: &'a Dev,
    _: &'static VariantSpec,
) -> Result<crate::ops::tuning::Runner<'a>> {
    // The upload slot exists in every build; only a device fills it.
    let _ = &case.on_device;
    match *dev {}
}
