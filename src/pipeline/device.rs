//! Device-resident pipelines: the input is uploaded once, every stage runs
//! on the device on f32 working images, and one download brings the result
//! back (`cl/pipeline.cl` holds the load and store kernels).
//!
//! Between stages the image is a [`Work`]: f32 pixels, one float for gray
//! and one float4 for colour, in the units of the stage's logical sample
//! type, saturated to its range as the host path saturates, but unrounded.
//! Only the final store rounds, so a chained pipeline is at least as exact
//! as the same stages run one by one on the host, which round after every
//! stage; the two differ by about one step of the output type per rounding
//! the host path does (tests/pipeline.rs allows two). `convert` costs
//! nothing on the device: it multiplies a pending scale (and marks a
//! pending saturation) that the next stage that needs them applies with
//! one small pass, or that the final store folds in.
//!
//! Each stage picks its variant like an engine call, but from the tuner's
//! kernel-mode ranking (data stays on the device), then the device's default
//! order; a variant that fails gives way to the next, and a stage that no
//! variant can run fails the chain, after which [`super::run`] runs the
//! whole pipeline on the host path instead.

use std::time::{Duration, Instant};

use super::{format_minmax, Op, OpKind, StageOutcome};
use crate::backend::opencl::{Arg, ClEvent, DeviceImage, Kernel};
use crate::backend::Dev;
use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::image::{Sample, SampleType};
use crate::ops::demosaic::device::DeviceRaw;
use crate::ops::minmax::MinMax;
use crate::ops::normalize::Coefficients;
use crate::ops::{any_shape, no_local, OpParams, OpSpec, RunReport, Shape, VariantSpec, CPU};
use crate::tune::Mode;

/// The table entry the plumbing kernels are built under (`pipeline.cl` is
/// not an operation; its kernels have no alternatives).
static PLUMBING: VariantSpec = VariantSpec {
    name: "pipeline",
    summary: "load, store, scale and unpack kernels of device-resident pipelines",
    files: &["pipeline.cl"],
    options: "",
    local: [256, 1],
    local_bytes: no_local,
    supports: any_shape,
    tolerance: 0.0,
};

/// An image between two stages of a device-resident pipeline.
pub(crate) struct Work {
    /// f32 pixels: 1 channel (gray) or 4 (colour; RGB leaves the 4th unused).
    pub img: DeviceImage<f32>,
    /// The logical channels (1, 3 or 4).
    pub channels: usize,
    /// The logical sample type: the units the values are in.
    pub ty: SampleType,
    /// Pending factor: the logical values are the stored ones times this.
    pub scale: f32,
    /// Whether values may lie outside `0..=ty.full_scale()` for an integer
    /// `ty` (after `convert` or `normalize` into one), where the host path
    /// would have saturated them.
    pub unsaturated: bool,
}

/// What a chain starts from.
pub(crate) enum Input<'a> {
    /// A raw frame (Bayer for a `demosaic` first stage, else mono).
    Raw(&'a DeviceRaw),
    /// An image already in working form.
    Work(Work),
}

fn time(ev: ClEvent) -> Result<Duration> {
    Ok(ev.duration()?.unwrap_or_default())
}

/// A plumbing kernel for typed pixels of `t` with `ch` channels.
fn plumbing(
    engine: &Engine,
    dev: &Dev,
    t: SampleType,
    ch: usize,
    extra: &str,
    name: &str,
) -> Result<Kernel> {
    let shape = Shape::new(1, 1, ch, t);
    engine
        .programs()
        .kernel(dev, "pipeline", &PLUMBING, &shape, extra, name)
}

impl Work {
    fn width(&self) -> usize {
        self.img.width()
    }

    fn height(&self) -> usize {
        self.img.height()
    }

    /// The shape variant tables check: what the kernels really process.
    fn working_shape(&self, params: OpParams) -> Shape {
        Shape::new(
            self.width(),
            self.height(),
            self.img.channels(),
            SampleType::F32,
        )
        .with_params(params)
    }

