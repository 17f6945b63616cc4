//! `black` on OpenCL devices. Without the `opencl` feature, [`Dev`] has no
//! values, so `run` cannot be called.

use super::*;
use crate::backend::Dev;
use crate::ops::{Programs, VariantSpec};
use std::time::Duration;

/// Subtracts `black` and multiplies by `k` with `spec` on `dev`. Returns
/// the result and the kernel's device time.
#[cfg(feature = "opencl")]
pub(super) fn run<T: Sample>(
    progs: &Programs,
    dev: &Dev,
    spec: &VariantSpec,
    img: &Image<T>,
    black: f32,
    k: f32,
) -> Result<(Image<T>, Duration)> {
    use crate::backend::opencl::DeviceImage;
    let input = DeviceImage::upload(dev, img)?;
    let out = DeviceImage::<T>::new(dev, img.width(), img.height(), img.channels())?;
    let kt = launch(progs, dev, spec, &input, &out, black, k)?
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
    _: f32,
    _: f32,
) -> Result<(Image<T>, Duration)> {
    match *dev {}
}

/// Runs `spec` on device images of the same shape and type.
#[cfg(feature = "opencl")]
pub(crate) fn launch<T: Sample>(
    progs: &Programs,
    dev: &Dev,
    spec: &VariantSpec,
    input: &crate::backend::opencl::DeviceImage<T>,
    out: &crate::backend::opencl::DeviceImage<T>,
    black: f32,
    k: f32,
) -> Result<crate::backend::opencl::ClEvent> {
    use crate::backend::opencl::Arg;
    let shape = Shape::new(input.width(), input.height(), input.channels(), T::TYPE);
    if (out.width(), out.height(), out.channels()) != (shape.width, shape.height, shape.channels) {
        return Err(Error::arg("black's output must have the input's shape"));
    }
    let extra = format!("-DOUT_FLOAT={}", (T::TYPE == SampleType::F32) as u8);
    let kernel = progs.kernel(dev, SPEC.name, spec, &shape, &extra, &spec.kernel_name(SPEC.name))?;
    let n = input.pixel_count();
    dev.launch(
        &kernel,
        &[n],
        &[spec.local[0]],
        &[Arg::img(input), Arg::img(out), Arg::int(n)?, Arg::F32(black), Arg::F32(k)],
    )
}

/// The stage's arm in a device-resident chain ([`crate::ops::StageOp::run_device`]):
/// the kernel on the working floats, in the logical type's units.
#[cfg(feature = "opencl")]
pub(crate) fn run_stage(
    p: &BlackParams,
    cx: &crate::ops::work::Chain<'_>,
    forced: Option<&str>,
    input: crate::ops::work::ChainInput<'_>,
    record: &mut crate::ops::stage::StageRecord,
) -> Result<crate::ops::work::Work> {
    use crate::backend::opencl::DeviceImage;
    use crate::ops::work::{time, Work};
    use crate::ops::OpParams;
    let mut w = input.into_work();
    let k = p.factor(w.ty)?;
    let mt = w.materialize(cx.d, cx.dev)?;
    let (logical, working) = (
        w.logical_shape(OpParams::NONE),
        w.working_shape(OpParams::NONE),
    );
    let (img, mut rep) =
        crate::ops::dispatch_on_device(cx.d, &SPEC, forced, (&logical, &working), |dev, spec| {
            let out = DeviceImage::<f32>::new(dev, w.width(), w.height(), w.img.channels())?;
            let ev = launch(cx.d.programs(), dev, spec, &w.img, &out, p.black, k)?;
            Ok((out, time(ev)?))
        })?;
    rep.kernel_time = rep.kernel_time.map(|t| t + mt);
    record.reports.push(rep);
    Ok(Work {
        img,
        channels: w.channels,
        ty: w.ty,
        scale: 1.0,
        // A white level below full scale stretches past it.
        unsaturated: w.ty != SampleType::F32 && p.white.is_some(),
    })
}

/// No chain exists in a build without OpenCL.
#[cfg(not(feature = "opencl"))]
pub(crate) fn run_stage(
    _: &BlackParams,
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
    case: &'a super::tune::BlackCase<T>,
    progs: &'a Programs,
    dev: &'a Dev,
    spec: &'static VariantSpec,
) -> Result<crate::ops::tuning::Runner<'a>> {
    use crate::backend::opencl::DeviceImage;
    use crate::ops::tuning::Case;
    crate::ops::tuning::check_variant(&SPEC, spec, &case.shape(), dev.info().local_mem)?;
    let k = case.p.factor(T::TYPE)?;
    let input = case.on_device.image(dev, &case.img)?;
    let out = DeviceImage::<T>::new(dev, input.width(), input.height(), input.channels())?;
    let black = case.p.black;
    Ok(Box::new(move || {
        Ok(launch(progs, dev, spec, input, &out, black, k)?
            .duration()?
            .unwrap_or_default())
    }))
}

/// No device exists in a build without OpenCL.
#[cfg(not(feature = "opencl"))]
pub(super) fn kernel_runner<'a, T: Sample>(
    case: &'a super::tune::BlackCase<T>,
    _: &'a Programs,
    dev: &'a Dev,
    _: &'static VariantSpec,
) -> Result<crate::ops::tuning::Runner<'a>> {
    // The upload slot exists in every build; only a device fills it.
    let _ = &case.on_device;
    match *dev {}
}
