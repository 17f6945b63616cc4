//! `stats` on OpenCL devices. Without the `opencl` feature, [`Dev`] has no
//! values, so `run` cannot be called.

use super::*;
#[cfg(feature = "opencl")]
use crate::simd::moments::Moments;
use crate::backend::Dev;
use crate::ops::{Programs, VariantSpec};
use std::time::Duration;

/// The statistics of `img` with `spec` on `dev`. Returns them and the kernels' device time.
#[cfg(feature = "opencl")]
pub(super) fn run<T: Sample>(
    progs: &Programs,
    dev: &Dev,
    spec: &VariantSpec,
    img: &Image<T>,
) -> Result<(Stats, Duration)> {
    let input = crate::backend::opencl::DeviceImage::upload(dev, img)?;
    launch(progs, dev, spec, &input, img.channels())
}

/// No device exists in a build without OpenCL.
#[cfg(not(feature = "opencl"))]
pub(super) fn run<T: Sample>(
    _: &Programs,
    dev: &Dev,
    _: &VariantSpec,
    _: &Image<T>,
) -> Result<(Stats, Duration)> {
    match *dev {}
}

/// Runs both passes of `spec` on a device image and reads the result back
/// (blocking); the statistics of its first `channels` channels. Returns
/// them and the device time of both passes.
#[cfg(feature = "opencl")]
pub(crate) fn launch<T: Sample>(
    progs: &Programs,
    dev: &Dev,
    spec: &VariantSpec,
    input: &crate::backend::opencl::DeviceImage<T>,
    channels: usize,
) -> Result<(Stats, Duration)> {
    use super::variants::{int_options, loads_per_item, LWS};
    use crate::backend::opencl::{Arg, DeviceBuffer};
    let c = input.channels();
    let shape = Shape::new(input.width(), input.height(), c, T::TYPE);
    crate::ops::tuning::check_variant(&SPEC, spec, &shape, dev.info().local_mem)?;
    let n = input.pixel_count();
    let n_arg = Arg::int(n)?;
    // Each group covers a fixed block: LWS * per pixels, or quads of four
    // gray samples for tree_vec4 and vec4_dp4a.
    let items = if matches!(spec.name, "tree_vec4" | "vec4_dp4a") {
        n.div_ceil(4)
    } else {
        n
    };
    // u8 colour blocks of whole 16-byte loads (4 RGBA pixels, 16 RGB
    // pixels being 3 loads): a multiple of 16 stays within the bound.
    let per = match (T::TYPE, c) {
        (crate::SampleType::U8, 3 | 4) => loads_per_item(items).next_multiple_of(16),
        _ => loads_per_item(items),
    };
    let groups = items.div_ceil(LWS * per);
    let extra = int_options(T::TYPE, c);
    let k1 = progs.kernel(dev, SPEC.name, spec, &shape, extra, &spec.kernel_name(SPEC.name))?;
    let first = [n_arg, Arg::int(per)?];
    if extra.is_empty() {
        let k2 = progs.kernel(dev, SPEC.name, spec, &shape, extra, "stats_final")?;
        let partial = DeviceBuffer::<[f32; 4]>::new(dev, 4 * groups)?;
        let result = DeviceBuffer::<[f32; 4]>::new(dev, 5)?;
        let bufs = [Arg::buf(&partial), Arg::buf(&result)];
        let kt = two_passes(dev, (&k1, &k2), input, first, bufs, groups)?;
        let r = result.to_vec(dev)?;
        let sums: Vec<Sums> = (0..channels.min(c))
            .map(|ch| Sums {
                sum: f64::from(r[0][ch]),
                shifted_sq: f64::from(r[1][ch]),
                shift: f64::from(r[4][ch]),
                min: f64::from(r[2][ch]),
                max: f64::from(r[3][ch]),
            })
            .collect();
        Ok((Sums::finish(&sums, n as u64), kt))
    } else {
        let result = DeviceBuffer::<[u64; 4]>::new(dev, 4)?;
        let kt = if spec.name == "vec4_dp4a" {
            // One pass: sums, min = u32::MAX, max and the groups' count in
            // the words cl/stats/dp4a.cl reads.
            let acc = DeviceBuffer::<[u64; 4]>::from_slice(dev, &[[0, 0, u64::from(u32::MAX), 0]])?;
            let (per, groups_arg) = (Arg::int(per)?, Arg::int(groups)?);
            let args = [Arg::img(input), n_arg, per, Arg::buf(&acc), groups_arg, Arg::buf(&result)];
            let e = dev.launch(&k1, &[groups * LWS], &[LWS], &args)?;
            e.duration()?.unwrap_or_default()
        } else {
            let partial = DeviceBuffer::<[u64; 4]>::new(dev, 4 * groups)?;
            let bufs = [Arg::buf(&partial), Arg::buf(&result)];
            let k2 = progs.kernel(dev, SPEC.name, spec, &shape, extra, "stats_final")?;
            two_passes(dev, (&k1, &k2), input, first, bufs, groups)?
        };
        let r = result.to_vec(dev)?;
        let sums: Vec<Moments> = (0..channels.min(c))
            .map(|ch| Moments {
                sum: r[0][ch],
                sq: r[1][ch],
                min: r[2][ch],
                max: r[3][ch],
            })
            .collect();
        Ok((super::int::finish(&sums, n as u64), kt))
    }
}

