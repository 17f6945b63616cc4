//! `reduce` on OpenCL devices. Without the `opencl` feature, [`Dev`] has no
//! values, so `run` cannot be called.

use super::*;
use crate::backend::Dev;
use crate::ops::{Programs, VariantSpec};
use std::time::Duration;

/// Reduces `img` with `spec` on `dev`. Returns the result and the kernel's device time.
#[cfg(feature = "opencl")]
pub(super) fn run<T: Sample>(
    progs: &Programs,
    dev: &Dev,
    spec: &VariantSpec,
    img: &Image<T>,
    p: &ReduceParams,
) -> Result<(Image<f32>, Duration)> {
    use crate::backend::opencl::DeviceImage;
    let input = DeviceImage::upload(dev, img)?;
    let (ow, oh) = p.output_size(img.width(), img.height());
    let out = DeviceImage::<f32>::new(dev, ow, oh, img.channels())?;
    let kt = launch(progs, dev, spec, &input, &out, p)?
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
    _: &ReduceParams,
) -> Result<(Image<f32>, Duration)> {
    match *dev {}
}

/// Runs `spec` from `input` into `out`, which must have the reduced shape
/// and the input's channels.
#[cfg(feature = "opencl")]
pub(crate) fn launch<T: Sample>(
    progs: &Programs,
    dev: &Dev,
    spec: &VariantSpec,
    input: &crate::backend::opencl::DeviceImage<T>,
    out: &crate::backend::opencl::DeviceImage<f32>,
    p: &ReduceParams,
) -> Result<crate::backend::opencl::ClEvent> {
    use super::variants::LWS;
    use crate::backend::opencl::Arg;
    let (w, h, c) = (input.width(), input.height(), input.channels());
    let (ow, oh) = p.output_size(w, h);
    if (out.width(), out.height(), out.channels()) != (ow, oh, c) {
        return Err(Error::arg(format!(
            "reduce output must be {ow}x{oh}x{c}, got {}x{}x{}",
            out.width(),
            out.height(),
            out.channels()
        )));
    }
    let shape = Shape::new(w, h, c, T::TYPE).with_params(crate::ops::OpParams::new(*p));
    crate::ops::tuning::check_variant(&SPEC, spec, &shape, dev.info().local_mem)?;
    let y_variant = matches!(spec.name, "y_split" | "y_fused");
    let (w, c) = match y_variant {
        true => super::variants::y_layout(T::TYPE, w, c),
        false => (w, c),
    };
    let shape = Shape::new(w, h, c, T::TYPE).with_params(crate::ops::OpParams::new(*p));
    let (mut extra, ypack) = options_for(spec, T::TYPE, c, w);
    let fits = y_variant && super::variants::block_fits(T::TYPE, w / ypack, h);
    if fits {
        extra.push_str(" -DBLOCK_FITS");
    }
    let fused = spec.name == "y_fused";
    if fused && dev.info().vendor.to_ascii_lowercase().contains("nvidia") {
        extra.push_str(" -DPTX_FENCE");
    }
    let extra = extra.as_str();
    let k = progs.kernel(dev, SPEC.name, spec, &shape, extra, &spec.kernel_name(SPEC.name))?;
    if y_variant {
        let merge = match fused {
            true => None,
            false => Some(progs.kernel(dev, SPEC.name, spec, &shape, extra, "reduce_y_merge")?),
        };
        let words = if T::TYPE == crate::image::SampleType::F32 || fits { 1 } else { 2 };
        return launch_y(dev, (&k, merge.as_ref()), (input, out), (w, h, c), p, (ypack, words));
    }
    let rows = LWS / team(spec, T::TYPE, c, w);
    let (global, local): (Vec<usize>, Vec<usize>) = match spec.name {
        "x_tree" | "x_subgroup" | "x_shfl" => (vec![LWS, h.div_ceil(rows)], vec![LWS, 1]),
        "x_row" => (vec![h], vec![spec.local[0]]),
        _ => (vec![w], vec![spec.local[0]]),
    };
    dev.launch(
        &k,
        &global,
        &local,
        &[
            Arg::img(input),
            Arg::int(w)?,
            Arg::int(h)?,
            Arg::I32(p.op as i32),
            Arg::img(out),
        ],
    )
}

