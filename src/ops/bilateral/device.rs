//! `bilateral` on OpenCL devices: host images ([`run`]), a pipeline's
//! working image ([`run_stage`]) and kernel-only timing
//! ([`kernel_runner`]). Without the `opencl` feature, [`Dev`] has no values,
//! so none of them can be called.

use super::*;
use crate::backend::Dev;
use crate::ops::{Programs, VariantSpec};
use std::time::Duration;

/// Filters `img` with `spec` on `dev`. Returns the result and the kernel's device time.
#[cfg(feature = "opencl")]
pub(super) fn run<T: Sample>(
    progs: &Programs,
    dev: &Dev,
    spec: &VariantSpec,
    img: &Image<T>,
    p: &BilateralParams,
) -> Result<(Image<T>, Duration)> {
    use crate::backend::opencl::DeviceImage;
    let input = DeviceImage::upload(dev, img)?;
    let out = DeviceImage::<T>::new(dev, img.width(), img.height(), img.channels())?;
    // Integer samples are bounded: the fast variants may relax the maths.
    let bounded = T::TYPE != crate::image::SampleType::F32;
    let kt = cl::launch(progs, dev, spec, &input, &out, p, T::TYPE.full_scale(), bounded)?
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
    _: &BilateralParams,
) -> Result<(Image<T>, Duration)> {
    match *dev {}
}

#[cfg(feature = "opencl")]
mod cl {
    use super::variants::{is_fast, LOCAL_RMAX, TILE};
    use super::*;
    use crate::backend::opencl::{Arg, ClEvent, DeviceImage};
    use crate::image::SampleType;

    /// Runs `spec` from `input` into `out` (same shape): samples in units
    /// of a type of full scale `full` (`sigma_r`'s unit). `bounded`: the
    /// samples are known to lie within `0..=full`, so a fast variant may
    /// build with `-cl-fast-relaxed-math` (which assumes no infinities; an
    /// f32 image may hold values whose squared differences overflow).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn launch<T: Sample>(
        progs: &Programs,
        dev: &Dev,
        spec: &VariantSpec,
        input: &DeviceImage<T>,
        out: &DeviceImage<T>,
        p: &BilateralParams,
        full: f32,
        bounded: bool,
    ) -> Result<ClEvent> {
        let (w, h, c) = (input.width(), input.height(), input.channels());
        if (out.width(), out.height(), out.channels()) != (w, h, c) {
            return Err(Error::arg("bilateral output must have the input's shape"));
        }
        let shape = Shape::new(w, h, c, T::TYPE).with_params(OpParams::new(*p));
        crate::ops::tuning::check_variant(&SPEC, spec, &shape, dev.info().local_mem)?;
        let fast = is_fast(spec);
        let extra = format!(
            "-DT_FLOAT={} -DTX={TILE} -DTY={TILE} -DLOCAL_RMAX={LOCAL_RMAX}{}{}",
            (T::TYPE == SampleType::F32) as u8,
            if p.border == Border::Mirror {
                " -DMIRROR=1"
            } else {
                ""
            },
            if fast && bounded {
                " -cl-fast-relaxed-math"
            } else {
                ""
            },
        );
        let k = progs.kernel(dev, SPEC.name, spec, &shape, &extra, &spec.kernel_name(SPEC.name))?;
        let mut args = vec![
            Arg::img(input),
            Arg::img(out),
            Arg::int(w)?,
            Arg::int(h)?,
            Arg::int(p.radius())?,
            // `rk` (cl/bilateral/bilateral.cl): f32 differences are scaled.
            Arg::F32(match T::TYPE {
                SampleType::F32 => p.range_scale(full),
                _ => p.range_coefficient(full),
            }),
        ];
        // The taps live until the launch is enqueued; OpenCL keeps a
        // released buffer until the commands that use it have finished.
        let taps;
        if fast {
            let table: Vec<[f32; 4]> = p
                .taps()
                .iter()
                .map(|t| [t.dx as f32, t.dy as f32, (t.log_weight as f64).exp() as f32, 0.0])
                .collect();
            taps = dev.constants(&table)?;
            args.push(Arg::buf(&taps));
            args.push(Arg::int(table.len())?);
        } else {
            let ks = 1.0 / (2.0 * f64::from(p.sigma_s).powi(2));
            args.push(Arg::F32(ks.min(f64::from(f32::MAX)) as f32));
        }
        dev.launch(&k, &[w, h], &spec.local, &args)
    }
}