/// Launches the first pass (over `groups` groups, with the arguments
/// `first` after the image) and the final pass, between the buffers
/// `partial` and `result`; returns their device time.
#[cfg(feature = "opencl")]
fn two_passes<T: Sample>(
    dev: &Dev,
    (k1, k2): (&crate::backend::opencl::Kernel, &crate::backend::opencl::Kernel),
    input: &crate::backend::opencl::DeviceImage<T>,
    [n, per]: [crate::backend::opencl::Arg<'_>; 2],
    [partial, result]: [crate::backend::opencl::Arg<'_>; 2],
    groups: usize,
) -> Result<Duration> {
    use super::variants::LWS;
    use crate::backend::opencl::Arg;
    let e1 = dev.launch(k1, &[groups * LWS], &[LWS], &[Arg::img(input), n, per, partial])?;
    let args = [Arg::img(input), partial, Arg::int(groups)?, result];
    let e2 = dev.launch(k2, &[LWS], &[LWS], &args)?;
    Ok(e1.duration()?.unwrap_or_default() + e2.duration()?.unwrap_or_default())
}

/// The stage's arm in a device-resident chain ([`crate::ops::StageOp::run_device`]):
/// the statistics of the logical values and channels; the image passes through.
#[cfg(feature = "opencl")]
pub(crate) fn run_stage(
    _: &super::stage::StatsStage,
    cx: &crate::ops::work::Chain<'_>,
    forced: Option<&str>,
    input: crate::ops::work::ChainInput<'_>,
    record: &mut crate::ops::stage::StageRecord,
) -> Result<crate::ops::work::Work> {
    use crate::ops::OpParams;
    let mut w = input.into_work();
    // The numbers of the image the host path holds here (whole steps of
    // an integer type), not of the chain's unrounded values.
    let mt = w.host_values(cx.d, cx.dev)?;
    let (logical, working) = (
        w.logical_shape(OpParams::NONE),
        w.working_shape(OpParams::NONE),
    );
    let (img, channels) = (&w.img, w.channels);
    let (s, mut rep) =
        crate::ops::dispatch_on_device(cx.d, &SPEC, forced, (&logical, &working), |dev, spec| {
            launch(cx.d.programs(), dev, spec, img, channels)
        })?;
    rep.kernel_time = rep.kernel_time.map(|k| k + mt);
    record.reports.push(rep);
    record.lines.push(super::stage::format_stats(&s, w.ty));
    record.stats = Some(s);
    Ok(w)
}

/// No chain exists in a build without OpenCL.
#[cfg(not(feature = "opencl"))]
pub(crate) fn run_stage(
    _: &super::stage::StatsStage,
    cx: &crate::ops::work::Chain<'_>,
    _: Option<&str>,
    _: crate::ops::work::ChainInput<'_>,
    _: &mut crate::ops::stage::StageRecord,
) -> Result<crate::ops::work::Work> {
    cx.never()
}

/// A kernel-only runner of `spec` on the case's input, uploaded once
/// ([`crate::ops::tuning::Case::kernel_runner`]); its time covers both
/// passes (the result's read-back is not timed).
#[cfg(feature = "opencl")]
pub(super) fn kernel_runner<'a, T: Sample>(
    case: &'a super::tune::StatsCase<T>,
    progs: &'a Programs,
    dev: &'a Dev,
    spec: &'static VariantSpec,
) -> Result<crate::ops::tuning::Runner<'a>> {
    let input = case.on_device.image(dev, &case.img)?;
    let c = case.img.channels();
    Ok(Box::new(move || Ok(launch(progs, dev, spec, input, c)?.1)))
}

/// No device exists in a build without OpenCL.
#[cfg(not(feature = "opencl"))]
pub(super) fn kernel_runner<'a, T: Sample>(
    case: &'a super::tune::StatsCase<T>,
    _: &'a Programs,
    dev: &'a Dev,
    _: &'static VariantSpec,
) -> Result<crate::ops::tuning::Runner<'a>> {
    // The upload slot exists in every build; only a device fills it.
    let _ = &case.on_device;
    match *dev {}
}
