//! Pipelines: a chain of operations written as a spec string
//! (`transpose,normalize=out=u8,minmax`), checked into [`Op`]s and run one
//! stage after another.
//!
//! - [`spec`] parses the syntax into [`Stage`]s (names and `key=value` options).
//! - [`compile`] checks each stage against [`STAGES`], the stages the
//!   operations define (`crate::ops::STAGES`), and builds the [`Op`]s.
//! - [`run`] / [`run_stages`] execute them on an [`Engine`].
//!
//! ```
//! let ops = clfilter::pipeline::parse("normalize=out=f32,transpose").unwrap();
//! assert_eq!(ops.len(), 2);
//! assert_eq!(ops[0].to_string(), "normalize=out=f32");
//!
//! let err = clfilter::pipeline::parse("transpose,normlize").unwrap_err();
//! assert!(err.to_string().contains("stage 2 'normlize': unknown operation (did you mean 'normalize'?)"));
//! ```
//!
//! # Stages
//!
//! | stage       | options                                 | result |
//! |-------------|-----------------------------------------|--------|
//! | `transpose` | –                                       | the image with rows and columns swapped |
//! | `minmax`    | –                                       | the image unchanged; the per-channel range is reported |
//! | `normalize` | `sub`, `factor` (finite numbers), `out=u8\|u16\|f32` | `(in - sub) * factor` as `out` (default: the input's type); without `sub` and `factor`, min..max is stretched to the output's full range |
//! | `gaussian`  | `sigma`, `sigma_x`, `sigma_y`, `border=replicate\|mirror` | the blurred image, same type and shape |
//! | `demosaic`  | `pattern`, `method=bilinear\|mhc\|edge`, `black`, `wb_r`, `wb_g`, `wb_b`, `channels=3\|4`, `bits`, `out` | RGB(A) from a 1-channel 8/16-bit Bayer frame |
//!
//! Every stage also takes `variant=NAME`, which forces that variant of the
//! stage's operation (one of `filterctl variants`, or `cpu`), as
//! [`Engine::with_variant`] does for that operation alone.
//!
//! Stages whose operation spreads NaN and infinities over its result
//! (`OpSpec::spreads_nonfinite`: the Gaussian) also take
//! `nonfinite=error|zero|clamp` ([`NonFinite`]; without it, the engine's
//! [`Engine::set_nonfinite`] policy). Such a stage checks its own f32
//! input, on the host path as on a device (there with a counting kernel),
//! so the position an error gives is in that stage's input. Integer
//! inputs, and working images of an integer type in a device chain, are
//! not scanned: they cannot hold NaN or infinities.
//!
//! Adding an operation's stage: a `stage.rs` in its folder with its
//! [`StageDef`] and [`StageOp`] (see `crate::ops::stage`), and one line in
//! `crate::ops::STAGES`. Nothing here changes.

mod compile;
mod device;
mod display;
pub mod format;
mod input;
mod paths;
pub mod spec;
pub mod stream;
#[cfg(test)]
mod tests;
mod view;

use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;

pub use compile::{compile, parse, stage_def};
pub use display::run_display;
pub use format::parse_with_format;
pub use input::Input;
use paths::host_preferred;
pub(crate) use paths::run_both_ways;
pub use spec::{parse_stages, Stage};
pub use view::run_into;

use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::image::{DynImage, NonFinite, SampleType};
pub use crate::ops::stage::StageRecord;
use crate::ops::stage::{write_spec, NONFINITE, VARIANT};
pub use crate::ops::stage::{OptionDef, StageDef, StageOp};
use crate::ops::RunReport;
pub use crate::ops::STAGES;

