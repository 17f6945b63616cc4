//! How an operation sits in a pipeline: its spec name and options
//! ([`StageDef`]), and the checked stage itself ([`StageOp`]), which runs
//! on host images and, with OpenCL, inside a device-resident chain.
//!
//! Each operation's `stage.rs` implements these; [`crate::ops::STAGES`]
//! lists the definitions, and `crate::pipeline` stays generic over them.

use std::any::Any;
use std::fmt;

use crate::error::{Error, Result};
use crate::image::raw::RawImage;
use crate::image::{DynImage, SampleType};
use crate::ops::minmax::MinMax;
use crate::ops::{Dispatch, OpSpec, RunReport};

/// The common option that forces a variant.
pub const VARIANT: &str = "variant";

/// The common option of stages whose operation spreads NaN and infinities
/// ([`OpSpec::spreads_nonfinite`]): `nonfinite=error|zero|clamp`.
pub const NONFINITE: &str = "nonfinite";

/// One option a stage accepts.
#[derive(Debug)]
pub struct OptionDef {
    /// The key.
    pub key: &'static str,
    /// The kind of value, for help texts (`NUMBER`, `u8|u16|f32`).
    pub value: &'static str,
    /// What it does.
    pub help: &'static str,
}

/// An operation a pipeline can use: its name, options and parser.
pub struct StageDef {
    /// The name used in specs.
    pub name: &'static str,
    /// What it does, in one line.
    pub summary: &'static str,
    /// Its own options (the common `variant` option is not listed).
    pub options: &'static [OptionDef],
    /// The engine operation whose variants `variant=` picks from.
    pub op: &'static OpSpec,
    /// Builds the checked stage from its options.
    pub build: fn(&dyn StageArgs) -> Result<Box<dyn StageOp>>,
}

impl fmt::Debug for StageDef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StageDef")
            .field("name", &self.name)
            .field("options", &self.options)
            .finish_non_exhaustive()
    }
}

impl StageDef {
    /// Every key this stage accepts: its own, then the common ones
    /// (`nonfinite` where the operation spreads non-finite values, `variant`).
    pub fn keys(&self) -> Vec<&'static str> {
        let nonfinite = self.op.spreads_nonfinite.then_some(NONFINITE);
        self.options
            .iter()
            .map(|o| o.key)
            .chain(nonfinite)
            .chain(std::iter::once(VARIANT))
            .collect()
    }
}

/// A stage's options as the spec parser hands them to [`StageDef::build`].
pub trait StageArgs {
    /// The value of option `key`, if given.
    fn get(&self, key: &str) -> Option<&str>;

    /// A spec error about option `key` (pointing at it in the spec text).
    fn error(&self, key: &str, message: &dyn fmt::Display) -> Error;

    /// A spec error about the stage as a whole (pointing at its name).
    fn name_error(&self, message: &dyn fmt::Display) -> Error;

    /// Option `key` as a finite f32.
    fn finite(&self, key: &str) -> Result<Option<f32>> {
        let Some(v) = self.get(key) else {
            return Ok(None);
        };
        match v.parse::<f32>() {
            Ok(x) if x.is_finite() => Ok(Some(x)),
            Ok(_) => Err(self.error(key, &format_args!("{key}={v} is not a finite number"))),
            Err(_) => Err(self.error(key, &format_args!("{key}={v} is not a number"))),
        }
    }

    /// Option `key` as a sample type.
    fn sample_type(&self, key: &str) -> Result<Option<SampleType>> {
        let Some(v) = self.get(key) else {
            return Ok(None);
        };
        SampleType::parse(v).map(Some).ok_or_else(|| {
            self.error(
                key,
                &format_args!("{key}={v} is not a sample type (use u8, u16 or f32)"),
            )
        })
    }

    /// Option `key` as a channel count, 3 or 4.
    fn channels(&self, key: &str) -> Result<Option<usize>> {
        let Some(v) = self.get(key) else {
            return Ok(None);
        };
        match v.trim() {
            "3" => Ok(Some(3)),
            "4" => Ok(Some(4)),
            _ => Err(self.error(key, &format_args!("{key}={v} is not 3 or 4"))),
        }
    }
}

/// What a stage did besides producing its image.
#[derive(Debug, Clone, Default)]
pub struct StageRecord {
    /// The engine calls it made, in order.
    pub reports: Vec<RunReport>,
    /// The result of a `minmax` stage.
    pub minmax: Option<MinMax>,
    /// The result of a `stats` stage.
    pub stats: Option<crate::ops::stats::Stats>,
    /// Text results to show the user.
    pub lines: Vec<String>,
}

/// What a frame looks like to the stages of a pipeline, for stages that
/// take facts from the camera format ([`StageOp::adapt_to_frame`]).
#[derive(Debug, Clone)]
pub struct FrameFacts<'a> {
    /// The frames' format.
    pub format: &'a crate::image::raw::RawFormat,
    /// The colour filter pattern as the stage sees it (earlier stages may
    /// have transposed it), or `None` for mono frames.
    pub pattern: Option<crate::ops::demosaic::Pattern>,
    /// The spec indices of the stages that transposed the frame so far.
    pub transposed_by: Vec<usize>,
    /// Whether the samples are still the camera's (no stage rescaled them).
    pub camera_values: bool,
}

/// What [`StageOp::adapt_to_frame`] decided.
#[derive(Debug)]
pub enum Adapted {
    /// The stage stays as it is; later stages are adapted too.
    Keep,
    /// The stage is replaced, and later stages are left as written.
    Done(Box<dyn StageOp>),
}

