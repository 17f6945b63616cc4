//! `filterctl apply -f SPEC IN... [-o OUT]`: runs a pipeline on image files
//! (or folders of them, in parallel; or `-`, stdin), or on headerless raw
//! frames (`--size WxH --format FMT`).

mod jobs;
mod plan;

use std::borrow::Cow;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use clfilter::image::raw::RawImage;
use clfilter::image::{DecodeLimits, Metadata, OutputFormat, SaveOptions};
use clfilter::pipeline::{self, Op};
use clfilter::{DynImage, Engine, RawFormat, RunReport, SampleType};
use serde::Serialize;

use crate::batch::{self, is_stdio};
use crate::error::CliError;
use crate::frames::{
    camera_wb, check_image_format, read_dng, read_frame, uses_camera_wb, FrameSpec,
};
use crate::guard;
use crate::util::{check_output_as, describe, ms, parse_format, parse_size, report_line};
use crate::Global;
use jobs::run_jobs;
use plan::{check_inputs, plan, prepare_outputs, Job};

/// Options of `filterctl apply`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The pipeline, for example 'transpose,normalize=out=u8,minmax'.
    #[arg(short = 'f', long = "filter", value_name = "SPEC")]
    spec: String,

    /// Input image files (PNG, TIFF, PNM, JPEG, WebP) or DNG raw files,
    /// folders of them (the files directly inside, run in parallel), or `-`
    /// for one image on stdin; with --size headerless raw frames, one per file.
    #[arg(value_name = "IN", required = true)]
    inputs: Vec<PathBuf>,

    /// Read each input as one headerless raw frame of WIDTHxHEIGHT pixels
    /// in --format (the file must be exactly one frame long).
    #[arg(long, value_name = "WxH", value_parser = parse_size, requires = "format")]
    size: Option<(usize, usize)>,

    /// The camera format: bayer_{rggb,bggr,grbg,gbrg}DEPTH or monoDEPTH, DEPTH
    /// one of 8,10,12,14,16,12p,12packed,12mipi,10mipi,10be,12be,14be,16be. With --size, the raw frames' layout; with image files
    /// (1-channel), the pattern and bits a demosaic stage defaults to.
    #[arg(long, value_name = "FMT", value_parser = parse_format)]
    format: Option<RawFormat>,

    /// Output file, or `-` for stdout (with --out-format); with several
    /// inputs or a folder input, or when it is an existing folder, the
    /// folder that receives one output per input, named as the input. Not
    /// needed when the spec ends with minmax or stats.
    #[arg(short = 'o', long = "output", value_name = "OUT")]
    output: Option<PathBuf>,

    /// Extension for outputs written into a folder (for example tif for f32
    /// results, png for JPEG inputs); default: --out-format's, else the
    /// input's.
    #[arg(long, value_name = "EXT")]
    ext: Option<String>,

    /// The output format, whatever the output's name says: png, tif, jpg,
    /// webp (lossless), pgm, ppm, pnm or pam. Required for `-o -`.
    #[arg(long, value_name = "FMT", value_parser = parse_out_format)]
    out_format: Option<OutputFormat>,

    /// JPEG quality, 1 (smallest file) to 100 (best).
    #[arg(
        long,
        value_name = "N",
        default_value_t = SaveOptions::DEFAULT_JPEG_QUALITY,
        value_parser = clap::value_parser!(u8).range(1..=100)
    )]
    quality: u8,

    /// Inputs run at once with several inputs (default: the cores, at most
    /// 4); each holds its image in memory.
    #[arg(short = 'j', long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    jobs: Option<u16>,

    /// The most memory decoding one image file may take: bytes with an
    /// optional K/M/G/T suffix, or `none` (default 512M). Files over it
    /// fail before anything is allocated.
    #[arg(
        long,
        value_name = "BYTES|none",
        env = "FILTERCTL_DECODE_LIMIT",
        value_parser = parse_decode_limit
    )]
    decode_limit: Option<DecodeLimits>,

    /// Print each stage's variant, device and time to stderr.
    #[arg(long)]
    report: bool,

    /// Print a JSON report (stages, variants, times, minmax and stats results) to stdout.
    #[arg(long)]
    json: bool,
}

