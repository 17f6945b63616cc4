//! `deband` on OpenCL devices. Without the `opencl` feature, [`Dev`] has no
//! values, so `run` cannot be called.

use super::*;
use crate::ops::{Programs, VariantSpec};
use std::time::Duration;

/// Debands `img` with `spec` on `dev`. Returns the result and the kernels' device time.
#[cfg(feature = "opencl")]
pub(super) fn run<T: Sample>(
    progs: &Programs,
    dev: &Dev,
    spec: &'static VariantSpec,
    img: &Image<T>,
    p: &DebandParams,
) -> Result<(Image<T>, Duration)> {
    use crate::backend::opencl::DeviceImage;
    let input = DeviceImage::upload(dev, img)?;
    let out = DeviceImage::<T>::new(dev, img.width(), img.height(), img.channels())?;
    let kt = cl::launch(progs, dev, spec, &input, &out, p)?;
    Ok((out.download(dev)?, kt))
}

/// No device exists in a build without OpenCL.
#[cfg(not(feature = "opencl"))]
pub(super) fn run<T: Sample>(
    _: &Programs,
    dev: &Dev,
    _: &'static VariantSpec,
    _: &Image<T>,
    _: &DebandParams,
) -> Result<(Image<T>, Duration)> {
    match *dev {}
}

#[cfg(feature = "opencl")]
mod cl {
    use super::*;
    use crate::backend::opencl::{Arg, DeviceBuffer, DeviceImage, Kernel};
    use crate::ops::work::time;

    /// The integer levels and the kernel of `pass` (`""` for the filter
    /// itself, `"_to"`/`"_from"` for the YCbCr conversions) for `shape`.
    fn kernel(
        progs: &Programs,
        dev: &Dev,
        spec: &VariantSpec,
        shape: &Shape,
        lv: &Levels,
        pass: &str,
    ) -> Result<Kernel> {
        // The same options for every variant, so that they share one
        // program per type, channel count and sample count.
        let k = math::YccCoefficients::new(lv.full);
        let extra = format!("-DSAMPLES={} {}", lv.samples, k.cl_options());
        let name = format!("{}{pass}", spec.kernel_name(SPEC.name));
        progs.kernel(dev, SPEC.name, spec, shape, &extra, &name)
    }

