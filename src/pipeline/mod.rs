//! Pipelines: a chain of operations written as a spec string
//! (`transpose,normalize=out=u8,minmax`), checked into typed [`Op`]s and run
//! one stage after another.
//!
//! - [`spec`] parses the syntax into [`Stage`]s (names and `key=value` options).
//! - [`compile`] checks each stage against [`STAGES`], the table of
//!   operations a pipeline can use, and builds the typed [`Op`]s.
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
//! Adding an operation: one [`OpKind`] variant, one entry in [`STAGES`] with
//! its options and a `build` function, and one arm in [`run_stage`].

#[cfg(feature = "opencl")]
mod device;
pub mod format;
pub mod spec;
pub mod stream;

use std::borrow::Cow;
use std::fmt;

pub use format::parse_with_format;
pub use spec::{parse_stages, Stage};

use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::image::{DynImage, Image, Sample, SampleType};
use crate::ops::colormap::ColormapParams;
use crate::ops::demosaic::{DemosaicParams, Raw};
use crate::ops::gaussian::{Border, GaussianParams};
use crate::ops::{self, minmax::MinMax, normalize::NormalizeParams, OpSpec, RunReport};
use crate::prelude::*;

/// What one stage does, with its typed parameters.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum OpKind {
    /// Swap rows and columns.
    Transpose,
    /// Per-channel minimum and maximum; the image passes through unchanged.
    MinMax,
    /// `(in - sub) * factor`, or a min..max stretch, converted to `out`.
    Normalize {
        /// `sub` and `factor`; both `None` stretches min..max to the full range.
        params: NormalizeParams,
        /// The output sample type; `None` keeps the input's.
        out: Option<SampleType>,
    },
    /// Gaussian blur; the output has the input's type and shape.
    Gaussian(GaussianParams),
    /// Bayer demosaic of a 1-channel u8/u16 frame into RGB(A) of `out`.
    Demosaic {
        /// Pattern, method, levels, output channels.
        params: DemosaicParams,
        /// The output sample type; `None` keeps the input's.
        out: Option<SampleType>,
    },
    /// Converts to another sample type, full scale to full scale (255 for
    /// u8, 65535 for u16, 1.0 for f32), rounding and saturating.
    Convert {
        /// The output sample type.
        out: SampleType,
    },
    /// Maps a 1-channel image through a colour map to RGB(A) u8.
    Colormap(ColormapParams),
}

/// One checked pipeline stage: the operation and the variant it must use.
#[derive(Debug, Clone, PartialEq)]
pub struct Op {
    /// The operation and its parameters.
    pub kind: OpKind,
    /// `variant=NAME`: force this variant for this stage only.
    pub variant: Option<String>,
}

impl Op {
    /// An op with no forced variant.
    pub fn new(kind: OpKind) -> Self {
        Op {
            kind,
            variant: None,
        }
    }

    /// The stage's name as written in specs (`transpose`, `minmax`, `normalize`).
    pub fn name(&self) -> &'static str {
        match self.kind {
            OpKind::Transpose => "transpose",
            OpKind::MinMax => "minmax",
            OpKind::Normalize { .. } => "normalize",
            OpKind::Gaussian(_) => "gaussian",
            OpKind::Demosaic { .. } => "demosaic",
            OpKind::Convert { .. } => "convert",
            OpKind::Colormap(_) => "colormap",
        }
    }

    /// The sample type this stage produces from an `input` image.
    pub fn output_type(&self, input: SampleType) -> SampleType {
        match &self.kind {
            OpKind::Transpose | OpKind::MinMax | OpKind::Gaussian(_) => input,
            OpKind::Normalize { out, .. } | OpKind::Demosaic { out, .. } => out.unwrap_or(input),
            OpKind::Convert { out } => *out,
            OpKind::Colormap(_) => SampleType::U8,
        }
    }
}

/// Writes the stage back as a canonical spec (`normalize=factor=2:out=u8`),
/// which [`parse`] reads back to the same [`Op`].
impl fmt::Display for Op {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut opts: Vec<String> = Vec::new();
        if let OpKind::Normalize { params, out } = &self.kind {
            if let Some(s) = params.sub {
                opts.push(format!("sub={s}"));
            }
            if let Some(k) = params.factor {
                opts.push(format!("factor={k}"));
            }
            if let Some(o) = out {
                opts.push(format!("out={o}"));
            }
        }
        if let OpKind::Gaussian(p) = &self.kind {
            if p.sigma_x == p.sigma_y {
                opts.push(format!("sigma={}", p.sigma_x));
            } else {
                opts.push(format!("sigma_x={}:sigma_y={}", p.sigma_x, p.sigma_y));
            }
            if p.border != Border::Replicate {
                opts.push("border=mirror".into());
            }
        }
        if let OpKind::Demosaic { params: p, out } = &self.kind {
            opts.push(format!("pattern={}:method={}", p.pattern, p.method));
            if p.black != 0.0 {
                opts.push(format!("black={}", p.black));
            }
            for (k, g) in ["wb_r", "wb_g", "wb_b"].iter().zip(p.gains) {
                if g != 1.0 {
                    opts.push(format!("{k}={g}"));
                }
            }
            if p.channels != 3 {
                opts.push(format!("channels={}", p.channels));
            }
            if let Some(b) = p.bits {
                opts.push(format!("bits={b}"));
            }
            if let Some(o) = out {
                opts.push(format!("out={o}"));
            }
        }
        if let OpKind::Convert { out } = &self.kind {
            f.write_str("convert=")?;
            f.write_str(out.name())?;
            if let Some(v) = &self.variant {
                write!(f, ":variant={v}")?;
            }
            return Ok(());
        }
        if let OpKind::Colormap(p) = &self.kind {
            opts.push(format!("map={}", p.map));
            if let Some(v) = p.min {
                opts.push(format!("min={v}"));
            }
            if let Some(v) = p.max {
                opts.push(format!("max={v}"));
            }
            if p.channels != 3 {
                opts.push(format!("channels={}", p.channels));
            }
        }
        if let Some(v) = &self.variant {
            opts.push(format!("variant={v}"));
        }
        f.write_str(self.name())?;
        if !opts.is_empty() {
            write!(f, "={}", opts.join(":"))?;
        }
        Ok(())
    }
}