/// One checked pipeline stage: the operation with its parameters, and the
/// variant it must use.
#[derive(Debug, Clone)]
pub struct Op {
    /// The operation and its parameters (downcast with [`Op::params`]).
    pub stage: Arc<dyn StageOp>,
    /// `variant=NAME`: force this variant for this stage only.
    pub variant: Option<String>,
    /// `nonfinite=error|zero|clamp`: this stage's policy for NaN and
    /// infinities (stages that spread them only); `None` follows the engine's.
    pub nonfinite: Option<NonFinite>,
}

/// Equal stages have the same operation, equal parameters, the same
/// forced variant and the same non-finite policy.
impl PartialEq for Op {
    fn eq(&self, other: &Self) -> bool {
        self.stage.eq_stage(&*other.stage)
            && self.variant == other.variant
            && self.nonfinite == other.nonfinite
    }
}

impl Op {
    /// An op with no forced variant.
    pub fn new(stage: impl StageOp) -> Self {
        Op {
            stage: Arc::new(stage),
            variant: None,
            nonfinite: None,
        }
    }

    /// An op of a boxed stage (as [`StageDef::build`] makes them).
    pub fn from_boxed(stage: Box<dyn StageOp>, variant: Option<String>) -> Self {
        Op {
            stage: Arc::from(stage),
            variant,
            nonfinite: None,
        }
    }

    /// The same stage with its own non-finite policy (`nonfinite=`); it
    /// matters only where the stage spreads non-finite values
    /// ([`StageOp::spreads_nonfinite`]).
    pub fn with_nonfinite(self, policy: NonFinite) -> Self {
        Op {
            nonfinite: Some(policy),
            ..self
        }
    }

    /// The stage's name as written in specs (`transpose`, `minmax`, `normalize`).
    pub fn name(&self) -> &'static str {
        self.stage.def().name
    }

    /// The stage's definition.
    pub fn def(&self) -> &'static StageDef {
        self.stage.def()
    }

    /// The stage's parameters as the operation's stage type `T`
    /// (`op.params::<GaussianParams>()`), or `None` for another operation.
    pub fn params<T: StageOp>(&self) -> Option<&T> {
        self.stage.as_any().downcast_ref::<T>()
    }

    /// The sample type this stage produces from an `input` image.
    pub fn output_type(&self, input: SampleType) -> SampleType {
        self.stage.output_type(input)
    }
}

/// Writes the stage back as a canonical spec (`normalize=factor=2:out=u8`),
/// which [`parse`] reads back to the same [`Op`].
impl fmt::Display for Op {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let nonfinite = self.nonfinite.map(|p| format!("{NONFINITE}={p}"));
        let variant = self.variant.as_ref().map(|v| format!("{VARIANT}={v}"));
        let common: Vec<String> = nonfinite.into_iter().chain(variant).collect();
        write_spec(f, &*self.stage, &common)
    }
}

/// A pipeline: stages checked and ready to run on any engine.
///
/// ```
/// use clfilter::pipeline::Pipeline;
/// use clfilter::ops::gaussian::GaussianParams;
/// use clfilter::ops::normalize::stage::ConvertStage;
/// use clfilter::{DynImage, Engine, Image, SampleType};
///
/// let p: Pipeline = "gaussian=sigma=2,convert=u8".parse().unwrap();
/// let same = Pipeline::builder()
///     .stage(GaussianParams::new(2.0))
///     .stage(ConvertStage { out: SampleType::U8 })
///     .build();
/// assert_eq!(p, same);
/// assert_eq!(p.to_string(), "gaussian=sigma=2,convert=u8");
///
/// let img = Image::<u16>::from_fn(32, 24, 1, |x, y, _| (x * y * 64) as u16).unwrap();
/// let (out, _stages) = p.run(&Engine::cpu(), img.into()).unwrap();
/// assert_eq!(out.sample_type(), SampleType::U8);
/// ```
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Pipeline {
    ops: Vec<Op>,
}

impl Pipeline {
    /// A pipeline of these checked stages.
    pub fn new(ops: Vec<Op>) -> Self {
        Pipeline { ops }
    }