    /// The filter's arguments after its two buffers.
    fn filter_args<'a>(w: usize, h: usize, lv: &Levels) -> Result<[Arg<'a>; 7]> {
        Ok([
            Arg::int(w)?,
            Arg::int(h)?,
            Arg::I32(lv.range),
            Arg::I32(lv.threshold),
            Arg::I32(lv.grain),
            // The kernel declares `uint key`: the same 32 bits.
            Arg::I32(lv.key as i32),
            Arg::I32(lv.full),
        ])
    }

    /// The checked shape and integer levels of a request on `input`.
    fn request<T: Sample>(
        dev: &Dev,
        spec: &VariantSpec,
        input: &DeviceImage<T>,
        p: &DebandParams,
    ) -> Result<(Shape, Levels)> {
        let lv = Levels::new(p, T::TYPE, input.channels())?;
        let shape = Shape::new(input.width(), input.height(), input.channels(), T::TYPE)
            .with_params(crate::ops::OpParams::new(*p));
        crate::ops::tuning::check_variant(&SPEC, spec, &shape, dev.info().local_mem)?;
        Ok((shape, lv))
    }

    /// Runs `spec` from `input` into `out` (same shape); returns the device
    /// time of every kernel it ran.
    pub(super) fn launch<T: Sample>(
        progs: &Programs,
        dev: &Dev,
        spec: &'static VariantSpec,
        input: &DeviceImage<T>,
        out: &DeviceImage<T>,
        p: &DebandParams,
    ) -> Result<Duration> {
        let (shape, lv) = request(dev, spec, input, p)?;
        if (out.width(), out.height(), out.channels()) != (shape.width, shape.height, shape.channels)
        {
            return Err(Error::arg("deband output must have the input's shape"));
        }
        if !spec.name.starts_with("ycc_") {
            let k = kernel(progs, dev, spec, &shape, &lv, "")?;
            let mut args = vec![Arg::img(input), Arg::img(out)];
            args.extend(filter_args(shape.width, shape.height, &lv)?);
            let ev = dev.launch(&k, &[shape.width, shape.height], &spec.local, &args)?;
            return time(ev);
        }
        let ycc = Ycc::new(dev, spec, &shape)?;
        let mut kt = ycc.convert_in(progs, dev, spec, &shape, &lv, input)?;
        kt += time(ycc.filter(progs, dev, spec, &shape, &lv)?)?;
        kt += ycc.convert_out(progs, dev, spec, &shape, &lv, input, out)?;
        Ok(kt)
    }

    /// The two YCbCr16 images of a `ycc_*` variant (shorts, carried as u16).
    struct Ycc {
        src: DeviceBuffer<u16>,
        dst: DeviceBuffer<u16>,
    }

    impl Ycc {
        /// Buffers for `shape` in `spec`'s layout (4 shorts a pixel for
        /// `short4`, 3 otherwise).
        fn new(dev: &Dev, spec: &VariantSpec, shape: &Shape) -> Result<Self> {
            let per = if spec.name == "ycc_short4" { 4 } else { 3 };
            let len = shape.width * shape.height * per;
            Ok(Ycc {
                src: DeviceBuffer::new(dev, len)?,
                dst: DeviceBuffer::new(dev, len)?,
            })
        }

        /// RGB `input` into `src`.
        fn convert_in<T: Sample>(
            &self,
            progs: &Programs,
            dev: &Dev,
            spec: &VariantSpec,
            shape: &Shape,
            lv: &Levels,
            input: &DeviceImage<T>,
        ) -> Result<Duration> {
            let k = kernel(progs, dev, spec, shape, lv, "_to")?;
            let n = input.pixel_count();
            let args = [Arg::img(input), Arg::buf(&self.src), Arg::int(n)?];
            time(dev.launch(&k, &[n], &[256], &args)?)
        }

        /// The filter, `src` into `dst`.
        fn filter(
            &self,
            progs: &Programs,
            dev: &Dev,
            spec: &VariantSpec,
            shape: &Shape,
            lv: &Levels,
        ) -> Result<crate::backend::opencl::ClEvent> {
            let k = kernel(progs, dev, spec, shape, lv, "")?;
            let mut args = vec![Arg::buf(&self.src), Arg::buf(&self.dst)];
            args.extend(filter_args(shape.width, shape.height, lv)?);
            dev.launch(&k, &[shape.width, shape.height], &spec.local, &args)
        }

        /// `dst` back to RGB into `out`, alpha from `input`.
        #[allow(clippy::too_many_arguments)]
        fn convert_out<T: Sample>(
            &self,
            progs: &Programs,
            dev: &Dev,
            spec: &VariantSpec,
            shape: &Shape,
            lv: &Levels,
            input: &DeviceImage<T>,
            out: &DeviceImage<T>,
        ) -> Result<Duration> {
            let k = kernel(progs, dev, spec, shape, lv, "_from")?;
            let n = input.pixel_count();
            let args = [
                Arg::buf(&self.dst),
                Arg::img(input),
                Arg::img(out),
                Arg::int(n)?,
                Arg::I32(lv.full),
            ];
            time(dev.launch(&k, &[n], &[256], &args)?)
        }
    }

    /// A kernel-only runner: the filter kernel alone. `space=ycc` converts
    /// the input once, outside the timing, because the seed's filter (an
    /// AviUtl plugin) received its frames as YCbCr already.
    pub(super) fn filter_runner<'a, T: Sample>(
        progs: &'a Programs,
        dev: &'a Dev,
        spec: &'static VariantSpec,
        input: &'a DeviceImage<T>,
        p: &DebandParams,
    ) -> Result<crate::ops::tuning::Runner<'a>> {
        let (shape, lv) = request(dev, spec, input, p)?;
        if spec.name.starts_with("ycc_") {
            let ycc = Ycc::new(dev, spec, &shape)?;
            ycc.convert_in(progs, dev, spec, &shape, &lv, input)?;
            return Ok(Box::new(move || {
                time(ycc.filter(progs, dev, spec, &shape, &lv)?)
            }));
        }
        let out = DeviceImage::<T>::new(dev, shape.width, shape.height, shape.channels)?;
        let k = kernel(progs, dev, spec, &shape, &lv, "")?;
        Ok(Box::new(move || {
            let mut args = vec![Arg::img(input), Arg::img(&out)];
            args.extend(filter_args(shape.width, shape.height, &lv)?);
            time(dev.launch(&k, &[shape.width, shape.height], &spec.local, &args)?)
        }))
    }
}

