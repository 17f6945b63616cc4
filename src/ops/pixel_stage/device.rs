//! The per-pixel kernels on OpenCL devices: one launch on device images,
//! the host-in, host-out run, the chain's arm and the kernel-only runner.
//! Without the `opencl` feature, [`Dev`] and [`Chain`] have no values, so
//! the stand-ins below cannot be called.

use std::time::Duration;

use super::{PixelCase, PixelKernel, PixelOp};
use crate::backend::Dev;
use crate::error::Result;
use crate::image::{Image, Sample};
use crate::ops::stage::StageRecord;
use crate::ops::tuning::Runner;
use crate::ops::work::{Chain, ChainInput, Work};
use crate::ops::{Programs, VariantSpec};

#[cfg(feature = "opencl")]
use crate::backend::opencl::{ClEvent, DeviceBuffer, DeviceImage};

/// Runs `p` with `spec` on `dev`. Returns the result and the kernel's
/// device time.
#[cfg(feature = "opencl")]
pub(super) fn run<T: Sample, P: PixelKernel>(
    progs: &Programs,
    dev: &Dev,
    spec: &VariantSpec,
    img: &Image<T>,
    p: &P,
) -> Result<(Image<T>, Duration)> {
    let input = DeviceImage::upload(dev, img)?;
    let out = DeviceImage::<T>::new(dev, img.width(), img.height(), img.channels())?;
    let table = upload_table::<T, P>(dev, spec, p)?;
    let kt = launch(progs, dev, spec, (&input, &out), p, T::TYPE, table.as_ref())?
        .duration()?
        .unwrap_or_default();
    Ok((out.download(dev)?, kt))
}

/// No device exists in a build without OpenCL.
#[cfg(not(feature = "opencl"))]
pub(super) fn run<T: Sample, P: PixelKernel>(
    _: &Programs,
    dev: &Dev,
    _: &VariantSpec,
    _: &Image<T>,
    _: &P,
) -> Result<(Image<T>, Duration)> {
    match *dev {}
}

/// `p`'s table for `spec` on `dev`, when the variant reads one.
#[cfg(feature = "opencl")]
fn upload_table<T: Sample, P: PixelKernel>(
    dev: &Dev,
    spec: &VariantSpec,
    p: &P,
) -> Result<Option<DeviceBuffer<T>>> {
    p.lookup_table::<T>(spec)?
        .map(|t| DeviceBuffer::from_slice(dev, &t))
        .transpose()
}

/// Runs `spec` from `input` into `output`, device images of the same shape
/// and type whose values are in `logical`'s units, with the table `spec`
/// reads (if any).
#[cfg(feature = "opencl")]
fn launch<T: Sample, P: PixelKernel>(
    progs: &Programs,
    dev: &Dev,
    spec: &VariantSpec,
    (input, output): (&DeviceImage<T>, &DeviceImage<T>),
    p: &P,
    logical: crate::image::SampleType,
    table: Option<&DeviceBuffer<T>>,
) -> Result<ClEvent> {
    use super::{Items, Scalar};
    use crate::backend::opencl::Arg;
    use crate::image::SampleType;
    use crate::ops::Shape;
    p.check(input.channels(), logical)?;
    let op = P::spec().name;
    let shape = Shape::new(input.width(), input.height(), input.channels(), T::TYPE);
    if (output.width(), output.height(), output.channels())
        != (shape.width, shape.height, shape.channels)
    {
        return Err(crate::error::Error::arg(format!(
            "{op}'s output must have the input's shape"
        )));
    }
    let l = p.launch(spec, logical)?;
    let mut extra = format!("-DOUT_FLOAT={}", (T::TYPE == SampleType::F32) as u8);
    if !l.options.is_empty() {
        extra = format!("{extra} {}", l.options);
    }
    let kernel = progs.kernel(dev, op, spec, &shape, &extra, &spec.kernel_name(op))?;
    let pixels = input.pixel_count();
    let (count, global) = match l.items {
        Items::Pixels(per_item) => (pixels, pixels.div_ceil(per_item)),
        Items::Samples => (pixels * input.channels(), pixels * input.channels()),
    };
    let mut args = vec![Arg::img(input), Arg::img(output), Arg::int(count)?];
    args.extend(table.map(Arg::buf));
    args.extend(l.args.iter().map(|a| match *a {
        Scalar::F32(v) => Arg::F32(v),
        Scalar::F32x4(v) => Arg::F32x4(v),
    }));
    dev.launch(&kernel, &[global], &[spec.local[0]], &args)
}