/// `y_split` (pass 1 `k`, then `merge`) or `y_fused` (`k` alone, no
/// `merge`) over `ypack` columns per work-item, reading `input` as a
/// `w` x `h` image of `c` channels (its own shape, or RGB as gray), each
/// block's result in `words` rows of `partial` (2: an integer's ulong as
/// two words, where a block's sum may pass a uint).
#[cfg(feature = "opencl")]
fn launch_y<T: Sample>(
    dev: &Dev,
    (k, merge): (&crate::backend::opencl::Kernel, Option<&crate::backend::opencl::Kernel>),
    (input, out): (
        &crate::backend::opencl::DeviceImage<T>,
        &crate::backend::opencl::DeviceImage<f32>,
    ),
    (w, h, c): (usize, usize, usize),
    p: &ReduceParams,
    (ypack, words): (usize, usize),
) -> Result<crate::backend::opencl::ClEvent> {
    use super::variants::{y_blocks, COLS, SPLIT};
    use crate::backend::opencl::{Arg, DeviceBuffer, DeviceImage};
    let blocks = y_blocks(w / ypack, h);
    let partial = DeviceImage::<f32>::new(dev, w, words * blocks, c)?;
    let (w_, h_, op, blocks_) = (Arg::int(w)?, Arg::int(h)?, Arg::I32(p.op as i32), Arg::int(blocks)?);
    let first = [Arg::img(input), w_, h_, op, Arg::int(h.div_ceil(blocks))?, Arg::img(&partial)];
    let (global, local) = ([w / ypack, SPLIT * blocks], [COLS, SPLIT]);
    let Some(merge) = merge else {
        // y_fused: a zeroed count of finished blocks per strip of columns.
        let done = DeviceBuffer::<u32>::from_slice(dev, &vec![0; (w / ypack).div_ceil(COLS)])?;
        let rest = [blocks_, Arg::buf(&done), Arg::img(out)];
        return dev.launch(k, &global, &local, &[&first[..], &rest[..]].concat());
    };
    let first = dev.launch(k, &global, &local, &first)?;
    let args = [Arg::img(&partial), w_, blocks_, h_, op, Arg::img(out)];
    let second = dev.launch(merge, &[w], &[COLS], &args)?;
    Ok(first.then(second))
}

/// `spec`'s build options for `ty` samples, `c` channels and width `w`,
/// and `y_split`'s and `y_fused`'s columns per work-item ([`super::variants::ypack`]; 1
/// for the other variants).
#[cfg(feature = "opencl")]
fn options_for(
    spec: &VariantSpec,
    ty: crate::image::SampleType,
    c: usize,
    w: usize,
) -> (String, usize) {
    use super::variants::{ypack, LWS};
    let team = team(spec, ty, c, w);
    let split = matches!(spec.name, "y_split" | "y_fused");
    let cols = if split { ypack(ty, c, w) } else { 1 };
    let fused = if spec.name == "y_fused" { " -DY_FUSED" } else { "" };
    if cols > 1 {
        (format!("{} -DYPACK={cols}{fused}", int_options(ty, c)), cols)
    } else if split {
        (format!("{}{fused}", int_options(ty, c)), 1)
    } else if team != LWS {
        (format!("{} -DTEAM={team}", int_options(ty, c)), 1)
    } else {
        (int_options(ty, c).to_string(), 1)
    }
}

/// The work-items per row of `x_tree` and `x_shfl` (cl/reduce/reduce.cl,
/// TEAM): a warp's 32 where a row is at most
/// [`super::variants::SHORT_ROW`] loads (16-byte loads on gray integers
/// and u8 RGB, one pixel each otherwise), so that a work-item makes many loads and a
/// group of [`super::variants::LWS`] takes several rows; else the whole group.
#[cfg(feature = "opencl")]
fn team(spec: &VariantSpec, ty: crate::image::SampleType, c: usize, w: usize) -> usize {
    use super::variants::{LWS, SHORT_ROW};
    use crate::image::SampleType;
    let loads = match (ty, c) {
        (SampleType::U8, 1) => w / 16,
        (SampleType::U8, 3) => 3 * w / 16,
        (SampleType::U16, 1) => w / 8,
        _ => w,
    };
    let rows_variant = matches!(spec.name, "x_tree" | "x_shfl");
    if rows_variant && loads <= SHORT_ROW {
        32
    } else {
        LWS
    }
}