/// A pipeline: stages checked and ready to run on any engine.
///
/// ```
/// use clfilter::pipeline::{OpKind, Pipeline};
/// use clfilter::ops::gaussian::GaussianParams;
/// use clfilter::{DynImage, Engine, Image, SampleType};
///
/// let p: Pipeline = "gaussian=sigma=2,convert=u8".parse().unwrap();
/// let same = Pipeline::builder()
///     .stage(OpKind::Gaussian(GaussianParams::new(2.0)))
///     .stage(OpKind::Convert { out: SampleType::U8 })
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
    pub fn run_frame(
        &self,
        engine: &Engine,
        frame: crate::image::raw::RawImage,
    ) -> Result<(DynImage, Vec<StageOutcome>)> {
        run_frame(engine, &self.ops, frame)
    }

    /// Runs over a stream of raw frames (see [`stream::run_source`]).
    pub fn stream<R: std::io::Read + Send>(
        &self,
        engine: &Engine,
        opts: &stream::StreamOptions,
        input: stream::Source<R>,
        sink: &mut dyn stream::FrameSink,
    ) -> Result<stream::StreamStats> {
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
    pub fn stage(mut self, kind: OpKind) -> Self {
        self.ops.push(Op::new(kind));
        self
    }

    /// Appends a stage forced to `variant` (checked when it runs).
    pub fn stage_with_variant(mut self, kind: OpKind, variant: &str) -> Self {
        self.ops.push(Op {
            kind,
            variant: Some(variant.to_string()),
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
    build: fn(&Args<'_>) -> Result<OpKind>,
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
    /// Every key this stage accepts, `variant` last.
    pub fn keys(&self) -> Vec<&'static str> {
        self.options
            .iter()
            .map(|o| o.key)
            .chain(std::iter::once(VARIANT))
            .collect()
    }
}

/// The common option that forces a variant.
const VARIANT: &str = "variant";

/// Every operation a pipeline can use.
pub static STAGES: &[StageDef] = &[
    StageDef {
        name: "transpose",
        summary: "swap rows and columns (the result is height x width)",
        options: &[],
        op: &ops::transpose::SPEC,
        build: |_| Ok(OpKind::Transpose),
    },
    StageDef {
        name: "minmax",
        summary: "report the per-channel minimum and maximum; the image passes through",
        options: &[],
        op: &ops::minmax::SPEC,
        build: |_| Ok(OpKind::MinMax),
    },
    StageDef {
        name: "normalize",
        summary: "(in - sub) * factor, converted to the output type; \
                  without sub and factor, stretch min..max to the full range",
        options: &[
            OptionDef {
                key: "sub",
                value: "NUMBER",
                help: "subtracted first (default 0 when only factor is given)",
            },
            OptionDef {
                key: "factor",
                value: "NUMBER",
                help: "multiplied second (default 1 when only sub is given)",
            },
            OptionDef {
                key: "out",
                value: "u8|u16|f32",
                help: "output sample type (default: the input's)",
            },
        ],
        op: &ops::normalize::SPEC,
        build: |a| {
            Ok(OpKind::Normalize {
                params: NormalizeParams {
                    sub: a.finite("sub")?,
                    factor: a.finite("factor")?,
                },
                out: a.sample_type("out")?,
            })
        },
    },
    StageDef {
        name: "gaussian",
        summary: "Gaussian blur (recursive, cost independent of sigma; exact FIR below sigma 1)",
        options: &[
            OptionDef {
                key: "sigma",
                value: "NUMBER",
                help: "standard deviation in pixels, both axes (0 = no blur)",
            },
            OptionDef {
                key: "sigma_x",
                value: "NUMBER",
                help: "along rows, overriding sigma",
            },
            OptionDef {
                key: "sigma_y",
                value: "NUMBER",
                help: "along columns, overriding sigma",
            },
            OptionDef {
                key: "border",
                value: "replicate|mirror",
                help: "how the image continues past its edges (default replicate)",
            },
        ],
        op: &ops::gaussian::SPEC,
        build: build_gaussian,
    },
    StageDef {
        name: "demosaic",
        summary: "Bayer CFA (1-channel u8/u16) to RGB or RGBA",
        options: &[
            OptionDef {
                key: "pattern",
                value: "rggb|bggr|grbg|gbrg",
                help: "the top-left 2x2 block of the sensor (default rggb)",
            },
            OptionDef {
                key: "method",
                value: "bilinear|mhc|edge",
                help: "interpolation (default mhc, Malvar-He-Cutler)",
            },
            OptionDef {
                key: "black",
                value: "NUMBER",
                help: "black level in input units (default 0)",
            },
            OptionDef {
                key: "wb_r",
                value: "NUMBER",
                help: "red white-balance gain (default 1)",
            },
            OptionDef {
                key: "wb_g",
                value: "NUMBER",
                help: "green white-balance gain (default 1)",
            },
            OptionDef {
                key: "wb_b",
                value: "NUMBER",
                help: "blue white-balance gain (default 1)",
            },
            OptionDef {
                key: "channels",
                value: "3|4",
                help: "RGB or RGBA output (default 3)",
            },
            OptionDef {
                key: "bits",
                value: "8..16",
                help: "significant bits of 16-bit input, the white level 2^bits-1 (default 16)",
            },
            OptionDef {
                key: "out",
                value: "u8|u16|f32",
                help: "output sample type (default: the input's)",
            },
        ],
        op: &ops::demosaic::SPEC,
        build: build_demosaic,
    },
    StageDef {
        name: "convert",
        summary: "convert to another sample type, full scale to full scale \
                  (255 for u8, 65535 for u16, 1.0 for f32); free inside device pipelines",
        options: &[OptionDef {
            key: "out",
            value: "u8|u16|f32",
            help: "the output sample type (required; `convert=u8` is short for `convert=out=u8`)",
        }],
        op: &ops::normalize::SPEC,
        build: |a| match a.sample_type("out")? {
            Some(out) => Ok(OpKind::Convert { out }),
            None => Err(a.error("out", "convert needs an output type, for example convert=u8")),
        },
    },
    StageDef {
        name: "colormap",
        summary: "1-channel image to RGB(A) u8 through a colour map (for looking at mono data)",
        options: &[
            OptionDef {
                key: "map",
                value: "turbo|rainbow|gray",
                help: "the colour map (default turbo)",
            },
            OptionDef {
                key: "min",
                value: "NUMBER",
                help: "input value mapped to the low end, in input units (default: the image's minimum)",
            },
            OptionDef {
                key: "max",
                value: "NUMBER",
                help: "input value mapped to the high end (default: the image's maximum)",
            },
            OptionDef {
                key: "channels",
                value: "3|4",
                help: "RGB or RGBA output (default 3)",
            },
        ],
        op: &ops::colormap::SPEC,
        build: build_colormap,
    },
];

/// Colormap options, checked as `ColormapParams::validate` checks them.
fn build_colormap(a: &Args<'_>) -> Result<OpKind> {
    let mut p = ColormapParams::default();
    if let Some(v) = a.stage.get("map") {
        p.map = v.parse().map_err(|e| a.error("map", e))?;
    }
    p.min = a.finite("min")?;
    p.max = a.finite("max")?;
    if let Some(v) = a.stage.get("channels") {
        p.channels = match v.trim() {
            "3" => 3,
            "4" => 4,
            _ => return Err(a.error("channels", format_args!("channels={v} is not 3 or 4"))),
        };
    }
    p.validate().map_err(|e| a.error("min", e))?;
    Ok(OpKind::Colormap(p))
}

/// Demosaic options; the numeric ones are range-checked when the stage runs
/// (the white level depends on the input).
fn build_demosaic(a: &Args<'_>) -> Result<OpKind> {
    let mut p = DemosaicParams::default();
    if let Some(v) = a.stage.get("pattern") {
        p.pattern = v.parse().map_err(|e| a.error("pattern", e))?;
    }
    if let Some(v) = a.stage.get("method") {
        p.method = v.parse().map_err(|e| a.error("method", e))?;
    }
    p.black = a.finite("black")?.unwrap_or(0.0);
    for (i, k) in ["wb_r", "wb_g", "wb_b"].into_iter().enumerate() {
        p.gains[i] = a.finite(k)?.unwrap_or(1.0);
    }
    if let Some(v) = a.stage.get("channels") {
        p.channels = match v.trim() {
            "3" => 3,
            "4" => 4,
            _ => return Err(a.error("channels", format_args!("channels={v} is not 3 or 4"))),
        };
    }
    if let Some(v) = a.stage.get("bits") {
        p.bits = Some(
            v.trim()
                .parse::<u32>()
                .ok()
                .filter(|b| (8..=16).contains(b))
                .ok_or_else(|| a.error("bits", format_args!("bits={v} is not 8..16")))?,
        );
    }
    if p.black < 0.0 || p.gains.iter().any(|g| *g < 0.0) {
        return Err(a.error("black", "black level and gains must be >= 0"));
    }
    Ok(OpKind::Demosaic {
        params: p,
        out: a.sample_type("out")?,
    })
}

/// Demosaics a 1-channel u8/u16 image into an image of type `out`.
fn demosaic_to(
    engine: &Engine,
    input: &DynImage,
    p: &DemosaicParams,
    out: SampleType,
) -> Result<(DynImage, RunReport)> {
    let raw = match input {
        DynImage::U8(i) => Raw::U8(i),
        DynImage::U16(i) => Raw::U16(i),
        DynImage::F32(_) => {
            return Err(Error::InvalidInput(
                "demosaic reads 8- or 16-bit Bayer frames, not f32 images".into(),
            ))
        }
    };
    Ok(match out {
        SampleType::U8 => engine
            .demosaic_report::<u8>(&raw, p)
            .map(|(o, r)| (o.into(), r))?,
        SampleType::U16 => engine
            .demosaic_report::<u16>(&raw, p)
            .map(|(o, r)| (o.into(), r))?,
        SampleType::F32 => engine
            .demosaic_report::<f32>(&raw, p)
            .map(|(o, r)| (o.into(), r))?,
    })
}

/// Gaussian options: `sigma` sets both axes, `sigma_x`/`sigma_y` override one.
fn build_gaussian(a: &Args<'_>) -> Result<OpKind> {
    let both = a.finite("sigma")?;
    let (sx, sy) = (a.finite("sigma_x")?.or(both), a.finite("sigma_y")?.or(both));
    let (Some(sigma_x), Some(sigma_y)) = (sx, sy) else {
        return Err(a.error(
            "sigma",
            "gaussian needs sigma=S (or both sigma_x and sigma_y)",
        ));
    };
    let border = match a.stage.get("border") {
        None => Border::Replicate,
        Some(v) => v.parse::<Border>().map_err(|_| {
            a.error(
                "border",
                format_args!("border={v} is not replicate or mirror"),
            )
        })?,
    };
    let p = GaussianParams {
        sigma_x,
        sigma_y,
        border,
    };
    p.validate().map_err(|e| {
        let key = if a.stage.get("sigma").is_some() {
            "sigma"
        } else {
            "sigma_x"
        };
        a.error(key, e)
    })?;
    Ok(OpKind::Gaussian(p))
}

/// The definition of stage `name`.
pub fn stage_def(name: &str) -> Option<&'static StageDef> {
    STAGES.iter().find(|d| d.name == name)
}

/// A stage being checked, with the spec text for error carets.
struct Args<'a> {
    spec: &'a str,
    stage: &'a Stage,
}

impl Args<'_> {
    fn error(&self, key: &str, message: impl fmt::Display) -> Error {
        spec::error_at(
            self.spec,
            self.stage.span_of(key),
            format!("{}: {message}", self.stage.label()),
        )
    }

    /// Option `key` as a finite f32.
    fn finite(&self, key: &str) -> Result<Option<f32>> {
        let Some(v) = self.stage.get(key) else {
            return Ok(None);
        };
        match v.parse::<f32>() {
            Ok(x) if x.is_finite() => Ok(Some(x)),
            Ok(_) => Err(self.error(key, format_args!("{key}={v} is not a finite number"))),
            Err(_) => Err(self.error(key, format_args!("{key}={v} is not a number"))),
        }
    }

    /// Option `key` as a sample type.
    fn sample_type(&self, key: &str) -> Result<Option<SampleType>> {
        let Some(v) = self.stage.get(key) else {
            return Ok(None);
        };
        SampleType::parse(v).map(Some).ok_or_else(|| {
            self.error(
                key,
                format_args!("{key}={v} is not a sample type (use u8, u16 or f32)"),
            )
        })
    }
}