/// The stage's arm in a device-resident chain
/// ([`crate::ops::StageOp::run_device`]): `p` checked on the logical
/// image, the working image materialized, then [`launch_stage`].
#[cfg(feature = "opencl")]
pub(crate) fn run_stage<P: PixelKernel>(
    p: &P,
    cx: &Chain<'_>,
    forced: Option<&str>,
    input: ChainInput<'_>,
    record: &mut StageRecord,
) -> Result<Work> {
    let mut w = input.into_work();
    p.check(w.channels, w.ty)?;
    let mt = w.materialize(cx.d, cx.dev)?;
    launch_stage(p, cx, forced, w, mt, record)
}

/// No chain exists in a build without OpenCL.
#[cfg(not(feature = "opencl"))]
pub(crate) fn run_stage<P: PixelKernel>(
    _: &P,
    cx: &Chain<'_>,
    _: Option<&str>,
    _: ChainInput<'_>,
    _: &mut StageRecord,
) -> Result<Work> {
    cx.never()
}

/// The kernel on a chain's materialized working image `w`, in the logical
/// type's units (`mt`: the time materializing took, which the report's
/// kernel time includes); the result is a new working image.
#[cfg(feature = "opencl")]
pub(crate) fn launch_stage<P: PixelKernel>(
    p: &P,
    cx: &Chain<'_>,
    forced: Option<&str>,
    w: Work,
    mt: Duration,
    record: &mut StageRecord,
) -> Result<Work> {
    use crate::ops::work::time;
    use crate::ops::OpParams;
    let (logical, working) = (
        w.logical_shape(OpParams::NONE),
        w.working_shape(OpParams::NONE),
    );
    let (img, mut rep) = crate::ops::dispatch_on_device(
        cx.d,
        P::spec(),
        forced,
        (&logical, &working),
        |dev, spec| {
            let out = DeviceImage::<f32>::new(dev, w.width(), w.height(), w.img.channels())?;
            let table = upload_table::<f32, P>(dev, spec, p)?;
            let ev = launch(
                cx.d.programs(),
                dev,
                spec,
                (&w.img, &out),
                p,
                w.ty,
                table.as_ref(),
            )?;
            Ok((out, time(ev)?))
        },
    )?;
    rep.kernel_time = rep.kernel_time.map(|t| t + mt);
    record.reports.push(rep);
    Ok(Work {
        img,
        channels: w.channels,
        ty: w.ty,
        scale: 1.0,
        unsaturated: p.unsaturated(w.ty),
    })
}

/// A kernel-only runner of `spec` on the case's input, uploaded once with
/// the table `spec` reads ([`crate::ops::tuning::Case::kernel_runner`]).
#[cfg(feature = "opencl")]
pub(super) fn kernel_runner<'a, T: Sample, P: PixelOp>(
    case: &'a PixelCase<T, P>,
    progs: &'a Programs,
    dev: &'a Dev,
    spec: &'static VariantSpec,
) -> Result<Runner<'a>> {
    use crate::ops::tuning::Case;
    crate::ops::tuning::check_variant(P::spec(), spec, &case.shape(), dev.info().local_mem)?;
    let input = case.on_device.image(dev, &case.img)?;
    let out = DeviceImage::<T>::new(dev, input.width(), input.height(), input.channels())?;
    let table = upload_table::<T, P>(dev, spec, &case.p)?;
    Ok(Box::new(move || {
        Ok(launch(
            progs,
            dev,
            spec,
            (input, &out),
            &case.p,
            T::TYPE,
            table.as_ref(),
        )?
        .duration()?
        .unwrap_or_default())
    }))
}

/// No device exists in a build without OpenCL.
#[cfg(not(feature = "opencl"))]
pub(super) fn kernel_runner<'a, T: Sample, P: PixelOp>(
    case: &'a PixelCase<T, P>,
    _: &'a Programs,
    dev: &'a Dev,
    _: &'static VariantSpec,
) -> Result<Runner<'a>> {
    // The upload slot exists in every build; only a device fills it.
    let _ = &case.on_device;
    match *dev {}
}