/// The stage's arm in a device-resident chain ([`crate::ops::StageOp::run_device`]):
/// the working image (f32, 1 or 4 lanes) in its logical type's units.
#[cfg(feature = "opencl")]
pub(crate) fn run_stage(
    stage: &BilateralParams,
    cx: &crate::ops::work::Chain<'_>,
    forced: Option<&str>,
    input: crate::ops::work::ChainInput<'_>,
    record: &mut crate::ops::stage::StageRecord,
) -> Result<crate::ops::work::Work> {
    use crate::backend::opencl::DeviceImage;
    use crate::ops::work::time;
    let mut w = input.into_work();
    if stage.radius() == 0 {
        return Ok(w);
    }
    // The range weights need the values the host path would see.
    let start = std::time::Instant::now();
    let mt = w.materialize(cx.d, cx.dev)?;
    if mt > Duration::ZERO {
        record.reports.push(cx.own_report("saturate", start, mt));
    }
    let params = OpParams::new(*stage);
    let (logical, working) = (w.logical_shape(params.clone()), w.working_shape(params));
    let (full, bounded) = (w.ty.full_scale(), w.ty != crate::image::SampleType::F32);
    let (img, rep) = crate::ops::dispatch_on_device(
        cx.d,
        &SPEC,
        forced,
        (&logical, &working),
        |dev, spec| {
            let out = DeviceImage::<f32>::new(dev, w.width(), w.height(), w.img.channels())?;
            let ev = cl::launch(cx.d.programs(), dev, spec, &w.img, &out, stage, full, bounded)?;
            Ok((out, time(ev)?))
        },
    )?;
    record.reports.push(rep);
    Ok(w.with(img))
}

/// No chain exists in a build without OpenCL.
#[cfg(not(feature = "opencl"))]
pub(crate) fn run_stage(
    _: &BilateralParams,
    cx: &crate::ops::work::Chain<'_>,
    _: Option<&str>,
    _: crate::ops::work::ChainInput<'_>,
    _: &mut crate::ops::stage::StageRecord,
) -> Result<crate::ops::work::Work> {
    cx.never()
}

/// A kernel-only runner of `spec` on the case's input, uploaded once
/// ([`crate::ops::tuning::Case::kernel_runner`]), in the case's own
/// sample type (RGBA8 runs the uchar4 kernels).
#[cfg(feature = "opencl")]
pub(super) fn kernel_runner<'a, T: Sample>(
    case: &'a super::tune::BilateralCase<T>,
    progs: &'a Programs,
    dev: &'a Dev,
    spec: &'static VariantSpec,
) -> Result<crate::ops::tuning::Runner<'a>> {
    use crate::backend::opencl::DeviceImage;
    let input = case.on_device.image(dev, &case.img)?;
    let out = DeviceImage::<T>::new(dev, input.width(), input.height(), input.channels())?;
    let (p, full) = (case.params, T::TYPE.full_scale());
    let bounded = T::TYPE != crate::image::SampleType::F32;
    Ok(Box::new(move || {
        Ok(cl::launch(progs, dev, spec, input, &out, &p, full, bounded)?
            .duration()?
            .unwrap_or_default())
    }))
}

/// No device exists in a build without OpenCL.
#[cfg(not(feature = "opencl"))]
pub(super) fn kernel_runner<'a, T: Sample>(
    case: &'a super::tune::BilateralCase<T>,
    _: &'a Programs,
    dev: &'a Dev,
    _: &'static VariantSpec,
) -> Result<crate::ops::tuning::Runner<'a>> {
    // The upload slot exists in every build; only a device fills it.
    let _ = &case.on_device;
    match *dev {}
}
