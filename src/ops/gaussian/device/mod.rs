//! The blur on an OpenCL device: the one place in `gaussian` that needs the
//! `opencl` feature. [`run`] takes host images; `blur_w` runs a variant's
//! plan (`variants::plan`) on a working image already on the device.
//!
//! The working image is f32 with 1 channel (gray) or 4 (RGB/RGBA); for f32
//! gray and RGBA input it is the user's buffer itself.

#[cfg(feature = "opencl")]
mod blocks;
#[cfg(feature = "opencl")]
mod launch;
#[cfg(feature = "opencl")]
mod tiles;

#[cfg(feature = "opencl")]
pub(crate) use launch::{blur_w, run};

/// Without OpenCL there is no device value, so this cannot be called.
#[cfg(not(feature = "opencl"))]
pub(crate) fn run<T: crate::image::Sample>(
    _: &crate::ops::Programs,
    dev: &crate::backend::Dev,
    _: &crate::ops::VariantSpec,
    _: &crate::image::Image<T>,
    _: &super::GaussianParams,
) -> crate::error::Result<(crate::image::Image<T>, std::time::Duration)> {
    match *dev {}
}

/// The stage's arm in a device-resident chain ([`crate::ops::StageOp::run_device`]).
#[cfg(feature = "opencl")]
pub(crate) fn run_stage(
    stage: &super::GaussianParams,
    cx: &crate::ops::work::Chain<'_>,
    forced: Option<&str>,
    input: crate::ops::work::ChainInput<'_>,
    record: &mut crate::ops::stage::StageRecord,
) -> crate::error::Result<crate::ops::work::Work> {
    use crate::ops::OpParams;
    let mut w = input.into_work();
    if stage.min_nonzero_sigma().is_none() {
        return Ok(w);
    }
    if w.unsaturated {
        let start = std::time::Instant::now();
        let kt = w.materialize(cx.d, cx.dev)?;
        record.reports.push(cx.own_report("saturate", start, kt));
    }
    let params = OpParams::new(*stage);
    let (logical, working) = (w.logical_shape(params.clone()), w.working_shape(params));
    let (img, rep) = crate::ops::dispatch_on_device(
        cx.d,
        &super::SPEC,
        forced,
        (&logical, &working),
        |dev, spec| super::device::blur_w(cx.d.programs(), dev, spec, &w.img, stage),
    )?;
    record.reports.push(rep);
    Ok(w.with(img))
}

/// No chain exists in a build without OpenCL.
#[cfg(not(feature = "opencl"))]
pub(crate) fn run_stage(
    _: &super::GaussianParams,
    cx: &crate::ops::work::Chain<'_>,
    _: Option<&str>,
    _: crate::ops::work::ChainInput<'_>,
    _: &mut crate::ops::stage::StageRecord,
) -> crate::error::Result<crate::ops::work::Work> {
    cx.never()
}

/// A kernel-only runner of `spec` on the case's input, uploaded once
/// ([`crate::ops::tuning::Case::kernel_runner`]).
#[cfg(feature = "opencl")]
pub(super) fn kernel_runner<'a, T: crate::image::Sample>(
    case: &'a super::tune::GaussianCase<T>,
    progs: &'a crate::ops::Programs,
    dev: &'a crate::backend::Dev,
    spec: &'static crate::ops::VariantSpec,
) -> crate::error::Result<crate::ops::tuning::Runner<'a>> {
    use crate::ops::tuning::Case;
        use crate::backend::opencl::DeviceImage;
        crate::ops::tuning::check_variant(&super::SPEC, spec, &case.shape(), dev.info().local_mem)?;
        let unsupported = || crate::error::Error::Unsupported {
            op: super::SPEC.name.into(),
            variant: spec.name.into(),
            reason: "kernel-only timing runs on f32 gray or RGBA images".into(),
        };
        if T::TYPE != crate::image::SampleType::F32 || case.img.channels() == 3 {
            return Err(unsupported());
        }
        let input = case.on_device.image(dev, &case.img)?;
        let work = (input as &dyn std::any::Any)
            .downcast_ref::<DeviceImage<f32>>()
            .ok_or_else(unsupported)?;
        let gp = case.gauss;
        Ok(Box::new(move || {
            super::device::blur_w(progs, dev, spec, work, &gp).map(|r| r.1)
        }))
    }

/// No device exists in a build without OpenCL.
#[cfg(not(feature = "opencl"))]
pub(super) fn kernel_runner<'a, T: crate::image::Sample>(
    case: &'a super::tune::GaussianCase<T>,
    _: &'a crate::ops::Programs,
    dev: &'a crate::backend::Dev,
    _: &'static crate::ops::VariantSpec,
) -> crate::error::Result<crate::ops::tuning::Runner<'a>> {
    // The upload slot exists in every build; only a device fills it.
    let _ = &case.on_device;
    match *dev {}
}