/// The stage's arm in a device-resident chain ([`crate::ops::StageOp::run_device`]):
/// the working image is stored as the logical integer type (rounded as
/// the host path rounds after every stage), debanded by the variant, and
/// loaded back, so a chain's result is the host path's, byte for byte.
#[cfg(feature = "opencl")]
pub(crate) fn run_stage(
    p: &DebandParams,
    cx: &crate::ops::work::Chain<'_>,
    forced: Option<&str>,
    input: crate::ops::work::ChainInput<'_>,
    record: &mut crate::ops::stage::StageRecord,
) -> Result<crate::ops::work::Work> {
    let w = input.into_work();
    match w.ty {
        SampleType::U8 => chain_typed::<u8>(p, cx, forced, w, record),
        SampleType::U16 => chain_typed::<u16>(p, cx, forced, w, record),
        SampleType::F32 => Err(f32_refused()),
    }
}

#[cfg(feature = "opencl")]
fn chain_typed<T: Sample>(
    p: &DebandParams,
    cx: &crate::ops::work::Chain<'_>,
    forced: Option<&str>,
    w: crate::ops::work::Work,
    record: &mut crate::ops::stage::StageRecord,
) -> Result<crate::ops::work::Work> {
    use crate::backend::opencl::DeviceImage;
    use crate::ops::work::{load, store_into};
    use crate::ops::OpParams;
    Levels::new(p, T::TYPE, w.channels)?;
    let (width, height, ch) = (w.width(), w.height(), w.channels);
    let typed = DeviceImage::<T>::new(cx.dev, width, height, ch)?;
    let st = store_into(cx.d.programs(), cx.dev, &w, &typed)?;
    let params = OpParams::new(*p);
    let logical = w.logical_shape(params.clone());
    let working = Shape::new(width, height, ch, T::TYPE).with_params(params);
    let (out, mut rep) =
        crate::ops::dispatch_on_device(cx.d, &SPEC, forced, (&logical, &working), |dev, spec| {
            let out = DeviceImage::<T>::new(dev, width, height, ch)?;
            let kt = cl::launch(cx.d.programs(), dev, spec, &typed, &out, p)?;
            Ok((out, kt))
        })?;
    let (next, lt) = load(cx.d, cx.dev, &out)?;
    rep.kernel_time = rep.kernel_time.map(|t| t + st + lt);
    record.reports.push(rep);
    Ok(next)
}

/// No chain exists in a build without OpenCL.
#[cfg(not(feature = "opencl"))]
pub(crate) fn run_stage(
    _: &DebandParams,
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
    case: &'a super::tune::DebandCase<T>,
    progs: &'a Programs,
    dev: &'a Dev,
    spec: &'static VariantSpec,
) -> Result<crate::ops::tuning::Runner<'a>> {
    let input = case.on_device.image(dev, &case.img)?;
    cl::filter_runner(progs, dev, spec, input, &case.p)
}

/// No device exists in a build without OpenCL.
#[cfg(not(feature = "opencl"))]
pub(super) fn kernel_runner<'a, T: Sample>(
    case: &'a super::tune::DebandCase<T>,
    _: &'a Programs,
    dev: &'a Dev,
    _: &'static VariantSpec,
) -> Result<crate::ops::tuning::Runner<'a>> {
    // The upload slot exists in every build; only a device fills it.
    let _ = &case.on_device;
    match *dev {}
}