/// A checked pipeline stage: an operation with its parameters.
pub trait StageOp: fmt::Debug + Send + Sync + 'static {
    /// The stage's definition (name, options, variant table).
    fn def(&self) -> &'static StageDef;

    /// The canonical options, in spec order, each `key=value` (or a bare
    /// value for a stage's short form), which the stage parses back to an
    /// equal stage.
    fn options(&self) -> Vec<String>;

    /// The sample type this stage produces from an `input` image.
    fn output_type(&self, input: SampleType) -> SampleType;

    /// The result's `(width, height, channels)` from an input's.
    fn output_shape(&self, shape: (usize, usize, usize)) -> (usize, usize, usize) {
        shape
    }

    /// Whether this stage, with its parameters, would spread a NaN or
    /// infinite input sample over its result, so that a pipeline applies
    /// the non-finite policy to its f32 input first. By default its
    /// operation's [`OpSpec::spreads_nonfinite`]; a stage whose parameters
    /// make it a copy says `false`.
    fn spreads_nonfinite(&self) -> bool {
        self.def().op.spreads_nonfinite
    }

    /// A bound on the magnitude of the stage's output when its input is
    /// within ±`input`; `None` when there is none. By default the input's
    /// bound, or none for an operation that [`OpSpec::overflows`]. A device
    /// chain that starts from integers skips the non-finite check while the
    /// bound stays within [`crate::image::finite::MAX_MAGNITUDE`].
    fn bound(&self, input: f64) -> Option<f64> {
        (!self.def().op.overflows).then_some(input)
    }

    /// The parameters the stage's engine call carries
    /// ([`crate::ops::Shape::params`]), which pick its tuning key's
    /// parameter bucket; none by default, for operations whose variants do
    /// not depend on parameters.
    fn op_params(&self) -> crate::ops::OpParams {
        crate::ops::OpParams::NONE
    }

    /// Whether the stage reads a raw camera frame (so a device chain
    /// passes it the frame as uploaded).
    fn reads_raw(&self) -> bool {
        false
    }

    /// Whether the stage reports on its input (into [`StageRecord`]) and
    /// passes the image through unchanged, as `minmax` and `stats` do: a
    /// pipeline that ends with one needs no output.
    fn reports(&self) -> bool {
        false
    }

    /// Whether the stage's device arm, having run the variants `variants`
    /// (its reports' names) on one frame, runs the same kernels on a stack
    /// of frames ([`crate::ops::work::Chain::frames`]), each frame filtered
    /// on its own, so that every frame comes out as it would alone.
    fn stacks(&self, variants: &[&str]) -> bool {
        let _ = variants;
        false
    }

    /// Fits the stage to the frames of a known format, updating what later
    /// stages see (see `crate::pipeline::format`).
    fn adapt_to_frame(
        &self,
        _args: &dyn StageArgs,
        _index: usize,
        _frame: &mut FrameFacts<'_>,
    ) -> Result<Adapted> {
        Ok(Adapted::Keep)
    }

    /// Runs the stage on a host image with `d` (which forces the stage's
    /// `variant=`, if any).
    fn run_host(
        &self,
        d: &dyn Dispatch,
        input: DynImage,
        record: &mut StageRecord,
    ) -> Result<DynImage>;

    /// Runs the stage on a decoded raw frame: stages that read raw frames
    /// read it directly, others the unpacked image.
    fn run_host_raw(
        &self,
        d: &dyn Dispatch,
        frame: RawImage,
        record: &mut StageRecord,
    ) -> Result<DynImage> {
        self.run_host(d, frame.into_dyn()?, record)
    }

    /// Runs the stage inside a device-resident chain on `input` (a raw
    /// frame only where [`StageOp::reads_raw`]), with `forced` (the
    /// stage's `variant=`) first; returns the next working image.
    fn run_device(
        &self,
        cx: &crate::ops::work::Chain<'_>,
        forced: Option<&str>,
        input: crate::ops::work::ChainInput<'_>,
        record: &mut StageRecord,
    ) -> Result<crate::ops::work::Work>;

    /// The stage as `Any`, for downcasting to its parameters.
    fn as_any(&self) -> &dyn Any;

    /// Whether `other` is the same stage with equal parameters.
    fn eq_stage(&self, other: &dyn StageOp) -> bool;
}

/// [`StageOp::eq_stage`] for stages whose type implements `PartialEq`.
pub fn same_stage<T: StageOp + PartialEq>(a: &T, b: &dyn StageOp) -> bool {
    b.as_any().downcast_ref::<T>() == Some(a)
}

/// Writes a stage back as a canonical spec (`normalize=factor=2:out=u8`),
/// its common options (`key=value`) after its own.
pub fn write_spec(
    f: &mut fmt::Formatter<'_>,
    stage: &dyn StageOp,
    common: &[String],
) -> fmt::Result {
    let mut opts = stage.options();
    opts.extend_from_slice(common);
    f.write_str(stage.def().name)?;
    if !opts.is_empty() {
        write!(f, "={}", opts.join(":"))?;
    }
    Ok(())
}

/// A stage and its forced variant, displayed as spec text.
pub struct SpecText<'a>(pub &'a dyn StageOp, pub Option<&'a str>);

impl fmt::Display for SpecText<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let variant: Vec<String> = self.1.iter().map(|v| format!("{VARIANT}={v}")).collect();
        write_spec(f, self.0, &variant)
    }
}

/// The `as_any` and `eq_stage` methods of a [`StageOp`] implementation.
macro_rules! stage_any {
    () => {
        fn as_any(&self) -> &dyn std::any::Any {
            self
        }

        fn eq_stage(&self, other: &dyn $crate::ops::stage::StageOp) -> bool {
            $crate::ops::stage::same_stage(self, other)
        }
    };
}
pub(crate) use stage_any;
