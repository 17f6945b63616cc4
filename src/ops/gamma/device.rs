//! `gamma` on OpenCL devices. Without the `opencl` feature, [`Dev`] has no
//! values, so `run` cannot be called.

use super::*;
use crate::backend::Dev;
use crate::ops::{Programs, VariantSpec};
use std::time::Duration;

/// Encodes with `spec` on `dev`. Returns the result and the kernel's device
/// time.
#[cfg(feature = "opencl")]
pub(super) fn run<T: Sample>(
    progs: &Programs,
    dev: &Dev,
    spec: &VariantSpec,
    img: &Image<T>,
    p: &GammaParams,
) -> Result<(Image<T>, Duration)> {
    use crate::backend::opencl::DeviceImage;
    let input = DeviceImage::upload(dev, img)?;
    let out = DeviceImage::<T>::new(dev, img.width(), img.height(), img.channels())?;
    let table = Table::new(dev, spec, p)?;
    let full = T::TYPE.full_scale();
    let kt = launch(progs, dev, spec, &input, &out, p, full, &table)?
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
    _: &GammaParams,
) -> Result<(Image<T>, Duration)> {
    match *dev {}
}

/// The `lut` variant's table on the device (`None` for `pixel`).
#[cfg(feature = "opencl")]
pub(crate) struct Table<T: Sample>(Option<crate::backend::opencl::DeviceBuffer<T>>);

#[cfg(feature = "opencl")]
impl<T: Sample> Table<T> {
    /// Uploads `p`'s table for `spec` when it reads one.
    pub(crate) fn new(dev: &Dev, spec: &VariantSpec, p: &GammaParams) -> Result<Self> {
        if spec.name != "lut" {
            return Ok(Table(None));
        }
        let t = p
            .table::<T>()
            .ok_or_else(|| Error::arg("gamma's lut variant reads u8 or u16 samples"))?;
        Ok(Table(Some(crate::backend::opencl::DeviceBuffer::from_slice(
            dev, &t,
        )?)))
    }
}

/// Runs `spec` on device images of the same shape and type, whose values
/// are in units of `full` (the logical type's full scale).
#[cfg(feature = "opencl")]
#[allow(clippy::too_many_arguments)]
pub(crate) fn launch<T: Sample>(
    progs: &Programs,
    dev: &Dev,
    spec: &VariantSpec,
    input: &crate::backend::opencl::DeviceImage<T>,
    out: &crate::backend::opencl::DeviceImage<T>,
    p: &GammaParams,
    full: f32,
    table: &Table<T>,
) -> Result<crate::backend::opencl::ClEvent> {
    use crate::backend::opencl::Arg;
    p.validate()?;
    let shape = Shape::new(input.width(), input.height(), input.channels(), T::TYPE);
    if (out.width(), out.height(), out.channels()) != (shape.width, shape.height, shape.channels) {
        return Err(Error::arg("gamma's output must have the input's shape"));
    }
    let (curve, inv) = p.kernel_args();
    let extra = format!(
        "-DOUT_FLOAT={} -DCURVE={curve}",
        (T::TYPE == SampleType::F32) as u8
    );
    let kernel = progs.kernel(dev, SPEC.name, spec, &shape, &extra, &spec.kernel_name(SPEC.name))?;
    let pixels = input.pixel_count();
    match &table.0 {
        // One sample per work-item.
        Some(t) => {
            let n = pixels * input.channels();
            dev.launch(
                &kernel,
                &[n],
                &[spec.local[0]],
                &[Arg::img(input), Arg::img(out), Arg::int(n)?, Arg::buf(t)],
            )
        }
        None => dev.launch(
            &kernel,
            &[pixels],
            &[spec.local[0]],
            &[
                Arg::img(input),
                Arg::img(out),
                Arg::int(pixels)?,
                Arg::F32(full),
                Arg::F32(inv),
            ],
        ),
    }
}

/// The stage's arm in a device-resident chain ([`crate::ops::StageOp::run_device`]):
/// the formula on the working floats (saturated first where the host path
/// would have), in the logical type's units; the table variant declines
/// the f32 working images.
#[cfg(feature = "opencl")]
pub(crate) fn run_stage(
    p: &GammaParams,
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
    let mt = w.materialize(cx.d, cx.dev)?;
    let (logical, working) = (
        w.logical_shape(OpParams::NONE),
        w.working_shape(OpParams::NONE),
    );
    let full = w.ty.full_scale();
    let (img, mut rep) =
        crate::ops::dispatch_on_device(cx.d, &SPEC, forced, (&logical, &working), |dev, spec| {
            let out = DeviceImage::<f32>::new(dev, w.width(), w.height(), w.img.channels())?;
            let table = Table::new(dev, spec, p)?;
            let ev = launch(cx.d.programs(), dev, spec, &w.img, &out, p, full, &table)?;
            Ok((out, time(ev)?))
        })?;
    rep.kernel_time = rep.kernel_time.map(|t| t + mt);
    record.reports.push(rep);
    Ok(Work {
        img,
        channels: w.channels,
        ty: w.ty,
        scale: 1.0,
        // The curves map 0..full into 0..full.
        unsaturated: false,
    })
}

/// No chain exists in a build without OpenCL.
#[cfg(not(feature = "opencl"))]
pub(crate) fn run_stage(
    _: &GammaParams,
    cx: &crate::ops::work::Chain<'_>,
    _: Option<&str>,
    _: crate::ops::work::ChainInput<'_>,
    _: &mut crate::ops::stage::StageRecord,
) -> Result<crate::ops::work::Work> {
    cx.never()
}

/// A kernel-only runner of `spec` on the case's input, uploaded once
/// (with the table, for `lut`) ([`crate::ops::tuning::Case::kernel_runner`]).
#[cfg(feature = "opencl")]
pub(super) fn kernel_runner<'a, T: Sample>(
    case: &'a super::tune::GammaCase<T>,
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
    let table = Table::new(dev, spec, &p)?;
    Ok(Box::new(move || {
        Ok(
            launch(progs, dev, spec, input, &out, &p, T::TYPE.full_scale(), &table)?
                .duration()?
                .unwrap_or_default(),
        )
    }))
}

/// No device exists in a build without OpenCL.
#[cfg(not(feature = "opencl"))]
pub(super) fn kernel_runner<'a, T: Sample>(
    case: &'a super::tune::GammaCase<T>,
    _: &'a Programs,
    dev: &'a Dev,
    _: &'static VariantSpec,
) -> Result<crate::ops::tuning::Runner<'a>> {
    // The upload slot exists in every build; only a device fills it.
    let _ = &case.on_device;
    match *dev {}
}
