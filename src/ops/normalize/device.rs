//! `normalize` on OpenCL devices. Without the `opencl` feature, [`Dev`] has no
//! values, so `run` cannot be called.

use super::*;
use crate::backend::Dev;
use crate::ops::{Programs, VariantSpec};
use std::time::Duration;

#[cfg(feature = "opencl")]
pub(crate) use cl::launch;

/// Normalizes `img` into a `U` image with `spec` on `dev`. Returns the result and the kernels' device time.
#[cfg(feature = "opencl")]
pub(super) fn run<T: Sample, U: Sample>(
    progs: &Programs,
    dev: &Dev,
    spec: &VariantSpec,
    img: &Image<T>,
    k: &Coefficients,
) -> Result<(Image<U>, Duration)> {
    use crate::backend::opencl::DeviceImage;
    let input = DeviceImage::upload(dev, img)?;
    let out = DeviceImage::<U>::new(dev, img.width(), img.height(), img.channels())?;
    let kt = launch(progs, dev, spec, &input, &out, k)?
        .duration()?
        .unwrap_or_default();
    Ok((out.download(dev)?, kt))
}

/// No device exists in a build without OpenCL.
#[cfg(not(feature = "opencl"))]
pub(super) fn run<T: Sample, U: Sample>(
    _: &Programs,
    dev: &Dev,
    _: &VariantSpec,
    _: &Image<T>,
    _: &Coefficients,
) -> Result<(Image<U>, Duration)> {
    match *dev {}
}

#[cfg(feature = "opencl")]
mod cl {
    use super::*;

    /// Runs `spec` on device images of the same shape.
    pub(crate) fn launch<T: Sample, U: Sample>(
        progs: &Programs,
        dev: &Dev,
        spec: &crate::ops::VariantSpec,
        input: &crate::backend::opencl::DeviceImage<T>,
        out: &crate::backend::opencl::DeviceImage<U>,
        k: &Coefficients,
    ) -> Result<crate::backend::opencl::ClEvent> {
        use crate::backend::opencl::Arg;
        let shape = Shape::new(input.width(), input.height(), input.channels(), T::TYPE);
        if (out.width(), out.height(), out.channels())
            != (shape.width, shape.height, shape.channels)
        {
            return Err(Error::arg("normalize output must have the input's shape"));
        }
        let extra = format!(
            "-DTOUT={} -DOUT_FLOAT={}",
            U::TYPE.cl_name(),
            (U::TYPE == SampleType::F32) as u8
        );
        let k2 = progs.kernel(
            dev,
            SPEC.name,
            spec,
            &shape,
            &extra,
            &spec.kernel_name(SPEC.name),
        )?;
        let n = input.pixel_count();
        let args = [
            Arg::img(input),
            Arg::img(out),
            Arg::int(n)?,
            Arg::F32x4(k.sub),
            Arg::F32x4(k.factor),
        ];
        // x4's work-items step by the global size: never split.
        if spec.name == "x4" {
            dev.launch_whole(&k2, &[n.div_ceil(4)], &[spec.local[0]], &args)
        } else {
            dev.launch(&k2, &[n], &[spec.local[0]], &args)
        }
    }
}

/// The stage's arm in a device-resident chain ([`crate::ops::StageOp::run_device`]).
#[cfg(feature = "opencl")]
pub(crate) fn run_stage(
    stage: &super::stage::NormalizeStage,
    cx: &crate::ops::work::Chain<'_>,
    forced: Option<&str>,
    input: crate::ops::work::ChainInput<'_>,
    record: &mut crate::ops::stage::StageRecord,
) -> Result<crate::ops::work::Work> {
    use super::Coefficients;
    let mut w = input.into_work();
    let out_ty = stage.out.unwrap_or(w.ty);
    let k = if stage.params.sub.is_none() && stage.params.factor.is_none() {
        let (m, rep) = crate::ops::minmax::device::minmax_of(cx, None, &mut w)?;
        record.reports.push(rep);
        Coefficients::stretch(&m, w.ty, out_ty)?
    } else {
        Coefficients::explicit(&stage.params)?
    };
    apply_stage(cx, forced, w, &k, out_ty, record)
}

