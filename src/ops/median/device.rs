//! `median` on OpenCL devices. Without the `opencl` feature, [`Dev`] has no
//! values, so `run` cannot be called.

use super::*;
use crate::backend::Dev;
use crate::ops::{Programs, VariantSpec};
use std::time::Duration;

/// Median-filters `img` with `spec` on `dev`: upload, kernel, download.
/// Returns the result and the kernel's device time.
#[cfg(feature = "opencl")]
pub(super) fn run<T: Sample>(
    progs: &Programs,
    dev: &Dev,
    spec: &VariantSpec,
    img: &Image<T>,
    p: &MedianParams,
) -> Result<(Image<T>, Duration)> {
    use crate::backend::opencl::DeviceImage;
    let input = DeviceImage::upload(dev, img)?;
    let out = DeviceImage::<T>::new(dev, img.width(), img.height(), img.channels())?;
    let kt = cl::launch(progs, dev, spec, &input, &out, p)?
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
    _: &MedianParams,
) -> Result<(Image<T>, Duration)> {
    match *dev {}
}

#[cfg(feature = "opencl")]
mod cl {
    use super::*;
    use crate::backend::opencl::{Arg, ClEvent, DeviceImage};
    use crate::ops::OpParams;

    /// Enqueues `spec` from `input` into `out` (the same shape).
    pub(super) fn launch<T: Sample>(
        progs: &Programs,
        dev: &Dev,
        spec: &VariantSpec,
        input: &DeviceImage<T>,
        out: &DeviceImage<T>,
        p: &MedianParams,
    ) -> Result<ClEvent> {
        p.validate()?;
        let (w, h, c) = (input.width(), input.height(), input.channels());
        if (out.width(), out.height(), out.channels()) != (w, h, c) {
            return Err(Error::arg("median output must have the input's shape"));
        }
        let shape = Shape::new(w, h, c, T::TYPE).with_params(OpParams::new(*p));
        crate::ops::tuning::check_variant(&SPEC, spec, &shape, dev.info().local_mem)?;
        let extra = format!(
            "-DR={} -DKEY_FLOAT={}",
            p.radius,
            (T::TYPE == crate::SampleType::F32) as u8
        );
        let k = progs.kernel(
            dev,
            SPEC.name,
            spec,
            &shape,
            &extra,
            &spec.kernel_name(SPEC.name),
        )?;
        dev.launch(
            &k,
            &[w, h],
            &spec.local,
            &[Arg::img(input), Arg::img(out), Arg::int(w)?, Arg::int(h)?],
        )
    }

    /// The stage's arm in a device-resident chain.
    pub(crate) fn run_stage(
        stage: &super::super::stage::MedianStage,
        cx: &crate::ops::work::Chain<'_>,
        forced: Option<&str>,
        input: crate::ops::work::ChainInput<'_>,
        record: &mut crate::ops::stage::StageRecord,
    ) -> Result<crate::ops::work::Work> {
        let mut w = input.into_work();
        // The median commutes with the pending scale only when it is
        // positive, and with saturation: apply both first.
        let mt = w.materialize(cx.d, cx.dev)?;
        let p = stage.params;
        let params = OpParams::new(p);
        let (logical, working) = (w.logical_shape(params.clone()), w.working_shape(params));
        let (img, mut rep) = crate::ops::dispatch_on_device(
            cx.d,
            &SPEC,
            forced,
            (&logical, &working),
            |dev, spec| {
                let out = DeviceImage::<f32>::new(dev, w.width(), w.height(), w.img.channels())?;
                let ev = launch(cx.d.programs(), dev, spec, &w.img, &out, &p)?;
                Ok((out, crate::ops::work::time(ev)?))
            },
        )?;
        rep.kernel_time = rep.kernel_time.map(|t| t + mt);
        record.reports.push(rep);
        Ok(w.with(img))
    }

    /// A kernel-only runner of `spec` on the case's input, uploaded once.
    pub(in crate::ops) fn kernel_runner<'a, T: Sample>(
        case: &'a super::super::tune::MedianCase<T>,
        progs: &'a Programs,
        dev: &'a Dev,
        spec: &'static VariantSpec,
    ) -> Result<crate::ops::tuning::Runner<'a>> {
        let input = case.on_device.image(dev, &case.img)?;
        let (w, h, c) = (input.width(), input.height(), input.channels());
        let out = DeviceImage::<T>::new(dev, w, h, c)?;
        let p = case.params;
        Ok(Box::new(move || {
            Ok(launch(progs, dev, spec, input, &out, &p)?
                .duration()?
                .unwrap_or_default())
        }))
    }
}

#[cfg(feature = "opencl")]
pub(super) use cl::kernel_runner;
#[cfg(feature = "opencl")]
pub(crate) use cl::run_stage;

/// No chain exists in a build without OpenCL.
#[cfg(not(feature = "opencl"))]
pub(crate) fn run_stage(
    _: &super::stage::MedianStage,
    cx: &crate::ops::work::Chain<'_>,
    _: Option<&str>,
    _: crate::ops::work::ChainInput<'_>,
    _: &mut crate::ops::stage::StageRecord,
) -> Result<crate::ops::work::Work> {
    cx.never()
}

/// No device exists in a build without OpenCL.
#[cfg(not(feature = "opencl"))]
pub(super) fn kernel_runner<'a, T: Sample>(
    case: &'a super::tune::MedianCase<T>,
    _: &'a Programs,
    dev: &'a Dev,
    _: &'static VariantSpec,
) -> Result<crate::ops::tuning::Runner<'a>> {
    // The upload slot exists in every build; only a device fills it.
    let _ = &case.on_device;
    match *dev {}
}