    /// The shape the tuner keys on: the user's pixels.
    fn logical_shape(&self, params: OpParams) -> Shape {
        Shape::new(self.width(), self.height(), self.channels, self.ty).with_params(params)
    }

    /// Applies the pending scale and saturation, for stages that need the
    /// logical values (all but `transpose` and `convert`; the Gaussian is
    /// linear, but blurring unsaturated values would differ from the host).
    fn materialize(&mut self, engine: &Engine, dev: &Dev) -> Result<Duration> {
        self.fix(engine, dev, false)
    }

    /// [`Work::materialize`], then rounds to whole steps of `ty` (when an
    /// integer type widens, the host path rounded at the narrower type).
    fn quantize(&mut self, engine: &Engine, dev: &Dev) -> Result<Duration> {
        self.fix(engine, dev, true)
    }

    fn fix(&mut self, engine: &Engine, dev: &Dev, round: bool) -> Result<Duration> {
        if self.scale == 1.0 && !self.unsaturated && !round {
            return Ok(Duration::ZERO);
        }
        let hi = if self.unsaturated {
            self.ty.full_scale()
        } else {
            f32::INFINITY
        };
        let k = plumbing(engine, dev, SampleType::F32, 1, "", "pipeline_fix")?;
        let n = self.img.pixel_count() * self.img.channels();
        let ev = dev.launch(
            &k,
            &[n],
            &[PLUMBING.local[0]],
            &[
                Arg::img(&self.img),
                Arg::int(n)?,
                Arg::F32(self.scale),
                Arg::F32(hi),
                Arg::int(round as usize)?,
            ],
        )?;
        self.scale = 1.0;
        self.unsaturated = false;
        time(ev)
    }

    /// The same image with new pixels (shape, type and scale kept).
    fn with(&self, img: DeviceImage<f32>) -> Work {
        Work {
            img,
            channels: self.channels,
            ty: self.ty,
            scale: self.scale,
            unsaturated: self.unsaturated,
        }
    }
}

/// Loads a typed device image into working form.
pub(crate) fn load<T: Sample>(
    engine: &Engine,
    dev: &Dev,
    src: &DeviceImage<T>,
) -> Result<(Work, Duration)> {
    let ch = src.channels();
    let img = DeviceImage::<f32>::new(dev, src.width(), src.height(), if ch == 1 { 1 } else { 4 })?;
    let k = plumbing(engine, dev, T::TYPE, ch, "", "pipeline_load")?;
    let n = src.pixel_count();
    let ev = dev.launch(
        &k,
        &[n],
        &[PLUMBING.local[0]],
        &[Arg::img(src), Arg::img(&img), Arg::int(n)?],
    )?;
    let work = Work {
        img,
        channels: ch,
        ty: T::TYPE,
        scale: 1.0,
        unsaturated: false,
    };
    Ok((work, time(ev)?))
}

/// Loads a mono raw frame (8-bit, 16-bit containers, or packed 12-bit,
/// which becomes u16 values 0..4095) into working form.
pub(crate) fn load_raw(engine: &Engine, dev: &Dev, raw: &DeviceRaw) -> Result<(Work, Duration)> {
    match raw {
        DeviceRaw::U8(i) => load(engine, dev, i),
        DeviceRaw::U16(i) => load(engine, dev, i),
        DeviceRaw::Packed {
            bytes,
            width,
            height,
            packing,
        } => {
            let n = width * height;
            let img = DeviceImage::<f32>::new(dev, *width, *height, 1)?;
            let packed = match packing {
                crate::ops::demosaic::Packing::Pfnc12p => 1,
                crate::ops::demosaic::Packing::GigE12Packed => 2,
            };
            let k = plumbing(
                engine,
                dev,
                SampleType::U8,
                1,
                &format!("-DPACKED={packed}"),
                "pipeline_unpack12",
            )?;
            let ev = dev.launch(
                &k,
                &[n / 2],
                &[PLUMBING.local[0]],
                &[Arg::buf(bytes), Arg::img(&img), Arg::int(n)?],
            )?;
            let work = Work {
                img,
                channels: 1,
                ty: SampleType::U16,
                scale: 1.0,
                unsaturated: false,
            };
            Ok((work, time(ev)?))
        }
    }
}

