//! The blur on an OpenCL device: the one place in `gaussian` that needs the
//! `opencl` feature. [`run`] takes host images; `blur_w` runs a variant's
//! plan (`variants::plan`) on a working image already on the device.
//!
//! The working image is f32 with 1 channel (gray) or 4 (RGB/RGBA); for f32
//! gray and RGBA input it is the user's buffer itself.

#[cfg(feature = "opencl")]
mod blocks;
#[cfg(feature = "opencl")]
mod fir_tiles;
#[cfg(feature = "opencl")]
mod launch;
#[cfg(feature = "opencl")]
mod tiles;

#[cfg(feature = "opencl")]
pub(crate) use launch::{blur_stack, blur_w, run};

/// Whether variant `name` blurs a stack of frames ([`crate::ops::work::Chain::frames`])
/// frame by frame, in one launch per pass: the FIR's passes only read
/// rows of one frame, or columns bordered at each frame's edges.
pub(crate) fn stacks(name: &str) -> bool {
    name == "fir_local" || name == "fir_tiles"
}

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
    let (mut logical, mut working) = (w.logical_shape(params.clone()), w.working_shape(params));
    // Variants are chosen for one frame of a stack.
    let frames = cx.frames.max(1);
    logical.height /= frames;
    working.height /= frames;
    let (img, rep) = crate::ops::dispatch_on_device(
        cx.d,
        &super::SPEC,
        forced,
        (&logical, &working),
        |dev, spec| super::device::blur_stack(cx.d.programs(), dev, spec, &w.img, stage, frames),
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
///
/// f32 gray and RGBA images are the working image itself, so only the blur
/// is timed; so are u8 and u16 gray and RGBA ones under `iir_tiles` and
/// `fir_tiles`, which read and write them themselves. Other inputs (u8, u16, RGB) time what a
/// pipeline runs on the
/// device: the conversion into the f32 working image (`pipeline_load`), the
/// blur, and the rounding store back to the input's type
/// (`pipeline_store`); the transfers are not counted.
#[cfg(feature = "opencl")]
pub(super) fn kernel_runner<'a, T: crate::image::Sample>(
    case: &'a super::tune::GaussianCase<T>,
    progs: &'a crate::ops::Programs,
    dev: &'a crate::backend::Dev,
    spec: &'static crate::ops::VariantSpec,
) -> crate::error::Result<crate::ops::tuning::Runner<'a>> {
    use crate::backend::opencl::DeviceImage;
    use crate::ops::tuning::Case;
    use crate::ops::work::{load_into, store_into, Work};
    crate::ops::tuning::check_variant(&super::SPEC, spec, &case.shape(), dev.info().local_mem)?;
    let input = case.on_device.image(dev, &case.img)?;
    let gp = case.gauss;
    if let Some(work) = (input as &dyn std::any::Any).downcast_ref::<DeviceImage<f32>>() {
        if work.channels() != 3 {
            return Ok(Box::new(move || {
                super::device::blur_w(progs, dev, spec, work, &gp).map(|r| r.1)
            }));
        }
    }
    if tiles::tiles_direct(spec, input.channels(), &gp) {
        return Ok(Box::new(move || {
            tiles::blur_direct(progs, dev, spec, input, &gp).map(|r| r.1)
        }));
    }
    let (w, h, ch) = (input.width(), input.height(), input.channels());
    let work = Work {
        img: DeviceImage::<f32>::new(dev, w, h, if ch == 1 { 1 } else { 4 })?,
        channels: ch,
        ty: T::TYPE,
        scale: 1.0,
        unsaturated: false,
    };
    let out = DeviceImage::<T>::new(dev, w, h, ch)?;
    Ok(Box::new(move || {
        let load = load_into(progs, dev, input, &work.img)?;
        let (blurred, blur) = super::device::blur_w(progs, dev, spec, &work.img, &gp)?;
        let store = store_into(progs, dev, &work.with(blurred), &out)?;
        Ok(load + blur + store)
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