#[derive(Serialize)]
struct JsonMinMax {
    min: Vec<f32>,
    max: Vec<f32>,
}

#[derive(Serialize)]
struct JsonStage {
    stage: usize,
    spec: String,
    calls: Vec<RunReport>,
    /// Kernel dispatches (each chunk of a split launch counts).
    dispatches: u64,
    minmax: Option<JsonMinMax>,
    /// A `stats` stage's result, as `filterctl stats --json` prints it.
    #[serde(skip_serializing_if = "Option::is_none")]
    stats: Option<clfilter::ops::stats::Stats>,
    #[serde(serialize_with = "clfilter::ops::ser_ms")]
    ms: Duration,
}

#[derive(Serialize)]
struct JsonFile {
    input: PathBuf,
    output: Option<PathBuf>,
    /// `--format`, when given.
    #[serde(skip_serializing_if = "Option::is_none")]
    format: Option<RawFormat>,
    width: usize,
    height: usize,
    channels: usize,
    sample: SampleType,
    output_sample: SampleType,
    #[serde(serialize_with = "clfilter::ops::ser_ms")]
    load_ms: Duration,
    #[serde(serialize_with = "clfilter::ops::ser_opt_ms")]
    save_ms: Option<Duration>,
    stages: Vec<JsonStage>,
}

#[derive(Serialize)]
struct JsonReport {
    backend: String,
    spec: String,
    files: Vec<JsonFile>,
}

/// A loaded input: an image file, or a decoded raw frame.
enum Input {
    Image(DynImage),
    Raw(RawImage),
}

/// Runs the pipeline on one input, printing report lines (when asked);
/// returns the result, the stages' JSON and their result lines (minmax),
/// for the caller to print in the inputs' order. On an OpenCL device the stages are chained there (one
/// upload, one download); a raw frame is uploaded as it is (packed frames
/// stay packed), and on the host path a first demosaic reads it directly.
fn run_one(
    engine: &Engine,
    ops: &[Op],
    input: Input,
    args: &Args,
    prefix: &str,
) -> Result<(DynImage, Vec<JsonStage>, Vec<String>), CliError> {
    let result = match input {
        Input::Image(img) => pipeline::run_outcomes(engine, ops, img),
        Input::Raw(frame) => pipeline::run_frame(engine, ops, frame),
    };
    let (img, outcomes) = result
        .map_err(|e| CliError::from(e).context(format!("pipeline '{}'", pipeline::to_spec(ops))))?;
    let mut stages = Vec::new();
    let mut lines = Vec::new();
    for (i, outcome) in outcomes.into_iter().enumerate() {
        let op = &outcome.op;
        if args.report && !args.json {
            for r in &outcome.reports {
                note!("{prefix}{}", report_line(Some(i + 1), op.name(), r, None));
            }
        }
        if !args.json {
            lines.extend(outcome.lines.iter().map(|l| format!("{prefix}{l}")));
        }
        stages.push(JsonStage {
            stage: i + 1,
            spec: op.to_string(),
            ms: outcome.reports.iter().map(|r| r.elapsed).sum(),
            dispatches: outcome.dispatches,
            calls: outcome.record.reports,
            minmax: outcome.record.minmax.map(|m| JsonMinMax {
                min: m.min[..m.channels].to_vec(),
                max: m.max[..m.channels].to_vec(),
            }),
            stats: outcome.record.stats,
        });
    }
    Ok((img, stages, lines))
}

/// `--size` with `--format` as a [`FrameSpec`], or `None` when the inputs
/// are image files. A size the format does not allow (odd for Bayer) is a
/// usage error.
fn frame_spec(args: &Args) -> Result<Option<FrameSpec>, CliError> {
    Ok(match (args.size, args.format) {
        (Some((width, height)), Some(format)) => Some(FrameSpec {
            width,
            height,
            format,
            bytes: format.frame_bytes(width, height)?,
        }),
        _ => None,
    })
}