/// Stores working pixels as a typed image of the logical channels into `out`
/// (rounded and saturated for integer types).
pub(crate) fn store_into<U: Sample>(
    engine: &Engine,
    dev: &Dev,
    w: &Work,
    out: &DeviceImage<U>,
) -> Result<Duration> {
    if (out.width(), out.height(), out.channels()) != (w.width(), w.height(), w.channels) {
        return Err(Error::arg(format!(
            "pipeline output must be {}x{}x{}, got {}x{}x{}",
            w.width(),
            w.height(),
            w.channels,
            out.width(),
            out.height(),
            out.channels()
        )));
    }
    let extra = format!(
        "-DTOUT={} -DOUT_FLOAT={}",
        U::TYPE.cl_name(),
        (U::TYPE == SampleType::F32) as u8
    );
    // The working layout follows CH: 1 -> float, 3 or 4 -> float4.
    let k = plumbing(
        engine,
        dev,
        SampleType::F32,
        w.channels,
        &extra,
        "pipeline_store",
    )?;
    let n = w.img.pixel_count();
    let ev = dev.launch(
        &k,
        &[n],
        &[PLUMBING.local[0]],
        &[
            Arg::img(&w.img),
            Arg::img(out),
            Arg::int(n)?,
            Arg::F32(w.scale),
        ],
    )?;
    time(ev)
}

/// The variants a stage may use, best first: the forced one alone, else
/// the tuner's kernel-mode ranking, then the device's default order; each
/// must support the working shape.
fn candidates(
    engine: &Engine,
    dev: &Dev,
    op: &'static OpSpec,
    forced: Option<&str>,
    logical: &Shape,
    working: &Shape,
) -> Result<Vec<&'static VariantSpec>> {
    let local_mem = dev.info().local_mem;
    let unsupported = |variant: &str, reason: String| Error::Unsupported {
        op: op.name.into(),
        variant: variant.into(),
        reason,
    };
    match forced.or_else(|| engine.forced(op)) {
        Some(CPU) => Err(unsupported(
            CPU,
            "the CPU path is forced, so this stage cannot stay on the device".into(),
        )),
        Some(name) => {
            let spec = engine
                .variant(op, name)
                .ok_or_else(|| Error::UnknownVariant {
                    op: op.name.into(),
                    variant: name.into(),
                    known: op.names().join(", "),
                })?;
            spec.check(working, local_mem)
                .map_err(|why| unsupported(name, why))?;
            Ok(vec![spec])
        }
        None => {
            let mut names: Vec<&str> = Vec::new();
            // The chain runs on working images, which is what the tuner's
            // kernel mode times (f32 gray or RGBA); keys for the logical
            // type (u16 RGB, say) hold end-to-end figures only.
            let tuned = engine
                .tuned_order(op, working, Mode::Kernel)
                .or_else(|| engine.tuned_order(op, logical, Mode::Kernel));
            for n in tuned.iter().flatten() {
                if n != CPU {
                    if let Some(s) = engine.variant(op, n) {
                        names.push(s.name);
                    }
                }
            }
            for s in op.order_for(dev.info().kind, working) {
                if !names.contains(&s.name) {
                    names.push(s.name);
                }
            }
            let list: Vec<&'static VariantSpec> = names
                .into_iter()
                .filter_map(|n| engine.variant(op, n))
                .filter(|s| match s.check(working, local_mem) {
                    Ok(()) => true,
                    Err(why) => {
                        log::debug!("{}/{} skipped: {why}", op.name, s.name);
                        false
                    }
                })
                .collect();
            if list.is_empty() {
                return Err(unsupported(
                    "",
                    format!(
                        "no OpenCL variant supports this request on {}",
                        dev.info().name
                    ),
                ));
            }
            Ok(list)
        }
    }
}