    /// Starts an empty builder.
    pub fn builder() -> PipelineBuilder {
        PipelineBuilder::default()
    }

    /// Parses a spec whose frames come in `format` (see [`parse_with_format`]).
    pub fn parse_for(spec: &str, format: &crate::image::raw::RawFormat) -> Result<Self> {
        Ok(Pipeline::new(parse_with_format(spec, Some(format))?))
    }

    /// The stages.
    pub fn ops(&self) -> &[Op] {
        &self.ops
    }

    /// Runs on an image (see [`run_outcomes`]: chained on the device when
    /// the engine has one).
    pub fn run(&self, engine: &Engine, input: DynImage) -> Result<(DynImage, Vec<StageOutcome>)> {
        run_outcomes(engine, &self.ops, input)
    }

    /// Runs on one decoded raw frame (see [`run_frame`]).
    ///
    /// ```
    /// use clfilter::image::raw::RawImage;
    /// use clfilter::{Engine, Image, Pipeline, SampleType};
    /// // A 12-bit RGGB frame in 16-bit containers.
    /// let frame = RawImage::U16(Image::from_fn(16, 8, 1, |x, y, _| ((x + y) * 200) as u16)?);
    /// let p: Pipeline = "demosaic=bits=12,convert=u8".parse()?;
    /// let (rgb, stages) = p.run_frame(&Engine::cpu(), frame)?;
    /// assert_eq!((rgb.shape(), rgb.sample_type()), ((16, 8, 3), SampleType::U8));
    /// assert_eq!(stages.len(), 2);
    /// # Ok::<(), clfilter::Error>(())
    /// ```
    pub fn run_frame(
        &self,
        engine: &Engine,
        frame: crate::image::raw::RawImage,
    ) -> Result<(DynImage, Vec<StageOutcome>)> {
        run_frame(engine, &self.ops, frame)
    }

    /// Runs over a stream of raw frames (see [`stream::run_source`]).
    ///
    /// ```
    /// use clfilter::pipeline::stream::{FrameSink, OutFrame, Source, StreamOptions};
    /// use clfilter::{Engine, Pipeline, RawFormat};
    ///
    /// struct Count(usize);
    /// impl FrameSink for Count {
    ///     fn frame(&mut self, f: &OutFrame<'_>) -> clfilter::Result<()> {
    ///         assert_eq!((f.index, f.width, f.height, f.channels), (self.0, 8, 4, 3));
    ///         self.0 += 1;
    ///         Ok(())
    ///     }
    /// }
    /// let format: RawFormat = "bayer_rggb8".parse()?;
    /// let p = Pipeline::parse_for("demosaic,convert=u8", &format)?;
    /// let bytes = vec![100u8; 8 * 4 * 3]; // three 8x4 frames
    /// let (opts, mut sink) = (StreamOptions::new(8, 4, format), Count(0));
    /// let totals = p.stream(&Engine::cpu(), &opts, Source::Reader(&bytes[..]), &mut sink)?;
    /// assert_eq!((totals.frames, sink.0), (3, 3));
    /// # Ok::<(), clfilter::Error>(())
    /// ```
    pub fn stream<R: std::io::Read + Send>(
        &self,
        engine: &Engine,
        opts: &stream::StreamOptions,
        input: stream::Source<R>,
        sink: &mut dyn stream::FrameSink,
    ) -> Result<stream::StreamTotals> {
        stream::run_source(engine, &self.ops, opts, input, sink)
    }
}

impl std::str::FromStr for Pipeline {
    type Err = Error;
    fn from_str(spec: &str) -> Result<Self> {
        Ok(Pipeline::new(parse(spec)?))
    }
}

/// The canonical spec, which parses back to the same pipeline.
impl fmt::Display for Pipeline {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&to_spec(&self.ops))
    }
}

/// Builds a [`Pipeline`] stage by stage from typed parameters.
#[derive(Debug, Clone, Default)]
pub struct PipelineBuilder {
    ops: Vec<Op>,
}