/// What every job of one `filterctl apply` run shares.
struct Context<'a> {
    engine: &'a Engine,
    args: &'a Args,
    /// The pipeline parsed with `--format`.
    ops: &'a [Op],
    /// `--size` with `--format`: the inputs are raw frames.
    frame: Option<FrameSpec>,
    /// Outputs go into a folder (several inputs, or `-o` an existing folder).
    dir_mode: bool,
    /// More than one input: report and result lines start with the input's name.
    several: bool,
}

/// A loaded input, the pipeline to run on it and its description for the
/// `--report` line.
struct Loaded<'a> {
    input: Input,
    /// The image file's ICC profile (orientation is applied already).
    meta: Metadata,
    ops: Cow<'a, [Op]>,
    /// The raw format the JSON report names: `--format`, or a DNG's.
    format: Option<RawFormat>,
    described: String,
}

impl Input {
    /// The input's `(width, height)`, channel count and sample type.
    fn shape(&self) -> ((usize, usize), usize, SampleType) {
        match self {
            Input::Image(img) => {
                let (w, h, c) = img.shape();
                ((w, h), c, img.sample_type())
            }
            Input::Raw(raw) => (raw.size(), 1, raw.sample()),
        }
    }
}

/// Parses `--out-format`.
fn parse_out_format(s: &str) -> Result<OutputFormat, String> {
    s.parse().map_err(|e: clfilter::Error| e.to_string())
}

/// Parses `--decode-limit`; an empty value (`FILTERCTL_DECODE_LIMIT=`) is
/// the default, as the library reads the variable.
fn parse_decode_limit(s: &str) -> Result<DecodeLimits, String> {
    if s.trim().is_empty() {
        return Ok(DecodeLimits::default());
    }
    s.parse().map_err(|e: clfilter::Error| e.to_string())
}

/// Loads an image file (or stdin); a format error when `--format` is given
/// says that a headerless raw frame needs `--size` as well.
fn load_image(path: &Path, args: &Args) -> Result<(DynImage, Metadata), CliError> {
    let limits = args.decode_limit.unwrap_or_default();
    if is_stdio(path) {
        return batch::read_stdin(&limits);
    }
    clfilter::image::load_with_metadata(path, &limits).map_err(|e| match e {
        // A raw frame given without --size.
        clfilter::Error::Format { path, message } if args.format.is_some() => {
            CliError::from(clfilter::Error::Format {
                path,
                message: format!(
                    "{message} (a headerless raw frame needs --size WxH \
                     as well as --format)"
                ),
            })
        }
        other => CliError::from(other),
    })
}