/// The percentile stage's arm in a device-resident chain: the histogram
/// counted on the device (after a device `minmax` for f32), the
/// percentiles found on the host from the counts, then the kernel. The
/// chain's integer types are counted per level on its unrounded working
/// values (a level is `floor(v)`), where the host path counts rounded ones.
#[cfg(feature = "opencl")]
pub(crate) fn run_percentile_stage(
    stage: &super::stage::PercentileStage,
    cx: &crate::ops::work::Chain<'_>,
    forced: Option<&str>,
    input: crate::ops::work::ChainInput<'_>,
    record: &mut crate::ops::stage::StageRecord,
) -> Result<crate::ops::work::Work> {
    use super::percentile;
    use crate::ops::{histogram, OpParams};
    // A stage built from the public fields, not parsed.
    stage.range.validate()?;
    let mut w = input.into_work();
    let out_ty = stage.out.unwrap_or(w.ty);
    let colour = percentile::colour_channels(w.channels);
    let mut range = (0.0, 0.0);
    if w.ty == SampleType::F32 {
        let (m, rep) = crate::ops::minmax::device::minmax_of(cx, None, &mut w)?;
        record.reports.push(rep);
        range = (m.min_of(colour), m.max_of(colour));
    }
    let (lo, hi) = match percentile::histogram_params(w.ty, range)? {
        Some(hp) => {
            // Integer levels are counted as the host path holds them.
            let mt = w.host_values(cx.d, cx.dev)?;
            let b = hp.binning()?;
            let (logical, working) = (
                w.logical_shape(OpParams::new(hp)),
                w.working_shape(OpParams::new(hp)),
            );
            let img = &w.img;
            let (h, mut rep) = crate::ops::dispatch_on_device(
                cx.d,
                &histogram::SPEC,
                None,
                (&logical, &working),
                |dev, spec| histogram::device::launch(cx.d.programs(), dev, spec, img, &b),
            )?;
            rep.kernel_time = rep.kernel_time.map(|t| t + mt);
            record.reports.push(rep);
            percentile::from_counts(&h, &hp, colour, w.ty, &stage.range)?
        }
        None => range,
    };
    let k = Coefficients::stretch(&percentile::span(w.channels, lo, hi), w.ty, out_ty)?;
    apply_stage(cx, forced, w, &k, out_ty, record)
}

/// The normalize kernel on a chain's image with coefficients `k`, into `out_ty`.
#[cfg(feature = "opencl")]
fn apply_stage(
    cx: &crate::ops::work::Chain<'_>,
    forced: Option<&str>,
    mut w: crate::ops::work::Work,
    k: &Coefficients,
    out_ty: SampleType,
    record: &mut crate::ops::stage::StageRecord,
) -> Result<crate::ops::work::Work> {
    use crate::backend::opencl::DeviceImage;
    use crate::ops::work::{time, Work};
    use crate::ops::OpParams;
    let mt = w.materialize(cx.d, cx.dev)?;
    let (logical, working) = (
        w.logical_shape(OpParams::NONE),
        w.working_shape(OpParams::NONE),
    );
    let (img, mut rep) = crate::ops::dispatch_on_device(
        cx.d,
        &super::SPEC,
        forced,
        (&logical, &working),
        |dev, spec| {
            let out = DeviceImage::<f32>::new(dev, w.width(), w.height(), w.img.channels())?;
            let ev = super::device::launch(cx.d.programs(), dev, spec, &w.img, &out, k)?;
            Ok((out, time(ev)?))
        },
    )?;
    rep.kernel_time = rep.kernel_time.map(|t| t + mt);
    record.reports.push(rep);
    Ok(Work {
        img,
        channels: w.channels,
        ty: out_ty,
        scale: 1.0,
        unsaturated: out_ty != crate::image::SampleType::F32,
    })
}