impl PipelineBuilder {
    /// Appends a stage that uses the engine's choice of variant.
    pub fn stage(mut self, stage: impl StageOp) -> Self {
        self.ops.push(Op::new(stage));
        self
    }

    /// Appends a boxed stage (as [`StageDef::build`] makes them).
    pub fn boxed(mut self, stage: Box<dyn StageOp>) -> Self {
        self.ops.push(Op::from_boxed(stage, None));
        self
    }

    /// Appends a stage forced to `variant` (checked when it runs).
    pub fn stage_with_variant(mut self, stage: impl StageOp, variant: &str) -> Self {
        self.ops.push(Op {
            variant: Some(variant.to_string()),
            ..Op::new(stage)
        });
        self
    }

    /// The pipeline.
    pub fn build(self) -> Pipeline {
        Pipeline::new(self.ops)
    }
}

/// The sample type a whole pipeline produces from an `input` image.
pub fn output_type(ops: &[Op], input: SampleType) -> SampleType {
    ops.iter().fold(input, |t, op| op.output_type(t))
}

/// Writes a pipeline back as a spec string.
pub fn to_spec(ops: &[Op]) -> String {
    ops.iter().map(Op::to_string).collect::<Vec<_>>().join(",")
}

/// What one stage did: its [`StageRecord`] (the engine calls it made, its
/// text results, any typed result) with the stage and where it ran. The
/// record's fields read through: `outcome.reports`, `outcome.lines`.
#[derive(Debug, Clone)]
pub struct StageOutcome {
    /// The stage.
    pub op: Op,
    /// What it recorded.
    pub record: StageRecord,
    /// Whether the stage ran inside a device-resident chain (its input and
    /// output stayed on the device).
    pub on_device: bool,
    /// Kernel dispatches the stage enqueued (0 on the CPU path; a launch
    /// split under the dispatch limit counts each chunk).
    pub dispatches: u64,
}

impl std::ops::Deref for StageOutcome {
    type Target = StageRecord;

    fn deref(&self) -> &StageRecord {
        &self.record
    }
}

impl StageOutcome {
    /// The outcome of `op` from what it recorded; `since`: this thread's
    /// dispatch count when the stage began.
    pub(crate) fn of(op: &Op, record: StageRecord, on_device: bool, since: u64) -> Self {
        StageOutcome {
            op: op.clone(),
            record,
            on_device,
            dispatches: crate::backend::Backend::dispatches_on_this_thread() - since,
        }
    }
}

/// The engine a stage runs with: `engine`, forcing the stage's `variant=`
/// (if any) for its operation through [`Engine::with_variant`], with the
/// stage's `nonfinite=` (if any).
pub(crate) fn stage_engine<'a>(engine: &'a Engine, op: &Op) -> Cow<'a, Engine> {
    let mut e = match &op.variant {
        Some(v) => Cow::Owned(engine.with_variant(Some(op.def().op.name), v)),
        None => Cow::Borrowed(engine),
    };
    if let Some(p) = op.nonfinite.filter(|p| *p != e.nonfinite()) {
        e.to_mut().set_nonfinite(p);
    }
    e
}

/// Runs one stage on a host image.
///
/// The stage's `variant=` (if any) is forced for its operation through
/// [`Engine::with_variant`]; other forced variants of `engine` stay in
/// effect. Its `nonfinite=` (if any) replaces the engine's policy.
pub fn run_stage(engine: &Engine, op: &Op, input: DynImage) -> Result<(DynImage, StageOutcome)> {
    run_stage_bounded(engine, op, input, None)
}