/// Checks parsed stages against [`STAGES`] and builds the typed ops.
/// `spec` is the text the stages were parsed from (for error carets).
pub fn compile(spec: &str, stages: &[Stage]) -> Result<Vec<Op>> {
    stages.iter().map(|s| compile_stage(spec, s)).collect()
}

fn compile_stage(spec: &str, stage: &Stage) -> Result<Op> {
    let Some(def) = stage_def(&stage.name) else {
        let names = STAGES.iter().map(|d| d.name);
        let hint = match spec::suggest(&stage.name, names.clone()) {
            Some(s) => format!("did you mean '{s}'?"),
            None => format!("known: {}", names.collect::<Vec<_>>().join(", ")),
        };
        return Err(spec::error_at(
            spec,
            stage.name_span.clone(),
            format!("{}: unknown operation ({hint})", stage.label()),
        ));
    };
    let keys = def.keys();
    let resolved;
    let stage = match stage.options.first() {
        Some((k, v)) if k.is_empty() => {
            let span = stage.option_span(0);
            if keys.contains(&v.as_str()) {
                return Err(spec::error_at(
                    spec,
                    span,
                    format!(
                        "{}: option '{v}' has no value (write key=value)",
                        stage.label()
                    ),
                ));
            }
            let Some(first) = def.options.first() else {
                return Err(spec::error_at(
                    spec,
                    span,
                    format!(
                        "{}: takes no value (options: {})",
                        stage.label(),
                        keys.join(", ")
                    ),
                ));
            };
            if stage.get(first.key).is_some() {
                return Err(spec::error_at(
                    spec,
                    span,
                    format!(
                        "{}: option '{}' is given twice ('{v}' is short for {}={v})",
                        stage.label(),
                        first.key,
                        first.key
                    ),
                ));
            }
            let mut s = stage.clone();
            s.options[0].0 = first.key.to_string();
            resolved = s;
            &resolved
        }
        _ => stage,
    };
    for (i, (key, _)) in stage.options.iter().enumerate() {
        if !keys.contains(&key.as_str()) {
            let mut m = format!(
                "{}: option '{key}' unknown (known: {})",
                stage.label(),
                keys.join(", ")
            );
            if let Some(s) = spec::suggest(key, keys.iter().copied()) {
                m.push_str(&format!("; did you mean '{s}'?"));
            }
            return Err(spec::error_at(spec, stage.option_span(i), m));
        }
    }
    let args = Args { spec, stage };
    let variant = match stage.get(VARIANT) {
        None => None,
        Some(v) => {
            let known = def.op.names();
            if !known.contains(&v) {
                let mut m = format!("variant={v} unknown (known: {}", known.join(", "));
                if let Some(s) = spec::suggest(v, known.iter().copied()) {
                    m.push_str(&format!("; did you mean '{s}'?"));
                }
                m.push(')');
                return Err(args.error(VARIANT, m));
            }
            Some(v.to_string())
        }
    };
    Ok(Op {
        kind: (def.build)(&args)?,
        variant,
    })
}