/// Loads one job's input: a raw frame (with `--size`), or an image file
/// checked against `--format`, with the pipeline parsed again when the file
/// needs another format (see [`check_image_format`]).
fn load_job<'a>(ctx: &Context<'a>, job: &Job) -> Result<Loaded<'a>, CliError> {
    let in_file = |e: CliError| e.context(job.input.display().to_string());
    // A pipe (a FIFO, `<(cmd)`) is read once, so it is not sniffed: it is
    // loaded as an image or a raw frame, as stdin is.
    let regular = std::fs::metadata(&job.input).is_ok_and(|m| m.is_file());
    let is_dng = regular && !is_stdio(&job.input) && clfilter::image::dng::is_dng(&job.input)?;
    if !is_dng && uses_camera_wb(&ctx.args.spec) {
        // A file that cannot be read at all (a DNG cut inside its first
        // directory is not recognised as one) says so, as it would
        // without `wb=camera`, rather than that it is no DNG.
        if regular && !is_stdio(&job.input) && ctx.frame.is_none() {
            let limits = ctx.args.decode_limit.unwrap_or_default();
            clfilter::image::load_with(&job.input, &limits)?;
        }
        return Err(in_file(CliError::usage(
            "wb=camera takes the white balance a DNG file recorded, and this input is not a DNG; \
             give r=, g=, b= or use wb=auto",
        )));
    }
    if let Some(f) = &ctx.frame {
        let raw = read_frame(&job.input, f).map_err(in_file)?;
        return Ok(Loaded {
            input: Input::Raw(raw),
            meta: Metadata::default(),
            ops: Cow::Borrowed(ctx.ops),
            format: Some(f.format),
            described: format!("{}x{} {} frame", f.width, f.height, f.format),
        });
    }
    if is_dng {
        if let Some(f) = ctx.args.format {
            return Err(CliError::usage(format!(
                "{}: a DNG file carries its own pattern and levels; leave out --format {f}",
                job.input.display()
            )));
        }
        let limits = ctx.args.decode_limit.unwrap_or_default();
        // The engine's DNG errors name the file already.
        let dng = read_dng(&job.input, &limits)?;
        let (raw, format, described) = (dng.raw, dng.format, dng.described);
        let spec = camera_wb(&ctx.args.spec, dng.gains).map_err(in_file)?;
        let ops = pipeline::parse_with_format(&spec, Some(&format))?;
        return Ok(Loaded {
            input: Input::Raw(raw),
            meta: Metadata::default(),
            ops: Cow::Owned(ops),
            format: Some(format),
            described,
        });
    }
    let (img, meta) = load_image(&job.input, ctx.args)?;
    let mut ops = Cow::Borrowed(ctx.ops);
    if let Some(fmt) = ctx.args.format {
        let used = check_image_format(&job.input, &img, fmt).map_err(in_file)?;
        if used != fmt {
            ops = Cow::Owned(pipeline::parse_with_format(&ctx.args.spec, Some(&used))?);
        }
    }
    let described = describe(&img);
    Ok(Loaded {
        input: Input::Image(img),
        meta,
        ops,
        format: ctx.args.format,
        described,
    })
}

/// Saves one result to `out` (`-`: stdout) as `format`, with the input's
/// ICC profile, printing a report line when asked; returns the time the
/// save took.
fn save_result(
    args: &Args,
    result: &DynImage,
    out: &Path,
    format: OutputFormat,
    meta: Metadata,
) -> Result<Duration, CliError> {
    let t = Instant::now();
    let options = SaveOptions {
        format: Some(format),
        jpeg_quality: args.quality,
        icc_profile: meta.icc_profile,
    };
    if is_stdio(out) {
        batch::write_stdout(result, format, &options)?;
    } else {
        clfilter::image::save_with(result, out, &options).map_err(|e| match e {
            e if batch::is_closed_pipe(&e) => batch::closed_pipe(&out.display().to_string()),
            e => CliError::from(e),
        })?;
    }
    let save_ms = t.elapsed();
    if args.report && !args.json {
        note!(
            "saved {} ({}) in {}",
            out.display(),
            describe(result),
            ms(t.elapsed())
        );
    }
    Ok(save_ms)
}

/// Runs one job: loads its input, checks that its output can hold the
/// result, runs the pipeline and saves the result. Returns the job's part
/// of the JSON report and its result lines.
fn apply_job(ctx: &Context, job: &Job) -> Result<(JsonFile, Vec<String>), CliError> {
    let args = ctx.args;
    let prefix = if ctx.several {
        format!("{}: ", job.input.display())
    } else {
        String::new()
    };
    let in_file = |e: CliError| e.context(job.input.display().to_string());
    let t = Instant::now();
    let Loaded {
        input,
        meta,
        ops: file_ops,
        format,
        described,
    } = load_job(ctx, job)?;
    let load = t.elapsed();
    let ((w, h), c, sample) = input.shape();
    let (ow, oh, oc, out_sample) = pipeline::stream::output_shape(&file_ops, (w, h, c), sample);
    let out_format = match &job.output {
        Some(out) => {
            let format = check_output_as(out, args.out_format, out_sample, oc, ctx.dir_mode)
                .map_err(in_file)?;
            format.check_size(ow, oh).map_err(|why| {
                in_file(CliError::usage(format!("output {}: {why}", out.display())))
            })?;
            Some(format)
        }
        None => None,
    };
    if args.report && !args.json {
        note!(
            "loaded {} ({described}) in {}",
            job.input.display(),
            ms(load)
        );
    }
    let (result, stages, lines) =
        run_one(ctx.engine, &file_ops, input, args, &prefix).map_err(in_file)?;
    let save_ms = match (&job.output, out_format) {
        (Some(out), Some(format)) => Some(save_result(args, &result, out, format, meta)?),
        _ => None,
    };
    let file = JsonFile {
        input: job.input.clone(),
        output: job.output.clone(),
        format,
        width: w,
        height: h,
        channels: c,
        sample,
        output_sample: out_sample,
        load_ms: load,
        save_ms,
        stages,
    };
    Ok((file, lines))
}