/// Runs `f` with each candidate until one works; returns its result, the
/// report and the failures before it.
fn with_variants<R>(
    engine: &Engine,
    dev: &Dev,
    op: &'static OpSpec,
    stage: &Op,
    logical: &Shape,
    working: &Shape,
    mut f: impl FnMut(&'static VariantSpec) -> Result<(R, Duration)>,
) -> Result<(R, RunReport)> {
    let start = Instant::now();
    let mut fallbacks = Vec::new();
    let mut last = None;
    for spec in candidates(engine, dev, op, stage.variant.as_deref(), logical, working)? {
        match f(spec) {
            Ok((r, kt)) => {
                log::debug!(
                    target: "clfilter::dispatch",
                    "{} ran variant={} on {} (device-resident)",
                    op.name,
                    spec.name,
                    dev.info().name
                );
                let report = RunReport {
                    op: op.name,
                    variant: spec.name.to_string(),
                    backend: engine.backend().describe(),
                    elapsed: start.elapsed(),
                    kernel_time: Some(kt),
                    fallbacks,
                };
                return Ok((r, report));
            }
            Err(e) => {
                log::warn!(
                    "{}/{} failed on {}: {e}; trying the next variant",
                    op.name,
                    spec.name,
                    dev.info().name
                );
                fallbacks.push(format!("{}: {e}", spec.name));
                last = Some(e);
            }
        }
    }
    Err(last.unwrap_or_else(|| Error::arg("no variant was tried")))
}

/// A report for work the pipeline did itself (no variant table).
fn own_report(
    engine: &Engine,
    op: &'static str,
    what: &str,
    start: Instant,
    kt: Duration,
) -> RunReport {
    RunReport {
        op,
        variant: what.into(),
        backend: engine.backend().describe(),
        elapsed: start.elapsed(),
        kernel_time: Some(kt),
        fallbacks: Vec::new(),
    }
}

/// Per-channel extremes of a working image, in logical units and channels.
/// `stage` is the minmax stage itself (its `variant=` applies), or `None`
/// for the minmax a colormap or normalize stage runs for its range.
fn minmax_of(
    engine: &Engine,
    dev: &Dev,
    stage: Option<&Op>,
    w: &mut Work,
) -> Result<(MinMax, RunReport)> {
    let spec_op = &crate::ops::minmax::SPEC;
    let plain = Op::new(OpKind::MinMax);
    let stage = stage.unwrap_or(&plain);
    let mt = w.materialize(engine, dev)?;
    let (logical, working) = (
        w.logical_shape(OpParams::None),
        w.working_shape(OpParams::None),
    );
    let img = &w.img;
    let (m, mut r) = with_variants(engine, dev, spec_op, stage, &logical, &working, |spec| {
        crate::ops::minmax::device::launch(engine.programs(), dev, spec, img)
    })?;
    r.kernel_time = r.kernel_time.map(|k| k + mt);
    let mut out = MinMax::empty(w.channels);
    out.min[..w.channels].copy_from_slice(&m.min[..w.channels]);
    out.max[..w.channels].copy_from_slice(&m.max[..w.channels]);
    Ok((out, r))
}

/// Runs `ops` on the device from `input`; returns the last stage's working
/// image and what each stage did.
pub(crate) fn run_chain(
    engine: &Engine,
    dev: &Dev,
    ops: &[Op],
    input: Input<'_>,
) -> Result<(Work, Vec<StageOutcome>)> {
    let mut outcomes = Vec::with_capacity(ops.len());
    let mut cur: Option<Work> = None;
    let mut raw: Option<&DeviceRaw> = None;
    match input {
        Input::Raw(r) => raw = Some(r),
        Input::Work(w) => cur = Some(w),
    }
    for op in ops {
        let mut outcome = StageOutcome {
            op: op.clone(),
            reports: Vec::new(),
            minmax: None,
            lines: Vec::new(),
            on_device: true,
        };
        // Every stage but demosaic works on a working image.
        if !matches!(op.kind, OpKind::Demosaic { .. }) && cur.is_none() {
            let r = raw.take().expect("a chain starts from a frame or an image");
            let start = Instant::now();
            let (w, kt) = load_raw(engine, dev, r)?;
            outcome
                .reports
                .push(own_report(engine, "pipeline", "load", start, kt));
            cur = Some(w);
        }
        let next = match &op.kind {
            OpKind::Demosaic { params, out } => {
                let Some(r) = raw.take() else {
                    return Err(Error::InvalidInput(format!(
                        "stage '{op}': demosaic reads a raw frame, so it must be the first stage"
                    )));
                };
                let (w, h) = r.size();
                let input_ty = r.raw_arg().sample;
                let out_ty = out.unwrap_or(if r.depth().0 > 8 {
                    SampleType::U16
                } else {
                    input_ty
                });
                let (max, wide) = r.depth();
                let lv = params.levels_for(max, wide, out_ty)?;
                let shape = Shape::new(w, h, 1, input_ty).with_params(OpParams::Demosaic(*params));
                let (img, rep) = with_variants(
                    engine,
                    dev,
                    &crate::ops::demosaic::SPEC,
                    op,
                    &shape,
                    &shape,
                    |spec| {
                        crate::ops::demosaic::device::demosaic_w(
                            engine.programs(),
                            dev,
                            spec,
                            r,
                            params,
                            &lv,
                            (out_ty != SampleType::F32).then(|| out_ty.full_scale()),
                        )
                    },
                )?;
                outcome.reports.push(rep);
                Work {
                    img,
                    channels: params.channels,
                    ty: out_ty,
                    scale: 1.0,
                    unsaturated: false,
                }
            }
            OpKind::Gaussian(p) => {
                let mut w = cur.take().expect("loaded above");
                if p.min_nonzero_sigma().is_none() {
                    w
                } else {
                    if w.unsaturated {
                        let start = Instant::now();
                        let kt = w.materialize(engine, dev)?;
                        outcome
                            .reports
                            .push(own_report(engine, "pipeline", "saturate", start, kt));
                    }
                    let params = OpParams::Gaussian(*p);
                    let (logical, working) = (w.logical_shape(params), w.working_shape(params));
                    let (img, rep) = with_variants(
                        engine,
                        dev,
                        &crate::ops::gaussian::SPEC,
                        op,
                        &logical,
                        &working,
                        |spec| {
                            crate::ops::gaussian::device::blur_w(
                                engine.programs(),
                                dev,
                                spec,
                                &w.img,
                                p,
                            )
                        },
                    )?;
                    outcome.reports.push(rep);
                    w.with(img)
                }
            }
            OpKind::Convert { out } => {
                let mut w = cur.take().expect("loaded above");
                let finer = *out == SampleType::F32 || out.full_scale() > w.ty.full_scale();
                if w.ty != SampleType::F32 && finer {
                    // From an integer type to finer steps: the host path held
                    // whole steps of the integer type; so must this.
                    let start = Instant::now();
                    let kt = w.quantize(engine, dev)?;
                    outcome
                        .reports
                        .push(own_report(engine, "pipeline", "quantize", start, kt));
                } else if w.unsaturated && *out == SampleType::F32 {
                    // f32 keeps any value: saturate to the old type first.
                    let start = Instant::now();
                    let kt = w.materialize(engine, dev)?;
                    outcome
                        .reports
                        .push(own_report(engine, "pipeline", "saturate", start, kt));
                }
                // No kernel: the factor waits for the next stage or the store.
                outcome.reports.push(own_report(
                    engine,
                    "pipeline",
                    "folded",
                    Instant::now(),
                    Duration::ZERO,
                ));
                w.scale *= (out.full_scale() as f64 / w.ty.full_scale() as f64) as f32;
                // Integer to integer keeps values inside the range.
                w.unsaturated |= w.ty == SampleType::F32 && *out != SampleType::F32;
                w.ty = *out;
                w
            }
            OpKind::Transpose => {
                let w = cur.take().expect("loaded above");
                let (logical, working) = (
                    w.logical_shape(OpParams::None),
                    w.working_shape(OpParams::None),
                );
                let (img, rep) = with_variants(
                    engine,
                    dev,
                    &crate::ops::transpose::SPEC,
                    op,
                    &logical,
                    &working,
                    |spec| {
                        let out =
                            DeviceImage::<f32>::new(dev, w.height(), w.width(), w.img.channels())?;
                        let ev = crate::ops::transpose::device::launch(
                            engine.programs(),
                            dev,
                            spec,
                            &w.img,
                            &out,
                        )?;
                        Ok((out, time(ev)?))
                    },
                )?;
                outcome.reports.push(rep);
                w.with(img)
            }
            OpKind::MinMax => {
                let mut w = cur.take().expect("loaded above");
                let (m, rep) = minmax_of(engine, dev, Some(op), &mut w)?;
                outcome.reports.push(rep);
                outcome.lines.push(format_minmax(&m, w.ty));
                outcome.minmax = Some(m);
                w
            }
            OpKind::Colormap(p) => {
                let mut w = cur.take().expect("loaded above");
                if w.channels != 1 {
                    return Err(Error::InvalidInput(format!(
                        "stage '{op}': colormap maps 1-channel images, this one has {}",
                        w.channels
                    )));
                }
                let range = if p.needs_minmax() {
                    let (m, rep) = minmax_of(engine, dev, None, &mut w)?;
                    outcome.reports.push(rep);
                    p.range(Some(&m))?
                } else {
                    p.range(None)?
                };
                let mt = w.materialize(engine, dev)?;
                let (logical, working) = (
                    w.logical_shape(OpParams::Colormap(*p)),
                    w.working_shape(OpParams::Colormap(*p)),
                );
                let (img, mut rep) = with_variants(
                    engine,
                    dev,
                    &crate::ops::colormap::SPEC,
                    op,
                    &logical,
                    &working,
                    |spec| {
                        // Float4 working pixels in 8-bit units: the store rounds.
                        let out = DeviceImage::<f32>::new(dev, w.width(), w.height(), 4)?;
                        let cm = crate::ops::colormap::ColormapParams { channels: 4, ..*p };
                        let kt = crate::ops::colormap::device::launch(
                            engine.programs(),
                            dev,
                            spec,
                            &w.img,
                            &out,
                            &cm,
                            range.0,
                            range.1,
                            255.0,
                        )?;
                        Ok((out, kt))
                    },
                )?;
                rep.kernel_time = rep.kernel_time.map(|t| t + mt);
                outcome.reports.push(rep);
                Work {
                    img,
                    channels: p.channels,
                    ty: SampleType::U8,
                    scale: 1.0,
                    unsaturated: false,
                }
            }
            OpKind::Normalize { params, out } => {
                let mut w = cur.take().expect("loaded above");
                let out_ty = out.unwrap_or(w.ty);
                let k = if params.sub.is_none() && params.factor.is_none() {
                    let (m, rep) = minmax_of(engine, dev, None, &mut w)?;
                    outcome.reports.push(rep);
                    Coefficients::stretch(&m, w.ty, out_ty)?
                } else {
                    Coefficients::explicit(params)?
                };
                let mt = w.materialize(engine, dev)?;
                let (logical, working) = (
                    w.logical_shape(OpParams::None),
                    w.working_shape(OpParams::None),
                );
                let (img, mut rep) = with_variants(
                    engine,
                    dev,
                    &crate::ops::normalize::SPEC,
                    op,
                    &logical,
                    &working,
                    |spec| {
                        let out =
                            DeviceImage::<f32>::new(dev, w.width(), w.height(), w.img.channels())?;
                        let ev = crate::ops::normalize::device::launch(
                            engine.programs(),
                            dev,
                            spec,
                            &w.img,
                            &out,
                            &k,
                        )?;
                        Ok((out, time(ev)?))
                    },
                )?;
                rep.kernel_time = rep.kernel_time.map(|t| t + mt);
                outcome.reports.push(rep);
                Work {
                    img,
                    channels: w.channels,
                    ty: out_ty,
                    scale: 1.0,
                    unsaturated: out_ty != SampleType::F32,
                }
            }
        };
        cur = Some(next);
        outcomes.push(outcome);
    }
    let w = match cur {
        Some(w) => w,
        // No stages: the frame itself.
        None => {
            let r = raw.take().expect("a chain starts from a frame or an image");
            load_raw(engine, dev, r)?.0
        }
    };
    Ok((w, outcomes))
}