/// Parses and checks a spec string: [`parse_stages`] then [`compile`].
pub fn parse(spec: &str) -> Result<Vec<Op>> {
    compile(spec, &parse_stages(spec)?)
}

/// What one stage did.
#[derive(Debug, Clone)]
pub struct StageOutcome {
    /// The stage.
    pub op: Op,
    /// The engine calls it made, in order (`normalize` without `sub` and
    /// `factor` makes two: `minmax`, then `normalize`).
    pub reports: Vec<RunReport>,
    /// The result of a `minmax` stage.
    pub minmax: Option<MinMax>,
    /// Text results to show the user (a `minmax` stage's range).
    pub lines: Vec<String>,
    /// Whether the stage ran inside a device-resident chain (its input and
    /// output stayed on the device).
    pub on_device: bool,
}

/// Formats a [`MinMax`] as `minmax: R 12..255, G 3..250, B 0..251`
/// (`minmax: 0..255` for one channel).
pub fn format_minmax(m: &MinMax, sample: SampleType) -> String {
    let names: &[&str] = match m.channels {
        1 => &[""],
        3 => &["R ", "G ", "B "],
        _ => &["R ", "G ", "B ", "A "],
    };
    let num = |v: f32| match sample {
        SampleType::F32 => format!("{v}"),
        _ => format!("{v:.0}"),
    };
    let parts: Vec<String> = names
        .iter()
        .enumerate()
        .take(m.channels)
        .map(|(c, n)| {
            if m.min[c] > m.max[c] {
                format!("{n}(no numbers)")
            } else {
                format!("{n}{}..{}", num(m.min[c]), num(m.max[c]))
            }
        })
        .collect();
    format!("minmax: {}", parts.join(", "))
}