/// Runs `filterctl apply`.
pub fn run(global: &Global, args: Args) -> Result<(), CliError> {
    // wb=camera is checked with unit gains here; each DNG input parses the
    // spec again with its own, and other inputs refuse it (load_job).
    let checked = camera_wb(&args.spec, Some([1.0; 3]))?;
    let ops = pipeline::parse_with_format(&checked, args.format.as_ref())?;
    let frame = frame_spec(&args)?;
    let jobs = plan(&args, &ops)?;
    check_inputs(&args, &jobs)?;
    // As `plan` decided: a folder input writes into a folder even when it
    // holds one image, and `-o` then names a folder that may not exist yet.
    let dir_mode = jobs.len() > 1
        || args.output.as_deref().is_some_and(|o| {
            !is_stdio(o) && (plan::names_folder(o) || args.inputs.iter().any(|i| i.is_dir()))
        });
    prepare_outputs(&args, &jobs, dir_mode)?;
    let engine = global.engine()?;
    let ctx = Context {
        engine: &engine,
        args: &args,
        ops: &ops,
        frame,
        dir_mode,
        several: jobs.len() > 1,
    };
    // Result lines go to stderr when stdout carries the image.
    let to_stderr = jobs
        .iter()
        .any(|j| j.output.as_deref().is_some_and(is_stdio));
    guard::catch_stop_signals();
    let (files, outcome) = run_jobs(&ctx, &jobs, to_stderr)?;
    // The report holds the inputs that ran, also when others failed or a
    // stop signal came; the exit code tells that not all did.
    if args.json {
        let report = JsonReport {
            backend: engine.backend().describe(),
            spec: pipeline::to_spec(&ops),
            files,
        };
        out!("{}", serde_json::to_string_pretty(&report)?)?;
    }
    outcome
}

/// Prints a job's result lines to stdout, or to stderr when stdout
/// carries the image.
fn print_lines(lines: &[String], to_stderr: bool) -> Result<(), CliError> {
    for line in lines {
        if to_stderr {
            note!("{line}");
        } else {
            out!("{line}")?;
        }
    }
    Ok(())
}

/// The help after `filterctl apply --help`: the spec grammar and every
/// stage of the registry with its options.
pub fn stages_help() -> String {
    let mut h = String::from(
        "Spec grammar: name=key=value:key=value,name2,...  (a bare first value is \
         the first option: convert=u8). Every stage also takes variant=NAME \
         (see `filterctl variants`).\n\nStages:\n",
    );
    for def in clfilter::pipeline::STAGES.iter() {
        h.push_str(&format!("  {:<10} {}\n", def.name, def.summary));
        for o in def.options {
            h.push_str(&format!(
                "      {:<28} {}\n",
                format!("{}={}", o.key, o.value),
                o.help
            ));
        }
        if def.op.spreads_nonfinite {
            h.push_str(&format!(
                "      {:<28} {}\n",
                "nonfinite=error|zero|clamp",
                "f32 NaN/inf (or beyond 2^120) in the input: refuse (default), or replace by 0 or by the channel's extremes"
            ));
        }
    }
    h.push_str(
        "\nExample: -f 'normalize=out=f32,transpose'. Raw camera frames: -f demosaic \
         --size 1920x1080 --format bayer_rggb12p frame.raw -o frame.png (the demosaic \
         takes the format's pattern and bits)",
    );
    h
}