/// No chain exists in a build without OpenCL.
#[cfg(not(feature = "opencl"))]
pub(crate) fn run_percentile_stage(
    _: &super::stage::PercentileStage,
    cx: &crate::ops::work::Chain<'_>,
    _: Option<&str>,
    _: crate::ops::work::ChainInput<'_>,
    _: &mut crate::ops::stage::StageRecord,
) -> Result<crate::ops::work::Work> {
    cx.never()
}

/// No chain exists in a build without OpenCL.
#[cfg(not(feature = "opencl"))]
pub(crate) fn run_stage(
    _: &super::stage::NormalizeStage,
    cx: &crate::ops::work::Chain<'_>,
    _: Option<&str>,
    _: crate::ops::work::ChainInput<'_>,
    _: &mut crate::ops::stage::StageRecord,
) -> Result<crate::ops::work::Work> {
    cx.never()
}
/// The stage's arm in a device-resident chain ([`crate::ops::StageOp::run_device`]).
#[cfg(feature = "opencl")]
pub(crate) fn run_convert_stage(
    stage: &super::stage::ConvertStage,
    cx: &crate::ops::work::Chain<'_>,
    _: Option<&str>,
    input: crate::ops::work::ChainInput<'_>,
    record: &mut crate::ops::stage::StageRecord,
) -> Result<crate::ops::work::Work> {
    use std::time::{Duration, Instant};
    let mut w = input.into_work();
    let out = stage.out;
    let finer = out == crate::image::SampleType::F32 || out.full_scale() > w.ty.full_scale();
    if w.ty != crate::image::SampleType::F32 && finer {
        // From an integer type to finer steps: the host path held
        // whole steps of the integer type; so must this.
        let start = Instant::now();
        let kt = w.quantize(cx.d, cx.dev)?;
        record.reports.push(cx.own_report("quantize", start, kt));
    } else if w.unsaturated && out == crate::image::SampleType::F32 {
        // f32 keeps any value: saturate to the old type first.
        let start = Instant::now();
        let kt = w.materialize(cx.d, cx.dev)?;
        record.reports.push(cx.own_report("saturate", start, kt));
    }
    record
        .reports
        .push(cx.own_report("folded", Instant::now(), Duration::ZERO));
    w.scale *= (out.full_scale() as f64 / w.ty.full_scale() as f64) as f32;
    // Integer to integer keeps values inside the range.
    w.unsaturated |= w.ty == crate::image::SampleType::F32 && out != crate::image::SampleType::F32;
    w.ty = out;
    Ok(w)
}

/// No chain exists in a build without OpenCL.
#[cfg(not(feature = "opencl"))]
pub(crate) fn run_convert_stage(
    _: &super::stage::ConvertStage,
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
    case: &'a super::tune::NormalizeCase<T>,
    progs: &'a crate::ops::Programs,
    dev: &'a crate::backend::Dev,
    spec: &'static crate::ops::VariantSpec,
) -> crate::error::Result<crate::ops::tuning::Runner<'a>> {
    use crate::ops::tuning::Case;
        use crate::backend::opencl::DeviceImage;
        crate::ops::tuning::check_variant(&super::SPEC, spec, &case.shape(), dev.info().local_mem)?;
        let k = super::tune::bench_coefficients()?;
        let input = case.on_device.image(dev, &case.img)?;
        let (w, h, c) = (input.width(), input.height(), input.channels());
        let out = DeviceImage::<T>::new(dev, w, h, c)?;
        Ok(Box::new(move || {
            Ok(
                super::device::launch::<T, T>(progs, dev, spec, input, &out, &k)?
                    .duration()?
                    .unwrap_or_default(),
            )
        }))
    }

/// No device exists in a build without OpenCL.
#[cfg(not(feature = "opencl"))]
pub(super) fn kernel_runner<'a, T: crate::image::Sample>(
    case: &'a super::tune::NormalizeCase<T>,
    _: &'a crate::ops::Programs,
    dev: &'a crate::backend::Dev,
    _: &'static crate::ops::VariantSpec,
) -> crate::error::Result<crate::ops::tuning::Runner<'a>> {
    // The upload slot exists in every build; only a device fills it.
    let _ = &case.on_device;
    match *dev {}
}