/// The build options of the integer paths of the row-group variants and
/// `y_split` (cl/reduce/reduce.cl and columns.cl, INT_SUM): samples per uint accumulator,
/// so that `max sample * I_CHUNK < 2^32`; for gray rows, the samples per
/// 16-byte load (`PACK`); for u8 RGB rows, `RGB_BYTES` (rows read as bytes
/// in 16-byte loads). Float samples take none.
#[cfg(feature = "opencl")]
fn int_options(ty: crate::image::SampleType, channels: usize) -> &'static str {
    use crate::image::SampleType;
    match (ty, channels) {
        (SampleType::U8, 1) => "-DINT_SUM -DI_CHUNK=16777216 -DPACK=16",
        (SampleType::U8, 3) => "-DINT_SUM -DI_CHUNK=16777216 -DRGB_BYTES",
        (SampleType::U8, _) => "-DINT_SUM -DI_CHUNK=16777216",
        (SampleType::U16, 1) => "-DINT_SUM -DI_CHUNK=65536 -DPACK=8",
        (SampleType::U16, _) => "-DINT_SUM -DI_CHUNK=65536",
        (SampleType::F32, _) => "",
    }
}

/// The stage's arm in a device-resident chain ([`crate::ops::StageOp::run_device`]).
#[cfg(feature = "opencl")]
pub(crate) fn run_stage(
    stage: &super::stage::ReduceStage,
    cx: &crate::ops::work::Chain<'_>,
    forced: Option<&str>,
    input: crate::ops::work::ChainInput<'_>,
    record: &mut crate::ops::stage::StageRecord,
) -> Result<crate::ops::work::Work> {
    use crate::backend::opencl::DeviceImage;
    use crate::ops::work::{time, Work};
    use crate::ops::OpParams;
    let p = stage.params;
    let mut w = input.into_work();
    // The host path reduces whole steps of an integer type.
    let mt = w.host_values(cx.d, cx.dev)?;
    let (logical, working) = (
        w.logical_shape(OpParams::new(p)),
        w.working_shape(OpParams::new(p)),
    );
    let (ow, oh) = p.output_size(w.width(), w.height());
    let (img, mut rep) = crate::ops::dispatch_on_device(
        cx.d,
        &SPEC,
        forced,
        (&logical, &working),
        |dev, spec| {
            let out = DeviceImage::<f32>::new(dev, ow, oh, w.img.channels())?;
            let ev = launch(cx.d.programs(), dev, spec, &w.img, &out, &p)?;
            Ok((out, time(ev)?))
        },
    )?;
    rep.kernel_time = rep.kernel_time.map(|t| t + mt);
    record.reports.push(rep);
    Ok(Work {
        img,
        channels: w.channels,
        ty: crate::image::SampleType::F32,
        scale: 1.0,
        unsaturated: false,
    })
}

/// No chain exists in a build without OpenCL.
#[cfg(not(feature = "opencl"))]
pub(crate) fn run_stage(
    _: &super::stage::ReduceStage,
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
    case: &'a super::tune::ReduceCase<T>,
    progs: &'a Programs,
    dev: &'a Dev,
    spec: &'static VariantSpec,
) -> Result<crate::ops::tuning::Runner<'a>> {
    use crate::backend::opencl::DeviceImage;
    let p = case.params;
    let input = case.on_device.image(dev, &case.img)?;
    let (ow, oh) = p.output_size(input.width(), input.height());
    let out = DeviceImage::<f32>::new(dev, ow, oh, input.channels())?;
    Ok(Box::new(move || {
        Ok(launch(progs, dev, spec, input, &out, &p)?
            .duration()?
            .unwrap_or_default())
    }))
}

/// No device exists in a build without OpenCL.
#[cfg(not(feature = "opencl"))]
pub(super) fn kernel_runner<'a, T: Sample>(
    case: &'a super::tune::ReduceCase<T>,
    _: &'a Programs,
    dev: &'a Dev,
    _: &'static VariantSpec,
) -> Result<crate::ops::tuning::Runner<'a>> {
    // The upload slot exists in every build; only a device fills it.
    let _ = &case.on_device;
    match *dev {}
}