fn normalize_to<T: Sample>(
    engine: &Engine,
    img: &Image<T>,
    params: &NormalizeParams,
    out: SampleType,
) -> Result<(DynImage, Vec<RunReport>)> {
    Ok(match out {
        SampleType::U8 => {
            let (i, r) = engine.normalize_report::<T, u8>(img, params)?;
            (DynImage::U8(i), r)
        }
        SampleType::U16 => {
            let (i, r) = engine.normalize_report::<T, u16>(img, params)?;
            (DynImage::U16(i), r)
        }
        SampleType::F32 => {
            let (i, r) = engine.normalize_report::<T, f32>(img, params)?;
            (DynImage::F32(i), r)
        }
    })
}

/// Runs one stage on a host image.
///
/// The stage's `variant=` (if any) is forced for its operation through
/// [`Engine::with_variant`]; other forced variants of `engine` stay in effect.
pub fn run_stage(engine: &Engine, op: &Op, input: DynImage) -> Result<(DynImage, StageOutcome)> {
    let engine = match &op.variant {
        Some(v) => {
            let table = stage_def(op.name()).map_or(op.name(), |d| d.op.name);
            Cow::Owned(engine.with_variant(Some(table), v))
        }
        None => Cow::Borrowed(engine),
    };
    let mut outcome = StageOutcome {
        op: op.clone(),
        reports: Vec::new(),
        minmax: None,
        lines: Vec::new(),
        on_device: false,
    };
    let output = match &op.kind {
        OpKind::Transpose => {
            let (img, r) = match &input {
                DynImage::U8(i) => engine.transpose_report(i).map(|(o, r)| (o.into(), r))?,
                DynImage::U16(i) => engine.transpose_report(i).map(|(o, r)| (o.into(), r))?,
                DynImage::F32(i) => engine.transpose_report(i).map(|(o, r)| (o.into(), r))?,
            };
            outcome.reports.push(r);
            img
        }
        OpKind::MinMax => {
            let (m, r) = match &input {
                DynImage::U8(i) => engine.minmax_report(i)?,
                DynImage::U16(i) => engine.minmax_report(i)?,
                DynImage::F32(i) => engine.minmax_report(i)?,
            };
            outcome.reports.push(r);
            outcome.minmax = Some(m);
            outcome.lines.push(format_minmax(&m, input.sample_type()));
            input
        }
        OpKind::Gaussian(p) => {
            let (img, r) = match &input {
                DynImage::U8(i) => engine.gaussian_report(i, p).map(|(o, r)| (o.into(), r))?,
                DynImage::U16(i) => engine.gaussian_report(i, p).map(|(o, r)| (o.into(), r))?,
                DynImage::F32(i) => engine.gaussian_report(i, p).map(|(o, r)| (o.into(), r))?,
            };
            outcome.reports.push(r);
            img
        }
        OpKind::Normalize { params, out } => {
            let out = out.unwrap_or(input.sample_type());
            let (img, r) = match &input {
                DynImage::U8(i) => normalize_to(&engine, i, params, out)?,
                DynImage::U16(i) => normalize_to(&engine, i, params, out)?,
                DynImage::F32(i) => normalize_to(&engine, i, params, out)?,
            };
            outcome.reports.extend(r);
            img
        }
        OpKind::Demosaic { params, out } => {
            let out = out.unwrap_or(input.sample_type());
            let (img, r) = demosaic_to(&engine, &input, params, out)?;
            outcome.reports.push(r);
            img
        }
        OpKind::Colormap(p) => {
            let (img, r) = match &input {
                DynImage::U8(i) => engine.colormap_report::<u8, u8>(i, p)?,
                DynImage::U16(i) => engine.colormap_report::<u16, u8>(i, p)?,
                DynImage::F32(i) => engine.colormap_report::<f32, u8>(i, p)?,
            };
            outcome.reports.push(r);
            img.into()
        }
        OpKind::Convert { out } if *out == input.sample_type() => input,
        OpKind::Convert { out } => {
            let params = NormalizeParams {
                sub: Some(0.0),
                factor: Some(
                    (out.full_scale() as f64 / input.sample_type().full_scale() as f64) as f32,
                ),
            };
            let (img, r) = match &input {
                DynImage::U8(i) => normalize_to(&engine, i, &params, *out)?,
                DynImage::U16(i) => normalize_to(&engine, i, &params, *out)?,
                DynImage::F32(i) => normalize_to(&engine, i, &params, *out)?,
            };
            outcome.reports.extend(r);
            img
        }
    };
    Ok((output, outcome))
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
    let mut img = input;
    let mut outcomes = Vec::with_capacity(stages.len());
    for op in stages {
        let (next, outcome) = run_stage(engine, op, img)?;
        img = next;
        outcomes.push(outcome);
    }
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
    if let Some(r) = try_device(engine, stages, Source::Image(&input)) {
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
    if let Some(r) = try_device(engine, stages, Source::Frame(&frame)) {
        return Ok(r);
    }
    let Some((first, rest)) = stages.split_first() else {
        return Ok((frame.into_dyn(), Vec::new()));
    };
    let (img, outcome) = format::run_stage_raw(engine, first, frame)?;
    let (img, mut outcomes) = run_stages(engine, rest, img)?;
    outcomes.insert(0, outcome);
    Ok((img, outcomes))
}

/// What a device-resident run starts from.
#[cfg_attr(not(feature = "opencl"), allow(dead_code))]
enum Source<'a> {
    Image(&'a DynImage),
    Frame(&'a crate::image::raw::RawImage),
}

/// The device-resident run, or `None` (with the reason logged) when the
/// engine has no device or the chain cannot run or failed.
#[cfg_attr(not(feature = "opencl"), allow(unused_variables))]
fn try_device(
    engine: &Engine,
    stages: &[Op],
    input: Source<'_>,
) -> Option<(DynImage, Vec<StageOutcome>)> {
    #[cfg(feature = "opencl")]
    if let crate::backend::Backend::OpenCl(dev) = engine.backend() {
        if !stages.is_empty() {
            match device_run(engine, dev, stages, input) {
                Ok(r) => return Some(r),
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
    None
}

/// Uploads `input`, chains the stages on the device, downloads the result.
#[cfg(feature = "opencl")]
fn device_run(
    engine: &Engine,
    dev: &crate::backend::Dev,
    stages: &[Op],
    input: Source<'_>,
) -> Result<(DynImage, Vec<StageOutcome>)> {
    use crate::backend::opencl::DeviceImage;
    use crate::ops::demosaic::device::DeviceRaw;
    let start = std::time::Instant::now();
    let demosaic_first = matches!(stages[0].kind, OpKind::Demosaic { .. });
    let raw;
    let input = match input {
        Source::Image(i) => i,
        Source::Frame(f) => {
            use crate::image::raw::RawImage;
            // Mono frames may have any size; a demosaic stage checks its own.
            raw = match f {
                RawImage::U8(i) => DeviceRaw::U8(DeviceImage::upload(dev, i)?),
                RawImage::U16(i) => DeviceRaw::U16(DeviceImage::upload(dev, i)?),
                RawImage::Packed12 {
                    data,
                    width,
                    height,
                    packing,
                } => DeviceRaw::Packed {
                    bytes: crate::backend::opencl::DeviceBuffer::from_slice(dev, data)?,
                    width: *width,
                    height: *height,
                    packing: *packing,
                },
            };
            return finish_device(engine, dev, stages, device::Input::Raw(&raw), start);
        }
    };
    let chain_input = match input {
        DynImage::U8(i) if demosaic_first => {
            raw = DeviceRaw::upload(dev, &Raw::U8(i))?;
            device::Input::Raw(&raw)
        }
        DynImage::U16(i) if demosaic_first => {
            raw = DeviceRaw::upload(dev, &Raw::U16(i))?;
            device::Input::Raw(&raw)
        }
        DynImage::U8(i) => {
            device::Input::Work(device::load(engine, dev, &DeviceImage::upload(dev, i)?)?.0)
        }
        DynImage::U16(i) => {
            device::Input::Work(device::load(engine, dev, &DeviceImage::upload(dev, i)?)?.0)
        }
        DynImage::F32(i) => {
            device::Input::Work(device::load(engine, dev, &DeviceImage::upload(dev, i)?)?.0)
        }
    };
    finish_device(engine, dev, stages, chain_input, start)
}

/// Runs the chain from `chain_input` and downloads the result.
#[cfg(feature = "opencl")]
fn finish_device(
    engine: &Engine,
    dev: &crate::backend::Dev,
    stages: &[Op],
    chain_input: device::Input<'_>,
    start: std::time::Instant,
) -> Result<(DynImage, Vec<StageOutcome>)> {
    use crate::backend::opencl::DeviceImage;
    let (work, outcomes) = device::run_chain(engine, dev, stages, chain_input)?;
    let (w, h, c) = (work.img.width(), work.img.height(), work.channels);
    fn fetch<U: Sample>(
        engine: &Engine,
        dev: &crate::backend::Dev,
        work: &device::Work,
        (w, h, c): (usize, usize, usize),
    ) -> Result<Image<U>> {
        let out = DeviceImage::<U>::new(dev, w, h, c)?;
        device::store_into(engine, dev, work, &out)?;
        out.download(dev)
    }
    let out: DynImage = match work.ty {
        SampleType::U8 => fetch::<u8>(engine, dev, &work, (w, h, c))?.into(),
        SampleType::U16 => fetch::<u16>(engine, dev, &work, (w, h, c))?.into(),
        SampleType::F32 => fetch::<f32>(engine, dev, &work, (w, h, c))?.into(),
    };
    log::debug!(
        "pipeline '{}' ran on {} in {:?} (one upload, one download)",
        to_spec(stages),
        dev.info().name,
        start.elapsed()
    );
    Ok((out, outcomes))
}

/// Runs the stages (see [`run_outcomes`]), returning the final image, every
/// engine call's report in order, and the text lines to show the user (for
/// example a `minmax` stage's result).
pub fn run(
    engine: &Engine,
    stages: &[Op],
    input: DynImage,
) -> Result<(DynImage, Vec<RunReport>, Vec<String>)> {
    let (img, outcomes) = run_outcomes(engine, stages, input)?;
    let mut reports = Vec::new();
    let mut lines = Vec::new();
    for o in outcomes {
        reports.extend(o.reports);
        lines.extend(o.lines);
    }
    Ok((img, reports, lines))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(spec: &str) -> String {
        match parse(spec).unwrap_err() {
            Error::Spec(m) => m,
            other => panic!("expected a spec error, got {other:?}"),
        }
    }

    fn first_line(spec: &str) -> String {
        err(spec).lines().next().unwrap().to_string()
    }

    #[test]
    fn good_specs() {
        let ops = parse("transpose,minmax,normalize").unwrap();
        assert_eq!(ops[0], Op::new(OpKind::Transpose));
        assert_eq!(ops[1], Op::new(OpKind::MinMax));
        assert_eq!(
            ops[2],
            Op::new(OpKind::Normalize {
                params: NormalizeParams::default(),
                out: None
            })
        );
        let ops = parse("normalize=sub=-1.5:factor=2e-3:out=f32:variant=x4").unwrap();
        assert_eq!(
            ops[0],
            Op {
                kind: OpKind::Normalize {
                    params: NormalizeParams {
                        sub: Some(-1.5),
                        factor: Some(2e-3)
                    },
                    out: Some(SampleType::F32)
                },
                variant: Some("x4".into())
            }
        );
        let ops = parse("transpose=variant=local_x4, minmax=variant=cpu").unwrap();
        assert_eq!(ops[0].variant.as_deref(), Some("local_x4"));
        assert_eq!(ops[1].variant.as_deref(), Some("cpu"));
    }

    #[test]
    fn demosaic_stages() {
        let ops =
            parse("demosaic=pattern=grbg:method=edge:black=16:wb_r=2:channels=4:out=f32").unwrap();
        let OpKind::Demosaic { params: p, out } = &ops[0].kind else {
            panic!("not a demosaic stage: {:?}", ops[0])
        };
        assert_eq!((p.pattern.name(), p.method.name()), ("grbg", "edge"));
        assert_eq!(
            (p.black, p.gains, p.channels, *out),
            (16.0, [2.0, 1.0, 1.0], 4, Some(SampleType::F32))
        );
        assert_eq!(parse(&to_spec(&ops)).unwrap(), ops);
        assert_eq!(ops[0].output_type(SampleType::U8), SampleType::F32);
        for bad in [
            "demosaic=pattern=rgbg",
            "demosaic=method=vng",
            "demosaic=channels=2",
            "demosaic=bits=20",
        ] {
            assert!(matches!(parse(bad), Err(Error::Spec(_))), "{bad}");
        }
        // A 4x2 RGGB frame through the CPU engine.
        let img = Image::<u8>::from_vec(4, 2, 1, vec![10, 20, 10, 20, 20, 30, 20, 30]).unwrap();
        let (out, _, _) = run(
            &Engine::cpu(),
            &parse("demosaic").unwrap(),
            DynImage::U8(img),
        )
        .unwrap();
        assert_eq!(out.shape(), (4, 2, 3));
        let gray = Image::<f32>::new(4, 2, 1).unwrap();
        assert!(run(
            &Engine::cpu(),
            &parse("demosaic").unwrap(),
            DynImage::F32(gray)
        )
        .is_err());
    }

    #[test]
    fn gaussian_stages() {
        let ops = parse("gaussian=sigma=2:sigma_y=5").unwrap();
        assert_eq!(
            ops[0].kind,
            OpKind::Gaussian(GaussianParams {
                sigma_x: 2.0,
                sigma_y: 5.0,
                border: Border::Replicate
            })
        );
        assert!(first_line("gaussian").contains("needs sigma"));
        assert!(first_line("gaussian=sigma_x=1").contains("needs sigma"));
        assert!(first_line("gaussian=sigma=-1").contains(">= 0"));
        assert!(first_line("gaussian=sigma=1e9").contains("exceeds"));
        assert!(first_line("gaussian=sigma=nan").contains("not a finite number"));
        assert!(first_line("gaussian=sigma=1:border=wrap").contains("replicate or mirror"));
        assert!(first_line("gaussian=sigma=1:variant=iir_blox").contains("iir_"));
    }

    #[test]
    fn display_round_trips() {
        for spec in [
            "transpose",
            "minmax=variant=tree",
            "normalize=sub=1:factor=0.5:out=u16:variant=pixel",
            "normalize=out=f32,transpose,minmax",
            "gaussian=sigma=2",
            "gaussian=sigma_x=0.5:sigma_y=3:border=mirror:variant=fir_local",
        ] {
            let ops = parse(spec).unwrap();
            assert_eq!(to_spec(&ops), spec);
            assert_eq!(parse(&to_spec(&ops)).unwrap(), ops);
        }
    }

    #[test]
    fn output_types_follow_the_stages() {
        let ops = parse("normalize=out=f32,transpose").unwrap();
        assert_eq!(output_type(&ops, SampleType::U8), SampleType::F32);
        let ops = parse("normalize,minmax").unwrap();
        assert_eq!(output_type(&ops, SampleType::U16), SampleType::U16);
        assert_eq!(output_type(&[], SampleType::U8), SampleType::U8);
    }

    #[test]
    fn unknown_operations_get_a_suggestion() {
        assert_eq!(
            first_line("transpose,normlize"),
            "stage 2 'normlize': unknown operation (did you mean 'normalize'?)"
        );
        assert_eq!(
            first_line("Transpose"),
            "stage 1 'Transpose': unknown operation (did you mean 'transpose'?)"
        );
        assert_eq!(
            first_line("blur=sigma=2"),
            "stage 1 'blur': unknown operation (known: transpose, minmax, normalize, gaussian, demosaic, convert, colormap)"
        );
        // The caret is under the name.
        let m = err("transpose,normlize=out=u8");
        assert!(
            m.ends_with(&format!("\n    {}{}", " ".repeat(10), "^".repeat(8))),
            "{m}"
        );
    }

    #[test]
    fn unknown_options() {
        assert_eq!(
            first_line("normalize=factr=2"),
            "stage 1 'normalize': option 'factr' unknown (known: sub, factor, out, variant); \
             did you mean 'factor'?"
        );
        assert_eq!(
            first_line("transpose=x=1"),
            "stage 1 'transpose': option 'x' unknown (known: variant)"
        );
    }

    #[test]
    fn bad_values() {
        assert_eq!(
            first_line("normalize=factor=abc"),
            "stage 1 'normalize': factor=abc is not a number"
        );
        assert_eq!(
            first_line("minmax,normalize=sub=inf"),
            "stage 2 'normalize': sub=inf is not a finite number"
        );
        assert_eq!(
            first_line("normalize=factor=NaN"),
            "stage 1 'normalize': factor=NaN is not a finite number"
        );
        assert_eq!(
            first_line("normalize=out=u32"),
            "stage 1 'normalize': out=u32 is not a sample type (use u8, u16 or f32)"
        );
        assert_eq!(
            first_line("transpose=variant=locl"),
            "stage 1 'transpose': variant=locl unknown \
             (known: naive, local, local_diag, local_x4, cpu; did you mean 'local'?)"
        );
        assert!(first_line("minmax=variant=zzz").contains("known: tree, tree_vec4, cpu)"));
        // The caret is under the failing option.
        let m = err("normalize=out=u8:factor=abc");
        assert!(
            m.ends_with(&format!("\n    {}{}", " ".repeat(17), "^".repeat(10))),
            "{m}"
        );
    }

    #[test]
    fn hand_built_stages_with_mismatched_spans_do_not_panic() {
        // More options than option spans, and spans past the spec's end or
        // inside a multi-byte character: errors point at the stage instead.
        let spec = "normalize=é";
        let stage = Stage {
            index: 1,
            name: "normalize".into(),
            options: vec![("factor".into(), "2".into()), ("bogus".into(), "1".into())],
            span: 0..spec.len(),
            name_span: 0..9,
            option_spans: vec![],
        };
        let m = err_of(compile(spec, std::slice::from_ref(&stage)));
        assert!(
            m.starts_with("stage 1 'normalize': option 'bogus' unknown"),
            "{m}"
        );
        assert!(m.ends_with(&format!("\n    {}", "^".repeat(11))), "{m}");

        let stage = Stage {
            options: vec![("factor".into(), "x".into())],
            span: 3..1000,
            name_span: std::ops::Range { start: 11, end: 10 },
            ..stage
        };
        let m = err_of(compile(spec, std::slice::from_ref(&stage)));
        assert!(
            m.starts_with("stage 1 'normalize': factor=x is not a number"),
            "{m}"
        );
        assert!(
            m.ends_with(&format!("\n    {}{}", " ".repeat(3), "^".repeat(8))),
            "{m}"
        );
        // Spans inside 'é' (bytes 10..12) and options that check fine.
        let stage = Stage {
            options: vec![("out".into(), "u8".into())],
            name_span: 11..11,
            option_spans: std::iter::once(11..12).collect(),
            ..stage
        };
        assert!(compile(spec, &[stage]).is_ok());
        let stage = Stage {
            index: 2,
            name: "normlize".into(),
            options: vec![],
            span: 11..11,
            name_span: 11..11,
            option_spans: vec![],
        };
        let m = err_of(compile(spec, &[stage]));
        assert!(m.ends_with("\n              ^"), "{m}");
    }

    fn err_of(r: Result<Vec<Op>>) -> String {
        match r.unwrap_err() {
            Error::Spec(m) => m,
            other => panic!("expected a spec error, got {other:?}"),
        }
    }

    #[test]
    fn syntax_errors_come_through() {
        assert!(first_line("transpose,,minmax").contains("stage 2 is empty"));
        assert!(first_line("normalize=out=u8:out=f32").contains("option 'out' is given twice"));
    }

    #[test]
    fn minmax_lines() {
        let mut m = MinMax::empty(3);
        m.min[..3].copy_from_slice(&[12.0, 3.0, 0.0]);
        m.max[..3].copy_from_slice(&[255.0, 250.0, 251.0]);
        assert_eq!(
            format_minmax(&m, SampleType::U8),
            "minmax: R 12..255, G 3..250, B 0..251"
        );
        let mut g = MinMax::empty(1);
        g.min[0] = 0.25;
        g.max[0] = 0.5;
        assert_eq!(format_minmax(&g, SampleType::F32), "minmax: 0.25..0.5");
        assert_eq!(
            format_minmax(&MinMax::empty(1), SampleType::F32),
            "minmax: (no numbers)"
        );
    }

    #[test]
    fn runs_on_the_cpu_engine() {
        let img = Image::<u8>::from_fn(3, 2, 1, |x, y, _| (10 * (x + 3 * y)) as u8).unwrap();
        let ops = parse("minmax,normalize=out=f32,transpose,normalize=out=u8").unwrap();
        let (out, reports, lines) = run(&Engine::cpu(), &ops, img.clone().into()).unwrap();
        assert_eq!(lines, vec!["minmax: 0..50".to_string()]);
        // minmax, (minmax + normalize), transpose, (minmax + normalize)
        let names: Vec<&str> = reports.iter().map(|r| r.op).collect();
        assert_eq!(
            names,
            [
                "minmax",
                "minmax",
                "normalize",
                "transpose",
                "minmax",
                "normalize"
            ]
        );
        assert!(reports.iter().all(|r| r.variant == "cpu"));
        let DynImage::U8(out) = out else {
            panic!("expected u8")
        };
        assert_eq!((out.width(), out.height()), (2, 3));
        assert_eq!(out.get(0, 0, 0), 0);
        assert_eq!(out.get(1, 2, 0), 255);
        // Transposing twice gives the input back.
        let ops = parse("transpose,transpose=variant=cpu").unwrap();
        let (back, _, _) = run(&Engine::cpu(), &ops, img.clone().into()).unwrap();
        assert_eq!(back, DynImage::U8(img));
    }
}