/// [`run_stage`] on an input within ±`bound`: in range, the non-finite
/// scan is skipped ([`run_bounded`]).
fn run_stage_bounded(
    engine: &Engine,
    op: &Op,
    input: DynImage,
    bound: Option<f64>,
) -> Result<(DynImage, StageOutcome)> {
    let mut engine = stage_engine(engine, op);
    if in_range(bound) {
        engine.to_mut().set_inputs_bounded(true);
    }
    let mut record = StageRecord::default();
    let since = crate::backend::Backend::dispatches_on_this_thread();
    let output = op.stage.run_host(&*engine, input, &mut record)?;
    Ok((output, StageOutcome::of(op, record, false, since)))
}

/// Runs the stages one after another on the host, returning the final
/// image and what each stage did.
///
/// Every stage is a separate host-in/host-out engine call, so on an OpenCL
/// backend each stage uploads and downloads its image; [`run_outcomes`]
/// chains the stages on the device instead.
pub fn run_stages(
    engine: &Engine,
    stages: &[Op],
    input: DynImage,
) -> Result<(DynImage, Vec<StageOutcome>)> {
    let bound = (input.sample_type() != SampleType::F32).then_some(INTEGER_BOUND);
    run_bounded(engine, stages, input, bound)
}

/// The largest magnitude of integer samples (u8, u16 and raw frames).
pub(crate) const INTEGER_BOUND: f64 = 65535.0;

/// Whether data within ±`bound` is finite and in range for the operations
/// that spread non-finite values, so their check can be skipped.
pub(crate) fn in_range(bound: Option<f64>) -> bool {
    bound.is_some_and(|b| b <= f64::from(crate::image::finite::MAX_MAGNITUDE))
}

/// [`run_stages`] from an input whose samples are within ±`bound` (`None`:
/// unknown). Each stage's [`crate::ops::StageOp::bound`] carries it on;
/// while it is in range, stages skip the non-finite scan of their input,
/// which integer data and what bounded stages make of it cannot need.
fn run_bounded(
    engine: &Engine,
    stages: &[Op],
    input: DynImage,
    mut bound: Option<f64>,
) -> Result<(DynImage, Vec<StageOutcome>)> {
    let mut img = input;
    let mut outcomes = Vec::with_capacity(stages.len());
    for op in stages {
        let (next, outcome) = run_stage_bounded(engine, op, img, bound)?;
        img = next;
        outcomes.push(outcome);
        bound = bound.and_then(|b| op.stage.bound(b));
    }
    Ok((img, outcomes))
}

/// The host path of [`run_frame`]: a first stage that reads raw frames
/// reads the decoded frame directly ([`format::run_stage_raw`]), so packed
/// 12-bit frames keep their 12-bit white level, as on a device.
pub(crate) fn run_frame_on_host(
    engine: &Engine,
    stages: &[Op],
    frame: crate::image::raw::RawImage,
) -> Result<(DynImage, Vec<StageOutcome>)> {
    let Some((first, rest)) = stages.split_first() else {
        return Ok((frame.into_dyn()?, Vec::new()));
    };
    let (img, outcome) = format::run_stage_raw(engine, first, frame)?;
    let (img, mut outcomes) = run_bounded(engine, rest, img, first.stage.bound(INTEGER_BOUND))?;
    outcomes.insert(0, outcome);
    Ok((img, outcomes))
}

/// Runs the stages, returning the final image and what each stage did.
///
/// On an OpenCL backend the image is uploaded once, the stages run on the
/// device one after another (each with its tuned variant), and the result
/// is downloaded once (see the module docs). If that fails — a stage no
/// variant can run, a forced `variant=cpu`, a device error — the reason is
/// logged and the stages run one by one on the host path ([`run_stages`])
/// from the untouched input, so no data is lost. On the CPU backend the
/// stages run on rayon.
pub fn run_outcomes(
    engine: &Engine,
    stages: &[Op],
    input: DynImage,
) -> Result<(DynImage, Vec<StageOutcome>)> {
    if let Some(r) = try_device(engine, stages, Input::Image(&input), device::download)? {
        return Ok(r);
    }
    run_stages(engine, stages, input)
}

