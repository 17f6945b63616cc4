//! `histogram` on OpenCL devices. Without the `opencl` feature, [`Dev`] has no
//! values, so `run` cannot be called.

use super::*;
use crate::backend::Dev;
use crate::ops::{Programs, VariantSpec};
use std::time::Duration;

/// Counts `img` with `spec` on `dev`. Returns the result and the kernels' device time.
#[cfg(feature = "opencl")]
pub(super) fn run<T: Sample>(
    progs: &Programs,
    dev: &Dev,
    spec: &VariantSpec,
    img: &Image<T>,
    b: &Binning,
) -> Result<(Histogram, Duration)> {
    let input = crate::backend::opencl::DeviceImage::upload(dev, img)?;
    launch(progs, dev, spec, &input, b)
}

/// No device exists in a build without OpenCL.
#[cfg(not(feature = "opencl"))]
pub(super) fn run<T: Sample>(
    _: &Programs,
    dev: &Dev,
    _: &VariantSpec,
    _: &Image<T>,
    _: &Binning,
) -> Result<(Histogram, Duration)> {
    match *dev {}
}

/// Counts a device image with `spec` and reads the counts back (blocking).
/// Returns them and the device time of the zeroing and counting kernels.
#[cfg(feature = "opencl")]
pub(crate) fn launch<T: Sample>(
    progs: &Programs,
    dev: &Dev,
    spec: &VariantSpec,
    input: &crate::backend::opencl::DeviceImage<T>,
    b: &Binning,
) -> Result<(Histogram, Duration)> {
    use super::variants::LWS;
    use crate::backend::opencl::{Arg, DeviceBuffer};
    let c = input.channels();
    let params = HistogramParams {
        bins: b.bins,
        lo: b.lo,
        hi: b.hi,
    };
    let shape = Shape::new(input.width(), input.height(), c, T::TYPE)
        .with_params(crate::ops::OpParams::new(params));
    crate::ops::tuning::check_variant(&SPEC, spec, &shape, dev.info().local_mem)?;
    let len = c * b.bins;
    let n = input.pixel_count();
    let plan = match spec.name {
        // check_variant has accepted the shape, so this is Ok.
        "local_private" => {
            let units = dev.info().compute_units as usize;
            super::variants::private_plan(&shape, b, n, units).map_err(|reason| {
                Error::Unsupported {
                    op: SPEC.name.into(),
                    variant: spec.name.into(),
                    reason,
                }
            })?
        }
        _ => super::variants::Plan {
            extra: String::new(),
            items: n,
            per_channel: false,
        },
    };
    let extra = plan.extra;
    let k = progs.kernel(dev, SPEC.name, spec, &shape, &extra, &spec.kernel_name(SPEC.name))?;
    // Zeroed by a write with the allocation: on the H200 one more kernel
    // costs 7-8 us of event time (stats at 64x64, two kernels against one,
    // 2026-11-28), a fifth of a 8192x8192 u8 count.
    let counts = DeviceBuffer::<u32>::from_slice(dev, &vec![0; len])?;
    let (global, local) = if plan.per_channel {
        (vec![plan.items, c], vec![LWS, 1])
    } else {
        (vec![plan.items], vec![LWS])
    };
    let e = dev.launch(
        &k,
        &global,
        &local,
        &[
            Arg::img(input),
            Arg::int(n)?,
            Arg::F32(b.lo),
            Arg::F32(b.hi),
            Arg::F32(b.scale),
            Arg::int(b.bins)?,
            Arg::buf(&counts),
        ],
    )?;
    let flat: Vec<u64> = counts.to_vec(dev)?.into_iter().map(u64::from).collect();
    let kt = e.duration()?.unwrap_or_default();
    Ok((Histogram::from_counts(&flat, c, b.bins, n), kt))
}

/// A kernel-only runner of `spec` on the case's input, uploaded once
/// ([`crate::ops::tuning::Case::kernel_runner`]); its time includes the
/// read-back of the counts, which every call needs.
#[cfg(feature = "opencl")]
pub(super) fn kernel_runner<'a, T: Sample>(
    case: &'a super::tune::HistogramCase<T>,
    progs: &'a Programs,
    dev: &'a Dev,
    spec: &'static VariantSpec,
) -> Result<crate::ops::tuning::Runner<'a>> {
    let b = case.params.binning()?;
    let input = case.on_device.image(dev, &case.img)?;
    Ok(Box::new(move || Ok(launch(progs, dev, spec, input, &b)?.1)))
}

/// No device exists in a build without OpenCL.
#[cfg(not(feature = "opencl"))]
pub(super) fn kernel_runner<'a, T: Sample>(
    case: &'a super::tune::HistogramCase<T>,
    _: &'a Programs,
    dev: &'a Dev,
    _: &'static VariantSpec,
) -> Result<crate::ops::tuning::Runner<'a>> {
    // The upload slot exists in every build; only a device fills it.
    let _ = &case.on_device;
    match *dev {}
}