/// [`run_outcomes`] for a decoded raw camera frame: on a device the frame
/// is uploaded as it is (packed 12-bit frames stay packed and are unpacked
/// there); on the host path a first `demosaic` stage reads it directly
/// ([`format::run_stage_raw`]).
pub fn run_frame(
    engine: &Engine,
    stages: &[Op],
    frame: crate::image::raw::RawImage,
) -> Result<(DynImage, Vec<StageOutcome>)> {
    if let Some(r) = try_device(engine, stages, Input::Frame(&frame), device::download)? {
        return Ok(r);
    }
    run_frame_on_host(engine, stages, frame)
}

/// The host path for either input (the caller keeps the input).
pub(crate) fn run_on_host(
    engine: &Engine,
    stages: &[Op],
    input: Input<'_>,
) -> Result<(DynImage, Vec<StageOutcome>)> {
    match input {
        Input::Image(i) => run_stages(engine, stages, i.clone()),
        Input::Frame(f) => run_frame_on_host(engine, stages, f.clone()),
        Input::View(v) => run_stages(engine, stages, v.to_dyn_image()),
    }
}

/// The device-resident run, its last working image handed to `sink`, or
/// `None` (with the reason logged) when the engine has no device or the
/// chain cannot run or failed. Input the host path would refuse too
/// ([`Error::NonFinite`]) is an error.
pub(crate) fn try_device<R>(
    engine: &Engine,
    stages: &[Op],
    input: Input<'_>,
    sink: impl FnOnce(&Engine, &crate::backend::Dev, &crate::ops::work::Work) -> Result<R>,
) -> Result<Option<(R, Vec<StageOutcome>)>> {
    if let Some(dev) = engine.backend().device() {
        if let Some(why) = host_preferred(engine, stages, input) {
            log::debug!(
                "pipeline '{}' runs stage by stage as host calls: {why}",
                to_spec(stages)
            );
            return Ok(None);
        }
        if !stages.is_empty() {
            match device::run_with(engine, dev, stages, input, |w| sink(engine, dev, w)) {
                Ok(r) => return Ok(Some(r)),
                Err(e @ Error::NonFinite { .. }) => return Err(e),
                Err(e @ Error::Unsupported { .. }) => log::info!(
                    "pipeline '{}' does not stay on {}: {e}; running the stages one by one",
                    to_spec(stages),
                    dev.info().name
                ),
                Err(e) => log::warn!(
                    "device-resident pipeline '{}' failed on {}: {e}; running the stages one by one",
                    to_spec(stages),
                    dev.info().name
                ),
            }
        }
    }
    Ok(None)
}

/// Runs the stages (see [`run_outcomes`]), returning the final image, every
/// engine call's report in order, and the text lines to show the user (for
/// example a `minmax` stage's result).
///
/// ```
/// use clfilter::{pipeline, Engine, Image};
/// let ops = pipeline::parse("transpose,minmax")?;
/// let img = Image::<u8>::from_fn(3, 2, 1, |x, y, _| (x + 3 * y) as u8)?;
/// let (out, reports, lines) = pipeline::run(&Engine::cpu(), &ops, img.into())?;
/// assert_eq!(out.shape(), (2, 3, 1));
/// assert_eq!(reports.len(), 2); // one engine call per stage
/// assert!(lines[0].contains("min"), "{lines:?}"); // minmax's result
/// # Ok::<(), clfilter::Error>(())
/// ```
pub fn run(
    engine: &Engine,
    stages: &[Op],
    input: DynImage,
) -> Result<(DynImage, Vec<RunReport>, Vec<String>)> {
    let (img, outcomes) = run_outcomes(engine, stages, input)?;
    let mut reports = Vec::new();
    let mut lines = Vec::new();
    for o in outcomes {
        reports.extend(o.record.reports);
        lines.extend(o.record.lines);
    }
    Ok((img, reports, lines))
}
